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

/// What the first stage of tract-lower-to-llvm takes from the target.
struct LowerToLinalgOptions {
  /// The f32 values the vector registers hold, for the CPU's fused kernels
  /// (512: AVX-512's 32 registers of 16).
  int64_t registerFile = 512;
  /// tract-entry-checks' body-may-fail: the body launches GPU kernels.
  bool bodyMayFail = false;
};

/// tract dialect → linalg on tensors behind the entry checks, as
/// `tract-lower-to-llvm` begins: the symbols bound, the CPU's fused kernels
/// (attention, block-quantized products), tract-lower-to-linalg, then
/// tract-entry-checks. `tract --pass linalg` stops there.
void buildLowerToLinalgPipeline(OpPassManager &pm,
                                const LowerToLinalgOptions &options = {});

/// tract dialect → LLVM dialect, with kernels tiled for `target`: the
/// `tract-lower-to-llvm` pipeline that `tract run` and `tract compile` use.
void buildLowerToLLVMPipeline(OpPassManager &pm, const TargetInfo &target);

/// Prepares `module`'s `main` for a C caller (`llvm.emit_c_interface`) and
/// runs the tract-lower-to-llvm pipeline on it, timed under `timing` when
/// given. The host compilers (JIT and object files) start this way.
LogicalResult lowerModelToLLVM(ModuleOp module, func::FuncOp main,
                               const TargetInfo &target, TimingScope *timing);

/// Registers the passes of conversion/, codegen/ and target/ and the
/// lowering pipelines, for tract-opt.
void registerTractLoweringPassesAndPipelines();

/// Registers the upstream dialects the lowering produces, and their
/// interfaces (bufferization, translation to LLVM IR).
void registerLoweringDialects(DialectRegistry &registry);

} // namespace mlir::tract

#endif // LOWERING_PASSES_H
