//===- EntryFacts.h - what lowering leaves for the entry checks -*- C++ -*-===//
//
// Lowering a function erases the symbolic shapes of its inputs and of the
// results it computes. What a caller's inputs must satisfy for the lowered
// code to run is therefore found on the tract IR and recorded on each
// public function as attributes (kInputShapesAttrName and the guards',
// TractDialect.h): the shapes of its inputs, and the intermediate dims and
// sizes that the symbols' bounds do not make safe.
// The entry checks (tract-entry-checks) read them after lowering and check
// them in compiled code, without the tract IR they came from.
//
//===----------------------------------------------------------------------===//

#ifndef CONVERSION_ENTRYFACTS_H
#define CONVERSION_ENTRYFACTS_H

#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::tract {

/// A dim of an intermediate result that the symbols' bounds do not prove
/// non-negative (`S-2` when nothing asserts `S >= 2`), with the model node
/// of the first op whose result has it: the entry checks that it is not
/// negative, after the assertions, when the inputs bind its symbols.
struct GuardedDim {
  TDim dim;
  std::string node;
};

/// An intermediate result that could be larger than every input (`S*S*4`
/// bytes for an f32 S,S from inputs of S): the entry checks its size
/// against what a tensor may take on the machine (the runtime's
/// tract_memory_limit) before the body allocates it.
struct GuardedSize {
  TDim bytes;
  std::string node;
  std::string type; ///< `S,S of f32`, for the message
};

/// What the entry checks about a function's intermediate results.
struct BodyGuards {
  SmallVector<GuardedDim> dims;
  SmallVector<GuardedSize> sizes;
};

/// What a public function's inputs must satisfy.
struct EntryFacts {
  /// The tract shapes of its arguments (none for one that is not a tract
  /// tensor).
  SmallVector<Shape> inputShapes;
  BodyGuards guards;
};

/// The facts of `func`, still tract-typed, under its module's assertions.
EntryFacts findEntryFacts(func::FuncOp func);

/// Records `facts` on `func` (tract.input_shapes, and tract.guarded_dims
/// and tract.guarded_sizes when there are any).
void recordEntryFacts(func::FuncOp func, const EntryFacts &facts);

/// The facts recorded on `func`, which loses them; failure, reported on
/// `func`, when it has none.
FailureOr<EntryFacts> takeEntryFacts(func::FuncOp func);

} // namespace mlir::tract

#endif // CONVERSION_ENTRYFACTS_H
