#ifndef TARGET_TARGETS_H
#define TARGET_TARGETS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::tract {

/// A CPU target that `tract compile --target NAME` can emit objects for.
struct CpuTarget {
  llvm::StringRef name;       ///< short name on the command line
  llvm::StringRef triple;     ///< LLVM target triple
  llvm::StringRef defaultCpu; ///< CPU used when `--cpu` is not given
  /// Features added to defaultCpu's when `--cpu` is not given: the common
  /// baseline of the target's devices, vector unit included.
  llvm::StringRef defaultFeatures = "";
};

/// The targets the project compiles for: x86_64, aarch64, armv7, wasm32.
llvm::ArrayRef<CpuTarget> cpuTargets();

/// Finds a target by its short name or its full triple; nullptr if unknown.
const CpuTarget *lookupCpuTarget(llvm::StringRef nameOrTriple);

/// The CPU of the Macs `tract compile --target metal` makes host objects
/// for: Apple silicon under macOS 11 or later (Metal 2.3), Mach-O objects.
const CpuTarget &metalHostTarget();

/// The host's target, as one of cpuTargets(); nullptr on another host.
const CpuTarget *hostCpuTarget();

/// True if the LLVM the project links can generate code for `target`;
/// otherwise `error` says why.
bool isTargetAvailable(const CpuTarget &target, std::string &error);

/// The CUDA toolkit whose libdevice the kernels' math links: `given` (as
/// `--cuda-path`), else CUDA_PATH, CUDA_HOME or CUDA_ROOT, else
/// /usr/local/cuda, else the folder above a `ptxas` on the PATH; "" when
/// none has nvvm/libdevice.
std::string findCudaToolkit(llvm::StringRef given);

/// findCudaToolkit(given), or an error when `given` is not "" and no CUDA
/// toolkit.
llvm::Expected<std::string> resolveCudaToolkit(llvm::StringRef given);

/// Whether the CUDA toolkit `root` has the tools that make fatbins of PTX:
/// bin/ptxas and bin/fatbinary, executable.
bool hasCudaAssembler(llvm::StringRef root);

} // namespace mlir::tract

#endif // TARGET_TARGETS_H
