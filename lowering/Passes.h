//===- Passes.h - the lowering passes and pipelines -------------*- C++ -*-===//

#ifndef LOWERING_PASSES_H
#define LOWERING_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::tract {

struct TargetInfo;

/// The runtime functions tract-instrument-profile calls around each op.
inline constexpr llvm::StringLiteral kProfileEnterName = "tract_profile_enter";
inline constexpr llvm::StringLiteral kProfileExitName = "tract_profile_exit";

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

/// tract dialect → LLVM dialect, with kernels tiled for `target`: the
/// `tract-lower-to-llvm` pipeline that `tract run` and `tract compile` use.
void buildLowerToLLVMPipeline(OpPassManager &pm, const TargetInfo &target);

/// Prepares `module`'s `main` for a C caller (`llvm.emit_c_interface`) and
/// runs the tract-lower-to-llvm pipeline on it, timed under `timing` when
/// given. The host compilers (JIT and object files) start this way.
LogicalResult lowerModelToLLVM(ModuleOp module, func::FuncOp main,
                               const TargetInfo &target, TimingScope *timing);

/// Registers the lowering passes and pipelines, for tract-opt.
void registerTractLoweringPassesAndPipelines();

/// Registers the upstream dialects the lowering produces, and their
/// interfaces (bufferization, translation to LLVM IR).
void registerLoweringDialects(DialectRegistry &registry);

} // namespace mlir::tract

#endif // LOWERING_PASSES_H
