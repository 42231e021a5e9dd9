//===- Passes.h - the lowering passes and pipelines -------------*- C++ -*-===//

#ifndef LOWERING_PASSES_H
#define LOWERING_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::tract {

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

/// tract dialect → LLVM dialect, for the host CPU: the `tract-lower-to-llvm`
/// pipeline that `tract run` and `tract compile` use.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// Registers the lowering passes and pipelines, for tract-opt.
void registerTractLoweringPassesAndPipelines();

/// Registers the upstream dialects the lowering produces, and their
/// interfaces (bufferization, translation to LLVM IR).
void registerLoweringDialects(DialectRegistry &registry);

} // namespace mlir::tract

#endif // LOWERING_PASSES_H
