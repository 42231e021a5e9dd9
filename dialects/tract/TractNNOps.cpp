//===- TractNNOps.cpp - contractions, convolutions, pools, reductions -----===//

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractOps.h"

#include "dialects/tract/TractFolding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;

namespace {

LogicalResult checkAxes(std::optional<Location> location,
                        ArrayRef<int64_t> axes, size_t rank) {
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || static_cast<size_t>(axis) >= rank)
      return emitOptionalError(location, "axis ", axis,
                               " is out of range for rank ", rank);
    if (i > 0 && axes[i - 1] >= axis)
      return emitOptionalError(location, "axes must be strictly increasing");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Window geometry shared by conv, deconv and pools
//===----------------------------------------------------------------------===//

struct Window {
  SmallVector<int64_t> kernel, strides, dilations, before, after;
  Padding padding;
  bool ceilMode = false;
};

/// Fills defaults and checks the attribute sizes against `spatialRank`.
LogicalResult completeWindow(std::optional<Location> location, Window &window,
                             size_t spatialRank) {
  auto fill = [&](SmallVector<int64_t> &values, StringRef name,
                  int64_t fallback, bool positive) -> LogicalResult {
    if (values.empty())
      values.assign(spatialRank, fallback);
    if (values.size() != spatialRank)
      return emitOptionalError(location, "expected ", spatialRank, " ", name,
                               ", got ", values.size());
    for (int64_t v : values)
      if (positive ? v < 1 : v < 0)
        return emitOptionalError(location, name, " must be ",
                                 positive ? "positive" : "non-negative");
    return success();
  };
  if (window.kernel.size() != spatialRank)
    return emitOptionalError(location, "expected a kernel of rank ",
                             spatialRank, ", got ", window.kernel.size());
  if (failed(fill(window.strides, "strides", 1, true)) ||
      failed(fill(window.dilations, "dilations", 1, true)))
    return failure();
  bool isExplicit = window.padding == Padding::Explicit;
  if (!isExplicit && (!window.before.empty() || !window.after.empty()))
    return emitOptionalError(location,
                             "pads are only given with explicit padding");
  if (failed(fill(window.before, "pads_before", 0, false)) ||
      failed(fill(window.after, "pads_after", 0, false)))
    return failure();
  return success();
}

/// Output spatial dims of a convolution or pool.
Shape windowOutput(ArrayRef<TDim> input, const Window &window) {
  Shape output;
  for (size_t i = 0; i < input.size(); ++i) {
    int64_t field = (window.kernel[i] - 1) * window.dilations[i] + 1;
    int64_t stride = window.strides[i];
    const TDim &x = input[i];
    switch (window.padding) {
    case Padding::Valid:
      output.push_back((x - TDim(field - 1)).ceilDiv(stride));
      break;
    case Padding::Explicit: {
      TDim span = x + TDim(window.before[i] + window.after[i] - field);
      TDim out = window.ceilMode ? span.ceilDiv(stride) + TDim(1)
                                 : span.floorDiv(stride) + TDim(1);
      // ONNX pools in ceil mode drop a last window that starts in the
      // right padding.
      std::optional<int64_t> value = out.getConstant();
      std::optional<int64_t> size = x.getConstant();
      if (window.ceilMode && value && size &&
          (*value - 1) * stride >= *size + window.before[i])
        out = TDim(*value - 1);
      output.push_back(out);
      break;
    }
    case Padding::SameUpper:
    case Padding::SameLower:
      output.push_back(x.ceilDiv(stride));
      break;
    }
  }
  return output;
}

template <typename Adaptor> Window windowOf(Adaptor adaptor) {
  Window window;
  window.strides.assign(adaptor.getStrides().begin(),
                        adaptor.getStrides().end());
  window.dilations.assign(adaptor.getDilations().begin(),
                          adaptor.getDilations().end());
  window.before.assign(adaptor.getPadsBefore().begin(),
                       adaptor.getPadsBefore().end());
  window.after.assign(adaptor.getPadsAfter().begin(),
                      adaptor.getPadsAfter().end());
  window.padding = adaptor.getPadding();
  return window;
}

/// The constant spatial dims of a kernel.
FailureOr<SmallVector<int64_t>> kernelSizes(std::optional<Location> location,
                                            ArrayRef<TDim> kernel) {
  SmallVector<int64_t> sizes;
  for (const TDim &dim : kernel.drop_front(2)) {
    std::optional<int64_t> value = dim.getConstant();
    if (!value || *value < 1)
      return emitOptionalError(location,
                               "kernel spatial dims must be "
                               "positive constants, got ",
                               dim.toString());
    sizes.push_back(*value);
  }
  return sizes;
}

/// The checks conv and deconv share: ranks, a constant kernel, and the
/// window attributes; returns the completed window.
template <typename Adaptor>
FailureOr<Window> convWindow(std::optional<Location> location, Adaptor adaptor,
                             ArrayRef<TDim> input, ArrayRef<TDim> kernel) {
  if (input.size() < 3 || kernel.size() != input.size())
    return emitOptionalError(location,
                             "expected input N,C,spatial… and a "
                             "kernel of the same rank, got ranks ",
                             input.size(), " and ", kernel.size());
  FailureOr<SmallVector<int64_t>> sizes = kernelSizes(location, kernel);
  if (failed(sizes))
    return failure();
  Window window = windowOf(adaptor);
  window.kernel = *sizes;
  if (failed(completeWindow(location, window, input.size() - 2)))
    return failure();
  return window;
}

LogicalResult checkBias(std::optional<Location> location, Value bias,
                        const TDim &channels) {
  if (!bias)
    return success();
  Shape shape = getShape(bias);
  TDim volume(1);
  for (const TDim &dim : shape)
    volume *= dim;
  if (volume != channels)
    return emitOptionalError(location, "bias has ", volume.toString(),
                             " elements, expected ", channels.toString());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  StringRef expr = adaptor.getExpr();
  EinsumExpr parsed = EinsumExpr::parse(expr);
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(location, "einsum needs at least one input");
  if (parsed.inputs.size() != inputs.size())
    return emitOptionalError(location, "expression '", expr, "' names ",
                             parsed.inputs.size(), " inputs, got ",
                             inputs.size());
  SmallVector<Shape> shapes;
  for (auto [spec, input] : llvm::zip(parsed.inputs, inputs)) {
    shapes.push_back(getShape(input));
    if (spec.size() != shapes.back().size())
      return emitOptionalError(location, "input spec '", spec, "' has ",
                               spec.size(), " axes, the input has rank ",
                               shapes.back().size());
    for (char letter : spec)
      if (!llvm::isAlpha(letter))
        return emitOptionalError(location, "invalid axis name '",
                                 StringRef(&letter, 1), "' in '", expr, "'");
  }
  std::map<char, TDim> dims;
  char conflict = 0;
  std::optional<TDim> conflicting;
  if (!parsed.letterSizes(
          shapes,
          [&](TDim &size, const TDim &dim) {
            std::optional<TDim> combined = TDim::broadcast(size, dim);
            if (!combined)
              conflicting = dim;
            else
              size = *combined;
            return combined.has_value();
          },
          dims, &conflict))
    return emitOptionalError(location, "axis '", StringRef(&conflict, 1),
                             "' has dims ", dims.at(conflict).toString(),
                             " and ", conflicting->toString());
  const std::string &output = parsed.output;
  Shape shape;
  for (char letter : output) {
    auto it = dims.find(letter);
    if (it == dims.end())
      return emitOptionalError(location, "output axis '", StringRef(&letter, 1),
                               "' appears in no input");
    if (llvm::count(output, letter) > 1)
      return emitOptionalError(location, "output axis '", StringRef(&letter, 1),
                               "' is repeated");
    shape.push_back(it->second);
  }
  results.push_back(getTensorTypeLike(inputs.front(), shape));
  return success();
}

std::map<char, TDim> EinsumOp::getLetterSizes() {
  SmallVector<Shape> shapes = llvm::map_to_vector(
      getInputs(), [](Value input) { return getShape(input); });
  std::map<char, TDim> sizes;
  EinsumExpr::parse(getExpr()).letterSizes(
      shapes,
      [](TDim &size, const TDim &dim) {
        size = TDim::broadcast(size, dim).value_or(dim);
        return true;
      },
      sizes);
  return sizes;
}

OpFoldResult EinsumOp::fold(FoldAdaptor adaptor) {
  return foldEinsum(adaptor.getInputs(), getType(), getExpr());
}

//===----------------------------------------------------------------------===//
// Convolutions and pools
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  Shape kernel = getShape(adaptor.getKernel());
  bool channelsLast = adaptor.getChannelsLast();
  if (channelsLast) {
    if (input.size() < 3 || kernel.size() != input.size())
      return emitOptionalError(location,
                               "expected input N,spatial…,C and a kernel "
                               "of the same rank, got ranks ",
                               input.size(), " and ", kernel.size());
    input = channelsFirst(input);
    kernel = kernelOutputFirst(kernel);
  }
  FailureOr<Window> window = convWindow(location, adaptor, input, kernel);
  if (failed(window))
    return failure();
  int64_t group = adaptor.getGroup();
  if (kernel[1] * TDim(group) != input[1])
    return emitOptionalError(location, "input has ", input[1].toString(),
                             " channels, kernel expects ",
                             (kernel[1] * TDim(group)).toString(), " (",
                             kernel[1].toString(), " x group ", group, ")");
  if (std::optional<int64_t> o = kernel[0].getConstant(); o && *o % group)
    return emitOptionalError(location, "output channels ", *o,
                             " are not a multiple of group ", group);
  if (failed(checkBias(location, adaptor.getBias(), kernel[0])))
    return failure();
  Shape output{input[0], kernel[0]};
  llvm::append_range(
      output, windowOutput(ArrayRef<TDim>(input).drop_front(2), *window));
  if (channelsLast)
    output = channelsLastOf(output);
  results.push_back(getTensorTypeLike(adaptor.getInput(), output));
  return success();
}

LogicalResult DeconvOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  Shape kernel = getShape(adaptor.getKernel());
  FailureOr<Window> completed = convWindow(location, adaptor, input, kernel);
  if (failed(completed))
    return failure();
  const Window &window = *completed;
  if (kernel[0] != input[1])
    return emitOptionalError(location, "input has ", input[1].toString(),
                             " channels, kernel expects ",
                             kernel[0].toString());
  size_t spatialRank = input.size() - 2;
  SmallVector<int64_t> adjustments(adaptor.getAdjustments());
  if (adjustments.empty())
    adjustments.assign(spatialRank, 0);
  if (adjustments.size() != spatialRank)
    return emitOptionalError(location, "expected ", spatialRank,
                             " adjustments, got ", adjustments.size());
  TDim channels = kernel[1] * TDim(adaptor.getGroup());
  if (failed(checkBias(location, adaptor.getBias(), channels)))
    return failure();
  Shape output{input[0], channels};
  for (size_t i = 0; i < spatialRank; ++i) {
    const TDim &x = input[i + 2];
    int64_t field = (window.kernel[i] - 1) * window.dilations[i] + 1;
    int64_t stride = window.strides[i];
    switch (window.padding) {
    case Padding::Valid:
      output.push_back((x - TDim(1)) * TDim(stride) +
                       TDim(field + adjustments[i]));
      break;
    case Padding::Explicit:
      output.push_back(
          (x - TDim(1)) * TDim(stride) +
          TDim(field - window.before[i] - window.after[i] + adjustments[i]));
      break;
    case Padding::SameUpper:
    case Padding::SameLower:
      output.push_back(x * TDim(stride));
      break;
    }
  }
  results.push_back(getTensorTypeLike(adaptor.getInput(), output));
  return success();
}

namespace {

template <typename Adaptor>
FailureOr<Shape> poolOutput(std::optional<Location> location, Adaptor adaptor) {
  Shape input = getShape(adaptor.getInput());
  if (input.size() < 3)
    return emitOptionalError(location,
                             "expected input N,C,spatial…, got "
                             "rank ",
                             input.size());
  if (adaptor.getChannelsLast())
    input = channelsFirst(input);
  Window window = windowOf(adaptor);
  window.kernel.assign(adaptor.getKernelShape().begin(),
                       adaptor.getKernelShape().end());
  window.ceilMode = adaptor.getCeilMode();
  if (failed(completeWindow(location, window, input.size() - 2)))
    return failure();
  for (int64_t k : window.kernel)
    if (k < 1)
      return emitOptionalError(location, "kernel sizes must be positive");
  Shape output{input[0], input[1]};
  llvm::append_range(output,
                     windowOutput(ArrayRef<TDim>(input).drop_front(2), window));
  if (adaptor.getChannelsLast())
    output = channelsLastOf(output);
  return output;
}

} // namespace

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  FailureOr<Shape> output = poolOutput(location, adaptor);
  if (failed(output))
    return failure();
  results.push_back(getTensorTypeLike(adaptor.getInput(), *output));
  if (adaptor.getWithIndex())
    results.push_back(
        getTensorType(context, *output, IntegerType::get(context, 64)));
  return success();
}

LogicalResult SumPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  FailureOr<Shape> output = poolOutput(location, adaptor);
  if (failed(output))
    return failure();
  results.push_back(getTensorTypeLike(adaptor.getInput(), *output));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxes(location, axes, shape.size())))
    return failure();
  Type elementType = getElementTypeOrSelf(adaptor.getInput().getType());
  Reducer reducer = adaptor.getReducer();
  bool isBool = elementType.isInteger(1);
  if ((reducer == Reducer::All || reducer == Reducer::Any) != isBool)
    return emitOptionalError(location, "all and any reduce booleans, and "
                                       "only they do");
  if (reducer == Reducer::MeanOfSquares && !isa<FloatType>(elementType))
    return emitOptionalError(location, "mean_of_squares reduces floats");
  if (adaptor.getLast() && reducer != Reducer::ArgMax &&
      reducer != Reducer::ArgMin)
    return emitOptionalError(location, "'last' applies to argmax and argmin");
  if (reducer == Reducer::ArgMax || reducer == Reducer::ArgMin) {
    if (axes.size() != 1)
      return emitOptionalError(location, "argmax and argmin take one axis");
    elementType = IntegerType::get(context, 64);
  }
  for (int64_t axis : axes)
    shape[axis] = TDim(1);
  results.push_back(getTensorType(context, shape, elementType));
  return success();
}

OpFoldResult ReduceOp::fold(FoldAdaptor adaptor) {
  if (getAxes().empty() && getInput().getType() == getType())
    return getInput();
  return foldReduce(adaptor.getInput(), getType(), getAxes(), getReducer(),
                    getLast());
}

namespace {

/// Softmax and log-softmax keep their input's type over valid axes.
LogicalResult inferAxesNormType(std::optional<Location> location, Value input,
                                ArrayRef<int64_t> axes,
                                SmallVectorImpl<Type> &results) {
  if (failed(checkAxes(location, axes, getShape(input).size())))
    return failure();
  results.push_back(input.getType());
  return success();
}

} // namespace

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferAxesNormType(location, adaptor.getInput(), adaptor.getAxes(),
                           results);
}

LogicalResult LogSoftmaxOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  return inferAxesNormType(location, adaptor.getInput(), adaptor.getAxes(),
                           results);
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxes(location, {axis}, getShape(adaptor.getInput()).size())))
    return failure();
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BlockQuantMatmulOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  Shape weights = getShape(adaptor.getWeights());
  if (input.empty())
    return emitOptionalError(location, "the input needs an axis to sum");
  if (getElementTypeOrSelf(adaptor.getWeights()).isF16()) {
    if (weights.size() != 2 || input.back() != weights[1])
      return emitOptionalError(
          location, "f16 weights must be n x k with k the input's last dim (",
          input.back().toString(), ")");
    Shape output = input;
    output.back() = weights[0];
    results.push_back(getTensorTypeLike(adaptor.getInput(), output));
    return success();
  }
  if (!getElementTypeOrSelf(adaptor.getWeights()).isInteger(8) ||
      weights.size() != 3 || weights[2] != TDim(kQ4_0BlockBytes))
    return emitOptionalError(location,
                             "the weights must be n x k/32 x 18 bytes (i8) "
                             "of Q4_0 blocks");
  if (input.back() != weights[1] * TDim(kQ4_0BlockValues))
    return emitOptionalError(location, "the input sums ",
                             input.back().toString(),
                             " values but the weights hold ",
                             (weights[1] * TDim(kQ4_0BlockValues)).toString());
  Shape output = input;
  output.back() = weights[0];
  results.push_back(getTensorTypeLike(adaptor.getInput(), output));
  return success();
}

LogicalResult BlockDequantOp::verify() {
  auto blocks = cast<RankedTensorType>(getBlocks().getType());
  auto output = cast<RankedTensorType>(getOutput().getType());
  if (!blocks.getElementType().isInteger(8) || blocks.getRank() != 2 ||
      blocks.getDimSize(1) != kQ4_0BlockBytes || !blocks.hasStaticShape())
    return emitOpError("the blocks must be b x ")
           << kQ4_0BlockBytes << " bytes (i8) of Q4_0";
  if (!output.hasStaticShape() || output.getEncoding() ||
      output.getNumElements() != blocks.getDimSize(0) * kQ4_0BlockValues)
    return emitOpError("the result must be a static shape of ")
           << blocks.getDimSize(0) * kQ4_0BlockValues << " values";
  return success();
}

/// What tract.quant_matmul and tract.quant_depthwise share: their
/// per-channel parameters checked against `channels`, and the result, of
/// `shape` like `input`: i32 sums, or bytes when requantized.
template <typename Adaptor>
static LogicalResult inferQuantResult(MLIRContext *context,
                                      std::optional<Location> location,
                                      Adaptor adaptor, const TDim &channels,
                                      Value input, const Shape &shape,
                                      SmallVectorImpl<Type> &results) {
  std::optional<int64_t> count = channels.getConstant();
  auto perChannel = [&](size_t size) {
    return size == 1 || (count && int64_t(size) == *count);
  };
  if (!adaptor.getWeightZero().empty() &&
      !perChannel(adaptor.getWeightZero().size()))
    return emitOptionalError(location,
                             "weight_zero needs one value or one per channel");
  if (adaptor.getMultiplier() && !perChannel(adaptor.getMultiplier()->size()))
    return emitOptionalError(location,
                             "multiplier needs one value or one per channel");
  if (Value bias = adaptor.getBias()) {
    Shape b = getShape(bias);
    if (!getElementTypeOrSelf(bias).isSignlessInteger(32) || b.size() != 1 ||
        b[0] != channels)
      return emitOptionalError(location, "the bias must be ",
                               channels.toString(), " i32");
  }
  Type element = IntegerType::get(context, 32);
  if (adaptor.getMultiplier())
    element = adaptor.getOutputSigned()
                  ? IntegerType::get(context, 8)
                  : IntegerType::get(context, 8, IntegerType::Unsigned);
  results.push_back(
      getTensorTypeLike(input, shape).cloneWith(std::nullopt, element));
  return success();
}

LogicalResult QuantMatmulOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  bool left = adaptor.getWeightsLeft();
  Value input = left ? adaptor.getRhs() : adaptor.getLhs();
  Value weights = left ? adaptor.getLhs() : adaptor.getRhs();
  auto isByte = [](Value value) {
    Type element = getElementTypeOrSelf(value);
    return element.isSignlessInteger(8) || element.isUnsignedInteger(8);
  };
  if (!isByte(input) || !isByte(weights))
    return emitOptionalError(location,
                             "the input and the weights must be ui8 or i8");
  Shape in = getShape(input), w = getShape(weights);
  if (w.size() != 2)
    return emitOptionalError(location, "the weights must be a matrix");
  TDim k = left ? w[1] : w[0], channels = left ? w[0] : w[1];
  Shape output;
  if (left) {
    if (in.size() != 2 && in.size() != 3)
      return emitOptionalError(location, "the input must be K x N or B x K x "
                                         "N with the weights on the left");
    if (in[in.size() - 2] != k)
      return emitOptionalError(location, "the input sums ",
                               in[in.size() - 2].toString(),
                               " values but the weights ", k.toString());
    output = in;
    output[in.size() - 2] = channels;
  } else {
    if (in.empty() || in.back() != k)
      return emitOptionalError(location, "the input sums ",
                               in.empty() ? "no" : in.back().toString(),
                               " values but the weights ", k.toString());
    output = in;
    output.back() = channels;
  }
  return inferQuantResult(context, location, adaptor, channels, input, output,
                          results);
}

LogicalResult QuantDepthwiseOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Value input = adaptor.getInput(), weights = adaptor.getWeights();
  auto isByte = [](Value value) {
    Type element = getElementTypeOrSelf(value);
    return element.isSignlessInteger(8) || element.isUnsignedInteger(8);
  };
  if (!isByte(input) || !isByte(weights))
    return emitOptionalError(location,
                             "the input and the weights must be ui8 or i8");
  bool last = adaptor.getChannelsLast();
  size_t channelAxis = last ? 3 : 1, firstSpatial = last ? 1 : 2;
  Shape in = getShape(input), w = getShape(weights);
  if (in.size() != 4 || w.size() != 3 || in[channelAxis] != w[0])
    return emitOptionalError(location, last ? "the input must be B x H x W x "
                                              "C and the weights C x kh x kw"
                                            : "the input must be B x C x H x "
                                              "W and the weights C x kh x kw");
  ArrayRef<int64_t> strides = adaptor.getStrides(),
                    dilations = adaptor.getDilations();
  if (strides.size() != 2 || dilations.size() != 2 ||
      llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return emitOptionalError(location,
                             "strides and dilations need two positive values");
  Shape output = in;
  for (int64_t i = 0; i < 2; ++i) {
    std::optional<int64_t> size = in[firstSpatial + i].getConstant(),
                           kernel = w[1 + i].getConstant();
    if (!size || !kernel)
      return emitOptionalError(location, "the spatial dims must be known");
    int64_t field = (*kernel - 1) * dilations[i] + 1;
    if (*size < field)
      return emitOptionalError(location, "the input is smaller than the "
                                         "kernel's field");
    output[firstSpatial + i] = TDim((*size - field) / strides[i] + 1);
  }
  return inferQuantResult(context, location, adaptor, in[channelAxis], input,
                          output, results);
}

LogicalResult QuantConvOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Value input = adaptor.getInput(), weights = adaptor.getWeights();
  auto isByte = [](Value value) {
    Type element = getElementTypeOrSelf(value);
    return element.isSignlessInteger(8) || element.isUnsignedInteger(8);
  };
  if (!isByte(input) || !isByte(weights))
    return emitOptionalError(location,
                             "the input and the weights must be ui8 or i8");
  bool last = adaptor.getChannelsLast();
  Shape in = getShape(input), w = getShape(weights);
  // Where the channels, the spatial axes and the kernel's sizes are.
  size_t channelAxis = last ? 3 : 1, firstSpatial = last ? 1 : 2;
  if (in.size() != 4 || w.size() != 4 || in[channelAxis] != w[last ? 2 : 1])
    return emitOptionalError(
        location, last ? "the input must be B x H x W x C and the weights "
                         "kh x kw x C x O"
                       : "the input must be B x C x H x W and the weights "
                         "O x C x kh x kw");
  ArrayRef<int64_t> strides = adaptor.getStrides(),
                    dilations = adaptor.getDilations();
  if (strides.size() != 2 || dilations.size() != 2 ||
      llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return emitOptionalError(location,
                             "strides and dilations need two positive values");
  TDim channels = w[last ? 3 : 0];
  Shape output = in;
  output[channelAxis] = channels;
  for (int64_t i = 0; i < 2; ++i) {
    std::optional<int64_t> size = in[firstSpatial + i].getConstant(),
                           kernel = w[(last ? 0 : 2) + i].getConstant();
    if (!size || !kernel)
      return emitOptionalError(location, "the spatial dims must be known");
    int64_t field = (*kernel - 1) * dilations[i] + 1;
    if (*size < field)
      return emitOptionalError(location, "the input is smaller than the "
                                         "kernel's field");
    output[firstSpatial + i] = TDim((*size - field) / strides[i] + 1);
  }
  return inferQuantResult(context, location, adaptor, channels, input, output,
                          results);
}

LogicalResult GruEpilogueOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape x = getShape(adaptor.getXH()), r = getShape(adaptor.getRH()),
        h = getShape(adaptor.getH());
  if (x.empty() || x != r)
    return emitOptionalError(location,
                             "x_h and r_h must have one shape, of rank 1 or "
                             "more");
  if (h.size() != x.size() || !std::equal(h.begin(), h.end() - 1, x.begin()))
    return emitOptionalError(location,
                             "h must have the shape of x_h but its last axis");
  if (x.back() != TDim(3) * h.back())
    return emitOptionalError(location, "x_h and r_h have ", x.back().toString(),
                             " gate values, not 3 times the ",
                             h.back().toString(), " of the state");
  Type elementType = getElementTypeOrSelf(adaptor.getH());
  if (getElementTypeOrSelf(adaptor.getXH()) != elementType ||
      getElementTypeOrSelf(adaptor.getRH()) != elementType)
    return emitOptionalError(location, "x_h, r_h and h must have one type");
  results.push_back(adaptor.getH().getType());
  return success();
}

LogicalResult RoiAlignOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  Shape rois = getShape(adaptor.getRois());
  Shape batch = getShape(adaptor.getBatchIndices());
  if (input.size() != 4)
    return emitOptionalError(location, "the input must be N, C, H, W");
  if (rois.size() != 2 || rois[1] != TDim(4))
    return emitOptionalError(location, "rois must be R, 4");
  if (batch.size() != 1)
    return emitOptionalError(location, "batch_indices must be R");
  std::optional<int64_t> count = rois[0].getConstant(),
                         indices = batch[0].getConstant();
  if (count && indices && *count != *indices)
    return emitOptionalError(location, *count, " rois but ", *indices,
                             " batch indices");
  if (adaptor.getOutputHeight() < 1 || adaptor.getOutputWidth() < 1 ||
      adaptor.getSamplingRatio() < 0)
    return emitOptionalError(location, "output sizes must be positive and "
                                       "sampling_ratio not negative");
  if (getElementTypeOrSelf(adaptor.getRois()) !=
      getElementTypeOrSelf(adaptor.getInput()))
    return emitOptionalError(location, "rois must have the input's type");
  Shape output{rois[0], input[1], TDim(adaptor.getOutputHeight()),
               TDim(adaptor.getOutputWidth())};
  results.push_back(getTensorTypeLike(adaptor.getInput(), output));
  return success();
}

LogicalResult GridSampleOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  Shape input = getShape(adaptor.getInput());
  Shape grid = getShape(adaptor.getGrid());
  if (input.size() < 3)
    return emitOptionalError(location,
                             "expected an input of rank 3 or more "
                             "(N, C, spatial axes), got rank ",
                             input.size());
  size_t spatial = input.size() - 2;
  if (grid.size() != spatial + 2)
    return emitOptionalError(location, "expected a grid of rank ", spatial + 2,
                             ", got rank ", grid.size());
  std::optional<int64_t> coordinates = grid.back().getConstant();
  if (!coordinates || *coordinates != static_cast<int64_t>(spatial))
    return emitOptionalError(location, "the grid's last axis must hold ",
                             spatial, " coordinates, not ",
                             grid.back().toString());
  std::optional<int64_t> batch = input[0].getConstant(),
                         gridBatch = grid[0].getConstant();
  if (batch && gridBatch && *batch != *gridBatch)
    return emitOptionalError(location, "the input's batch ", *batch,
                             " is not the grid's ", *gridBatch);
  if (getElementTypeOrSelf(adaptor.getGrid()) !=
      getElementTypeOrSelf(adaptor.getInput()))
    return emitOptionalError(location,
                             "the grid must have the input's element type");
  Shape output{input[0], input[1]};
  output.append(grid.begin() + 1, grid.end() - 1);
  results.push_back(getTensorTypeLike(adaptor.getInput(), output));
  return success();
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ArrayRef<TDim> sizes = adaptor.getSizes().getDims();
  size_t rank = getShape(adaptor.getInput()).size();
  if (sizes.size() != rank)
    return emitOptionalError(location, "expected ", rank, " sizes, got ",
                             sizes.size());
  ArrayRef<double> scales = adaptor.getScales();
  if (!scales.empty() && scales.size() != rank)
    return emitOptionalError(location, "expected ", rank, " scales, got ",
                             scales.size());
  for (double scale : scales)
    if (!(scale > 0) || !std::isfinite(scale))
      return emitOptionalError(location, "scales must be positive, got ",
                               scale);
  if (Value values = adaptor.getScaleValues()) {
    Shape shape = getShape(values);
    if (!scales.empty() || shape.size() != 1 ||
        shape[0] != TDim(static_cast<int64_t>(rank)))
      return emitOptionalError(location,
                               "scale_values must be one scale per axis (",
                               rank, "), in place of scales");
  }
  bool crop = adaptor.getCoordTransform() == CoordTransform::TfCropAndResize;
  size_t roiSize = adaptor.getRoi().size();
  if (Value values = adaptor.getRoiValues()) {
    Shape shape = getShape(values);
    if (!crop || roiSize || shape.size() != 1 ||
        shape[0] != TDim(static_cast<int64_t>(2 * rank)))
      return emitOptionalError(
          location, "roi_values must be ", 2 * rank,
          " values of tf_crop_and_resize, in place of roi");
    roiSize = 2 * rank;
  }
  if (crop && roiSize != 2 * rank)
    return emitOptionalError(location, "tf_crop_and_resize expects ", 2 * rank,
                             " roi values, got ", roiSize);
  if (!crop && roiSize)
    return emitOptionalError(location,
                             "roi is only given with tf_crop_and_resize");
  results.push_back(getTensorTypeLike(adaptor.getInput(), sizes));
  return success();
}

//===----------------------------------------------------------------------===//
// The axes reductions and normalizations work along
//===----------------------------------------------------------------------===//

SmallVector<int64_t> ReduceOp::getWorkAxes() {
  return SmallVector<int64_t>(getAxes());
}
void ReduceOp::setWorkAxes(ArrayRef<int64_t> axes) { setAxes(axes); }

SmallVector<int64_t> SoftmaxOp::getWorkAxes() {
  return SmallVector<int64_t>(getAxes());
}
void SoftmaxOp::setWorkAxes(ArrayRef<int64_t> axes) { setAxes(axes); }

SmallVector<int64_t> LogSoftmaxOp::getWorkAxes() {
  return SmallVector<int64_t>(getAxes());
}
void LogSoftmaxOp::setWorkAxes(ArrayRef<int64_t> axes) { setAxes(axes); }

SmallVector<int64_t> RmsNormOp::getWorkAxes() {
  return {static_cast<int64_t>(getAxis())};
}
void RmsNormOp::setWorkAxes(ArrayRef<int64_t> axes) {
  setAxis(static_cast<uint64_t>(axes.front()));
}

void mlir::tract::readWorkAxesUnpermuted(Operation *op,
                                         ArrayRef<int64_t> perm) {
  auto work = cast<WorkAxesOpInterface>(op);
  SmallVector<int64_t> axes;
  for (int64_t axis : work.getWorkAxes())
    axes.push_back(perm[axis]);
  llvm::sort(axes);
  work.setWorkAxes(axes);
}
