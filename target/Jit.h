//===- Jit.h - compile a tract model in process and run it ------*- C++ -*-===//
//
// `tract run` and `tract bench` compile the model's `main` through the
// tract-lower-to-llvm pipeline and LLVM (on a thread per core, ObjectCode.h),
// link the objects in process with ORC, and call the entry on runtime
// tensors; the objects and the packed weights are kept in the compile cache
// (CompileCache.h), so that the next process loads them instead. The host checks what memref descriptors cannot carry
// (element types, ranks); the compiled code checks the dims and the model's
// assertions (tract-entry-checks) and returns a status. A wrong input is
// an error message, never undefined behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_JIT_H
#define TARGET_JIT_H

#include "dialects/tdim/TDim.h"
#include "runtime/tract_runtime.h"
#include "target/CompileCache.h"
#include "target/ModelSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class JITTargetMachineBuilder;
class LLJIT;
} // namespace llvm::orc

namespace mlir::tract {

struct JitOptions {
  /// LLVM's. 2: on the suite, O3's code ran no faster (within 1%), and
  /// took a quarter more time to optimize.
  unsigned optLevel = 2;
  /// Threads the code is made for (TargetInfo::threads); the team that
  /// runs it is OpenMP's, see tract_set_threads.
  int64_t threads = 1;
  /// TargetInfo::threadingThreshold (tract's --threading-threshold).
  double threadingThreshold = -1;
  /// The GPU API the linalg ops run through ("vulkan"), or "" (the CPU).
  std::string gpu;
  /// With a GPU: folders to write the kernels' SPIR-V modules and their
  /// MSL to.
  std::string spirvDir;
  std::string mslDir;
  /// With CUDA: a folder to write the kernels' PTX to, and the toolkit
  /// (libdevice) given by --cuda-path.
  std::string ptxDir;
  std::string cudaPath;
  /// The folder of the compile cache (CompileCache.h), or "": compile
  /// every time. Models for a GPU are not cached.
  std::string cacheDir;
};

/// Where an op's tensor work runs once compiled for a GPU.
struct OpPlacement {
  /// GPU kernels its code launches (a kernel in a loop counts once).
  int64_t kernels = 0;
  /// Whether linalg ops or copies of its own stay on the CPU (the kernels
  /// cannot run them). An op with neither has no tensor work of its own: a
  /// constant, shape arithmetic, or an op fused into the kernel of the op
  /// that consumes it.
  bool onCpu = false;
};

/// The placement of each top-level op of `entry` (in body order, terminator
/// excluded) in the code compiled for `options.gpu`. Fails as
/// CompiledModel::compile does (no device, say).
llvm::Expected<std::vector<OpPlacement>>
placeOnGpu(ModuleOp module, llvm::StringRef entry, const JitOptions &options);

class CompiledModel {
public:
  ~CompiledModel();

  /// Lowers `module` (tract dialect, consumed) and JIT-compiles it.
  /// Errors go to the context's diagnostic handler and are summarized in
  /// the returned error. With `timing`, the MLIR passes and LLVM's part
  /// are timed under it.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  compile(ModuleOp module, const JitOptions &options = {},
          TimingScope *timing = nullptr);

  llvm::ArrayRef<TensorSignature> getInputs() const { return inputs; }
  llvm::ArrayRef<TensorSignature> getOutputs() const { return outputs; }

  /// Checks the number of inputs; the runtime checks their element types
  /// and ranks when the model runs.
  llvm::Error checkInputs(llvm::ArrayRef<const tract_tensor *> args) const;

  /// Runs the model through the runtime's tract_model_run, as a compiled
  /// object runs. Outputs are new tensors owned by the caller
  /// (tract_tensor_free). Inputs of another element type or rank, and dims
  /// that do not match the model's shapes or violate its assertions, are
  /// errors naming the input.
  llvm::Expected<std::vector<tract_tensor *>>
  run(llvm::ArrayRef<const tract_tensor *> args) const;

  /// The model as the runtime describes it (tract_model_run,
  /// tract_stream_new); valid while this lives.
  const tract_model &getRuntimeModel() const { return runtimeModel; }

private:
  CompiledModel() = default;
  /// Links `objects` in a JIT of its own, their references to `constants`
  /// resolved to the constants' data, and finds the entry point.
  llvm::Error link(const llvm::orc::JITTargetMachineBuilder &host,
                   std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
                   llvm::ArrayRef<CachedConstant> constants);
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// The compile cache's entry the code came from, whose constants it
  /// reads in place.
  std::unique_ptr<llvm::MemoryBuffer> cachedEntry;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  /// What tract_model_run needs: the descriptions (their shape strings
  /// live in `shapes`) and the packed entry point the JIT compiled.
  std::vector<std::string> shapes;
  std::vector<tract_io_info> inputInfos, outputInfos;
  tract_model runtimeModel = {};
};

} // namespace mlir::tract

#endif // TARGET_JIT_H
