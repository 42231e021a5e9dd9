//===- ObjectCode.h - LLVM IR to object code, on several threads -*- C++ -*-===//
//
// The last stage of every compile: LLVM's optimization pipeline and code
// generation, from a translated model to relocatable objects. The JIT links
// them in process; `tract compile` writes one. Most of a model's compile
// time is spent here, and a model's code is many independent functions (one
// per parallel region, kernels, the body of `main`), so the module is split
// into partitions that are optimized and compiled on threads of their own,
// each in its own LLVMContext.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_OBJECTCODE_H
#define TARGET_OBJECTCODE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::tract {

/// Makes a target machine for one compiling thread: LLVM's machines hold
/// state that threads cannot share.
using TargetMachineFactory =
    std::function<llvm::Expected<std::unique_ptr<llvm::TargetMachine>>()>;

struct ObjectCodeOptions {
  unsigned optLevel = 3; ///< LLVM's
  /// Threads to optimize and compile on, each taking partitions of the
  /// module in turn; 0: one per core. One thread compiles the module whole,
  /// to one object.
  unsigned threads = 1;
};

/// Optimizes `module` for the target `makeMachine` describes (its triple and
/// data layout are set here) and compiles it to relocatable objects: one,
/// or one per partition, which refer to each other by symbol. The module is
/// consumed.
llvm::Expected<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
emitObjects(std::unique_ptr<llvm::Module> module,
            const TargetMachineFactory &makeMachine,
            const ObjectCodeOptions &options);

/// LLVM's optimization pipeline at `optLevel` for code the tract pipeline
/// generated: its loops are already vectorized and unrolled by the vector
/// dialect, so LLVM's own vectorizers and unrollers, most of the time of a
/// default pipeline, only look again at what is done.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                           unsigned optLevel);

} // namespace mlir::tract

#endif // TARGET_OBJECTCODE_H
