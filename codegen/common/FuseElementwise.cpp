//===- FuseElementwise.cpp - one loop nest per element-wise chain ---------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Whether computing `body` again costs about as much as reading its
/// result: a few arithmetic ops, none a division or a math function.
bool isCheapBody(Block *body) {
  size_t count = 0;
  for (Operation &op : body->without_terminator()) {
    if (isa<math::MathDialect>(op.getDialect()) ||
        isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::RemFOp,
            arith::RemSIOp, arith::RemUIOp>(op))
      return false;
    ++count;
  }
  return count <= 4;
}

/// Fuses only element-wise into element-wise: a producer fused into a
/// contraction would be recomputed for every row of the product, and a
/// producer with other users would be computed twice. A producer the
/// consumer broadcasts is recomputed for every element it is broadcast
/// to: only a cheap one (a squeeze-and-excitation's sigmoid of one value
/// per channel, fused into the scale of the whole map, computed its
/// exponential at every pixel).
bool fusesWell(OpOperand *operand) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!producer || !consumer || !producer->hasOneUse())
    return false;
  if (producer.getNumLoops() == 0 || consumer.getNumLoops() == 0)
    return false;
  if (!linalg::isElementwise(producer) || !linalg::isElementwise(consumer))
    return false;
  AffineMap read = consumer.getMatchingIndexingMap(operand);
  bool broadcast = read.getNumResults() < consumer.getNumLoops() ||
                   !read.isPermutation();
  return !broadcast || isCheapBody(producer.getBlock());
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
