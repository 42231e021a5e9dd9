//===- EntryChecks.h - check a model's inputs in compiled code --*- C++ -*-===//
//
// Compiled code is called with memref descriptors that carry any sizes, by
// the JIT or by C code linking an AOT object. A lowered public function is
// therefore split: its body becomes private, and the public function checks
// every input dim against its expression, every assertion and scenario of
// the model, and the sizes the body will compute, then calls the body. A
// failed check records a message with the runtime's `tract_set_error` and
// returns a status, never running the body.
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

/// An intermediate result that could be larger than every input (`S*S*4`
/// bytes for an f32 S,S from inputs of S): the entry checks its size
/// against what a tensor may take on the machine (the runtime's
/// tract_memory_limit) before the body allocates it.
struct GuardedSize {
  TDim bytes;
  std::string node;
  std::string type; ///< `S,S of f32`, for the message
};

/// What the entry checks about `func`'s intermediate results.
struct BodyGuards {
  SmallVector<GuardedDim> dims;
  SmallVector<GuardedSize> sizes;
};

/// The guards of `func` (tract-typed, not lowered yet) under the module's
/// assertions.
BodyGuards findBodyGuards(func::FuncOp func);

/// A scenario of the model (`tg: S == 1`): the inputs must fit one of them.
struct Scenario {
  std::string name;
  std::vector<std::string> assertions;
};

/// Turns `func` (lowered: plain signature, `tract.input_names` set) into
/// `<name>.body`, private, and adds in its place a public `<name>` that
/// takes the same tensors with every dim dynamic and checks, in order: that
/// every symbol the inputs give is at most kDimCeiling, their dims against
/// `inputShapes` (the tract shapes of the arguments), the module's
/// `assertions` over the symbols the inputs bind, that they fit one of the
/// `scenarios`, then the `guards`. Arithmetic that could wrap for symbols
/// under the ceiling is checked for overflow. It returns the body's results
/// (every dim dynamic; empty tensors if a check failed) followed by an i32
/// status: 0 (TRACT_OK), or 1 (TRACT_ERROR) with the message of the first
/// failed check in the runtime's `tract_last_error()`. The status of a
/// body that checks what it does (it calls `tract_fail`), or that
/// `bodyMayFail` says will (GPU launches), comes from `tract_take_failure`.
LogicalResult addEntryChecks(func::FuncOp func, ArrayRef<Shape> inputShapes,
                             ArrayRef<std::string> assertions,
                             ArrayRef<Scenario> scenarios = {},
                             const BodyGuards &guards = {},
                             bool bodyMayFail = false);

} // namespace mlir::tract

#endif // LOWERING_ENTRYCHECKS_H
