//===- QuantOps.cpp - ONNX quantization operators -------------------------===//
//
// Linear (de)quantization and the integer matrix products and convolutions,
// expanded into casts, element-wise math, einsum and i32 convolutions:
// tract-opl has no quantized types, so zero points and scales are explicit
// arithmetic that declutter can fold.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/ops/Attention.h"
#include "frontends/onnx/ops/Conv.h"

#include "dialects/tract/TractFolding.h"

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

/// DynamicQuantizeLinear's outputs: `x` as u8 over its range (zero
/// included), the scale and the zero point.
struct DynamicQuantized {
  Value q, scale, zeroPoint;
};

std::optional<DynamicQuantized> dynamicQuantize(NodeContext &ctx, Value x) {
  if (!x)
    return std::nullopt;
  if (!NodeContext::elementType(x).isF32()) {
    (void)ctx.unsupported("input type " +
                          NodeContext::typeName(NodeContext::elementType(x)));
    return std::nullopt;
  }
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
  if (!y || !scale || !zeroPoint)
    return std::nullopt;
  return DynamicQuantized{y, scale, zeroPoint};
}

LogicalResult dynamicQuantizeLinear(NodeContext &ctx, Outputs &outputs) {
  std::optional<DynamicQuantized> q = dynamicQuantize(ctx, ctx.input(0));
  if (!q)
    return failure();
  outputs.append({q->q, q->scale, q->zeroPoint});
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


//===----------------------------------------------------------------------===//
// Integer products on constant weights: tract.quant_matmul
//===----------------------------------------------------------------------===//

/// The constant behind `value` (dense or a mapped weight), or null.
DenseElementsAttr constantOf(Value value) {
  auto op = value ? value.getDefiningOp<ConstOp>() : ConstOp();
  return op ? denseOf(op.getValue()) : DenseElementsAttr();
}

bool isByteType(Type type) {
  return type.isSignlessInteger(8) || type.isUnsignedInteger(8);
}

/// Input `i`, a constant holding one value or `channels` values (or
/// absent: none); nullopt when it is neither.
std::optional<SmallVector<double>> channelValues(NodeContext &ctx, unsigned i,
                                                 int64_t channels) {
  if (!ctx.input(i))
    return SmallVector<double>();
  std::optional<SmallVector<double>> values = ctx.getConstFloats(i);
  if (!values || values->empty())
    return std::nullopt;
  if (llvm::all_equal(*values))
    return SmallVector<double>{values->front()};
  if (static_cast<int64_t>(values->size()) != channels)
    return std::nullopt;
  return values;
}

/// The parameters of a product that tract.quant_matmul takes, from the
/// node's constants: zero points and the requantization's multiplier,
/// computed in f32 as x_scale * w_scale / y_scale.
struct QuantParams {
  int64_t inputZero = 0;
  SmallVector<int64_t> weightZero;
  std::optional<SmallVector<float>> multiplier;
  int64_t outputZero = 0;
  bool outputSigned = false;
};

/// The parameters, from the inputs at `xZero`, `wZero` and (when
/// requantizing) `xScale`, `wScale`, `yScale`, `yZero`; nullopt when one
/// is not a constant of the form the op takes. `outputType` is the
/// requantized result's type.
std::optional<QuantParams>
readQuantParams(NodeContext &ctx, int64_t channels, unsigned xZero,
                unsigned wZero, std::optional<unsigned> xScale = {},
                unsigned wScale = 0, unsigned yScale = 0, unsigned yZero = 0,
                Type outputType = {}) {
  QuantParams params;
  // ~0u: a zero point the caller applies itself.
  std::optional<SmallVector<double>> x =
      xZero == ~0u ? SmallVector<double>() : channelValues(ctx, xZero, 1);
  std::optional<SmallVector<double>> w = channelValues(ctx, wZero, channels);
  if (!x || !w || x->size() > 1)
    return std::nullopt;
  params.inputZero = x->empty() ? 0 : int64_t(x->front());
  if (llvm::any_of(*w, [](double value) { return value != 0; }))
    for (double value : *w)
      params.weightZero.push_back(int64_t(value));
  if (!xScale)
    return params;
  std::optional<SmallVector<double>> xs = channelValues(ctx, *xScale, 1);
  std::optional<SmallVector<double>> ws = channelValues(ctx, wScale, channels);
  std::optional<SmallVector<double>> ys = channelValues(ctx, yScale, 1);
  std::optional<SmallVector<double>> yz = channelValues(ctx, yZero, 1);
  if (!xs || !ws || !ys || !yz || xs->size() != 1 || ws->empty() ||
      ys->size() != 1 || yz->size() > 1 || !isByteType(outputType))
    return std::nullopt;
  params.multiplier.emplace();
  for (double scale : *ws)
    params.multiplier->push_back(float(float(xs->front()) * float(scale)) /
                                 float(ys->front()));
  params.outputZero = yz->empty() ? 0 : int64_t(yz->front());
  params.outputSigned = !outputType.isUnsignedInteger();
  return params;
}

Value createQuantMatmul(NodeContext &ctx, Value lhs, Value rhs, Value bias,
                        bool weightsLeft, const QuantParams &params) {
  OpBuilder &b = ctx.getBuilder();
  return ctx.create<QuantMatmulOp>(
      lhs, rhs, bias, weightsLeft ? b.getUnitAttr() : UnitAttr(),
      b.getI64IntegerAttr(params.inputZero),
      b.getDenseI64ArrayAttr(params.weightZero),
      params.multiplier ? b.getDenseF32ArrayAttr(*params.multiplier)
                        : DenseF32ArrayAttr(),
      b.getI64IntegerAttr(params.outputZero),
      params.outputSigned ? b.getUnitAttr() : UnitAttr());
}

/// Whether `x` by constant `w` can be a tract.quant_matmul with the
/// weights on the right: byte types, w a matrix.
bool quantMatmulApplies(Value x, Value w) {
  return x && w && isByteType(NodeContext::elementType(x)) &&
         isByteType(NodeContext::elementType(w)) &&
         NodeContext::rank(x) >= 1 && NodeContext::rank(w) == 2 &&
         constantOf(w);
}

/// Whether a depthwise convolution's sums, and its constant correction
/// (the bias less the input's zero point times the weights' sums), are
/// integers that f32 holds exactly: each output sums `taps` products of at
/// most 255 * 255.
bool exactDepthwise(DenseElementsAttr kernel, Value bias, int64_t taps) {
  int64_t largest = 0;
  if (bias)
    for (int64_t value : readIntValues(constantOf(bias)))
      largest = std::max<int64_t>(largest, std::abs(value));
  return 2 * taps * 255 * 255 + largest < (int64_t(1) << 24);
}

/// A 2-D convolution of bytes `x` by constant bytes `w` as
/// tract.quant_conv (group 1), depthwise (group = channels) as
/// tract.quant_depthwise, or grouped as a tract.quant_conv per group
/// concatenated, on the input padded with its zero point. Null when the
/// node is not of that form (the caller falls back to the general integer
/// convolution).
Value quantConv(NodeContext &ctx, Value x, Value w, Value bias,
                const QuantParams &params) {
  if (!x || !w || NodeContext::rank(x) != 4 || NodeContext::rank(w) != 4 ||
      !isByteType(NodeContext::elementType(x)) ||
      !isByteType(NodeContext::elementType(w)))
    return {};
  DenseElementsAttr kernel = constantOf(w);
  if (!kernel || (bias && !constantOf(bias)))
    return {};
  if (bias && !NodeContext::elementType(bias).isSignlessInteger(32))
    return {};
  Shape xShape = getShape(x), wShape = getShape(w);
  std::optional<int64_t> c = xShape[1].getConstant(),
                         h = xShape[2].getConstant(),
                         wd = xShape[3].getConstant();
  int64_t group = ctx.getInt("group", 1);
  if (!c || !h || !wd || TDim(*c / std::max<int64_t>(group, 1)) != wShape[1])
    return {};
  int64_t out = *wShape[0].getConstant(), kh = *wShape[2].getConstant(),
          kw = *wShape[3].getConstant();
  // Sizes of a plausible model only, so that the products below cannot
  // overflow: larger ones go the general way, which checks them.
  constexpr int64_t kLargest = int64_t(1) << 20;
  auto plausible = [&](ArrayRef<int64_t> values) {
    return llvm::all_of(values,
                        [&](int64_t v) { return v >= 0 && v <= kLargest; });
  };
  if (!plausible({*c, *h, *wd, out, kh, kw, group}))
    return {};
  // Depthwise (one channel in and one out per group), group 1, or a
  // convolution per group of channels.
  bool depthwise = group == *c && out == *c && group > 1 &&
                   exactDepthwise(kernel, bias, kh * kw);
  bool grouped = group > 1 && !depthwise;
  // Groups of at least 8 channels in: a convolution per group of 32 or 8
  // channels took 0.14 and 0.34 of the general way's time, one per group
  // of 4 (ResNeXt 32x4d's) 1.3 times it (32 tiny products).
  constexpr int64_t kMinGroupChannels = 8;
  if (grouped && (*c % group || out % group || *c / group < kMinGroupChannels))
    return {};
  FailureOr<Window> window = readWindow(ctx, 2);
  if (failed(window) || !plausible(window->strides) ||
      !plausible(window->dilations) || !plausible(window->before) ||
      !plausible(window->after))
    return {};
  SmallVector<int64_t> strides = window->strides.empty()
                                     ? SmallVector<int64_t>{1, 1}
                                     : window->strides;
  SmallVector<int64_t> dilations = window->dilations.empty()
                                       ? SmallVector<int64_t>{1, 1}
                                       : window->dilations;
  int64_t sizes[2] = {*h, *wd}, kernelSizes[2] = {kh, kw};
  SmallVector<int64_t> before(2, 0), after(2, 0);
  for (int64_t i = 0; i < 2; ++i) {
    int64_t field = (kernelSizes[i] - 1) * dilations[i] + 1;
    if (window->padding == Padding::Explicit) {
      before[i] = window->before[i];
      after[i] = window->after[i];
    } else if (window->padding == Padding::SameUpper ||
               window->padding == Padding::SameLower) {
      int64_t outSize = (sizes[i] + strides[i] - 1) / strides[i];
      int64_t total =
          std::max<int64_t>((outSize - 1) * strides[i] + field - sizes[i], 0);
      before[i] = window->padding == Padding::SameUpper ? total / 2
                                                        : (total + 1) / 2;
      after[i] = total - before[i];
    }
  }
  for (int64_t i = 0; i < 2; ++i) {
    int64_t field = (kernelSizes[i] - 1) * dilations[i] + 1;
    if (sizes[i] + before[i] + after[i] < field)
      return {};
  }

  Value padded = x;
  if (llvm::any_of(before, [](int64_t p) { return p; }) ||
      llvm::any_of(after, [](int64_t p) { return p; })) {
    Type element = NodeContext::elementType(x);
    padded = ctx.create<PadOp>(
        x, ArrayRef<int64_t>{0, 0, before[0], before[1]},
        ArrayRef<int64_t>{0, 0, after[0], after[1]}, PadMode::Constant,
        IntegerAttr::get(element, params.inputZero));
  }
  OpBuilder &b = ctx.getBuilder();
  if (grouped) {
    // A tract.quant_conv per group on its slice of the channels (and of
    // the per-channel parameters), side by side.
    int64_t in = *c / group, outs = out / group;
    auto slice = [&](ArrayRef<int64_t> values, int64_t g) {
      return values.size() <= 1
                 ? SmallVector<int64_t>(values)
                 : SmallVector<int64_t>(values.slice(g * outs, outs));
    };
    SmallVector<Value> parts;
    for (int64_t g = 0; g < group; ++g) {
      Value input = ctx.create<SliceOp>(
          padded, uint64_t(1), DimAttr::get(ctx.getContext(), TDim(g * in)),
          DimAttr::get(ctx.getContext(), TDim((g + 1) * in)));
      Value kernelPart =
          ctx.constant(sliceDense(kernel, 0, g * outs, (g + 1) * outs));
      Value biasPart =
          bias ? ctx.constant(sliceDense(constantOf(bias), 0, g * outs,
                                         (g + 1) * outs))
               : Value();
      SmallVector<float> multiplier;
      if (params.multiplier)
        multiplier = params.multiplier->size() <= 1
                         ? *params.multiplier
                         : SmallVector<float>(ArrayRef(*params.multiplier)
                                                  .slice(g * outs, outs));
      parts.push_back(ctx.create<QuantConvOp>(
          input, kernelPart, biasPart, b.getDenseI64ArrayAttr(strides),
          b.getDenseI64ArrayAttr(dilations), UnitAttr(),
          b.getI64IntegerAttr(params.inputZero),
          b.getDenseI64ArrayAttr(slice(params.weightZero, g)),
          params.multiplier ? b.getDenseF32ArrayAttr(multiplier)
                            : DenseF32ArrayAttr(),
          b.getI64IntegerAttr(params.outputZero),
          params.outputSigned ? b.getUnitAttr() : UnitAttr()));
      if (!parts.back())
        return {};
    }
    return ctx.create<ConcatOp>(ValueRange(parts), int64_t(1));
  }
  if (depthwise)
    return ctx.create<QuantDepthwiseOp>(
        padded,
        ctx.constant(kernel.reshape(RankedTensorType::get(
            {out, kh, kw}, kernel.getElementType()))),
        bias, b.getDenseI64ArrayAttr(strides),
        b.getDenseI64ArrayAttr(dilations), UnitAttr(),
        b.getI64IntegerAttr(params.inputZero),
        b.getDenseI64ArrayAttr(params.weightZero),
        params.multiplier ? b.getDenseF32ArrayAttr(*params.multiplier)
                          : DenseF32ArrayAttr(),
        b.getI64IntegerAttr(params.outputZero),
        params.outputSigned ? b.getUnitAttr() : UnitAttr());
  return ctx.create<QuantConvOp>(
      padded, ctx.constant(kernel), bias, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(dilations), UnitAttr(),
      b.getI64IntegerAttr(params.inputZero),
      b.getDenseI64ArrayAttr(params.weightZero),
      params.multiplier ? b.getDenseF32ArrayAttr(*params.multiplier)
                        : DenseF32ArrayAttr(),
      b.getI64IntegerAttr(params.outputZero),
      params.outputSigned ? b.getUnitAttr() : UnitAttr());
}

/// MatMulInteger's (a - aZero) * (b - bZero) in i32, with b and its zero
/// point the inputs at `bIndex` and `bZeroIndex` and a's zero point `aZero`,
/// the input at `aZeroIndex` (or ~0u: a value computed here).
Value integerProduct(NodeContext &ctx, Value a, Value aZero,
                     unsigned aZeroIndex, unsigned bIndex,
                     unsigned bZeroIndex) {
  Value b = ctx.input(bIndex);
  if (quantMatmulApplies(a, b)) {
    int64_t channels = getShape(b)[1].getConstant().value_or(-1);
    // A zero point computed at run time (dynamic quantization): the
    // product with none, then a_zero times the weights' column sums
    // (less their zero points) taken off.
    bool runtimeZero =
        aZero && (aZeroIndex == ~0u || !ctx.getConstant(aZeroIndex));
    if (std::optional<QuantParams> params = readQuantParams(
            ctx, channels, runtimeZero ? ~0u : aZeroIndex, bZeroIndex)) {
      Value y = createQuantMatmul(ctx, a, b, Value(), false, *params);
      if (y && runtimeZero && NodeContext::rank(aZero) <= 1 &&
          getShape(aZero) == Shape(NodeContext::rank(aZero), TDim(1))) {
        DenseElementsAttr weights = constantOf(b);
        SmallVector<int32_t> sums(channels, 0);
        int64_t k = getShape(b)[0].getConstant().value_or(0);
        bool isUnsigned = weights.getElementType().isUnsignedInteger();
        SmallVector<int64_t> values = readIntValues(weights);
        for (int64_t row = 0; row < k; ++row)
          for (int64_t c = 0; c < channels; ++c) {
            int64_t value = values[weights.isSplat() ? 0 : row * channels + c];
            if (isUnsigned)
              value &= 0xff;
            int64_t zero = params->weightZero.empty()
                               ? 0
                               : params->weightZero[params->weightZero.size() ==
                                                            1
                                                        ? 0
                                                        : c];
            sums[c] += int32_t(value - zero);
          }
        Type i32 = IntegerType::get(ctx.getContext(), 32);
        Value columnSums = ctx.constant(DenseElementsAttr::get(
            RankedTensorType::get({channels}, i32), ArrayRef(sums)));
        Value zero = ctx.castTo(aZero, i32);
        if (NodeContext::rank(zero) == 1)
          zero = ctx.create<RmAxisOp>(zero, int64_t(0));
        return ctx.binary<SubOp>(y, ctx.binary<MulOp>(columnSums, zero));
      }
      if (y && !runtimeZero)
        return y;
      return {};
    }
  }
  return integerMatmul(ctx, a, aZero, b, ctx.input(bZeroIndex));
}

LogicalResult matMulInteger(NodeContext &ctx, Outputs &outputs) {
  return pushOutput(outputs, integerProduct(ctx, ctx.input(0), ctx.input(2),
                                            2, 1, 3));
}

/// The i32 product `acc` at scale aScale * bScale (b's per tensor or per
/// column) in f32, plus a float bias along the columns, if any.
Value productToFloat(NodeContext &ctx, Value acc, Value aScale, Value bScale,
                     Value bias) {
  if (!acc || !aScale || !bScale)
    return {};
  Type f32 = Float32Type::get(ctx.getContext());
  Value y = ctx.binary<MulOp>(
      ctx.castTo(acc, f32),
      ctx.binary<MulOp>(ctx.castTo(aScale, f32), ctx.castTo(bScale, f32)));
  return bias ? ctx.binary<AddOp>(y, ctx.castTo(bias, f32)) : y;
}

/// com.microsoft's DynamicQuantizeMatMul: A quantized at run time as
/// DynamicQuantizeLinear does, by B (integers, b_scale and b_zero_point per
/// tensor or per column), in f32, plus the bias.
LogicalResult dynamicQuantizeMatMul(NodeContext &ctx, Outputs &outputs) {
  std::optional<DynamicQuantized> a = dynamicQuantize(ctx, ctx.input(0));
  if (!a)
    return failure();
  Value acc = integerProduct(ctx, a->q, a->zeroPoint, ~0u, 1, 3);
  return pushOutput(outputs, productToFloat(ctx, acc, a->scale, ctx.input(2),
                                            ctx.input(4)));
}

/// com.microsoft's MatMulIntegerToFloat (onnxruntime's fusion of the
/// dynamic form): MatMulInteger(A, B, a_zero_point, b_zero_point) times
/// a_scale * b_scale, plus the bias.
LogicalResult matMulIntegerToFloat(NodeContext &ctx, Outputs &outputs) {
  Value acc = integerProduct(ctx, ctx.input(0), ctx.input(4), 4, 1, 5);
  return pushOutput(outputs, productToFloat(ctx, acc, ctx.input(2),
                                            ctx.input(3), ctx.input(6)));
}

LogicalResult qlinearMatMul(NodeContext &ctx, Outputs &outputs) {
  Value a = ctx.input(0), b = ctx.input(3);
  if (quantMatmulApplies(a, b) && ctx.input(7))
    if (std::optional<QuantParams> params = readQuantParams(
            ctx, getShape(b)[1].getConstant().value_or(-1), 2, 5, 1u, 4, 6, 7,
            NodeContext::elementType(ctx.input(7))))
      return pushOutput(outputs,
                        createQuantMatmul(ctx, a, b, Value(), false, *params));
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
  if (Value w = ctx.input(1); w && NodeContext::rank(w) == 4)
    if (std::optional<QuantParams> params = readQuantParams(
            ctx, getShape(w)[0].getConstant().value_or(-1), 2, 3))
      if (Value y = quantConv(ctx, ctx.input(0), w, Value(), *params))
        return pushOutput(outputs, y);
  Value y = integerConv(ctx, ctx.input(0), ctx.input(2), ctx.input(1),
                        ctx.input(3), Value());
  return pushOutput(outputs, y);
}

/// The i32 convolution (bias included, at scale x_scale * w_scale)
/// requantized: round_even(acc * x_scale * w_scale / y_scale) + y_zero,
/// saturated; w_scale per tensor or per output channel.
LogicalResult qlinearConv(NodeContext &ctx, Outputs &outputs) {
  if (Value w = ctx.input(3); w && NodeContext::rank(w) == 4) {
    Type outputType =
        ctx.input(7)
            ? NodeContext::elementType(ctx.input(7))
            : Type(IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
    if (std::optional<QuantParams> params = readQuantParams(
            ctx, getShape(w)[0].getConstant().value_or(-1), 2, 5, 1u, 4, 6, 7,
            outputType))
      if (Value y = quantConv(ctx, ctx.input(0), w, ctx.input(8), *params))
        return pushOutput(outputs, y);
  }
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

//===----------------------------------------------------------------------===//
// com.microsoft's QLinear element-wise ops and pools (QOperator form)
//===----------------------------------------------------------------------===//

/// scale * (q - zero) in f32 (no zero point: 0).
Value dequantizeTensor(NodeContext &ctx, Value q, Value scale, Value zero) {
  if (!q || !scale)
    return {};
  Type f32 = Float32Type::get(ctx.getContext());
  Value x = ctx.castTo(q, f32);
  if (zero)
    x = ctx.binary<SubOp>(x, ctx.castTo(zero, f32));
  return ctx.binary<MulOp>(x, ctx.castTo(scale, f32));
}

/// round_half_even(x / scale) + zero, saturated to the zero point's type
/// (no zero point: `fallback`'s, the input's).
Value quantizeTensor(NodeContext &ctx, Value x, Value scale, Value zero,
                     Type fallback) {
  if (!x || !scale)
    return {};
  Type type = zero ? NodeContext::elementType(zero) : fallback;
  if (!isQuantType(type)) {
    (void)ctx.unsupported("quantized type " + NodeContext::typeName(type));
    return {};
  }
  Value scaled = ctx.binary<DivOp>(
      x, ctx.castTo(scale, Float32Type::get(ctx.getContext())));
  return saturateTo(ctx, scaled, zero, type);
}

/// com.microsoft's QGemm: `alpha * a_scale * b_scale * ((A' - a_zero)(B' -
/// b_zero) + C)`, with C an i32 bias at the product's scale, quantized to
/// y_scale and y_zero_point when y_scale is given (u8 without a zero
/// point), in f32 otherwise. b_scale and b_zero_point are per tensor or
/// per column. With constant weights, a tract.quant_matmul whose
/// multiplier carries alpha.
LogicalResult qgemm(NodeContext &ctx, Outputs &outputs) {
  Value a = ctx.input(0), b = ctx.input(3), bias = ctx.input(6);
  Value aScale = ctx.input(1), bScale = ctx.input(4), yScale = ctx.input(7),
        yZero = ctx.input(8);
  if (!a || !b || !aScale || !bScale)
    return ctx.error("missing A, B or their scales");
  if (NodeContext::rank(a) != 2 || NodeContext::rank(b) != 2)
    return ctx.error("A and B must be matrices, got ranks " +
                     Twine(NodeContext::rank(a)) + " and " +
                     Twine(NodeContext::rank(b)));
  if (ctx.getInt("transA", 0))
    a = ctx.create<MoveAxisOp>(a, int64_t(1), int64_t(0));
  if (ctx.getInt("transB", 0))
    b = ctx.create<MoveAxisOp>(b, int64_t(1), int64_t(0));
  if (!a || !b)
    return failure();
  float alpha = ctx.getFloat("alpha", 1.0f);
  int64_t channels = getShape(b)[1].getConstant().value_or(-1);
  Type outputType =
      yZero ? NodeContext::elementType(yZero)
            : Type(IntegerType::get(ctx.getContext(), 8, IntegerType::Unsigned));
  Type i32 = IntegerType::get(ctx.getContext(), 32);
  bool constantBias =
      !bias || (constantOf(bias) && NodeContext::elementType(bias) == i32 &&
                NodeContext::rank(bias) == 1 &&
                getShape(bias)[0] == TDim(channels));
  if (quantMatmulApplies(a, b) && constantBias && channels > 0) {
    std::optional<QuantParams> params =
        yScale ? readQuantParams(ctx, channels, 2, 5, 1u, 4, 7, 8, outputType)
               : readQuantParams(ctx, channels, 2, 5);
    if (params) {
      if (params->multiplier)
        for (float &multiplier : *params->multiplier)
          multiplier *= alpha;
      Value y = createQuantMatmul(ctx, a, b, bias, false, *params);
      if (y && yScale)
        return pushOutput(outputs, y);
      if (y && !yScale) {
        // The i32 sums at the product's scale, times alpha.
        Type f32 = Float32Type::get(ctx.getContext());
        Value scale = ctx.binary<MulOp>(ctx.castTo(aScale, f32),
                                        ctx.castTo(bScale, f32));
        if (alpha != 1.0f)
          scale = ctx.binary<MulOp>(scale, ctx.scalar(f32, alpha));
        return pushOutput(outputs,
                          ctx.binary<MulOp>(ctx.castTo(y, f32), scale));
      }
    }
  }
  // Any other form: the i32 product, then in f32.
  Value acc = integerMatmul(ctx, a, ctx.input(2), b, ctx.input(5));
  if (acc && bias)
    acc = ctx.binary<AddOp>(acc, ctx.castTo(bias, i32));
  if (!acc)
    return failure();
  Type f32 = Float32Type::get(ctx.getContext());
  Value scale =
      ctx.binary<MulOp>(ctx.castTo(aScale, f32), ctx.castTo(bScale, f32));
  if (alpha != 1.0f)
    scale = ctx.binary<MulOp>(scale, ctx.scalar(f32, alpha));
  Value real = ctx.binary<MulOp>(ctx.castTo(acc, f32), scale);
  if (!yScale)
    return pushOutput(outputs, real);
  return pushOutput(outputs,
                    quantizeTensor(ctx, real, yScale, yZero, outputType));
}

/// The per-tensor parameters these ops take: a refusal names any other.
LogicalResult requirePerTensor(NodeContext &ctx,
                               std::initializer_list<unsigned> inputs) {
  for (unsigned i : inputs)
    if (Value value = ctx.input(i);
        value && getShape(value) != Shape(NodeContext::rank(value), TDim(1)))
      return ctx.unsupported("a per-axis quantization parameter (input " +
                             Twine(i) + ")");
  return success();
}

/// QLinearAdd and QLinearMul: A and B dequantized, added or multiplied in
/// f32 and quantized to C's parameters, as ONNX's QDQ form of the same op
/// defines it.
template <typename OpTy>
LogicalResult qlinearBinary(NodeContext &ctx, Outputs &outputs) {
  if (failed(requirePerTensor(ctx, {1, 2, 4, 5, 6, 7})))
    return failure();
  Value a = dequantizeTensor(ctx, ctx.input(0), ctx.input(1), ctx.input(2));
  Value b = dequantizeTensor(ctx, ctx.input(3), ctx.input(4), ctx.input(5));
  if (!a || !b)
    return failure();
  return pushOutput(outputs,
                    quantizeTensor(ctx, ctx.binary<OpTy>(a, b), ctx.input(6),
                                   ctx.input(7),
                                   NodeContext::elementType(ctx.input(0))));
}

/// A unary QLinear op: X dequantized, `apply` in f32, quantized to Y's
/// parameters (inputs X, X_scale, X_zero, Y_scale, Y_zero).
LogicalResult qlinearUnary(NodeContext &ctx, Outputs &outputs,
                           function_ref<Value(Value)> apply) {
  if (failed(requirePerTensor(ctx, {1, 2, 3, 4})))
    return failure();
  Value x = dequantizeTensor(ctx, ctx.input(0), ctx.input(1), ctx.input(2));
  if (!x)
    return failure();
  return pushOutput(outputs,
                    quantizeTensor(ctx, apply(x), ctx.input(3), ctx.input(4),
                                   NodeContext::elementType(ctx.input(0))));
}

LogicalResult qlinearSigmoid(NodeContext &ctx, Outputs &outputs) {
  return qlinearUnary(ctx, outputs,
                      [&](Value x) { return ctx.create<SigmoidOp>(x); });
}

LogicalResult qlinearLeakyRelu(NodeContext &ctx, Outputs &outputs) {
  float alpha = ctx.getFloat("alpha", 0.01f);
  return qlinearUnary(ctx, outputs, [&](Value x) {
    Value zero = ctx.scalarLike(x, 0.0);
    return ctx.binary<AddOp>(
        ctx.binary<MaxOp>(x, zero),
        ctx.binary<MulOp>(ctx.binary<MinOp>(x, zero),
                          ctx.scalarLike(x, alpha)));
  });
}

/// QLinearGlobalAveragePool: the mean over the spatial axes (after the
/// channels, or before them with channels_last), kept as axes of 1.
LogicalResult qlinearGlobalAveragePool(NodeContext &ctx, Outputs &outputs) {
  bool channelsLast = ctx.getInt("channels_last", 0) != 0;
  return qlinearUnary(ctx, outputs, [&](Value x) -> Value {
    int64_t rank = NodeContext::rank(x);
    if (rank < 3) {
      (void)ctx.error("X needs a batch, channel and spatial axes");
      return {};
    }
    SmallVector<int64_t> axes;
    for (int64_t axis = channelsLast ? 1 : 2;
         axis < (channelsLast ? rank - 1 : rank); ++axis)
      axes.push_back(axis);
    Value sum = ctx.create<ReduceOp>(x, Reducer::Sum, axes, false);
    return ctx.binary<DivOp>(sum, ctx.axesVolume(x, axes));
  });
}

/// com.microsoft's QAttention: com.microsoft's Attention whose projection
/// is 8-bit, the input (B, S, D) by the weights (D, 3 * hidden) with their
/// scales and zero points (the weights' per column), on the integer
/// kernels, then the float bias and the attention.
LogicalResult qattention(NodeContext &ctx, Outputs &outputs) {
  if (ctx.hasInput(8) || ctx.hasOutput(1))
    return ctx.unsupported("a past or present key-value cache");
  Value input = ctx.input(0), weights = ctx.input(1);
  if (!input || !weights || NodeContext::rank(input) != 3 ||
      NodeContext::rank(weights) != 2)
    return ctx.error("input must be (batch, sequence, width) and weight a "
                     "matrix");
  Value acc = integerProduct(ctx, input, ctx.input(6), 6, 1, 7);
  Value qkv = productToFloat(ctx, acc, ctx.input(3), ctx.input(4),
                             ctx.input(2));
  if (!qkv)
    return failure();
  return attendPacked(ctx, qkv, ctx.input(5), Value(), outputs);
}

/// com.microsoft's QLinearAveragePool: AveragePool on the dequantized
/// input, quantized; with channels_last the channels come last and the
/// pool runs on the input with them moved after the batch.
LogicalResult qlinearAveragePool(NodeContext &ctx, Outputs &outputs) {
  bool channelsLast = ctx.getInt("channels_last", 0) != 0;
  return qlinearUnary(ctx, outputs, [&](Value x) -> Value {
    int64_t rank = NodeContext::rank(x);
    if (channelsLast && rank >= 3)
      x = ctx.create<MoveAxisOp>(x, rank - 1, int64_t(1));
    Value y = x ? buildAveragePool(ctx, x) : Value();
    if (channelsLast && y)
      y = ctx.create<MoveAxisOp>(y, int64_t(1), rank - 1);
    return y;
  });
}

/// QLinearConcat: Y_scale, Y_zero, then (X, X_scale, X_zero) per input,
/// each dequantized, concatenated along `axis` and quantized.
LogicalResult qlinearConcat(NodeContext &ctx, Outputs &outputs) {
  unsigned count = ctx.getNumInputs();
  if (count < 5 || (count - 2) % 3 != 0)
    return ctx.error("QLinearConcat takes Y_scale, Y_zero_point and a "
                     "(tensor, scale, zero point) triple per input, got " +
                     Twine(count) + " inputs");
  SmallVector<Value> parts;
  for (unsigned i = 2; i < count; i += 3) {
    if (failed(requirePerTensor(ctx, {i + 1, i + 2})))
      return failure();
    Value part =
        dequantizeTensor(ctx, ctx.input(i), ctx.input(i + 1), ctx.input(i + 2));
    if (!part)
      return failure();
    parts.push_back(part);
  }
  if (failed(requirePerTensor(ctx, {0, 1})))
    return failure();
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), NodeContext::rank(parts[0]));
  if (failed(axis))
    return failure();
  Value joined = ctx.create<ConcatOp>(ValueRange(parts), *axis);
  return pushOutput(outputs,
                    quantizeTensor(ctx, joined, ctx.input(0), ctx.input(1),
                                   NodeContext::elementType(ctx.input(2))));
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
  registry.add("com.microsoft.QLinearAdd", 1, qlinearBinary<AddOp>);
  registry.add("com.microsoft.QLinearMul", 1, qlinearBinary<MulOp>);
  registry.add("com.microsoft.QLinearSigmoid", 1, qlinearSigmoid);
  registry.add("com.microsoft.QLinearLeakyRelu", 1, qlinearLeakyRelu);
  registry.add("com.microsoft.QLinearGlobalAveragePool", 1,
               qlinearGlobalAveragePool);
  registry.add("com.microsoft.QLinearConcat", 1, qlinearConcat);
  registry.add("com.microsoft.QGemm", 1, qgemm);
  registry.add("com.microsoft.QAttention", 1, qattention);
  registry.add("com.microsoft.QLinearAveragePool", 1, qlinearAveragePool);
  registry.add("com.microsoft.DynamicQuantizeMatMul", 1,
               dynamicQuantizeMatMul);
  registry.add("com.microsoft.MatMulIntegerToFloat", 1, matMulIntegerToFloat);
}
