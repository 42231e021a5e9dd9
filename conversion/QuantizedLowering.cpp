//===- QuantizedLowering.cpp - tract's quantized types as integers --------===//
//
// Before the conversion to linalg, values of quantized types (QU8, QI8,
// QI32: `!quant.uniform<u8:f32, scale:zero_point>`) become the integers
// holding them, and the ops that give the types their meaning are
// rewritten into plain tract ops:
//
//   * a cast from a real value (float or integer) quantizes it:
//     round(x / scale) + zero_point, saturated, to the storage integers;
//   * a cast to a real value dequantizes: scale * (q - zero_point);
//   * a cast between two quantized types of one scale moves the zero point
//     in i32, saturated; of two scales, it goes through f32;
//   * add, sub, mul, div, min and max dequantize their operands, compute
//     in f32 and quantize to their result's type (tract's results agree
//     with this to the rounding of the last step).
//
// The frontends dequantize the operands of every other op, so any other op
// meeting a quantized value is refused here, naming it.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"
#include "conversion/Passes.h"

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractQuant.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTLOWERQUANTIZEDTYPES
#include "conversion/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

using QType = quant::UniformQuantizedType;

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

Value castElements(OpBuilder &b, Location loc, Value value, Type element) {
  if (getElementTypeOrSelf(value) == element)
    return value;
  return CastOp::create(b, loc, value, element);
}

/// scale * (q - zero_point) in f32, from `storage`, the integers of `type`.
Value dequantize(OpBuilder &b, Location loc, Value storage, QType type) {
  Type f32 = b.getF32Type();
  int64_t rank = rankOf(storage);
  Value x = castElements(b, loc, storage, f32);
  if (type.getZeroPoint() != 0)
    x = SubOp::create(b, loc, x,
                      splat(b, loc, f32, double(type.getZeroPoint()), rank));
  return MulOp::create(b, loc, x, splat(b, loc, f32, type.getScale(), rank));
}

/// Saturates `x` (of i32 or f32 elements, integral values) to the range of
/// `type`'s integers and casts it to them.
Value saturate(OpBuilder &b, Location loc, Value x, QType type) {
  Type element = getElementTypeOrSelf(x);
  int64_t rank = rankOf(x);
  x = MaxOp::create(
      b, loc, x,
      splat(b, loc, element, double(type.getStorageTypeMin()), rank));
  x = MinOp::create(
      b, loc, x,
      splat(b, loc, element, double(type.getStorageTypeMax()), rank));
  return castElements(b, loc, x, getStorageType(type));
}

/// round(x / scale) + zero_point, saturated, from a real value `x`.
Value quantize(OpBuilder &b, Location loc, Value x, QType type) {
  Type f32 = b.getF32Type();
  int64_t rank = rankOf(x);
  x = castElements(b, loc, x, f32);
  x = DivOp::create(b, loc, x, splat(b, loc, f32, type.getScale(), rank));
  x = RoundOp::create(b, loc, x);
  if (type.getZeroPoint() != 0)
    x = AddOp::create(b, loc, x,
                      splat(b, loc, f32, double(type.getZeroPoint()), rank));
  return saturate(b, loc, x, type);
}

/// `tract.cast` of `input` (now holding integers when `from` is set) from
/// element type `from` to `to`, either of them quantized.
Value lowerCast(OpBuilder &b, Location loc, Value input, Type from, Type to) {
  auto qFrom = dyn_cast<QType>(from), qTo = dyn_cast<QType>(to);
  if (qFrom && qTo && qFrom.getScale() == qTo.getScale()) {
    Type i32 = b.getI32Type();
    Value x = castElements(b, loc, input, i32);
    int64_t shift = qTo.getZeroPoint() - qFrom.getZeroPoint();
    if (shift != 0)
      x = AddOp::create(b, loc, x,
                        splat(b, loc, i32, double(shift), rankOf(x)));
    return saturate(b, loc, x, qTo);
  }
  Value real = qFrom ? dequantize(b, loc, input, qFrom) : input;
  if (qTo)
    return quantize(b, loc, real, qTo);
  return castElements(b, loc, real, to);
}

/// What an op to rewrite computed on: its operands' and result's element
/// types before the values became integers.
struct Rewrite {
  Operation *op;
  SmallVector<Type> operandElements;
  Type resultElement;
};

void rewrite(const Rewrite &work) {
  Operation *op = work.op;
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value result;
  if (isa<CastOp>(op)) {
    result = lowerCast(b, loc, op->getOperand(0), work.operandElements[0],
                       work.resultElement);
  } else {
    SmallVector<Value> operands;
    for (auto [operand, element] :
         llvm::zip(op->getOperands(), work.operandElements))
      operands.push_back(isa<QType>(element)
                             ? dequantize(b, loc, operand, cast<QType>(element))
                             : operand);
    OperationState state(loc, op->getName(), operands,
                         {cast<RankedTensorType>(op->getResult(0).getType())
                              .clone(b.getF32Type())},
                         op->getAttrs());
    result = b.create(state)->getResult(0);
    if (auto quantized = dyn_cast<QType>(work.resultElement))
      result = quantize(b, loc, result, quantized);
    else
      result = castElements(b, loc, result, work.resultElement);
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
}

//===----------------------------------------------------------------------===//
// Convolutions of quantized values in integers
//===----------------------------------------------------------------------===//

/// The parameters of an integer product: zero points, and the
/// requantization of its sums, x_scale * w_scale / y_scale in f32.
struct Requantization {
  int64_t inputZero = 0, weightZero = 0, outputZero = 0;
  float multiplier = 0;
  bool outputSigned = false;
};

Requantization requantizationOf(QType input, QType weights, QType output) {
  Requantization r;
  r.inputZero = input.getZeroPoint();
  r.weightZero = weights.getZeroPoint();
  r.outputZero = output.getZeroPoint();
  r.outputSigned = output.isSigned();
  r.multiplier = float(float(input.getScale()) * float(weights.getScale())) /
                 float(output.getScale());
  return r;
}

/// A float bias (`count` values) in units of the sums, input scale times
/// weight scale: i32 integers; null when one does not fit. `largest` gets
/// the largest magnitude.
DenseElementsAttr accumulatorBias(DenseElementsAttr real, QType input,
                                  QType weights, int64_t count,
                                  int64_t *largest = nullptr) {
  if (!real || !real.getElementType().isF32() ||
      real.getNumElements() != count)
    return nullptr;
  double scale = double(float(input.getScale()) * float(weights.getScale()));
  SmallVector<int32_t> ints;
  for (const APFloat &value : real.getValues<APFloat>()) {
    double q = std::round(double(value.convertToFloat()) / scale);
    if (!(std::abs(q) < double(1 << 30)))
      return nullptr;
    ints.push_back(int32_t(q));
    if (largest)
      *largest = std::max<int64_t>(*largest, std::abs(int64_t(q)));
  }
  return DenseElementsAttr::get(
      RankedTensorType::get({count}, IntegerType::get(real.getContext(), 32)),
      ArrayRef(ints));
}

/// A convolution between a dequantizing cast and a quantizing one, with
/// what it comes to on the integers.
struct IntegerConv {
  ConvOp conv;
  CastOp quantize;   // the conv's only use: its result to 8 bits
  DenseElementsAttr kernel, bias; // the integers (i8/ui8, i32)
  bool depthwise = false;
  /// Groups of more than one channel: a convolution per group, on its
  /// slice of the channels, concatenated.
  int64_t groups = 1;
  /// A 1-D convolution, run as a 2-D one over a unit axis.
  bool oneD = false;
  SmallVector<int64_t> strides, dilations, before, after;
  Requantization q;
};

bool isByteQuantized(QType type) {
  return type && type.getStorageTypeIntegralWidth() == 8;
}

/// The integers `type`'s cast makes of the real values `real`: round half
/// away from zero of value / scale, plus the zero point, saturated (what
/// lowerCast computes), in the storage type of `type` and the shape of
/// `shape`.
DenseElementsAttr quantizeConstant(DenseElementsAttr real, QType type,
                                   RankedTensorType shape) {
  SmallVector<APInt> values;
  values.reserve(real.getNumElements());
  float scale = float(type.getScale());
  for (const APFloat &value : real.getValues<APFloat>()) {
    float scaled = value.convertToFloat() / scale;
    double q = std::round(double(scaled)) + double(type.getZeroPoint());
    q = std::clamp(q, double(type.getStorageTypeMin()),
                   double(type.getStorageTypeMax()));
    values.push_back(APInt(8, uint64_t(int64_t(q)), /*isSigned=*/true));
  }
  return DenseElementsAttr::get(
      RankedTensorType::get(shape.getShape(),
                            getStorageType(Type(type))),
      values);
}

/// The real values and the quantized type of `value` when it is a
/// constant quantized and then dequantized (`cast(cast(const f32 to Q) to
/// f32)`, as the NNEF import writes stored integers); nullopt otherwise.
std::optional<std::pair<DenseElementsAttr, QType>>
requantizedConstant(Value value) {
  auto dequantize = value.getDefiningOp<CastOp>();
  auto quantize =
      dequantize ? dequantize.getInput().getDefiningOp<CastOp>() : CastOp();
  auto konst = quantize ? quantize.getInput().getDefiningOp<ConstOp>()
                        : ConstOp();
  if (!konst || !getElementTypeOrSelf(value).isF32())
    return std::nullopt;
  auto type = dyn_cast<QType>(getElementTypeOrSelf(quantize.getType()));
  DenseElementsAttr real = denseOf(konst.getValue());
  if (!isByteQuantized(type) || !real || !real.getElementType().isF32())
    return std::nullopt;
  return std::make_pair(real, type);
}

/// A product by constant weights between a dequantizing cast and a
/// quantizing one (`linear` and `matmul` of quantized values): an einsum
/// `…k,nk->…n` or `…k,kn->…n`, then an optional add of a constant bias
/// along n, then the cast to 8 bits.
struct IntegerMatmul {
  EinsumOp einsum;
  AddOp addBias;     // null without a bias
  CastOp quantize;
  DenseElementsAttr weights, bias; // k x n integers, n i32
  Requantization q;
};

std::optional<IntegerMatmul> matchIntegerMatmul(EinsumOp einsum) {
  IntegerMatmul m;
  m.einsum = einsum;
  if (einsum.getInputs().size() != 2 || !einsum->hasOneUse())
    return std::nullopt;
  // The axes: the input's last is summed with the weights' other one.
  StringRef expr = einsum.getExpr();
  auto [operands, output] = expr.split("->");
  auto [lhs, rhs] = operands.split(',');
  if (lhs.empty() || rhs.size() != 2 || output.empty() ||
      lhs.drop_back() != output.drop_back() ||
      lhs.drop_back().contains(lhs.back()) ||
      lhs.drop_back().contains(output.back()))
    return std::nullopt;
  char k = lhs.back(), n = output.back();
  bool transposed = rhs == std::string{n, k};
  if (k == n || (!transposed && rhs != std::string{k, n}))
    return std::nullopt;
  Operation *next = *einsum->getUsers().begin();
  int64_t channels =
      cast<RankedTensorType>(einsum.getType()).getShape().back();
  if (auto add = dyn_cast<AddOp>(next)) {
    Value other = add.getLhs() == einsum.getResult() ? add.getRhs()
                                                     : add.getLhs();
    auto konst = other.getDefiningOp<ConstOp>();
    DenseElementsAttr values = konst ? denseOf(konst.getValue()) : nullptr;
    auto biasType = dyn_cast<RankedTensorType>(other.getType());
    if (!values || !values.getElementType().isF32() || !add->hasOneUse() ||
        !biasType || biasType.getNumElements() != channels ||
        (biasType.getRank() > 0 && biasType.getShape().back() != channels) ||
        add.getType() != einsum.getType())
      return std::nullopt;
    m.addBias = add;
    m.bias = values;
    next = *add->getUsers().begin();
  }
  m.quantize = dyn_cast<CastOp>(next);
  if (!m.quantize)
    return std::nullopt;
  auto outType = dyn_cast<QType>(getElementTypeOrSelf(m.quantize.getType()));
  auto dequantize = einsum.getInputs()[0].getDefiningOp<CastOp>();
  auto weights = requantizedConstant(einsum.getInputs()[1]);
  if (!isByteQuantized(outType) || !dequantize || !weights ||
      !getElementTypeOrSelf(einsum.getType()).isF32())
    return std::nullopt;
  Value input = dequantize.getInput();
  auto inType = dyn_cast<QType>(getElementTypeOrSelf(input));
  auto [real, wType] = *weights;
  auto wShape = cast<RankedTensorType>(einsum.getInputs()[1].getType());
  if (!isByteQuantized(inType) || !wShape.hasStaticShape() ||
      wShape.getDimSize(transposed ? 1 : 0) > (int64_t(1) << 16))
    return std::nullopt;
  DenseElementsAttr q = quantizeConstant(real, wType, wShape);
  if (transposed) {
    // n x k to k x n.
    int64_t rows = wShape.getDimSize(0), cols = wShape.getDimSize(1);
    SmallVector<APInt> values(q.getValues<APInt>());
    SmallVector<APInt> swapped;
    swapped.reserve(values.size());
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < rows; ++j)
        swapped.push_back(values[j * cols + i]);
    q = DenseElementsAttr::get(
        RankedTensorType::get({cols, rows}, q.getElementType()), swapped);
  }
  m.weights = q;
  if (m.bias &&
      !(m.bias = accumulatorBias(m.bias, inType, wType, channels)))
    return std::nullopt;
  m.q = requantizationOf(inType, wType, outType);
  return m;
}

void rewriteIntegerMatmul(IntegerMatmul m) {
  OpBuilder b(m.quantize);
  Location loc = m.einsum.getLoc();
  Value weights = ConstOp::create(b, loc, m.weights);
  Value bias = m.bias ? Value(ConstOp::create(b, loc, m.bias)) : Value();
  SmallVector<int64_t> weightZero;
  if (m.q.weightZero != 0)
    weightZero.push_back(m.q.weightZero);
  // The integers read now (see rewriteIntegerConv).
  Value input = m.einsum.getInputs()[0].getDefiningOp<CastOp>().getInput();
  Value result = QuantMatmulOp::create(
      b, loc, input, weights, bias, UnitAttr(),
      b.getI64IntegerAttr(m.q.inputZero), b.getDenseI64ArrayAttr(weightZero),
      b.getDenseF32ArrayAttr({m.q.multiplier}),
      b.getI64IntegerAttr(m.q.outputZero),
      m.q.outputSigned ? b.getUnitAttr() : UnitAttr());
  m.quantize.getResult().replaceAllUsesWith(result);
  m.quantize.erase();
  if (m.addBias)
    m.addBias.erase();
  m.einsum.erase();
}

/// `conv` as an IntegerConv, when it is of that form.
std::optional<IntegerConv> matchIntegerConv(ConvOp conv) {
  IntegerConv m;
  m.conv = conv;
  if (conv.getChannelsLast() || !conv->hasOneUse())
    return std::nullopt;
  m.quantize = dyn_cast<CastOp>(*conv->getUsers().begin());
  if (!m.quantize)
    return std::nullopt;
  auto outType = dyn_cast<QType>(getElementTypeOrSelf(m.quantize.getType()));
  auto dequantize = conv.getInput().getDefiningOp<CastOp>();
  if (!isByteQuantized(outType) || !dequantize ||
      !getElementTypeOrSelf(conv.getType()).isF32())
    return std::nullopt;
  Value input = dequantize.getInput();
  auto inType = dyn_cast<QType>(getElementTypeOrSelf(input));
  auto kernel = requantizedConstant(conv.getKernel());
  if (!isByteQuantized(inType) || !kernel)
    return std::nullopt;
  auto [real, wType] = *kernel;
  auto inputShape = dyn_cast<RankedTensorType>(input.getType());
  auto kernelShape = cast<RankedTensorType>(conv.getKernel().getType());
  auto outShape = cast<RankedTensorType>(conv.getType());
  if (!inputShape || !inputShape.hasStaticShape() ||
      !kernelShape.hasStaticShape() ||
      inputShape.getRank() != kernelShape.getRank() ||
      (inputShape.getRank() != 4 && inputShape.getRank() != 3))
    return std::nullopt;
  // A 1-D convolution (N, C, L by O, C, k) as a 2-D one on N, C, 1, L.
  m.oneD = inputShape.getRank() == 3;
  auto withUnitAxis = [&](RankedTensorType type) {
    if (!m.oneD)
      return type;
    SmallVector<int64_t> shape(type.getShape());
    shape.insert(shape.begin() + 2, 1);
    return type.clone(shape);
  };
  inputShape = withUnitAxis(inputShape);
  kernelShape = withUnitAxis(kernelShape);
  outShape = withUnitAxis(outShape);
  int64_t channels = inputShape.getDimSize(1), outputs = kernelShape.getDimSize(0);
  int64_t group = int64_t(conv.getGroup());
  m.depthwise = group > 1 && group == channels && outputs == channels &&
                kernelShape.getDimSize(1) == 1;
  if (group != 1 && !m.depthwise) {
    // Groups of at least 8 channels in, as the ONNX import splits
    // QLinearConv's: smaller ones (ResNeXt 32x4d's 4) are more, smaller
    // products than the f32 grouped convolution is worth.
    constexpr int64_t kMinGroupChannels = 8;
    if (channels % group || outputs % group ||
        kernelShape.getDimSize(1) != channels / group ||
        channels / group < kMinGroupChannels)
      return std::nullopt;
    m.groups = group;
  }
  // Sums of at most 255 * 255 per tap; a depthwise one in f32 lanes
  // (tract.quant_depthwise) must stay exact.
  int64_t taps = kernelShape.getDimSize(2) * kernelShape.getDimSize(3);
  int64_t perOutput = taps * (m.depthwise ? 1 : channels / m.groups);
  if (perOutput > (int64_t(1) << 14))
    return std::nullopt;
  m.kernel = quantizeConstant(real, wType, kernelShape);
  // The bias, in units of the accumulator.
  int64_t largestBias = 0;
  if (Value bias = conv.getBias()) {
    auto konst = bias.getDefiningOp<ConstOp>();
    m.bias = accumulatorBias(konst ? denseOf(konst.getValue()) : nullptr,
                             inType, wType, outputs, &largestBias);
    if (!m.bias)
      return std::nullopt;
  }
  if (m.depthwise && 2 * taps * 255 * 255 + largestBias >= (int64_t(1) << 24))
    return std::nullopt;
  // The window, with the padding made explicit.
  size_t spatial = m.oneD ? 1 : 2;
  m.strides = llvm::to_vector(conv.getStrides());
  m.dilations = llvm::to_vector(conv.getDilations());
  if (m.strides.empty())
    m.strides.assign(spatial, 1);
  if (m.dilations.empty())
    m.dilations.assign(spatial, 1);
  if (m.strides.size() != spatial || m.dilations.size() != spatial)
    return std::nullopt;
  SmallVector<int64_t> padsBefore(conv.getPadsBefore()),
      padsAfter(conv.getPadsAfter());
  if (conv.getPadding() == Padding::Explicit &&
      (padsBefore.size() != spatial || padsAfter.size() != spatial))
    return std::nullopt;
  if (m.oneD) {
    m.strides.insert(m.strides.begin(), 1);
    m.dilations.insert(m.dilations.begin(), 1);
    if (conv.getPadding() == Padding::Explicit) {
      padsBefore.insert(padsBefore.begin(), 0);
      padsAfter.insert(padsAfter.begin(), 0);
    }
  }
  for (int64_t i = 0; i < 2; ++i) {
    int64_t size = inputShape.getDimSize(2 + i),
            field = (kernelShape.getDimSize(2 + i) - 1) * m.dilations[i] + 1,
            out = outShape.getDimSize(2 + i), before = 0, after = 0;
    switch (conv.getPadding()) {
    case Padding::Valid:
      break;
    case Padding::Explicit:
      before = padsBefore[i];
      after = padsAfter[i];
      break;
    default: {
      if (ShapedType::isDynamic(out))
        return std::nullopt;
      int64_t total =
          std::max<int64_t>((out - 1) * m.strides[i] + field - size, 0);
      before = conv.getPadding() == Padding::SameUpper ? total / 2
                                                       : (total + 1) / 2;
      after = total - before;
    }
    }
    // Only what the convolution reads: an output for every position the
    // window reaches, as tract.quant_conv computes them.
    if (before < 0 || after < 0 || size + before + after < field ||
        (size + before + after - field) / m.strides[i] + 1 != out)
      return std::nullopt;
    m.before.push_back(before);
    m.after.push_back(after);
  }
  m.q = requantizationOf(inType, wType, outType);
  return m;
}

/// A tract.quant_conv or tract.quant_depthwise of `m`'s window and
/// requantization on `input`, `kernel` and `bias`.
template <typename OpTy>
Value createIntegerConv(OpBuilder &b, Location loc, const IntegerConv &m,
                        Value input, Value kernel, Value bias) {
  SmallVector<int64_t> weightZero;
  if (m.q.weightZero != 0)
    weightZero.push_back(m.q.weightZero);
  return OpTy::create(
      b, loc, input, kernel, bias, b.getDenseI64ArrayAttr(m.strides),
      b.getDenseI64ArrayAttr(m.dilations), UnitAttr(),
      b.getI64IntegerAttr(m.q.inputZero), b.getDenseI64ArrayAttr(weightZero),
      b.getDenseF32ArrayAttr({m.q.multiplier}),
      b.getI64IntegerAttr(m.q.outputZero),
      m.q.outputSigned ? b.getUnitAttr() : UnitAttr());
}

/// The integer op for `m`, once the input holds its integers.
void rewriteIntegerConv(IntegerConv m) {
  OpBuilder b(m.quantize);
  Location loc = m.conv.getLoc();
  // Read now, not when matched: the producer of the integers (another
  // fused product, rewritten before this one) may have been replaced.
  Value x = m.conv.getInput().getDefiningOp<CastOp>().getInput();
  if (m.oneD)
    x = AddAxisOp::create(b, loc, x, uint64_t(2));
  if (llvm::any_of(m.before, [](int64_t p) { return p != 0; }) ||
      llvm::any_of(m.after, [](int64_t p) { return p != 0; }))
    x = PadOp::create(
        b, loc, x, ArrayRef<int64_t>{0, 0, m.before[0], m.before[1]},
        ArrayRef<int64_t>{0, 0, m.after[0], m.after[1]}, PadMode::Constant,
        IntegerAttr::get(getElementTypeOrSelf(x), m.q.inputZero));
  Value result;
  if (m.groups > 1) {
    // A tract.quant_conv per group on its channels, then the outputs
    // side by side.
    MLIRContext *context = b.getContext();
    int64_t in = cast<RankedTensorType>(x.getType()).getDimSize(1) / m.groups,
            out = m.kernel.getType().getDimSize(0) / m.groups;
    SmallVector<Value> parts;
    for (int64_t g = 0; g < m.groups; ++g) {
      Value slice = SliceOp::create(b, loc, x, uint64_t(1),
                                    DimAttr::get(context, TDim(g * in)),
                                    DimAttr::get(context, TDim((g + 1) * in)));
      Value kernel = ConstOp::create(
          b, loc, sliceDense(m.kernel, 0, g * out, (g + 1) * out));
      Value bias = m.bias ? Value(ConstOp::create(
                                b, loc, sliceDense(m.bias, 0, g * out,
                                                   (g + 1) * out)))
                          : Value();
      parts.push_back(
          createIntegerConv<QuantConvOp>(b, loc, m, slice, kernel, bias));
    }
    result = ConcatOp::create(b, loc, parts, int64_t(1));
  } else if (m.depthwise) {
    ShapedType kernelType = m.kernel.getType();
    Value kernel = ConstOp::create(
        b, loc,
        m.kernel.reshape(RankedTensorType::get(
            {kernelType.getDimSize(0), kernelType.getDimSize(2),
             kernelType.getDimSize(3)},
            kernelType.getElementType())));
    Value bias = m.bias ? Value(ConstOp::create(b, loc, m.bias)) : Value();
    result = createIntegerConv<QuantDepthwiseOp>(b, loc, m, x, kernel, bias);
  } else {
    Value kernel = ConstOp::create(b, loc, m.kernel);
    Value bias = m.bias ? Value(ConstOp::create(b, loc, m.bias)) : Value();
    result = createIntegerConv<QuantConvOp>(b, loc, m, x, kernel, bias);
  }
  if (m.oneD)
    result = RmAxisOp::create(b, loc, result, uint64_t(2));
  m.quantize.getResult().replaceAllUsesWith(result);
  m.quantize.erase();
  m.conv.erase();
}

//===----------------------------------------------------------------------===//
// Ops that commute with the quantization, on the integers
//===----------------------------------------------------------------------===//

/// An op between dequantizing casts from one quantized type and a cast
/// quantizing its result back to that type, which gives the same integers
/// computed on the integers themselves: moving data (reshapes, axes,
/// slices, concatenation, tiling, max pools), or a maximum or minimum with
/// a constant (relu, clip), since quantizing is monotonic and gives back
/// the integers a value was dequantized from.
struct IntegerPassthrough {
  Operation *op;
  CastOp quantize;
  /// Per operand: NaN when it is dequantized (the integers are its cast's
  /// input), else the value of the constant it is.
  SmallVector<double> bounds;
  QType type;
};

bool commutesWithQuantization(Operation *op) {
  return isa<ReshapeOp, AddAxisOp, RmAxisOp, MoveAxisOp, SliceOp, TileOp,
             BroadcastOp, DownsampleOp, ConcatOp, MaxOp, MinOp>(op) ||
         (isa<MaxPoolOp>(op) && op->getNumResults() == 1);
}

std::optional<IntegerPassthrough> matchPassthrough(Operation *op) {
  if (!commutesWithQuantization(op) || op->getNumResults() != 1 ||
      !op->hasOneUse() || op->getNumRegions() != 0)
    return std::nullopt;
  IntegerPassthrough m;
  m.op = op;
  m.quantize = dyn_cast<CastOp>(*op->getUsers().begin());
  if (!m.quantize)
    return std::nullopt;
  m.type = dyn_cast<QType>(getElementTypeOrSelf(m.quantize.getType()));
  if (!isByteQuantized(m.type) ||
      !getElementTypeOrSelf(op->getResult(0)).isF32())
    return std::nullopt;
  bool minMax = isa<MaxOp, MinOp>(op);
  for (Value operand : op->getOperands()) {
    if (!isa<RankedTensorType>(operand.getType()))
      return std::nullopt; // a run-time size or index: not the data
    if (auto dequantize = operand.getDefiningOp<CastOp>();
        dequantize && getElementTypeOrSelf(dequantize.getInput()) == m.type) {
      m.bounds.push_back(std::nan(""));
      continue;
    }
    auto konst = operand.getDefiningOp<ConstOp>();
    DenseElementsAttr value = konst ? denseOf(konst.getValue()) : nullptr;
    if (!minMax || !value || !value.isSplat() ||
        !value.getElementType().isF32())
      return std::nullopt;
    m.bounds.push_back(value.getSplatValue<APFloat>().convertToDouble());
  }
  // A min or max of two constants, or of nothing dequantized, is left.
  if (llvm::all_of(m.bounds, [](double b) { return !std::isnan(b); }))
    return std::nullopt;
  return m;
}

/// The op on the integers, once they hold them.
void rewritePassthrough(IntegerPassthrough m) {
  OpBuilder b(m.quantize);
  Type storage = getStorageType(Type(m.type));
  SmallVector<Value> operands;
  // The op's operands are read now: a fusion rewritten before this one may
  // have replaced the integers a cast dequantizes.
  for (auto [operand, bound] : llvm::zip(m.op->getOperands(), m.bounds)) {
    if (std::isnan(bound)) {
      operands.push_back(operand.getDefiningOp<CastOp>().getInput());
      continue;
    }
    // The bound quantized as the cast would (round half away from zero).
    double q = std::round(double(float(bound) / float(m.type.getScale()))) +
               double(m.type.getZeroPoint());
    q = std::clamp(q, double(m.type.getStorageTypeMin()),
                   double(m.type.getStorageTypeMax()));
    auto shape = cast<RankedTensorType>(operand.getType());
    operands.push_back(ConstOp::create(
        b, m.op->getLoc(),
        DenseElementsAttr::get(
            shape.clone(storage),
            APInt(8, uint64_t(int64_t(q)), /*isSigned=*/true))));
  }
  OperationState state(m.op->getLoc(), m.op->getName(), operands,
                       {cast<RankedTensorType>(m.op->getResult(0).getType())
                            .clone(storage)},
                       m.op->getAttrs());
  Value result = b.create(state)->getResult(0);
  m.quantize.getResult().replaceAllUsesWith(result);
  m.quantize.erase();
  m.op->erase();
}

} // namespace

LogicalResult mlir::tract::lowerQuantizedTypes(ModuleOp module) {
  auto quantizedType = [](Type type) { return isQuantized(type); };
  // The convolutions that run in integers; their quantizing casts are
  // rewritten with them.
  std::vector<IntegerConv> convs;
  DenseSet<Operation *> fused;
  module.walk([&](ConvOp conv) {
    if (auto m = matchIntegerConv(conv)) {
      fused.insert(m->quantize);
      convs.push_back(std::move(*m));
    }
  });
  std::vector<IntegerMatmul> matmuls;
  module.walk([&](EinsumOp einsum) {
    if (auto m = matchIntegerMatmul(einsum)) {
      fused.insert(m->quantize);
      matmuls.push_back(std::move(*m));
    }
  });
  std::vector<IntegerPassthrough> passthroughs;
  module.walk([&](Operation *op) {
    if (auto m = matchPassthrough(op)) {
      fused.insert(m->quantize);
      passthroughs.push_back(std::move(*m));
    }
  });
  SmallVector<Rewrite> work;
  WalkResult walk = module.walk([&](Operation *op) {
    bool touches = llvm::any_of(op->getOperandTypes(), quantizedType) ||
                   llvm::any_of(op->getResultTypes(), quantizedType);
    if (!touches || isa<func::ReturnOp>(op) || fused.contains(op))
      return WalkResult::advance();
    if (!isa<CastOp>(op) && !isQuantizedArithmetic(op)) {
      op->emitError("computes on quantized tensors, which only casts and "
                    "add, sub, mul, div, min and max do in tract-mlir; "
                    "dequantize its operands (cast them to f32) first");
      return WalkResult::interrupt();
    }
    Rewrite item{op, {}, getElementTypeOrSelf(op->getResult(0))};
    for (Value operand : op->getOperands())
      item.operandElements.push_back(getElementTypeOrSelf(operand));
    work.push_back(std::move(item));
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  bool any = !work.empty();
  for (auto func : module.getOps<func::FuncOp>())
    any |= llvm::any_of(func.getFunctionType().getInputs(), quantizedType) ||
           llvm::any_of(func.getFunctionType().getResults(), quantizedType);
  if (!any)
    return success();

  // Every quantized value becomes its integers; the rewrites then read
  // them as such.
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      result.setType(getStorageType(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          argument.setType(getStorageType(argument.getType()));
  });
  for (auto func : module.getOps<func::FuncOp>()) {
    auto storage = [](TypeRange types) {
      return llvm::map_to_vector(types, getStorageType);
    };
    FunctionType type = func.getFunctionType();
    func.setFunctionType(FunctionType::get(module.getContext(),
                                           storage(type.getInputs()),
                                           storage(type.getResults())));
  }
  for (const IntegerConv &m : convs)
    rewriteIntegerConv(m);
  for (const IntegerMatmul &m : matmuls)
    rewriteIntegerMatmul(m);
  for (const IntegerPassthrough &m : passthroughs)
    rewritePassthrough(m);
  for (const Rewrite &item : work)
    rewrite(item);
  // What only the fused products read (their operands' dequantization).
  if (!convs.empty() || !matmuls.empty() || !passthroughs.empty()) {
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) { ops.push_back(op); });
    for (Operation *op : llvm::reverse(ops))
      if (op->getNumRegions() == 0 && isOpTriviallyDead(op))
        op->erase();
  }
  return success();
}

namespace {
struct LowerQuantizedTypesPass
    : tract::impl::TractLowerQuantizedTypesBase<LowerQuantizedTypesPass> {
  void runOnOperation() override {
    if (failed(lowerQuantizedTypes(getOperation())))
      signalPassFailure();
  }
};
} // namespace
