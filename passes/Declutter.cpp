#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "passes/DeclutterPatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTDECLUTTER
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

struct DeclutterPass : mlir::tract::impl::TractDeclutterBase<DeclutterPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet owning(context);
    auto *dialect = context->getLoadedDialect<TractDialect>();
    dialect->getCanonicalizationPatterns(owning);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (&op.getDialect() == dialect)
        op.getCanonicalizationPatterns(owning, context);
    populateDeclutterArithmeticPatterns(owning);
    populateDeclutterAffinePatterns(owning);
    populateDeclutterActivationPatterns(owning);
    populateDeclutterAxisPatterns(owning);
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(owning));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.enableFolding(true);
    if (failed(applyPatternsGreedily(getOperation(), *patterns, config))) {
      getOperation().emitError("tract-declutter did not converge");
      signalPassFailure();
    }
  }

  std::shared_ptr<FrozenRewritePatternSet> patterns;
};

} // namespace
