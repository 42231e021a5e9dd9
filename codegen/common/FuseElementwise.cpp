//===- FuseElementwise.cpp - one loop nest per element-wise chain ---------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Fuses only element-wise into element-wise: a producer fused into a
/// contraction would be recomputed for every row of the product, and a
/// producer with other users would be computed twice.
bool fusesWell(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || !producer->hasOneUse())
    return false;
  if (producer.getNumLoops() == 0 || consumer.getNumLoops() == 0)
    return false;
  return linalg::isElementwise(producer) && linalg::isElementwise(consumer);
}

struct TractFuseElementwise
    : public tract::impl::TractFuseElementwiseBase<TractFuseElementwise> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusesWell);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
