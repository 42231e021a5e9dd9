//===- FillBorders.cpp - fill only the border of a padded buffer ----------===//
//
// A padded activation is a buffer filled with the padding value whose
// interior an op then overwrites (tract-fuse-pads). Filling all of it
// writes the interior twice: for a 114×114×96 buffer, 5 MB of stores that
// only the one-pixel border needed. The fill becomes fills of the slabs
// around the interior.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/common/BufferUses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFILLBORDERS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Whether `op` may read or write `buffer` (or a view of it); ops of
/// unknown effects may.
bool mayTouch(Operation *op, Value buffer) {
  return tract::touchesBuffers(op, {buffer}, /*writesOnly=*/false);
}

/// Whether `op` overwrites every element of `view` without reading it: an
/// op of parallel loops writing it through the identity map with a body
/// that ignores the old value, or a copy into it.
bool overwrites(Operation *op, Value view) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget() == view;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumLoops() != linalgOp.getNumParallelLoops())
    return false;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  if (init->get() != view ||
      !linalgOp.getMatchingIndexingMap(init).isIdentity() ||
      linalgOp.payloadUsesValueFromOperand(init))
    return false;
  return llvm::none_of(linalgOp.getDpsInputOperands(), [&](OpOperand *input) {
    return input->get() == view;
  });
}

/// The value `op` fills its one output with: a linalg.fill's, or that of an
/// op of parallel loops without inputs whose body yields a value from
/// outside (the linalg.map a tensor.pad of a function argument becomes).
Value filledValue(linalg::LinalgOp op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation()))
    return fill.getInputs()[0];
  if (op.getNumDpsInputs() != 0 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() || op.hasIndexSemantics())
    return nullptr;
  Block *body = op.getBlock();
  if (body->getOperations().size() != 1)
    return nullptr;
  Value yielded = body->getTerminator()->getOperand(0);
  if (yielded.getParentBlock() == body)
    return nullptr;
  return yielded;
}

/// The interior of `fill`'s buffer that a later op overwrites before
/// anything reads the buffer: a static subview of unit strides.
memref::SubViewOp overwrittenInterior(Operation *fill, Value buffer) {
  for (Operation *next = fill->getNextNode(); next;
       next = next->getNextNode()) {
    if (auto view = dyn_cast<memref::SubViewOp>(next)) {
      if (view.getSource() == buffer && view.hasUnitStride() &&
          view.getType().hasStaticShape() &&
          llvm::all_of(view.getStaticOffsets(), [](int64_t offset) {
            return !ShapedType::isDynamic(offset);
          })) {
        // The first reader of the view must overwrite it all.
        for (Operation *user = view->getNextNode(); user;
             user = user->getNextNode()) {
          if (!mayTouch(user, buffer))
            continue;
          return overwrites(user, view.getResult()) ? view : nullptr;
        }
      }
      continue;
    }
    if (mayTouch(next, buffer))
      return nullptr;
  }
  return nullptr;
}

struct TractFillBorders
    : public tract::impl::TractFillBordersBase<TractFillBorders> {
  void runOnOperation() override {
    SmallVector<std::tuple<linalg::LinalgOp, Value, memref::SubViewOp>> work;
    getOperation().walk([&](linalg::LinalgOp fill) {
      Value value = filledValue(fill);
      if (!value || !fill.hasPureBufferSemantics())
        return;
      Value buffer = fill.getDpsInitOperand(0)->get();
      auto type = dyn_cast<MemRefType>(buffer.getType());
      if (!buffer.getDefiningOp<memref::AllocOp>() || !type ||
          !type.hasStaticShape())
        return;
      if (memref::SubViewOp interior = overwrittenInterior(fill, buffer))
        work.emplace_back(fill, value, interior);
    });
    for (auto [fill, value, interior] : work)
      fillAround(fill, value, interior);
  }

  /// Fills the slabs of `fill`'s buffer around `interior`: along each axis
  /// in turn, the parts before and after the interior, within the
  /// interior on the axes before it and whole on those after.
  void fillAround(linalg::LinalgOp fill, Value value,
                  memref::SubViewOp interior) {
    OpBuilder builder(fill);
    Location loc = fill.getLoc();
    Value buffer = fill.getDpsInitOperand(0)->get();
    ArrayRef<int64_t> shape = cast<MemRefType>(buffer.getType()).getShape();
    ArrayRef<int64_t> offsets = interior.getStaticOffsets();
    ArrayRef<int64_t> sizes = interior.getStaticSizes();
    size_t rank = shape.size();
    for (size_t axis = 0; axis < rank; ++axis) {
      int64_t end = offsets[axis] + sizes[axis];
      for (auto [begin, length] :
           {std::make_pair(int64_t(0), offsets[axis]),
            std::make_pair(end, shape[axis] - end)}) {
        if (length <= 0)
          continue;
        SmallVector<OpFoldResult> slabOffsets, slabSizes, strides;
        for (size_t i = 0; i < rank; ++i) {
          int64_t offset = i < axis ? offsets[i] : 0;
          int64_t size = i < axis ? sizes[i] : shape[i];
          if (i == axis) {
            offset = begin;
            size = length;
          }
          slabOffsets.push_back(builder.getIndexAttr(offset));
          slabSizes.push_back(builder.getIndexAttr(size));
          strides.push_back(builder.getIndexAttr(1));
        }
        Value slab = memref::SubViewOp::create(builder, loc, buffer,
                                               slabOffsets, slabSizes, strides);
        linalg::FillOp::create(builder, loc, value, slab);
      }
    }
    fill->erase();
  }
};

} // namespace
