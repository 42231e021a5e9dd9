#ifndef PASSES_PASSES_H
#define PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::tract {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Adds the passes that `tract -O` and `tract dump` run to declutter a model;
/// `tract-opt --tract-declutter-pipeline` runs the same.
void buildDeclutterPipeline(OpPassManager &pm);

/// Registers the project's passes and named pipelines with the global
/// registry, for tract-opt.
void registerTractPassesAndPipelines();

} // namespace mlir::tract

#endif // PASSES_PASSES_H
