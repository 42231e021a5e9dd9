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

/// The dialect's canonicalization patterns and the declutter rewrites.
void populateDeclutterPatterns(MLIRContext *context,
                               RewritePatternSet &patterns) {
  auto *dialect = context->getLoadedDialect<TractDialect>();
  dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    if (&op.getDialect() == dialect)
      op.getCanonicalizationPatterns(patterns, context);
  populateDeclutterArithmeticPatterns(patterns);
  populateDeclutterAffinePatterns(patterns);
  populateDeclutterActivationPatterns(patterns);
  populateDeclutterAxisPatterns(patterns);
  populateDeclutterScanPatterns(patterns);
  populateBlockDequantPatterns(patterns);
}

struct DeclutterPass : mlir::tract::impl::TractDeclutterBase<DeclutterPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet first(context), second(context);
    populateDeclutterPatterns(context, first);
    // Rewrites that would hide a match from the others (a 1x1 conv turned
    // into an einsum no longer absorbs its batch norm; attention turned
    // into sdpa no longer absorbs the moves of its heads into the einsums'
    // letters) wait for a fixpoint.
    populateDeclutterPatterns(context, second);
    populateDeclutterConvToEinsumPatterns(second);
    populateDeclutterTransformerPatterns(second);
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(first));
    latePatterns = std::make_shared<FrozenRewritePatternSet>(std::move(second));
    return success();
  }

  void runOnOperation() override {
    GreedyRewriteConfig config;
    config.enableFolding(true);
    if (failed(applyPatternsGreedily(getOperation(), *patterns, config)) ||
        failed(applyPatternsGreedily(getOperation(), *latePatterns, config))) {
      getOperation().emitError("tract-declutter did not converge");
      signalPassFailure();
    }
    // Q4_0 weights that no product reads as they are: their values.
    foldBlockDequant(getOperation());
    // f16 weights read by products as they are stored.
    absorbStoredHalves(getOperation());
  }

  std::shared_ptr<FrozenRewritePatternSet> patterns, latePatterns;
};

} // namespace
