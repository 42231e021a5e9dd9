//===- Dump.h - the listing of `tract dump` ---------------------*- C++ -*-===//
//
// `tract dump` lists a model as tract does: one line per input and op of the
// entry function in execution order (`id OpName node_name`), each output's
// fact under it (`— 1,S,64,F32`), then, when asked, the op's cost
// (`--cost`), its measured time (`--profile`) and, with `--gpu`, the GPU
// kernels it runs (`gpu: 2 kernels`); or all of it as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DUMP_H
#define LIB_DUMP_H

#include "dialects/tdim/TDim.h"
#include "target/Jit.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::tract::lib {

/// The times of a compiled model's ops, as `dump --profile` measures them.
struct ModelProfile {
  /// Milliseconds per run of each op of the entry function, in body order
  /// (terminator excluded), with the instrumentation's own time removed.
  std::vector<double> opMs;
  /// GPU kernels per run of each op, in the same order (with --gpu).
  std::vector<double> opKernels;
  /// Milliseconds per run of the model compiled without instrumentation.
  double benchMs = 0;
  /// Milliseconds per run of the instrumented model, as a whole.
  double instrumentedMs = 0;
  int64_t runs = 0;      ///< runs of the instrumented model
  int64_t benchRuns = 0; ///< runs of the uninstrumented model
  /// What an empty enter/exit pair measures, removed from each op.
  double instrumentationNs = 0;
  /// The symbols' values for the inputs the model ran on, for GF/s.
  SymbolValues symbols;
  /// With --gpu: the copies between host and device. Per run of the plain
  /// model after the warm-up runs: the uploads of what kernels read and the
  /// downloads of what they wrote, and their bytes;
  /// the weights' uploads since the process started, and those of them
  /// that came after the warm-up runs (none when each is uploaded once).
  struct Transfers {
    double uploads = 0, uploadBytes = 0, downloads = 0, downloadBytes = 0;
    int64_t weights = 0, weightBytes = 0, weightsAfterWarmUp = 0;
  };
  std::optional<Transfers> transfers;
};

struct DumpOptions {
  bool cost = false;
  bool json = false;
  const ModelProfile *profile = nullptr;
  /// With --gpu: the API, and where each op of the entry function runs, in
  /// body order (placeOnGpu), to mark the ops that run on the device.
  std::string gpu;
  const std::vector<OpPlacement> *placements = nullptr;
};

/// The model's name for the op at `location` (its NameLoc), or "".
std::string nodeName(Location location);

/// The model's entry point: `main` if present, else the first function.
func::FuncOp entryFunction(ModuleOp module);

/// Prints the listing of `entry` as text or JSON.
void printListing(func::FuncOp entry, const DumpOptions &options,
                  llvm::raw_ostream &os);

} // namespace mlir::tract::lib

#endif // LIB_DUMP_H
