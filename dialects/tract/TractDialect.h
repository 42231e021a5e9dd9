#ifndef DIALECTS_TRACT_TRACTDIALECT_H
#define DIALECTS_TRACT_TRACTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/tract/TractDialect.h.inc"

#include "dialects/tdim/TDim.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tract {

/// Names of the module attributes that carry the symbol table.
constexpr llvm::StringLiteral kSymbolsAttrName = "tract.symbols";
constexpr llvm::StringLiteral kAssertionsAttrName = "tract.assertions";
constexpr llvm::StringLiteral kScenariosAttrName = "tract.scenarios";
constexpr llvm::StringLiteral kPropertiesAttrName = "tract.properties";

/// On a tract.scan of a batch model: tract carries its states from one call
/// to the next (an NNEF scan with `reset_every_turn = false` and
/// `external_state = false`). Such a scan is kept as a scan, as tract keeps
/// it, even when it runs once; compiled code starts it from its initial
/// states at each call.
constexpr llvm::StringLiteral kStatefulScanAttrName = "tract.stateful";

/// On a private function that a kernel pass made from lowered ops (plain
/// tensors and sizes in, plain tensors out), on the region it is made
/// from while the pass runs, and on its calls: the passes that lower tract
/// functions leave the function as it is; a call's buffers are read or
/// written there, and what it returns is a buffer of its own.
constexpr llvm::StringLiteral kKernelFunctionAttrName = "tract.kernel";

/// On a lowered public function, what its callers' inputs must satisfy
/// (recorded by tract-lower-to-linalg, read by tract-entry-checks): the
/// tract shapes of its inputs (an array of #tract.shape), and the dims and
/// sizes of intermediate results to check (arrays of dictionaries: `dim` or
/// `bytes`, a #tract.dim, and the model `node`, with the result's `type`
/// for a size).
constexpr llvm::StringLiteral kInputShapesAttrName = "tract.input_shapes";
constexpr llvm::StringLiteral kGuardedDimsAttrName = "tract.guarded_dims";
constexpr llvm::StringLiteral kGuardedSizesAttrName = "tract.guarded_sizes";

/// The assertions and scenarios of `module`, for proofs about its shapes.
/// Fails (with an error on the module) if one does not parse.
FailureOr<SymbolScope> getSymbolScope(ModuleOp module);

/// What tract-pulsify records in a streaming model's `tract.properties`:
/// `pulse.symbol`, `pulse.pulse`, `pulse.input_axes` (-1 for an input that
/// does not stream), `pulse.output_axes`, `pulse.delay` (per output, in its
/// frames) and `pulse.output_lengths` (per output, its batch length over
/// the symbol, as text). Arrays are arrays of integers, as NNEF's
/// tract_core_properties gives them back.
struct PulseProperties {
  std::string symbol;
  int64_t pulse = 0;
  llvm::SmallVector<int64_t> inputAxes, outputAxes, delays;
  std::vector<TDim> outputLengths;
};
/// The pulse properties of `module`, if it has them all, consistent.
std::optional<PulseProperties> getPulseProperties(ModuleOp module);
/// Adds (or replaces) the pulse properties of `module`.
void setPulseProperties(ModuleOp module, const PulseProperties &properties);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTDIALECT_H
