#ifndef TRACT_OPS_TD
#define TRACT_OPS_TD

include "dialects/tract/TractAttrs.td"
include "dialects/tract/TractDialect.td"
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

def Tract_Tensor : Tract_TensorOf<[AnyFloat, AnyInteger], "numbers">;
def Tract_FloatTensor : Tract_TensorOf<[AnyFloat], "floats">;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Tract_ConstOp : Tract_Op<"const",
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a constant tensor";
  let description = [{
    Materializes a dense tensor held in the IR. Weights imported from ONNX
    initializers and NNEF `.dat` files become `tract.const`.

    ```mlir
    %w = tract.const dense<[[1.0, 2.0]]> : tensor<1x2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise unary operators
//===----------------------------------------------------------------------===//

class Tract_UnaryOp<string mnemonic, string summaryText,
                    Type tensorType = Tract_Tensor, list<Trait> traits = []>
    : Tract_Op<mnemonic, !listconcat(traits,
          [Pure, SameOperandsAndResultType,
           DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let summary = summaryText;
  let description = [{
    Applies the operator to every element; the result has the type of the
    input.
  }];
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Tract_AbsOp : Tract_UnaryOp<"abs", "absolute value">;
def Tract_NegOp : Tract_UnaryOp<"neg", "negation"> { let hasFolder = 1; }
def Tract_SquareOp : Tract_UnaryOp<"square", "x * x">;
def Tract_ExpOp : Tract_UnaryOp<"exp", "natural exponential", Tract_FloatTensor>;
def Tract_LnOp : Tract_UnaryOp<"ln", "natural logarithm", Tract_FloatTensor>;
def Tract_SqrtOp : Tract_UnaryOp<"sqrt", "square root", Tract_FloatTensor>;
def Tract_RsqrtOp : Tract_UnaryOp<"rsqrt", "reciprocal square root", Tract_FloatTensor>;
def Tract_RecipOp : Tract_UnaryOp<"recip", "reciprocal, 1 / x", Tract_FloatTensor>;
def Tract_TanhOp : Tract_UnaryOp<"tanh", "hyperbolic tangent", Tract_FloatTensor>;
def Tract_SigmoidOp : Tract_UnaryOp<"sigmoid", "logistic sigmoid, 1 / (1 + exp(-x))", Tract_FloatTensor>;

//===----------------------------------------------------------------------===//
// Element-wise binary operators
//===----------------------------------------------------------------------===//

class Tract_BinaryOp<string mnemonic, string summaryText,
                     list<Trait> traits = []>
    : Tract_Op<mnemonic, !listconcat(traits,
          [Pure, SameOperandsAndResultElementType, InferTypeOpAdaptor])> {
  let summary = summaryText;
  let description = [{
    Element-wise binary operator with numpy broadcasting over operands of
    equal rank: on each axis the two dims are equal, or one of them is 1.
    The result shape is inferred from the operands.
  }];
  let arguments = (ins Tract_Tensor:$lhs, Tract_Tensor:$rhs);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return inferBroadcastResultType(location, adaptor.getLhs(),
                                      adaptor.getRhs(), results);
    }
  }];
}

def Tract_AddOp : Tract_BinaryOp<"add", "addition", [Commutative]> {
  let hasFolder = 1;
}
def Tract_SubOp : Tract_BinaryOp<"sub", "subtraction"> { let hasFolder = 1; }
def Tract_MulOp : Tract_BinaryOp<"mul", "multiplication", [Commutative]> {
  let hasFolder = 1;
}
def Tract_DivOp : Tract_BinaryOp<"div", "division (integers round toward zero)">;
def Tract_MinOp : Tract_BinaryOp<"min", "minimum (NaN propagates)", [Commutative]>;
def Tract_MaxOp : Tract_BinaryOp<"max", "maximum (NaN propagates)", [Commutative]>;
def Tract_PowOp : Tract_BinaryOp<"pow", "power, lhs ^ rhs">;

#endif // TRACT_OPS_TD
