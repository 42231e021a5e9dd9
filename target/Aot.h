//===- Aot.h - compile a tract model to an object file ----------*- C++ -*-===//
//
// `tract compile`: lowers the model's `main` through the tract-lower-to-llvm
// pipeline, optimizes it for a CPU target and writes a relocatable object.
// The object exports `<name>_invoke`, the entry point with packed arguments
// that the runtime's tract_model_run calls, and the generated C header
// describes the model for it.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_AOT_H
#define TARGET_AOT_H

#include "target/ModelSignature.h"
#include "target/Targets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tract {

struct AotOptions {
  /// Prefix of every symbol the object and the header define; a C
  /// identifier.
  std::string name = "model";
  const CpuTarget *target = nullptr;
  /// The GPU API the linalg ops run through ("vulkan", "cuda", "metal"), or
  /// "": the object then calls that GPU runtime (tract_gpu.h, tract_cuda.h,
  /// tract_metal.h); Vulkan and Metal kernels are for a baseline device (f32
  /// and i32). The folders to write their SPIR-V and MSL to.
  std::string gpu;
  std::string spirvDir;
  std::string mslDir;
  /// With CUDA: the chip the PTX is for, and a folder to write it to.
  std::string gpuChip = "sm_80";
  std::string ptxDir;
  std::string cudaPath; ///< as --cuda-path, "" to look for one
  /// With CUDA: embed fatbins (the cubin for gpuChip and the PTX), made by
  /// the toolkit's ptxas and fatbinary (see hasCudaAssembler), rather than
  /// the PTX alone.
  bool cudaFatbin = false;
  /// The CPU to tune and select instructions for; "native" is the host's.
  std::string cpu;
  unsigned optLevel = 3;
  /// Threads the code is made for: above one, the object calls LLVM's
  /// OpenMP runtime (see tract_set_threads).
  int64_t threads = 1;
  /// TargetInfo::threadingThreshold (tract's --threading-threshold).
  double threadingThreshold = -1;
  /// When set, the stages (MLIR passes, LLVM optimization, code generation)
  /// are timed under it.
  TimingScope *timing = nullptr;
};

/// Lowers and compiles `module` (tract dialect, consumed) to an object file
/// written to `os`. Returns the model's signature for the header.
llvm::Expected<ModelSignature> compileToObject(ModuleOp module,
                                               const AotOptions &options,
                                               llvm::raw_pwrite_stream &os);

/// The C header of a compiled model: its description for the runtime and a
/// `<name>_run` entry point. `source` names the model in a comment.
std::string generateHeader(const ModelSignature &signature,
                           const AotOptions &options, llvm::StringRef source);

/// Whether `name` can prefix C symbols.
bool isValidModelName(llvm::StringRef name);

} // namespace mlir::tract

#endif // TARGET_AOT_H
