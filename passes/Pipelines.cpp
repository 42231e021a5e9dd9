#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tract {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

void mlir::tract::buildDeclutterPipeline(OpPassManager &pm) {
  // Types follow from the inputs first (a fact or --set may have changed
  // them), then the rewrites see exact shapes.
  pm.addPass(createTractInferShapes());
  pm.addPass(createTractDeclutter());
  pm.addPass(createCSEPass());
  // CSE merges duplicated subgraphs, which lets more patterns match.
  pm.addPass(createTractDeclutter());
}

void mlir::tract::buildStepFunctionPipeline(OpPassManager &pm) {
  pm.addPass(createTractExternalizeState());
  // The state's concats and slices simplify with the rest.
  buildDeclutterPipeline(pm);
}

void mlir::tract::registerTractPassesAndPipelines() {
  registerTractPasses();
  PassPipelineRegistration<>(
      "tract-declutter-pipeline",
      "The declutter pipeline that `tract -O` runs on a model",
      [](OpPassManager &pm) { buildDeclutterPipeline(pm); });
  PassPipelineRegistration<>(
      "tract-step-function-pipeline",
      "What `tract --pulse` runs on a pulsified model before compiling it: "
      "tract-externalize-state, then the declutter pipeline",
      [](OpPassManager &pm) { buildStepFunctionPipeline(pm); });
}
