//===- ElementwiseOps.cpp - ONNX element-wise operators -------------------===//
//
// Unary math, activations, binary arithmetic and comparisons, logic, Where,
// Clip and Cast. Activations with no tract op of their own are expanded
// into element-wise math; declutter recognizes the common ones back.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/onnx.pb.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

template <typename OpTy> OpHandler unary() {
  return [](NodeContext &ctx, Outputs &outputs) {
    outputs.push_back(ctx.create<OpTy>(ctx.input(0)));
    return success();
  };
}

template <typename OpTy> OpHandler binary() {
  return [](NodeContext &ctx, Outputs &outputs) {
    outputs.push_back(ctx.binary<OpTy>(ctx.input(0), ctx.input(1)));
    return success();
  };
}

/// The length shape values of `lengths` broadcast to (a length of 1
/// repeats), or nullopt when they do not broadcast.
std::optional<size_t> broadcastLength(std::initializer_list<size_t> lengths) {
  size_t result = 1;
  for (size_t length : lengths) {
    if (length == 1)
      continue;
    if (result != 1 && result != length)
      return std::nullopt;
    result = length;
  }
  return result;
}

/// Element `i` of shape values broadcast from `values`.
template <typename T> const T &broadcastAt(ArrayRef<T> values, size_t i) {
  return values[values.size() == 1 ? 0 : i];
}

/// Add, Sub, Mul, Div: on shape values (integer vectors computed from
/// dims), the symbolic value of the result follows from the operands'.
template <typename OpTy>
OpHandler shapeArithmetic(std::optional<TDim> (*combine)(const TDim &,
                                                         const TDim &)) {
  return [combine](NodeContext &ctx, Outputs &outputs) {
    Value lhs = ctx.input(0), rhs = ctx.input(1);
    Value result = ctx.binary<OpTy>(lhs, rhs);
    outputs.push_back(result);
    Type type = NodeContext::elementType(result);
    if (!result || !isa<IntegerType>(type) || type.isInteger(1) ||
        NodeContext::rank(result) > 1)
      return success();
    std::optional<SmallVector<TDim>> a = ctx.getDims(lhs);
    std::optional<SmallVector<TDim>> b = ctx.getDims(rhs);
    std::optional<size_t> count =
        a && b ? broadcastLength({a->size(), b->size()}) : std::nullopt;
    if (!count)
      return success();
    SmallVector<TDim> dims;
    for (size_t i = 0; i < *count; ++i) {
      std::optional<TDim> dim =
          combine(broadcastAt<TDim>(*a, i), broadcastAt<TDim>(*b, i));
      if (!dim)
        return success();
      dims.push_back(*dim);
    }
    ctx.setDims(result, dims);
    return success();
  };
}

/// Equal on shape values: decided element by element when the dims say
/// (equal dims, two different constants, or a negative constant against a
/// symbolic dim, which is never negative), it is a constant. Exporters
/// compare shapes with -1 this way (torch's expand), and the Where that
/// follows then keeps the shape's symbolic value.
LogicalResult equalHandler(NodeContext &ctx, Outputs &outputs) {
  Value lhs = ctx.input(0), rhs = ctx.input(1);
  std::optional<SmallVector<TDim>> a = ctx.getDims(lhs);
  std::optional<SmallVector<TDim>> b = ctx.getDims(rhs);
  auto decide = [](const TDim &x, const TDim &y) -> std::optional<bool> {
    if (x == y)
      return true;
    std::optional<int64_t> cx = x.getConstant(), cy = y.getConstant();
    if (cx && cy)
      return false;
    if ((cx && *cx < 0) || (cy && *cy < 0))
      return false;
    return std::nullopt;
  };
  std::optional<size_t> count =
      a && b && NodeContext::rank(lhs) == 1 && NodeContext::rank(rhs) == 1
          ? broadcastLength({a->size(), b->size()})
          : std::nullopt;
  if (count) {
    SmallVector<bool> values;
    for (size_t i = 0; i < *count; ++i) {
      std::optional<bool> equal =
          decide(broadcastAt<TDim>(*a, i), broadcastAt<TDim>(*b, i));
      if (!equal)
        break;
      values.push_back(*equal);
    }
    if (values.size() == *count) {
      auto type = RankedTensorType::get({static_cast<int64_t>(*count)},
                                        IntegerType::get(ctx.getContext(), 1));
      outputs.push_back(ctx.constant(DenseElementsAttr::get(type, values)));
      return success();
    }
  }
  outputs.push_back(ctx.binary<EqOp>(lhs, rhs));
  return success();
}

/// Where: on shape values with a constant condition, the result's symbolic
/// value is picked from the operands'.
LogicalResult whereHandler(NodeContext &ctx, Outputs &outputs) {
  Value cond = ctx.input(0), a = ctx.input(1), b = ctx.input(2);
  int64_t rank = std::max(
      {NodeContext::rank(cond), NodeContext::rank(a), NodeContext::rank(b)});
  Value result =
      ctx.create<SelectOp>(ctx.unsqueezeTo(cond, rank),
                           ctx.unsqueezeTo(a, rank), ctx.unsqueezeTo(b, rank));
  outputs.push_back(result);
  std::optional<SmallVector<int64_t>> flags = ctx.getConstInts(0);
  std::optional<SmallVector<TDim>> x = ctx.getDims(a);
  std::optional<SmallVector<TDim>> y = ctx.getDims(b);
  if (!result || rank != 1 || !flags || !x || !y)
    return success();
  std::optional<size_t> count =
      broadcastLength({flags->size(), x->size(), y->size()});
  if (!count)
    return success();
  SmallVector<TDim> dims;
  for (size_t i = 0; i < *count; ++i)
    dims.push_back(broadcastAt<int64_t>(*flags, i) != 0
                       ? broadcastAt<TDim>(*x, i)
                       : broadcastAt<TDim>(*y, i));
  ctx.setDims(result, dims);
  return success();
}

/// Integer division of dims, truncating like ONNX; symbolic dims are
/// non-negative, so that floor division is the same.
std::optional<TDim> divideDims(const TDim &a, const TDim &b) {
  std::optional<int64_t> divisor = b.getConstant();
  if (a == b && divisor != 0)
    return TDim(1);
  if (!divisor || *divisor <= 0)
    return std::nullopt;
  if (std::optional<int64_t> dividend = a.getConstant())
    return TDim(*dividend / *divisor);
  return a.floorDiv(*divisor);
}

/// Min, Max, Sum: folds the op over all inputs.
template <typename OpTy> OpHandler variadic() {
  return [](NodeContext &ctx, Outputs &outputs) {
    Value acc = ctx.input(0);
    for (unsigned i = 1; i < ctx.getNumInputs(); ++i)
      acc = ctx.binary<OpTy>(acc, ctx.input(i));
    outputs.push_back(acc);
    return success();
  };
}

bool isFloat(Value value) {
  return value && isa<FloatType>(NodeContext::elementType(value));
}

/// x < 0 ? negative : x.
Value selectNegative(NodeContext &ctx, Value x, Value negative) {
  Value isNegative = ctx.binary<LtOp>(x, ctx.scalarLike(x, 0));
  return ctx.create<SelectOp>(
      ctx.unsqueezeTo(isNegative, NodeContext::rank(negative)), negative, x);
}

/// ln(1 + exp(x)).
Value softplus(NodeContext &ctx, Value x) {
  return ctx.create<LnOp>(
      ctx.binary<AddOp>(ctx.create<ExpOp>(x), ctx.scalarLike(x, 1)));
}

/// Python-style modulo (the sign of the divisor) from a truncated remainder.
Value floorMod(NodeContext &ctx, Value a, Value b) {
  Value r = ctx.binary<RemOp>(a, b);
  Value zero = ctx.scalarLike(r, 0);
  Value nonZero = ctx.binary<NeOp>(r, zero);
  Value signsDiffer =
      ctx.binary<XorOp>(ctx.binary<LtOp>(r, zero), ctx.binary<LtOp>(b, zero));
  Value fix = ctx.binary<AndOp>(nonZero, signsDiffer);
  return ctx.create<SelectOp>(fix, ctx.binary<AddOp>(r, b), r);
}

LogicalResult castHandler(NodeContext &ctx, Outputs &outputs) {
  std::string name;
  Type to = convertDataType(ctx.getContext(), ctx.getInt("to", 0), name);
  if (!to)
    return ctx.unsupported("cast to " + name);
  Value input = ctx.input(0);
  Value result = ctx.castTo(input, to);
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(input);
      dims && isa<IntegerType>(to) && !to.isInteger(1))
    ctx.setDims(result, *dims);
  outputs.push_back(result);
  return success();
}

LogicalResult clipHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  Value lo, hi;
  if (ctx.getOpset() < 11) {
    lo = ctx.scalarLike(x, ctx.getFloat("min", -INFINITY));
    hi = ctx.scalarLike(x, ctx.getFloat("max", INFINITY));
    if (!ctx.hasAttr("min"))
      lo = {};
    if (!ctx.hasAttr("max"))
      hi = {};
  } else {
    lo = ctx.input(1);
    hi = ctx.input(2);
  }
  if (lo)
    x = ctx.binary<MaxOp>(x, lo);
  if (hi)
    x = ctx.binary<MinOp>(x, hi);
  outputs.push_back(x);
  return success();
}

/// GELU: 0.5 * x * (1 + erf(x / sqrt(2))).
Value erfGelu(NodeContext &ctx, Value x) {
  if (!x)
    return {};
  Value erf =
      ctx.create<ErfOp>(ctx.binary<MulOp>(x, ctx.scalarLike(x, M_SQRT1_2)));
  Value half = ctx.binary<MulOp>(x, ctx.scalarLike(x, 0.5));
  return ctx.binary<MulOp>(half, ctx.binary<AddOp>(erf, ctx.scalarLike(x, 1)));
}

/// com.microsoft's GELU family (BERT exports after onnxruntime's
/// transformer optimizer): Gelu, BiasGelu (A + B first) and FastGelu (X
/// plus an optional bias, in the tanh form) and QuickGelu (x times
/// sigmoid(alpha x)).
LogicalResult msGelu(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (Value bias = ctx.input(1))
    x = ctx.binary<AddOp>(x, bias);
  return pushOutput(outputs, erfGelu(ctx, x));
}

LogicalResult fastGelu(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (Value bias = ctx.input(1))
    x = ctx.binary<AddOp>(x, bias);
  return pushOutput(outputs, x ? ctx.create<GeluApproxOp>(x) : Value());
}

LogicalResult quickGelu(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  float alpha = ctx.getFloat("alpha", 1.702f);
  return pushOutput(
      outputs,
      ctx.binary<MulOp>(x, ctx.create<SigmoidOp>(ctx.binary<MulOp>(
                               x, ctx.scalarLike(x, alpha)))));
}

LogicalResult geluHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  std::string approximate = ctx.getString("approximate", "none");
  if (approximate == "tanh") {
    outputs.push_back(ctx.create<GeluApproxOp>(x));
    return success();
  }
  if (approximate != "none")
    return ctx.unsupported("approximate = '" + approximate + "'");
  outputs.push_back(erfGelu(ctx, x));
  return success();
}

} // namespace

void mlir::tract::onnx::registerElementwiseOps(OpRegistry &registry) {
  // Unary math.
  registry.add("Abs", {1, 6, 13}, unary<AbsOp>());
  registry.add("Neg", {1, 6, 13}, unary<NegOp>());
  registry.add("Exp", {1, 6, 13}, unary<ExpOp>());
  registry.add("Log", {1, 6, 13}, unary<LnOp>());
  registry.add("Sqrt", {1, 6, 13}, unary<SqrtOp>());
  registry.add("Reciprocal", {1, 6, 13}, unary<RecipOp>());
  registry.add("Sin", 7, unary<SinOp>());
  registry.add("Cos", 7, unary<CosOp>());
  registry.add("Tan", 7, unary<TanOp>());
  registry.add("Asin", 7, unary<AsinOp>());
  registry.add("Acos", 7, unary<AcosOp>());
  registry.add("Atan", 7, unary<AtanOp>());
  registry.add("Sinh", 9, unary<SinhOp>());
  registry.add("Cosh", 9, unary<CoshOp>());
  registry.add("Asinh", 9, unary<AsinhOp>());
  registry.add("Acosh", 9, unary<AcoshOp>());
  registry.add("Atanh", 9, unary<AtanhOp>());
  registry.add("Tanh", {1, 6, 13}, unary<TanhOp>());
  registry.add("Sigmoid", {1, 6, 13}, unary<SigmoidOp>());
  registry.add("Erf", {9, 13}, unary<ErfOp>());
  registry.add("Floor", {1, 6, 13}, unary<FloorOp>());
  registry.add("Ceil", {1, 6, 13}, unary<CeilOp>());
  registry.add("Round", 11, unary<RoundEvenOp>());
  registry.add("Sign", {9, 13}, unary<SignOp>());
  registry.add("IsNaN", {9, 13}, unary<IsNanOp>());
  registry.add("Not", 1, unary<NotOp>());
  registry.add("BitwiseNot", 18, unary<BitNotOp>());
  registry.add("HardSwish", 14, unary<HardSwishOp>());
  registry.add("Identity", {1, 13, 14, 16},
               [](NodeContext &ctx, Outputs &outputs) {
                 outputs.push_back(ctx.input(0));
                 return success();
               });
  registry.add("IsInf", {10}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    if (x && !isa<FloatType>(NodeContext::elementType(x)))
      return ctx.error("IsInf takes floats, got " +
                       NodeContext::typeName(NodeContext::elementType(x)));
    bool negative = ctx.getInt("detect_negative", 1);
    bool positive = ctx.getInt("detect_positive", 1);
    Value result;
    if (negative && positive)
      result = ctx.create<IsInfOp>(x);
    else if (positive)
      result = ctx.binary<EqOp>(x, ctx.scalarLike(x, INFINITY));
    else if (negative)
      result = ctx.binary<EqOp>(x, ctx.scalarLike(x, -INFINITY));
    else // nothing detected: x != x && x == x is false everywhere
      result =
          ctx.binary<AndOp>(ctx.binary<NeOp>(x, x), ctx.binary<EqOp>(x, x));
    outputs.push_back(result);
    return success();
  });

  // Activations.
  registry.add("Relu", {1, 6, 13, 14}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    outputs.push_back(ctx.binary<MaxOp>(x, ctx.scalarLike(x, 0)));
    return success();
  });
  registry.add("LeakyRelu", {1, 6, 16}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value scaled =
        ctx.binary<MulOp>(x, ctx.scalarLike(x, ctx.getFloat("alpha", 0.01f)));
    outputs.push_back(selectNegative(ctx, x, scaled));
    return success();
  });
  registry.add("PRelu", {1, 6, 7, 9, 16},
               [](NodeContext &ctx, Outputs &outputs) {
                 Value x = ctx.input(0);
                 Value scaled = ctx.binary<MulOp>(x, ctx.input(1));
                 outputs.push_back(selectNegative(ctx, x, scaled));
                 return success();
               });
  registry.add("Elu", {1, 6}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value alpha = ctx.scalarLike(x, ctx.getFloat("alpha", 1.0f));
    Value expm1 = ctx.binary<SubOp>(ctx.create<ExpOp>(x), ctx.scalarLike(x, 1));
    outputs.push_back(selectNegative(ctx, x, ctx.binary<MulOp>(expm1, alpha)));
    return success();
  });
  registry.add("Celu", 12, [](NodeContext &ctx, Outputs &outputs) {
    // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    Value x = ctx.input(0);
    Value alpha = ctx.scalarLike(x, ctx.getFloat("alpha", 1.0f));
    Value expm1 = ctx.binary<SubOp>(
        ctx.create<ExpOp>(ctx.binary<DivOp>(x, alpha)), ctx.scalarLike(x, 1));
    Value zero = ctx.scalarLike(x, 0);
    outputs.push_back(ctx.binary<AddOp>(
        ctx.binary<MaxOp>(x, zero),
        ctx.binary<MinOp>(zero, ctx.binary<MulOp>(expm1, alpha))));
    return success();
  });
  registry.add("Selu", {1, 6}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value alpha =
        ctx.scalarLike(x, ctx.getFloat("alpha", 1.67326319217681884765625f));
    Value gamma =
        ctx.scalarLike(x, ctx.getFloat("gamma", 1.05070102214813232421875f));
    Value expm1 = ctx.binary<SubOp>(ctx.create<ExpOp>(x), ctx.scalarLike(x, 1));
    Value inner = selectNegative(ctx, x, ctx.binary<MulOp>(expm1, alpha));
    outputs.push_back(ctx.binary<MulOp>(inner, gamma));
    return success();
  });
  registry.add("ThresholdedRelu", 10, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value above =
        ctx.binary<GtOp>(x, ctx.scalarLike(x, ctx.getFloat("alpha", 1.0f)));
    outputs.push_back(ctx.create<SelectOp>(above, x, ctx.scalarLike(x, 0)));
    return success();
  });
  registry.add("HardSigmoid", {1, 6}, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value y = ctx.binary<AddOp>(
        ctx.binary<MulOp>(x, ctx.scalarLike(x, ctx.getFloat("alpha", 0.2f))),
        ctx.scalarLike(x, ctx.getFloat("beta", 0.5f)));
    y = ctx.binary<MaxOp>(y, ctx.scalarLike(x, 0));
    outputs.push_back(ctx.binary<MinOp>(y, ctx.scalarLike(x, 1)));
    return success();
  });
  registry.add("Softsign", 1, [](NodeContext &ctx, Outputs &outputs) {
    Value x = ctx.input(0);
    Value denominator =
        ctx.binary<AddOp>(ctx.create<AbsOp>(x), ctx.scalarLike(x, 1));
    outputs.push_back(ctx.binary<DivOp>(x, denominator));
    return success();
  });
  registry.add("Softplus", 1, [](NodeContext &ctx, Outputs &outputs) {
    outputs.push_back(softplus(ctx, ctx.input(0)));
    return success();
  });
  registry.add("Mish", 18, [](NodeContext &ctx, Outputs &outputs) {
    outputs.push_back(ctx.create<MishOp>(ctx.input(0)));
    return success();
  });
  registry.add("Gelu", 20, geluHandler);
  registry.add("com.microsoft.Gelu", 1, msGelu);
  registry.add("com.microsoft.BiasGelu", 1, msGelu);
  registry.add("com.microsoft.FastGelu", 1, fastGelu);
  registry.add("com.microsoft.QuickGelu", 1, quickGelu);
  registry.add("Shrink", 9, [](NodeContext &ctx, Outputs &outputs) {
    // x < -lambd ? x + bias : x > lambd ? x - bias : 0
    Value x = ctx.input(0);
    float lambd = ctx.getFloat("lambd", 0.5f), bias = ctx.getFloat("bias", 0);
    Value zero = ctx.scalarLike(x, 0);
    Value below = ctx.binary<LtOp>(x, ctx.scalarLike(x, -lambd));
    Value above = ctx.binary<GtOp>(x, ctx.scalarLike(x, lambd));
    Value high = ctx.create<SelectOp>(
        above, ctx.binary<SubOp>(x, ctx.scalarLike(x, bias)), zero);
    outputs.push_back(ctx.create<SelectOp>(
        below, ctx.binary<AddOp>(x, ctx.scalarLike(x, bias)), high));
    return success();
  });
  registry.add("Clip", {1, 6, 11, 12, 13}, clipHandler);

  // Binary arithmetic.
  registry.add("Add", {1, 6, 7, 13, 14},
               shapeArithmetic<AddOp>(
                   [](const TDim &a, const TDim &b) -> std::optional<TDim> {
                     return a + b;
                   }));
  registry.add("Sub", {1, 6, 7, 13, 14},
               shapeArithmetic<SubOp>(
                   [](const TDim &a, const TDim &b) -> std::optional<TDim> {
                     return a - b;
                   }));
  registry.add("Mul", {1, 6, 7, 13, 14},
               shapeArithmetic<MulOp>(
                   [](const TDim &a, const TDim &b) -> std::optional<TDim> {
                     return a * b;
                   }));
  registry.add("Div", {1, 6, 7, 13, 14}, shapeArithmetic<DivOp>(divideDims));
  registry.add("Pow", {1, 7, 12, 13, 15},
               [](NodeContext &ctx, Outputs &outputs) {
                 Value base = ctx.input(0);
                 Value exponent =
                     ctx.castTo(ctx.input(1), NodeContext::elementType(base));
                 outputs.push_back(ctx.binary<PowOp>(base, exponent));
                 return success();
               });
  registry.add("Mod", {10, 13}, [](NodeContext &ctx, Outputs &outputs) {
    Value a = ctx.input(0), b = ctx.input(1);
    if (ctx.getInt("fmod", 0) || isFloat(a))
      outputs.push_back(ctx.binary<RemOp>(a, b));
    else
      outputs.push_back(floorMod(ctx, a, b));
    return success();
  });
  registry.add("Max", {1, 6, 8, 12, 13}, variadic<MaxOp>());
  registry.add("Min", {1, 6, 8, 12, 13}, variadic<MinOp>());
  registry.add("Sum", {1, 6, 8, 13}, variadic<AddOp>());
  registry.add("Mean", {1, 6, 8, 13}, [](NodeContext &ctx, Outputs &outputs) {
    Value acc = ctx.input(0);
    for (unsigned i = 1; i < ctx.getNumInputs(); ++i)
      acc = ctx.binary<AddOp>(acc, ctx.input(i));
    outputs.push_back(ctx.binary<DivOp>(
        acc, ctx.scalarLike(acc, static_cast<double>(ctx.getNumInputs()))));
    return success();
  });

  // Comparisons and logic.
  registry.add("Equal", {1, 7, 11, 13, 19}, equalHandler);
  registry.add("Less", {1, 7, 9, 13}, binary<LtOp>());
  registry.add("LessOrEqual", {12, 16}, binary<LeOp>());
  registry.add("Greater", {1, 7, 9, 13}, binary<GtOp>());
  registry.add("GreaterOrEqual", {12, 16}, binary<GeOp>());
  registry.add("And", {1, 7}, binary<AndOp>());
  registry.add("Or", {1, 7}, binary<OrOp>());
  registry.add("Xor", {1, 7}, binary<XorOp>());
  registry.add("BitwiseAnd", 18, binary<BitAndOp>());
  registry.add("BitwiseOr", 18, binary<BitOrOp>());
  registry.add("BitwiseXor", 18, binary<BitXorOp>());
  registry.add("BitShift", 11, [](NodeContext &ctx, Outputs &outputs) {
    std::string direction = ctx.getString("direction", "");
    if (direction == "LEFT")
      outputs.push_back(ctx.binary<ShlOp>(ctx.input(0), ctx.input(1)));
    else if (direction == "RIGHT")
      outputs.push_back(ctx.binary<ShrOp>(ctx.input(0), ctx.input(1)));
    else
      return ctx.unsupported("direction '" + direction + "'");
    return success();
  });
  registry.add("Where", {9, 16}, whereHandler);

  // Types.
  registry.add("Cast", {1, 6, 9, 13, 19}, castHandler);
  registry.add("CastLike", {15, 19}, [](NodeContext &ctx, Outputs &outputs) {
    outputs.push_back(
        ctx.castTo(ctx.input(0), NodeContext::elementType(ctx.input(1))));
    return success();
  });
}
