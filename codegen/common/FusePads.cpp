//===- FusePads.cpp - producers write into the interior of padded tensors -===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFUSEPADS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

struct TractFusePads : public tract::impl::TractFusePadsBase<TractFusePads> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateFuseTensorPadWithProducerLinalgOpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
