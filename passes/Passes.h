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

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Recomputes the result types of every function of `module` from its
/// inputs (what `tract-infer-shapes` does); a contradiction is an error at
/// the op.
LogicalResult inferShapes(ModuleOp module);

} // namespace mlir::tract

#endif // PASSES_PASSES_H
