//===- EntryChecks.h - check a model's inputs in compiled code --*- C++ -*-===//
//
// Compiled code is called with memref descriptors that carry any sizes, by
// the JIT or by C code linking an AOT object. A lowered public function is
// therefore split: its body becomes private, and the public function checks
// every input dim against its expression and every assertion of the model,
// then calls the body. A failed check records a message with the runtime's
// `tract_set_error` and returns a status, never running the body.
//
//===----------------------------------------------------------------------===//

#ifndef LOWERING_ENTRYCHECKS_H
#define LOWERING_ENTRYCHECKS_H

#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tract {

/// A dim of an intermediate result that the symbols' bounds do not prove
/// non-negative (`S-2` when nothing asserts `S >= 2`), with the model node
/// of the first op whose result has it: the entry checks that it is not
/// negative, after the assertions, when the inputs bind its symbols.
struct GuardedDim {
  TDim dim;
  std::string node;
};

/// The guarded dims of `func` (tract-typed, not lowered yet) under the
/// module's assertions.
SmallVector<GuardedDim> findGuardedDims(func::FuncOp func);

/// Turns `func` (lowered: plain signature, `tract.input_names` set) into
/// `<name>.body`, private, and adds in its place a public `<name>` that
/// takes the same tensors with every dim dynamic, checks their dims against
/// `inputShapes` (the tract shapes of the arguments) and the module's
/// `assertions` over the symbols the inputs bind, and returns the body's
/// results (every dim dynamic; empty tensors if a check failed) followed by
/// an i32 status: 0 (TRACT_OK), or 1 (TRACT_ERROR) with the message of the
/// first failed check in the runtime's `tract_last_error()`. The `guarded`
/// dims are checked last.
LogicalResult addEntryChecks(func::FuncOp func, ArrayRef<Shape> inputShapes,
                             ArrayRef<std::string> assertions,
                             ArrayRef<GuardedDim> guarded = {});

} // namespace mlir::tract

#endif // LOWERING_ENTRYCHECKS_H
