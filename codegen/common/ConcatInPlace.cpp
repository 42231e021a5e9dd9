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
// A concatenation whose inputs begin with all the inputs of another (a
// dense block: each layer reads the concatenation of all the earlier
// layers' outputs, one more each time) is that slice of the longer one's
// buffer, taken once its inputs are in: the layers' outputs are written
// once, where the last concatenation of the block has them, and the
// shorter ones copy nothing (a view of their leading channels).
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

/// Whether the inputs of `prefix` are the first inputs of `concat`, on
/// the same dim, and fewer.
bool isPrefixOf(tensor::ConcatOp prefix, tensor::ConcatOp concat) {
  if (prefix == concat || prefix.getDim() != concat.getDim() ||
      prefix.getInputs().size() >= concat.getInputs().size())
    return false;
  return llvm::equal(prefix.getInputs(),
                     concat.getInputs().take_front(prefix.getInputs().size()));
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
    // A concatenation that is the prefix of another goes with the longest
    // one of its chain.
    llvm::SmallPtrSet<Operation *, 16> done;
    for (tensor::ConcatOp concat : concats) {
      if (done.contains(concat) ||
          llvm::any_of(concats, [&](tensor::ConcatOp other) {
            return !done.contains(other) && isPrefixOf(concat, other);
          }))
        continue;
      SmallVector<tensor::ConcatOp> prefixes;
      for (tensor::ConcatOp other : concats)
        if (!done.contains(other) && isPrefixOf(other, concat))
          prefixes.push_back(other);
      for (tensor::ConcatOp prefix : prefixes)
        done.insert(prefix);
      done.insert(concat);
      rewrite(concat, prefixes);
    }
  }

  /// Rewrites `concat`, and each of `prefixes` (concatenations of its
  /// first inputs) as the slice of its buffer that holds them, where the
  /// insertions of those inputs all come before it (else as on its own).
  void rewrite(tensor::ConcatOp concat, ArrayRef<tensor::ConcatOp> prefixes) {
    // Worth it when an input at least writes in place.
    int64_t dim = concat.getDim();
    if (llvm::none_of(concat.getInputs(),
                      [&](Value input) { return emptyRootOf(input, dim); })) {
      for (tensor::ConcatOp prefix : prefixes)
        rewrite(prefix, {});
      return;
    }
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
    auto sizesOf = [&](RankedTensorType sliceType) {
      return llvm::map_to_vector(
          sliceType.getShape(), [&](int64_t size) -> OpFoldResult {
            return builder.getIndexAttr(size);
          });
    };
    // The concatenation after each insertion.
    SmallVector<Value> after;
    for (Value input : concat.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        builder.getIndexAttr(0));
      offsets[dim] = builder.getIndexAttr(offset);
      offset += inputType.getDimSize(dim);
      SmallVector<OpFoldResult> sizes = sizesOf(inputType);
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
        builder.setInsertionPointAfter(previous);
      all = tensor::InsertSliceOp::create(builder, loc, input, all, offsets,
                                          sizes, strides);
      after.push_back(all);
    }
    concat.getResult().replaceAllUsesWith(all);
    concat->erase();
    for (tensor::ConcatOp prefix : prefixes) {
      Value inserted = after[prefix.getInputs().size() - 1];
      if (!inserted.getDefiningOp()->isBeforeInBlock(prefix)) {
        rewrite(prefix, {});
        continue;
      }
      builder.setInsertionPoint(prefix);
      RankedTensorType prefixType = prefix.getResultType();
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        builder.getIndexAttr(0));
      prefix.getResult().replaceAllUsesWith(tensor::ExtractSliceOp::create(
          builder, prefix.getLoc(), prefixType, inserted, offsets,
          sizesOf(prefixType), strides));
      prefix->erase();
    }
  }
};

} // namespace
