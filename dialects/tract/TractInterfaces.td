//===- TractInterfaces.td - what passes need to know of an op -------------===//
//
// The properties the passes ask of tract ops, said once on the ops rather
// than in lists in each pass.
//
//===----------------------------------------------------------------------===//

#ifndef TRACT_INTERFACES_TD
#define TRACT_INTERFACES_TD

include "mlir/IR/OpBase.td"

// Each output element is computed from the operand elements at the same
// coordinates, an operand of size 1 on an axis standing for every position
// of it (numpy broadcasting over operands of equal rank). Declutter moves
// axes through such an op, pulsify maps frames to the same frames, the cost
// model counts one operation per output element, and the lowering writes it
// as one linalg.generic over the op's scalar body.
def Tract_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::mlir::tract::TractTrait";
}

// The op keeps a state from one call of a streaming model to the next
// (delay lines, the position in the stream, a cache): externalizing the
// state of a pulsed model makes it an input and an output.
def Tract_Stateful : NativeOpTrait<"Stateful"> {
  let cppNamespace = "::mlir::tract::TractTrait";
}

def Tract_WorkAxesOpInterface : OpInterface<"WorkAxesOpInterface"> {
  let description = [{
    An op that works along some axes of its single tensor input (a
    reduction, a normalization) and keeps its rank: on every other axis it
    maps each position to the same position. Declutter moves axes through
    it by renumbering the axes it works on; pulsify streams it when the
    streaming axis is not one of them.
  }];
  let cppNamespace = "::mlir::tract";
  let methods = [
    InterfaceMethod<"The input axes the op works along.",
      "::llvm::SmallVector<int64_t>", "getWorkAxes">,
    InterfaceMethod<"Makes the op work along `axes` instead (as many as "
                    "getWorkAxes gives).",
      "void", "setWorkAxes", (ins "::llvm::ArrayRef<int64_t>":$axes)>,
  ];
}

def Tract_AxisTrackingOpInterface : OpInterface<"AxisTrackingOpInterface"> {
  let description = [{
    An op through which declutter moves a permutation of its first
    operand's axes (tract's change of axes): reading `x` permuted by `perm`
    (a move_axis chain; axis i of the permuted value is axis perm[i] of
    `x`), the op can read `x` itself with its axis attributes renumbered,
    and its result is then the new result permuted by the permutation
    getResultPermutation gives. The default implementation is that of a
    WorkAxesOpInterface op, which keeps its rank: the permutation passes
    through unchanged and its work axes are renumbered.
  }];
  let cppNamespace = "::mlir::tract";
  let methods = [
    InterfaceMethod<"The permutation of the result when the op reads its "
                    "first operand unpermuted instead of permuted by `perm`, "
                    "or nullopt when it cannot.",
      "std::optional<::llvm::SmallVector<int64_t>>", "getResultPermutation",
      (ins "::llvm::ArrayRef<int64_t>":$perm), "",
      "return ::llvm::SmallVector<int64_t>(perm);">,
    InterfaceMethod<"Renumbers the op's axis attributes for reading its first "
                    "operand unpermuted instead of permuted by `perm` (that "
                    "getResultPermutation accepts).",
      "void", "readUnpermuted", (ins "::llvm::ArrayRef<int64_t>":$perm), "",
      "::mlir::tract::readWorkAxesUnpermuted($_op, perm);">,
  ];
}

def Tract_CostOpInterface : OpInterface<"CostOpInterface"> {
  let description = [{
    What one run of the op costs, as symbolic dims (see OpCost in
    TractCost.h). Element-wise ops cost one operation per output element and
    the ops without this interface only move data: they need not implement
    it.
  }];
  let cppNamespace = "::mlir::tract";
  let methods = [
    InterfaceMethod<"The arithmetic and the bytes of one run.",
      "::mlir::tract::OpCost", "getCost">,
  ];
}

def Tract_PulsifyOpInterface : OpInterface<"PulsifyOpInterface"> {
  let description = [{
    How the op streams (see TractPulse.h): given the streams of its
    operands in a PulseContext, the op rewrites itself for the pulses they
    now have and records the streams of its results, or fails with an error
    saying why it cannot stream. Element-wise ops and WorkAxesOpInterface
    ops need not implement it: the pulsifier knows them by their trait and
    interface. Any other op on a streamed operand is refused.
  }];
  let cppNamespace = "::mlir::tract";
  let methods = [
    InterfaceMethod<"Rewrites the op for its operands' pulses; called when "
                    "an operand streams, or when startsStream says so.",
      "::mlir::LogicalResult", "pulsify",
      (ins "::mlir::tract::PulseContext &":$context)>,
    InterfaceMethod<"Whether the op may make a stream of operands that do "
                    "not stream, its result mentioning the streaming symbol "
                    "(a positional table sliced at the stream's position).",
      "bool", "startsStream", (ins "::mlir::tract::PulseContext &":$context),
      "", "return false;">,
  ];
}

#endif // TRACT_INTERFACES_TD
