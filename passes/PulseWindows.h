//===- PulseWindows.h - (time, time) blocks as windows over time -*- C++ -*-===//
//
// The rewrite that tract-pulsify runs before pulsifying ops: an einsum of
// two streams whose result keeps both stream axes, masked to a window and
// reduced over its second axis, is computed over a window axis instead
// (PulseWindows.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PASSES_PULSEWINDOWS_H
#define PASSES_PULSEWINDOWS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tract {

/// Rewrites each (time, time) block of `func` over `symbol` as a window
/// over time; an error names the op when a block cannot be.
LogicalResult unfoldStreamWindows(func::FuncOp func, llvm::StringRef symbol);

} // namespace mlir::tract

#endif // PASSES_PULSEWINDOWS_H
