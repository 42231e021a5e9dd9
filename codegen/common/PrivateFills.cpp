//===- PrivateFills.cpp - each product fills its own output ---------------===//
//
// CSE merges the identical fills that start several products (the zeros of
// the depthwise convolutions without a bias, one per block): bufferized,
// each product then writes into a copy of the one filled buffer, a copy of
// the whole output where a fill fused into the product's tiles cost
// nothing. Each use of a fill as the init of a linalg op gets a fill of
// its own, next to it (but the first, when nothing else reads the fill).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTPRIVATEFILLS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

struct TractPrivateFills
    : public tract::impl::TractPrivateFillsBase<TractPrivateFills> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->hasOneUse())
        fills.push_back(fill);
    });
    OpBuilder builder(&getContext());
    for (linalg::FillOp fill : fills) {
      // The linalg ops of its block that write into the fill.
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
        if (linalgOp && linalgOp.isDpsInit(&use) &&
            linalgOp->getBlock() == fill->getBlock())
          inits.push_back(&use);
      }
      // In program order: the first keeps the fill.
      llvm::sort(inits, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      bool shared = inits.size() < llvm::range_size(fill->getUses());
      for (OpOperand *use : llvm::drop_begin(inits, shared ? 0 : 1)) {
        builder.setInsertionPoint(use->getOwner());
        Value output = fill.getOutputs().front();
        if (auto empty = output.getDefiningOp<tensor::EmptyOp>())
          output = builder.clone(*empty)->getResult(0);
        auto copy = linalg::FillOp::create(builder, fill.getLoc(),
                                           fill.getInputs(), ValueRange{output});
        use->set(copy.getResult(0));
      }
    }
  }
};

} // namespace
