#ifndef TRACT_OPS_TD
#define TRACT_OPS_TD

include "dialects/tract/TractAttrs.td"
include "dialects/tract/TractDialect.td"
include "dialects/tract/TractEnums.td"
include "dialects/tract/TractInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Signed integers are signless `iN`, unsigned ones `uiN`, booleans `i1`.
// Dynamic dims carry their expression in a #tract.dims encoding.
class Tract_TensorOf<list<Type> allowed, string what>
    : ConfinedType<RankedTensorOf<allowed>,
        [CPred<"::mlir::tract::isTractTensorType($_self)">],
        "ranked tensor of " # what # " with symbolic dims",
        "::mlir::RankedTensorType">;

// tract's quantized datum types: integers with a scale and a zero point.
def Tract_Quantized : Type<
    CPred<"::llvm::isa<::mlir::quant::UniformQuantizedType>($_self)">,
    "uniformly quantized integer", "::mlir::quant::UniformQuantizedType">;

def Tract_Tensor : Tract_TensorOf<[AnyFloat, AnyInteger, Tract_Quantized],
                                  "numbers">;
def Tract_FloatTensor : Tract_TensorOf<[AnyFloat], "floats">;
def Tract_IntTensor : Tract_TensorOf<[AnyInteger], "integers">;
def Tract_BoolTensor : Tract_TensorOf<[I1], "booleans">;
def Tract_IndexTensor : Tract_TensorOf<[AnySignlessInteger, AnyUnsignedInteger],
                                       "integer indices">;

def Tract_AxisAttr : ConfinedAttr<I64Attr, [IntNonNegative]>;

// Ops whose result types follow from operands and attributes infer them in
// C++ (`inferReturnTypes`), and the verifier checks the declared ones.
class Tract_InferredOp<string mnemonic, list<Trait> traits = []>
    : Tract_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

include "dialects/tract/TractElementwiseOps.td"
include "dialects/tract/TractArrayOps.td"
include "dialects/tract/TractNNOps.td"
include "dialects/tract/TractControlOps.td"
include "dialects/tract/TractStreamingOps.td"

#endif // TRACT_OPS_TD
