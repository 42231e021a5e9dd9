#ifndef PASSES_PASSES_H
#define PASSES_PASSES_H

#include "dialects/tract/TractModule.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <set>
#include <string>

namespace mlir::tract {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Recomputes the result types of every function of `module` from its
/// inputs (what `tract-infer-shapes` does); a contradiction is an error at
/// the op.
LogicalResult inferShapes(ModuleOp module);

/// Adds the passes that `tract -O` and `tract dump` run to declutter a model;
/// `tract-opt --tract-declutter-pipeline` runs the same.
void buildDeclutterPipeline(OpPassManager &pm);

/// Adds what makes a pulsified model a pure step function for compilation:
/// tract-externalize-state, then the declutter pipeline;
/// `tract-opt --tract-step-function-pipeline` runs the same.
void buildStepFunctionPipeline(OpPassManager &pm);

/// Registers the project's passes and named pipelines with the global
/// registry, for tract-opt.
void registerTractPassesAndPipelines();

} // namespace mlir::tract

#endif // PASSES_PASSES_H
