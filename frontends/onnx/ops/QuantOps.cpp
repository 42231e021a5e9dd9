//===- QuantOps.cpp - ONNX quantization operators -------------------------===//
//
// Linear (de)quantization and the integer matrix products and convolutions,
// expanded into casts, element-wise math, einsum and i32 convolutions:
// tract-opl has no quantized types, so zero points and scales are explicit
// arithmetic that declutter can fold.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/ops/Conv.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// Appends unit axes to a per-axis parameter (1-D, along `axis` of a tensor
/// of rank `rank`) so that it broadcasts against that tensor.
Value alongAxis(NodeContext &ctx, Value parameter, int64_t axis, int64_t rank) {
  if (!parameter || NodeContext::rank(parameter) != 1)
    return parameter;
  for (int64_t i = axis + 1; i < rank; ++i)
    parameter = ctx.create<AddAxisOp>(parameter, NodeContext::rank(parameter));
  return parameter;
}

/// The representable range of an integer type, as doubles.
std::pair<double, double> integerRange(Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (type.isUnsignedInteger())
    return {0.0, std::ldexp(1.0, width) - 1};
  return {-std::ldexp(1.0, width - 1), std::ldexp(1.0, width - 1) - 1};
}

/// round_even(x) + zeroPoint, saturated to `type`'s range and cast to it.
Value saturateTo(NodeContext &ctx, Value x, Value zeroPoint, Type type) {
  Value y = ctx.create<RoundEvenOp>(x);
  if (zeroPoint)
    y = ctx.binary<AddOp>(y,
                          ctx.castTo(zeroPoint, NodeContext::elementType(x)));
  auto [lo, hi] = integerRange(type);
  y = ctx.binary<MaxOp>(y, ctx.scalarLike(y, lo));
  y = ctx.binary<MinOp>(y, ctx.scalarLike(y, hi));
  return ctx.castTo(y, type);
}

bool isQuantType(Type type) {
  return type && (type.isSignlessInteger(8) || type.isUnsignedInteger(8) ||
                  type.isSignlessInteger(16) || type.isUnsignedInteger(16) ||
                  type.isSignlessInteger(32));
}

/// The axis of `scale` in a tensor of rank `rank`: the one a per-axis
/// (1-D) scale runs along, 0 for a per-tensor one. Blocked quantization is
/// refused.
FailureOr<int64_t> scaleAxis(NodeContext &ctx, Value scale, int64_t rank) {
  if (ctx.hasAttr("block_size") && ctx.getInt("block_size", 0) != 0)
    return ctx.unsupported("blocked quantization");
  if (NodeContext::rank(scale) != 1)
    return 0;
  return ctx.normalizeAxis(ctx.getInt("axis", 1), rank);
}

LogicalResult quantizeLinear(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), scale = ctx.input(1), zeroPoint = ctx.input(2);
  if (!x)
    return failure();
  Type type =
      zeroPoint
          ? NodeContext::elementType(zeroPoint)
          : Type(IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  if (ctx.hasAttr("output_dtype") || !isQuantType(type))
    return ctx.unsupported("quantized type " + NodeContext::typeName(type));
  int64_t rank = NodeContext::rank(x);
  FailureOr<int64_t> axis = scaleAxis(ctx, scale, rank);
  if (failed(axis))
    return failure();
  scale = alongAxis(ctx, ctx.castTo(scale, NodeContext::elementType(x)), *axis,
                    rank);
  zeroPoint = alongAxis(ctx, zeroPoint, *axis, rank);
  Value scaled = ctx.binary<DivOp>(x, scale);
  outputs.push_back(saturateTo(ctx, scaled, zeroPoint, type));
  return success();
}

LogicalResult dequantizeLinear(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), scale = ctx.input(1), zeroPoint = ctx.input(2);
  if (!x || !scale)
    return failure();
  if (!isQuantType(NodeContext::elementType(x)))
    return ctx.unsupported("quantized type " +
                           NodeContext::typeName(NodeContext::elementType(x)));
  Type floatType = NodeContext::elementType(scale);
  int64_t rank = NodeContext::rank(x);
  FailureOr<int64_t> axis = scaleAxis(ctx, scale, rank);
  if (failed(axis))
    return failure();
  Value y = ctx.castTo(x, floatType);
  if (zeroPoint)
    y = ctx.binary<SubOp>(
        y, alongAxis(ctx, ctx.castTo(zeroPoint, floatType), *axis, rank));
  outputs.push_back(ctx.binary<MulOp>(y, alongAxis(ctx, scale, *axis, rank)));
  return success();
}

/// Reduces every axis of `x` and removes them: a scalar.
Value reduceAll(NodeContext &ctx, Value x, Reducer reducer) {
  int64_t rank = NodeContext::rank(x);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value reduced = ctx.create<ReduceOp>(x, reducer, axes, false);
  for (int64_t i = 0; i < rank; ++i)
    reduced = ctx.create<RmAxisOp>(reduced, int64_t(0));
  return reduced;
}

LogicalResult dynamicQuantizeLinear(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (!NodeContext::elementType(x).isF32())
    return ctx.unsupported("input type " +
                           NodeContext::typeName(NodeContext::elementType(x)));
  Type u8 = IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned);
  // The range always includes zero, so that zero is exactly representable.
  Value zero = ctx.scalar(NodeContext::elementType(x), 0.0);
  Value lo = ctx.binary<MinOp>(reduceAll(ctx, x, Reducer::Min), zero);
  Value hi = ctx.binary<MaxOp>(reduceAll(ctx, x, Reducer::Max), zero);
  Value scale =
      ctx.binary<DivOp>(ctx.binary<SubOp>(hi, lo), ctx.scalarLike(lo, 255.0));
  Value zeroPoint = saturateTo(
      ctx, ctx.binary<DivOp>(ctx.create<NegOp>(lo), scale), Value(), u8);
  Value y = saturateTo(ctx, ctx.binary<DivOp>(x, scale), zeroPoint, u8);
  outputs.append({y, scale, zeroPoint});
  return success();
}

/// The einsum expression of a (batched) matrix product of ranks `a` and `b`
/// (both >= 2), with numpy's broadcasting of the batch axes.
std::optional<std::string> matmulExpr(int64_t a, int64_t b) {
  if (a < 2 || b < 2 || std::max(a, b) > 20)
    return std::nullopt;
  int64_t batch = std::max(a, b) - 2;
  std::string letters = "abcdefghijklmnopqrst";
  std::string prefix = letters.substr(0, batch);
  return prefix.substr(batch - (a - 2)) + "xy," +
         prefix.substr(batch - (b - 2)) + "yz->" + prefix + "xz";
}

/// (a - aZero) · (b - bZero) in i32, the zero points per row of a and per
/// column of b.
Value integerMatmul(NodeContext &ctx, Value a, Value aZero, Value b,
                    Value bZero) {
  Type i32 = IntegerType::get(ctx.getContext(), 32);
  a = ctx.castTo(a, i32);
  b = ctx.castTo(b, i32);
  if (aZero) {
    aZero = ctx.castTo(aZero, i32);
    if (NodeContext::rank(aZero) == 1)
      aZero = ctx.create<AddAxisOp>(aZero, int64_t(1));
    a = ctx.binary<SubOp>(a, aZero);
  }
  if (bZero)
    b = ctx.binary<SubOp>(b, ctx.castTo(bZero, i32));
  std::optional<std::string> expr =
      matmulExpr(NodeContext::rank(a), NodeContext::rank(b));
  if (!expr) {
    (void)ctx.unsupported("matrix product of ranks " +
                          Twine(NodeContext::rank(a)) + " and " +
                          Twine(NodeContext::rank(b)));
    return {};
  }
  return ctx.create<EinsumOp>(ValueRange{a, b}, *expr);
}

LogicalResult matMulInteger(NodeContext &ctx, Outputs &outputs) {
  Value result = integerMatmul(ctx, ctx.input(0), ctx.input(2), ctx.input(1),
                               ctx.input(3));
  return pushOutput(outputs, result);
}

LogicalResult qlinearMatMul(NodeContext &ctx, Outputs &outputs) {
  Value acc = integerMatmul(ctx, ctx.input(0), ctx.input(2), ctx.input(3),
                            ctx.input(5));
  Value aScale = ctx.input(1), bScale = ctx.input(4), yScale = ctx.input(6);
  Value yZero = ctx.input(7);
  if (!acc || !aScale || !bScale || !yScale || !yZero)
    return failure();
  Type floatType = NodeContext::elementType(aScale);
  Value multiplier = ctx.binary<DivOp>(ctx.binary<MulOp>(aScale, bScale),
                                       ctx.castTo(yScale, floatType));
  Value scaled = ctx.binary<MulOp>(ctx.castTo(acc, floatType), multiplier);
  outputs.push_back(
      saturateTo(ctx, scaled, yZero, NodeContext::elementType(yZero)));
  return success();
}

/// (x - xZero) * (w - wZero) convolved in i32, plus an i32 bias; the input
/// zero point is per tensor, the kernel's per tensor or per output channel.
Value integerConv(NodeContext &ctx, Value x, Value xZero, Value w, Value wZero,
                  Value bias) {
  if (!x || !w)
    return {};
  Type i32 = IntegerType::get(ctx.getContext(), 32);
  if (xZero) {
    if (NodeContext::rank(xZero) > 1 ||
        (NodeContext::rank(xZero) == 1 && getShape(xZero)[0] != TDim(1))) {
      (void)ctx.unsupported("an x_zero_point that is not per tensor");
      return {};
    }
    x = ctx.binary<SubOp>(ctx.castTo(x, i32), ctx.castTo(xZero, i32));
  } else {
    x = ctx.castTo(x, i32);
  }
  w = ctx.castTo(w, i32);
  if (wZero) {
    if (NodeContext::rank(wZero) > 1) {
      (void)ctx.unsupported("a w_zero_point of rank " +
                            Twine(NodeContext::rank(wZero)));
      return {};
    }
    w = ctx.binary<SubOp>(
        w, alongAxis(ctx, ctx.castTo(wZero, i32), 0, NodeContext::rank(w)));
  }
  return buildConv(ctx, x, w, bias ? ctx.castTo(bias, i32) : Value());
}

LogicalResult convInteger(NodeContext &ctx, Outputs &outputs) {
  Value y = integerConv(ctx, ctx.input(0), ctx.input(2), ctx.input(1),
                        ctx.input(3), Value());
  return pushOutput(outputs, y);
}

/// The i32 convolution (bias included, at scale x_scale * w_scale)
/// requantized: round_even(acc * x_scale * w_scale / y_scale) + y_zero,
/// saturated; w_scale per tensor or per output channel.
LogicalResult qlinearConv(NodeContext &ctx, Outputs &outputs) {
  Value acc = integerConv(ctx, ctx.input(0), ctx.input(2), ctx.input(3),
                          ctx.input(5), ctx.input(8));
  Value xScale = ctx.input(1), wScale = ctx.input(4), yScale = ctx.input(6);
  Value yZero = ctx.input(7);
  if (!acc || !xScale || !wScale || !yScale)
    return failure();
  if (NodeContext::rank(wScale) > 1)
    return ctx.unsupported("a w_scale of rank " +
                           Twine(NodeContext::rank(wScale)));
  Type floatType = NodeContext::elementType(xScale);
  int64_t rank = NodeContext::rank(acc);
  Value multiplier = ctx.binary<DivOp>(
      ctx.binary<MulOp>(xScale,
                        alongAxis(ctx, ctx.castTo(wScale, floatType), 1, rank)),
      ctx.castTo(yScale, floatType));
  Value scaled = ctx.binary<MulOp>(ctx.castTo(acc, floatType), multiplier);
  // Without y_zero_point, the output is u8 with zero point 0.
  Type type =
      yZero
          ? NodeContext::elementType(yZero)
          : Type(IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  if (!isQuantType(type))
    return ctx.unsupported("quantized type " + NodeContext::typeName(type));
  outputs.push_back(saturateTo(ctx, scaled, yZero, type));
  return success();
}

} // namespace

void mlir::tract::onnx::registerQuantOps(OpRegistry &registry) {
  registry.add("QuantizeLinear", {10, 13, 19}, quantizeLinear);
  registry.add("DequantizeLinear", {10, 13, 19}, dequantizeLinear);
  registry.add("DynamicQuantizeLinear", 11, dynamicQuantizeLinear);
  registry.add("MatMulInteger", 10, matMulInteger);
  registry.add("QLinearMatMul", {10, 21}, qlinearMatMul);
  registry.add("ConvInteger", 10, convInteger);
  registry.add("QLinearConv", {10, 21}, qlinearConv);
}
