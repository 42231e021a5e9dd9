//===- TractElementwiseOps.td - constants and element-wise ops ------------===//

def Tract_ConstOp : Tract_Op<"const",
    [ConstantLike, Pure, AllTypesMatch<["value", "output"]>, DeclareOpInterfaceMethods<Tract_CostOpInterface>,
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
// Unary
//===----------------------------------------------------------------------===//

class Tract_UnaryOp<string mnemonic, string summaryText,
                    Type tensorType = Tract_Tensor, list<Trait> traits = []>
    : Tract_Op<mnemonic, !listconcat(traits,
          [Pure, Tract_Elementwise, SameOperandsAndResultType,
           DeclareOpInterfaceMethods<InferTypeOpInterface>])> {
  let summary = summaryText;
  let description = [{
    Applies the operator to every element; the result has the type of the
    input. Folds when the input is a constant.
  }];
  let arguments = (ins tensorType:$input);
  let results = (outs tensorType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Tract_AbsOp : Tract_UnaryOp<"abs", "absolute value">;
def Tract_NegOp : Tract_UnaryOp<"neg", "negation">;
def Tract_SquareOp : Tract_UnaryOp<"square", "x * x">;
def Tract_SignOp : Tract_UnaryOp<"sign", "-1, 0 or 1 by the sign of x">;
def Tract_ExpOp : Tract_UnaryOp<"exp", "natural exponential", Tract_FloatTensor>;
def Tract_LnOp : Tract_UnaryOp<"ln", "natural logarithm", Tract_FloatTensor>;
def Tract_SqrtOp : Tract_UnaryOp<"sqrt", "square root", Tract_FloatTensor>;
def Tract_RsqrtOp : Tract_UnaryOp<"rsqrt", "reciprocal square root", Tract_FloatTensor>;
def Tract_RecipOp : Tract_UnaryOp<"recip", "reciprocal, 1 / x", Tract_FloatTensor>;
def Tract_SinOp : Tract_UnaryOp<"sin", "sine", Tract_FloatTensor>;
def Tract_CosOp : Tract_UnaryOp<"cos", "cosine", Tract_FloatTensor>;
def Tract_TanOp : Tract_UnaryOp<"tan", "tangent", Tract_FloatTensor>;
def Tract_AsinOp : Tract_UnaryOp<"asin", "arc sine", Tract_FloatTensor>;
def Tract_AcosOp : Tract_UnaryOp<"acos", "arc cosine", Tract_FloatTensor>;
def Tract_AtanOp : Tract_UnaryOp<"atan", "arc tangent", Tract_FloatTensor>;
def Tract_SinhOp : Tract_UnaryOp<"sinh", "hyperbolic sine", Tract_FloatTensor>;
def Tract_CoshOp : Tract_UnaryOp<"cosh", "hyperbolic cosine", Tract_FloatTensor>;
def Tract_TanhOp : Tract_UnaryOp<"tanh", "hyperbolic tangent", Tract_FloatTensor>;
def Tract_AsinhOp : Tract_UnaryOp<"asinh", "inverse hyperbolic sine", Tract_FloatTensor>;
def Tract_AcoshOp : Tract_UnaryOp<"acosh", "inverse hyperbolic cosine", Tract_FloatTensor>;
def Tract_AtanhOp : Tract_UnaryOp<"atanh", "inverse hyperbolic tangent", Tract_FloatTensor>;
def Tract_SigmoidOp : Tract_UnaryOp<"sigmoid", "logistic sigmoid, 1 / (1 + exp(-x))", Tract_FloatTensor>;
def Tract_ErfOp : Tract_UnaryOp<"erf", "Gauss error function", Tract_FloatTensor>;
def Tract_SiluOp : Tract_UnaryOp<"silu", "x * sigmoid(x)", Tract_FloatTensor>;
def Tract_HardSwishOp : Tract_UnaryOp<"hard_swish", "x * relu6(x + 3) / 6", Tract_FloatTensor>;
def Tract_MishOp : Tract_UnaryOp<"mish", "x * tanh(softplus(x)), softplus(x) = ln(1 + exp(x))", Tract_FloatTensor>;
def Tract_GeluApproxOp : Tract_UnaryOp<"gelu_approx",
    "GELU, tanh approximation: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))",
    Tract_FloatTensor> {
  let description = [{
    Applies the operator to every element; the result has the type of the
    input. Folds when the input is a constant. With `fast_impl` the power
    is `x^2` instead of `x^3`, as tract's GeluApproximate computes it then.
  }];
  let arguments = (ins Tract_FloatTensor:$input, DefaultValuedAttr<BoolAttr, "false">:$fast_impl);
}
def Tract_RoundOp : Tract_UnaryOp<"round", "round half away from zero", Tract_FloatTensor>;
def Tract_RoundEvenOp : Tract_UnaryOp<"round_even", "round half to even", Tract_FloatTensor>;
def Tract_FloorOp : Tract_UnaryOp<"floor", "round toward minus infinity", Tract_FloatTensor>;
def Tract_CeilOp : Tract_UnaryOp<"ceil", "round toward plus infinity", Tract_FloatTensor>;
def Tract_NotOp : Tract_UnaryOp<"not", "logical negation", Tract_BoolTensor>;
def Tract_BitNotOp : Tract_UnaryOp<"bitnot", "bitwise complement", Tract_IntTensor>;

class Tract_FloatPredicateOp<string mnemonic, string summaryText>
    : Tract_InferredOp<mnemonic, [Tract_Elementwise]> {
  let summary = summaryText;
  let description = [{
    Tests every element; the result is a tensor of booleans of the input's
    shape.
  }];
  let results = (outs Tract_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_IsNanOp : Tract_FloatPredicateOp<"is_nan", "true where x is NaN"> {
  let arguments = (ins Tract_FloatTensor:$input);
}
def Tract_IsInfOp : Tract_FloatPredicateOp<"is_inf", "true where x is infinite"> {
  let arguments = (ins Tract_FloatTensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_positive,
                   DefaultValuedAttr<BoolAttr, "true">:$detect_negative);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

class Tract_BinaryOp<string mnemonic, string summaryText,
                     Type operandType = Tract_Tensor,
                     Type resultType = operandType, list<Trait> traits = [],
                     bit boolResult = 0>
    : Tract_Op<mnemonic, !listconcat(traits,
          [Pure, Tract_Elementwise, SameOperandsElementType,
           InferTypeOpAdaptorWithIsCompatible])> {
  let summary = summaryText;
  let description = [{
    Element-wise binary operator with numpy broadcasting over operands of
    equal rank: on each axis the two dims are equal, or one of them is 1.
    The result shape is inferred from the operands. On quantized operands
    the result may be quantized with its own scale and zero point: the
    operator applies to the real values and the result is requantized.
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return ::mlir::tract::inferBroadcastResultType(location,
          {adaptor.getLhs(), adaptor.getRhs()}, }] # !if(boolResult, "true", "false") # [{,
          results);
    }
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                            ::mlir::TypeRange actual) {
      return ::mlir::tract::sameUpToQuantization(inferred, actual);
    }
  }];
}

def Tract_AddOp : Tract_BinaryOp<"add", "addition", Tract_Tensor, Tract_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_SubOp : Tract_BinaryOp<"sub", "subtraction"> { let hasFolder = 1; }
def Tract_MulOp : Tract_BinaryOp<"mul", "multiplication", Tract_Tensor, Tract_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_DivOp : Tract_BinaryOp<"div", "division (integers round toward zero)"> {
  let hasFolder = 1;
}
def Tract_RemOp : Tract_BinaryOp<"rem", "remainder, with the sign of the dividend"> {
  let hasFolder = 1;
}
def Tract_PowOp : Tract_BinaryOp<"pow", "power, lhs ^ rhs"> { let hasFolder = 1; }
def Tract_MinOp : Tract_BinaryOp<"min", "minimum (NaN propagates)", Tract_Tensor, Tract_Tensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_MaxOp : Tract_BinaryOp<"max", "maximum (NaN propagates)", Tract_Tensor, Tract_Tensor, [Commutative]> {
  let hasFolder = 1;
}

def Tract_EqOp : Tract_BinaryOp<"eq", "lhs == rhs", Tract_Tensor, Tract_BoolTensor, [Commutative], 1> {
  let hasFolder = 1;
}
def Tract_NeOp : Tract_BinaryOp<"ne", "lhs != rhs", Tract_Tensor, Tract_BoolTensor, [Commutative], 1> {
  let hasFolder = 1;
}
def Tract_LtOp : Tract_BinaryOp<"lt", "lhs < rhs", Tract_Tensor, Tract_BoolTensor, [], 1> { let hasFolder = 1; }
def Tract_LeOp : Tract_BinaryOp<"le", "lhs <= rhs", Tract_Tensor, Tract_BoolTensor, [], 1> { let hasFolder = 1; }
def Tract_GtOp : Tract_BinaryOp<"gt", "lhs > rhs", Tract_Tensor, Tract_BoolTensor, [], 1> { let hasFolder = 1; }
def Tract_GeOp : Tract_BinaryOp<"ge", "lhs >= rhs", Tract_Tensor, Tract_BoolTensor, [], 1> { let hasFolder = 1; }

def Tract_AndOp : Tract_BinaryOp<"and", "logical and", Tract_BoolTensor, Tract_BoolTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_OrOp : Tract_BinaryOp<"or", "logical or", Tract_BoolTensor, Tract_BoolTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_XorOp : Tract_BinaryOp<"xor", "logical exclusive or", Tract_BoolTensor, Tract_BoolTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_BitAndOp : Tract_BinaryOp<"bitand", "bitwise and", Tract_IntTensor, Tract_IntTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_BitOrOp : Tract_BinaryOp<"bitor", "bitwise or", Tract_IntTensor, Tract_IntTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_BitXorOp : Tract_BinaryOp<"bitxor", "bitwise exclusive or", Tract_IntTensor, Tract_IntTensor, [Commutative]> {
  let hasFolder = 1;
}
def Tract_ShlOp : Tract_BinaryOp<"shl", "shift left by rhs bits", Tract_IntTensor> {
  let hasFolder = 1;
}
def Tract_ShrOp : Tract_BinaryOp<"shr",
    "shift right by rhs bits (arithmetic for signed, logical for unsigned)",
    Tract_IntTensor> {
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Select and cast
//===----------------------------------------------------------------------===//

def Tract_SelectOp : Tract_InferredOp<"select", [Tract_Elementwise]> {
  let summary = "element-wise choice: cond ? on_true : on_false";
  let description = [{
    Broadcasts the three operands (of equal rank) together; the result has
    the element type of the two values.
  }];
  let arguments = (ins Tract_BoolTensor:$cond, Tract_Tensor:$on_true,
                   Tract_Tensor:$on_false);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Tract_CastOp : Tract_Op<"cast", [Pure, Tract_Elementwise]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to the result's element type; the shape is kept.
    Floats to integers round toward zero; integers to booleans test for
    non-zero. A quantized input stands for its real values,
    `scale * (q - zero_point)`; a quantized result holds the input's value
    divided by its scale, rounded half away from zero, plus its zero point,
    saturated to its integers (tract's QU8/QI8 casts). Between two quantized
    types of one scale, only the zero point moves.
  }];
  let arguments = (ins Tract_Tensor:$input);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Type":$elementType)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}
