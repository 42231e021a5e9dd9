//===- PrivateFills.cpp - each product fills its own output ---------------===//
//
// CSE merges the identical fills that start several products (the zeros of
// the depthwise convolutions without a bias, one per block): bufferized,
// each product then writes into a copy of the one filled buffer, a copy of
// the whole output where a fill fused into the product's tiles cost
// nothing. Each use of a fill as the init of a linalg op gets a fill of
// its own, next to it (but the first, when nothing else reads the fill).
//
// CSE merges the empty tensors of equal shape too. Bufferized, the ops
// that write into one share its buffer: an activation after a product then
// writes into the buffer that the product read, and the kernels cannot run
// it on the product's tiles (a tile's result would overwrite inputs that
// later tiles read), and a bias broadcast into a buffer that another write
// conflicts with is copied whole. Each op that writes into a shared empty
// tensor (through a reshape or not) gets one of its own.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTPRIVATEFILLS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Whether `use` of an empty tensor is the init of a linalg op, directly
/// or through a reshape that only such inits use.
bool isInitUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
    return linalgOp.isDpsInit(&use);
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user))
    return false;
  return llvm::all_of(user->getResult(0).getUses(),
                      [](OpOperand &use) { return isInitUse(use); });
}

/// Gives each op that writes into a shared empty tensor (but the first) an
/// empty tensor of its own, right before it.
void privateEmpties(tensor::EmptyOp empty, OpBuilder &builder) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : empty->getUses())
    if (use.getOwner()->getBlock() == empty->getBlock() && isInitUse(use))
      uses.push_back(&use);
  llvm::sort(uses, [](OpOperand *a, OpOperand *b) {
    return a->getOwner()->isBeforeInBlock(b->getOwner());
  });
  if (uses.empty())
    return;
  bool shared = uses.size() < llvm::range_size(empty->getUses());
  for (OpOperand *use : llvm::drop_begin(uses, shared ? 0 : 1)) {
    builder.setInsertionPoint(use->getOwner());
    use->set(builder.clone(*empty)->getResult(0));
  }
}

struct TractPrivateFills
    : public tract::impl::TractPrivateFillsBase<TractPrivateFills> {
  void runOnOperation() override {
    // Fills and broadcasts (a bias, the zeros CSE merged).
    SmallVector<linalg::LinalgOp> starts;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::FillOp, linalg::BroadcastOp>(op.getOperation()) &&
          op.hasPureTensorSemantics() && !op->hasOneUse())
        starts.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (linalg::LinalgOp start : starts) {
      // The linalg ops of its block that write into it.
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : start->getResult(0).getUses()) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
        if (linalgOp && linalgOp.isDpsInit(&use) &&
            linalgOp->getBlock() == start->getBlock())
          inits.push_back(&use);
      }
      // In program order: the first keeps it.
      llvm::sort(inits, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      if (inits.empty())
        continue;
      bool shared = inits.size() < llvm::range_size(start->getUses());
      for (OpOperand *use : llvm::drop_begin(inits, shared ? 0 : 1)) {
        builder.setInsertionPoint(use->getOwner());
        IRMapping mapping;
        Value output = start.getDpsInitOperand(0)->get();
        if (auto empty = output.getDefiningOp<tensor::EmptyOp>())
          mapping.map(output, builder.clone(*empty)->getResult(0));
        use->set(builder.clone(*start, mapping)->getResult(0));
      }
    }
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse())
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties)
      privateEmpties(empty, builder);
  }
};

} // namespace
