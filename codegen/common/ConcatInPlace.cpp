//===- ConcatInPlace.cpp - producers that write into their concatenation --===//
//
// A concatenation bufferizes as a new buffer and one copy per input. When
// an input is computed by ops that write their result into an empty tensor
// (a product and its epilogue, an element-wise op), that empty tensor can
// be the input's slice of the concatenation instead: the producer then
// writes its part in place and the concatenation copies nothing. The pass
// rewrites such a `tensor.concat` as `tensor.insert_slice`s into one empty
// tensor made at the top of the function, and gives each producer's empty
// tensor as a slice of it. One-shot bufferization then finds each slice
// inserted where it was extracted and copies nothing; where the analysis
// sees a conflict it copies, as before.
//
// The upstream empty-tensor elimination does this for an insert_slice
// whose destination dominates the empty tensor; a concatenation's
// destination comes after its inputs, and each insertion's destination is
// the previous insertion.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCONCATINPLACE
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The use of an empty tensor from which `value` is computed in place: each
/// op on the way writes its result into its init (a destination-style op
/// with one result) or reshapes it. Null when there is none, or when a
/// reshape on the way would not apply to a slice along `dim` of a larger
/// buffer: a collapse must be of `value`'s shape and keep `dim` apart from
/// the dims it merges (but unit ones), an expand must give `value`'s shape.
OpOperand *emptyRootOf(Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  OpOperand *use = nullptr;
  Value at = value;
  while (true) {
    Operation *op = at.getDefiningOp();
    if (!op)
      return nullptr;
    if (isa<tensor::EmptyOp>(op))
      return at.getType() == type ? use : nullptr;
    if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(op)) {
      if (reshape.getResultType() != type)
        return nullptr;
      use = &reshape.getSrcMutable();
    } else if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(op)) {
      if (reshape.getSrcType() != type)
        return nullptr;
      for (const ReassociationIndices &group :
           reshape.getReassociationIndices())
        if (llvm::is_contained(group, dim) &&
            llvm::any_of(group, [&](int64_t axis) {
              return axis != dim && type.getDimSize(axis) != 1;
            }))
          return nullptr;
      use = &reshape.getSrcMutable();
    } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(op);
               dps && op->getNumResults() == 1 && dps.getNumDpsInits() == 1 &&
               dps.hasPureTensorSemantics()) {
      use = dps.getDpsInitOperand(0);
    } else {
      return nullptr;
    }
    at = use->get();
  }
}

struct TractConcatInPlace
    : public tract::impl::TractConcatInPlaceBase<TractConcatInPlace> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.getBody().empty())
      return;
    SmallVector<tensor::ConcatOp> concats;
    function.walk([&](tensor::ConcatOp concat) {
      if (concat.getResultType().hasStaticShape() &&
          concat->getParentRegion() == &function.getBody())
        concats.push_back(concat);
    });
    for (tensor::ConcatOp concat : concats)
      rewrite(concat);
  }

  void rewrite(tensor::ConcatOp concat) {
    // Worth it when an input at least writes in place.
    int64_t dim = concat.getDim();
    if (llvm::none_of(concat.getInputs(),
                      [&](Value input) { return emptyRootOf(input, dim); }))
      return;
    func::FuncOp function = getOperation();
    OpBuilder builder(&getContext());
    builder.setInsertionPointToStart(&function.getBody().front());
    Location loc = concat.getLoc();
    RankedTensorType type = concat.getResultType();
    // The concatenation so far: each input is inserted right after it is
    // computed, and the next one computed in a slice of that insertion,
    // the pattern that bufferizes without copies.
    Value all = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
    int64_t offset = 0;
    SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
    for (Value input : concat.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        builder.getIndexAttr(0));
      offsets[dim] = builder.getIndexAttr(offset);
      offset += inputType.getDimSize(dim);
      SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
          inputType.getShape(),
          [&](int64_t size) -> OpFoldResult {
            return builder.getIndexAttr(size);
          });
      Operation *previous = all.getDefiningOp();
      OpOperand *root = emptyRootOf(input, dim);
      Operation *user = root ? root->getOwner() : nullptr;
      if (root && user->getBlock() == previous->getBlock() &&
          previous->isBeforeInBlock(user)) {
        builder.setInsertionPoint(user);
        root->set(tensor::ExtractSliceOp::create(builder, loc, inputType, all,
                                                 offsets, sizes, strides));
      }
      // After both the input and the concatenation so far.
      Operation *producer = input.getDefiningOp();
      if (producer && producer->getBlock() == previous->getBlock() &&
          previous->isBeforeInBlock(producer))
        builder.setInsertionPointAfter(producer);
      else
        builder.setInsertionPoint(concat);
      all = tensor::InsertSliceOp::create(builder, loc, input, all, offsets,
                                          sizes, strides);
    }
    concat.getResult().replaceAllUsesWith(all);
    concat->erase();
  }
};

} // namespace
