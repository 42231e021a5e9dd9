//===- Streaming.h - run a pulsified model pulse by pulse -------*- C++ -*-===//
//
// `tract MODEL --pulse S=8 run` runs the streaming model as a device would:
// the batch input is cut into pulses (zeros after its end), the step
// function is called once per pulse with the states it returned the call
// before, and the output pulses are joined. The joined stream, shifted by
// each output's delay and cut to its batch length, is what the batch model
// computes: that is what `--assert-output-bundle` checks, as tract does.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_TRACT_STREAMING_H
#define TOOLS_TRACT_STREAMING_H

#include "target/Jit.h"
#include "tools/tract/Bundle.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::tract::cli {

/// Whether `module` was pulsified (it has the pulse properties).
bool isPulsified(ModuleOp module);

/// Externalizes the state of the pulsified `module` (consumed), compiles
/// it, and streams `inputs` (matched to the model's inputs by name, else
/// position) through it. Returns the batch-equivalent outputs.
llvm::Expected<std::vector<HostTensor>>
runStreaming(ModuleOp module, llvm::ArrayRef<HostTensor> inputs,
             const JitOptions &options, TimingScope &timing);

} // namespace mlir::tract::cli

#endif // TOOLS_TRACT_STREAMING_H
