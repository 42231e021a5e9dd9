//===- ApproximateMath.cpp - vector math as polynomials -------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTAPPROXIMATEMATH
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// The functions whose polynomial stays within `--approx approximate` of
/// libm (measured by the ONNX conformance and real-model tests).
bool isApproximated(StringRef name) {
  return llvm::is_contained({"math.exp", "math.expm1", "math.tanh",
                             "math.log", "math.log1p", "math.log2",
                             "math.erf"},
                            name);
}

struct TractApproximateMath
    : public tract::impl::TractApproximateMathBase<TractApproximateMath> {
  void runOnOperation() override {
    SmallVector<Operation *> targets;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && isa<math::MathDialect>(op->getDialect()) &&
          isApproximated(op->getName().getStringRef()) &&
          op->getNumResults() == 1) {
        auto type = dyn_cast<VectorType>(op->getResult(0).getType());
        if (type && type.getElementType().isF32())
          targets.push_back(op);
      }
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(targets, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
