//===- Pipelines.h - the named pipelines ------------------------*- C++ -*-===//
//
// Every pipeline the tools run, in one place, each also registered by name
// for tract-opt so that it reproduces exactly what `tract` runs: the
// tract-level ones (declutter, the step function of a streaming model) and
// the lowering (conversion, codegen and the entry ABI down to the LLVM
// dialect).
//
//===----------------------------------------------------------------------===//

#ifndef PIPELINES_PIPELINES_H
#define PIPELINES_PIPELINES_H

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

/// Adds the passes that `tract -O` and `tract dump` run to declutter a model;
/// `tract-opt --tract-declutter-pipeline` runs the same.
void buildDeclutterPipeline(OpPassManager &pm);

/// Adds what makes a pulsified model a pure step function for compilation:
/// tract-externalize-state, then the declutter pipeline;
/// `tract-opt --tract-step-function-pipeline` runs the same.
void buildStepFunctionPipeline(OpPassManager &pm);

/// What the first stage of tract-lower-to-llvm takes from the target.
struct LowerToLinalgOptions {
  /// The f32 values the vector registers hold, for the CPU's fused kernels
  /// (512: AVX-512's 32 registers of 16).
  int64_t registerFile = 512;
  /// tract-cpu-quant-kernels' signed-products: the target multiplies
  /// signed bytes by signed bytes (AArch64's sdot).
  bool signedProducts = false;
  /// The byte dot-product instruction (TargetInfo::dotProduct), for
  /// tract-cpu-block-quant-kernels' decoding steps.
  std::string dotProduct = "none";
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

/// Registers the project's passes (passes/, conversion/, codegen/,
/// target/), the upstream passes its pipelines run on GPU modules, and the
/// named pipelines, for tract-opt.
void registerTractPassesAndPipelines();

/// Registers the upstream dialects the lowering produces, and their
/// interfaces (bufferization, translation to LLVM IR).
void registerLoweringDialects(DialectRegistry &registry);

} // namespace mlir::tract

#endif // PIPELINES_PIPELINES_H
