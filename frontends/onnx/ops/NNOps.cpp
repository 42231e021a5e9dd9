//===- NNOps.cpp - ONNX neural-network operators --------------------------===//
//
// Convolutions and pools map to tract's window ops; matrix products
// (Gemm, MatMul, Einsum) to tract.einsum; normalizations expand into
// reductions and element-wise math; Softmax, Resize and Dropout map to
// their tract counterparts.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/TractFolding.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ops/Conv.h"
#include "frontends/onnx/ops/Random.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// A double as %g prints it.
std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

SmallVector<int64_t> range(int64_t from, int64_t to) {
  SmallVector<int64_t> values;
  for (int64_t i = from; i < to; ++i)
    values.push_back(i);
  return values;
}

/// The mean of `x` over `axes`, which are kept as size 1.
Value meanOver(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  return ctx.binary<DivOp>(ctx.create<ReduceOp>(x, Reducer::Sum, axes),
                           ctx.axesVolume(x, axes));
}

/// Inserts unit axes at the end of `x` up to rank `rank`.
Value unsqueezeTrailing(NodeContext &ctx, Value x, int64_t rank) {
  while (x && NodeContext::rank(x) < rank)
    x = ctx.create<AddAxisOp>(x, static_cast<uint64_t>(NodeContext::rank(x)));
  return x;
}

/// Reshapes a per-channel vector to broadcast against an `N, C, …` tensor
/// of rank `rank`: `[C]` becomes `[1, C, 1, …]`.
Value channelwise(NodeContext &ctx, Value param, int64_t rank) {
  if (!param)
    return {};
  return unsqueezeTrailing(
      ctx, ctx.create<AddAxisOp>(param, static_cast<uint64_t>(0)), rank);
}

Value reshape(NodeContext &ctx, Value x, int64_t at, int64_t count,
              ArrayRef<TDim> to) {
  return ctx.create<ReshapeOp>(x, static_cast<uint64_t>(at),
                               static_cast<uint64_t>(count),
                               ShapeAttr::get(ctx.getContext(), to));
}

LogicalResult requireRank(NodeContext &ctx, Value x, int64_t minRank,
                          StringRef what) {
  if (!x)
    return ctx.error("missing input '" + what + "'");
  if (NodeContext::rank(x) < minRank)
    return ctx.error("'" + what + "' has rank " + Twine(NodeContext::rank(x)) +
                     ", expected at least " + Twine(minRank));
  return success();
}

/// The math of normalizations, softmax and resampling is on floats.
LogicalResult requireFloat(NodeContext &ctx, Value x) {
  Type type = NodeContext::elementType(x);
  if (x && !isa<FloatType>(type)) {
    std::string name;
    llvm::raw_string_ostream os(name);
    os << type;
    return ctx.unsupported(ctx.getOpType() + " of " + name + " tensors");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Window attributes
//===----------------------------------------------------------------------===//

} // namespace

FailureOr<Window> mlir::tract::onnx::readWindow(NodeContext &ctx,
                                                int64_t spatialRank,
                                                bool keepExplicit) {
  Window window;
  auto read = [&](StringRef name,
                  SmallVector<int64_t> &values) -> LogicalResult {
    std::optional<SmallVector<int64_t>> given = ctx.getInts(name);
    if (!given || given->empty())
      return success();
    if (static_cast<int64_t>(given->size()) != spatialRank)
      return ctx.error(name + " has " + Twine(given->size()) +
                       " values, expected " + Twine(spatialRank));
    for (int64_t v : *given)
      if (v < 1)
        return ctx.error(name + " must be positive, got " + Twine(v));
    if (llvm::any_of(*given, [](int64_t v) { return v != 1; }))
      values = *given;
    return success();
  };
  if (failed(read("strides", window.strides)) ||
      failed(read("dilations", window.dilations)))
    return failure();
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER") {
    window.padding = Padding::SameUpper;
  } else if (autoPad == "SAME_LOWER") {
    window.padding = Padding::SameLower;
  } else if (autoPad == "VALID") {
    window.padding = keepExplicit ? Padding::Explicit : Padding::Valid;
  } else if (autoPad == "NOTSET" || autoPad.empty()) {
    std::optional<SmallVector<int64_t>> pads = ctx.getInts("pads");
    if (pads && !pads->empty()) {
      if (static_cast<int64_t>(pads->size()) != 2 * spatialRank)
        return ctx.error("pads has " + Twine(pads->size()) +
                         " values, expected " + Twine(2 * spatialRank));
      if (llvm::any_of(*pads, [](int64_t p) { return p < 0; }))
        return ctx.unsupported("negative pads");
      if (keepExplicit || llvm::any_of(*pads, [](int64_t p) { return p; })) {
        window.padding = Padding::Explicit;
        window.before.assign(pads->begin(), pads->begin() + spatialRank);
        window.after.assign(pads->begin() + spatialRank, pads->end());
      }
    } else if (keepExplicit) {
      window.padding = Padding::Explicit;
    }
  } else {
    return ctx.unsupported("auto_pad '" + autoPad + "'");
  }
  return window;
}

namespace {

/// Checks a kernel_shape attribute against the kernel's spatial dims.
LogicalResult checkKernelShape(NodeContext &ctx, Value kernel) {
  std::optional<SmallVector<int64_t>> kernelShape = ctx.getInts("kernel_shape");
  if (!kernelShape || !kernel)
    return success();
  Shape shape = getShape(kernel);
  if (kernelShape->size() + 2 != shape.size())
    return ctx.error("kernel_shape has " + Twine(kernelShape->size()) +
                     " values, the kernel has rank " + Twine(shape.size()));
  for (auto [given, dim] :
       llvm::zip(*kernelShape, ArrayRef(shape).drop_front(2)))
    if (dim != TDim(given))
      return ctx.unsupported("kernel_shape " + Twine(given) +
                             " differing from the kernel's dim " +
                             dim.toString());
  return success();
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

} // namespace

Value mlir::tract::onnx::buildConv(NodeContext &ctx, Value x, Value w,
                                   Value b) {
  if (failed(requireRank(ctx, x, 3, "X")) || failed(checkKernelShape(ctx, w)))
    return {};
  FailureOr<Window> window = readWindow(ctx, NodeContext::rank(x) - 2);
  if (failed(window))
    return {};
  int64_t group = ctx.getInt("group", 1);
  if (group < 1) {
    (void)ctx.error("group must be positive, got " + Twine(group));
    return {};
  }
  return ctx.create<ConvOp>(x, w, b, static_cast<uint64_t>(group),
                            ArrayRef(window->strides),
                            ArrayRef(window->dilations), window->padding,
                            ArrayRef(window->before), ArrayRef(window->after));
}

namespace {

LogicalResult convHandler(NodeContext &ctx, Outputs &outputs) {
  Value y = buildConv(ctx, ctx.input(0), ctx.input(1), ctx.input(2));
  return pushOutput(outputs, y);
}

LogicalResult convTransposeHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), w = ctx.input(1), b = ctx.input(2);
  if (failed(requireRank(ctx, x, 3, "X")) || failed(checkKernelShape(ctx, w)))
    return failure();
  if (failed(requireRank(ctx, w, 3, "W")))
    return failure();
  int64_t spatialRank = NodeContext::rank(x) - 2;
  FailureOr<Window> read = readWindow(ctx, spatialRank);
  if (failed(read))
    return failure();
  Window window = *read;
  int64_t group = ctx.getInt("group", 1);
  if (group < 1)
    return ctx.error("group must be positive, got " + Twine(group));
  SmallVector<int64_t> adjustments(spatialRank, 0);
  if (std::optional<SmallVector<int64_t>> outputPadding =
          ctx.getInts("output_padding");
      outputPadding && !outputPadding->empty()) {
    if (static_cast<int64_t>(outputPadding->size()) != spatialRank)
      return ctx.error("output_padding has " + Twine(outputPadding->size()) +
                       " values, expected " + Twine(spatialRank));
    adjustments = *outputPadding;
  }
  std::optional<SmallVector<int64_t>> outputShape = ctx.getInts("output_shape");
  if (outputShape &&
      static_cast<int64_t>(outputShape->size()) == spatialRank + 2)
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->empty())
    outputShape.reset();
  if (outputShape && static_cast<int64_t>(outputShape->size()) != spatialRank)
    return ctx.error("output_shape has " + Twine(outputShape->size()) +
                     " values, expected " + Twine(spatialRank));
  bool same = window.padding == Padding::SameUpper ||
              window.padding == Padding::SameLower;
  bool hasAdjustments = llvm::any_of(adjustments, [](int64_t a) { return a; });
  if (outputShape || (same && hasAdjustments)) {
    // Explicit pads from the total padding
    // stride * (x - 1) + output_padding + field - output.
    Shape input = getShape(x), kernel = getShape(w);
    bool upper = window.padding == Padding::SameUpper;
    window.before.assign(spatialRank, 0);
    window.after.assign(spatialRank, 0);
    for (int64_t i = 0; i < spatialRank; ++i) {
      std::optional<int64_t> size = input[i + 2].getConstant();
      std::optional<int64_t> k = kernel[i + 2].getConstant();
      if (!k)
        return ctx.unsupported("a kernel with symbolic spatial dims");
      int64_t stride = window.strides.empty() ? 1 : window.strides[i];
      int64_t dilation = window.dilations.empty() ? 1 : window.dilations[i];
      int64_t field = (*k - 1) * dilation + 1;
      int64_t total;
      if (outputShape) {
        if (!size)
          return ctx.unsupported("output_shape with the symbolic input dim " +
                                 input[i + 2].toString());
        total =
            stride * (*size - 1) + adjustments[i] + field - (*outputShape)[i];
      } else {
        total = adjustments[i] + field - stride;
      }
      if (total < 0) {
        // The output extends past the last contribution: zeros (and bias)
        // at the end, as output_padding does.
        adjustments[i] -= total;
        continue;
      }
      int64_t small = total / 2, large = total - small;
      window.before[i] = upper ? small : large;
      window.after[i] = upper ? large : small;
    }
    window.padding = Padding::Explicit;
  }
  outputs.push_back(ctx.create<DeconvOp>(
      x, w, b, static_cast<uint64_t>(group), ArrayRef(adjustments),
      ArrayRef(window.strides), ArrayRef(window.dilations), window.padding,
      ArrayRef(window.before), ArrayRef(window.after)));
  return success();
}

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>> poolKernel(NodeContext &ctx, Value x) {
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (!kernel)
    return ctx.error("missing kernel_shape");
  if (static_cast<int64_t>(kernel->size()) != NodeContext::rank(x) - 2)
    return ctx.error("kernel_shape has " + Twine(kernel->size()) +
                     " values, expected " + Twine(NodeContext::rank(x) - 2));
  return *kernel;
}

/// Rewrites flat row-major indices into an N, C, spatial… input so that
/// the spatial part is column-major (storage_order = 1): the spatial
/// coordinates are recovered with row-major strides and recombined with
/// column-major ones.
Value columnMajorIndices(NodeContext &ctx, Value indices,
                         ArrayRef<int64_t> spatial) {
  if (!indices)
    return {};
  // An empty window has no index to rewrite.
  if (llvm::is_contained(spatial, 0))
    return indices;
  Type type = NodeContext::elementType(indices);
  int64_t rank = NodeContext::rank(indices);
  auto constant = [&](int64_t value) {
    return ctx.intScalar(type, value, rank);
  };
  int64_t size = 1;
  for (int64_t dim : spatial)
    size *= dim;
  Value offset = ctx.binary<RemOp>(indices, constant(size));
  Value result = ctx.binary<SubOp>(indices, offset);
  int64_t rowStride = size, colStride = 1;
  for (int64_t dim : spatial) {
    rowStride /= dim;
    Value coordinate = ctx.binary<RemOp>(
        ctx.binary<DivOp>(offset, constant(rowStride)), constant(dim));
    result = ctx.binary<AddOp>(
        result, ctx.binary<MulOp>(coordinate, constant(colStride)));
    colStride *= dim;
  }
  return result;
}

LogicalResult maxPoolHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 3, "X")))
    return failure();
  FailureOr<SmallVector<int64_t>> kernel = poolKernel(ctx, x);
  if (failed(kernel))
    return failure();
  bool ceil = ctx.getInt("ceil_mode", 0);
  FailureOr<Window> window = readWindow(ctx, NodeContext::rank(x) - 2, ceil);
  if (failed(window))
    return failure();
  bool withIndex = ctx.hasOutput(1);
  bool columnMajor = ctx.getInt("storage_order", 0);
  SmallVector<int64_t> spatial;
  if (withIndex && columnMajor) {
    Shape shape = getShape(x);
    for (const TDim &dim : ArrayRef(shape).drop_front(2)) {
      std::optional<int64_t> size = dim.getConstant();
      if (!size)
        return ctx.unsupported("column-major Indices over the symbolic dim " +
                               dim.toString());
      spatial.push_back(*size);
    }
  }
  Value y = ctx.create<MaxPoolOp>(
      Type(), x, ArrayRef(*kernel), ceil, withIndex, ArrayRef(window->strides),
      ArrayRef(window->dilations), window->padding, ArrayRef(window->before),
      ArrayRef(window->after));
  outputs.push_back(y);
  if (!withIndex)
    return success();
  Value indices = y ? y.getDefiningOp()->getResult(1) : Value();
  if (columnMajor)
    indices = columnMajorIndices(ctx, indices, spatial);
  outputs.push_back(indices);
  return success();
}

} // namespace

Value mlir::tract::onnx::buildAveragePool(NodeContext &ctx, Value x) {
  if (failed(requireRank(ctx, x, 3, "X")))
    return {};
  FailureOr<SmallVector<int64_t>> kernel = poolKernel(ctx, x);
  if (failed(kernel))
    return {};
  bool ceil = ctx.getInt("ceil_mode", 0);
  FailureOr<Window> window = readWindow(ctx, NodeContext::rank(x) - 2, ceil);
  if (failed(window))
    return {};
  bool countIncludePad = ctx.getInt("count_include_pad", 0);
  return ctx.create<SumPoolOp>(
      x, ArrayRef(*kernel), ceil, /*normalize=*/true, countIncludePad,
      ArrayRef(window->strides), ArrayRef(window->dilations), window->padding,
      ArrayRef(window->before), ArrayRef(window->after));
}

namespace {

LogicalResult averagePoolHandler(NodeContext &ctx, Outputs &outputs) {
  return pushOutput(outputs, buildAveragePool(ctx, ctx.input(0)));
}

/// The p of LpPool and GlobalLpPool: a float before opset 2, an int after.
double lpNorm(NodeContext &ctx) {
  if (ctx.getOpset() < 2)
    return ctx.getFloat("p", 2.0f);
  return static_cast<double>(ctx.getInt("p", 2));
}

/// |x|^p, and its inverse y^(1/p).
Value powAbs(NodeContext &ctx, Value x, double p) {
  if (p == 2)
    return ctx.create<SquareOp>(x);
  Value abs = ctx.create<AbsOp>(x);
  if (p == 1)
    return abs;
  return ctx.binary<PowOp>(abs, ctx.scalarLike(x, p));
}

Value rootOf(NodeContext &ctx, Value y, double p) {
  if (p == 2)
    return ctx.create<SqrtOp>(y);
  if (p == 1)
    return y;
  return ctx.binary<PowOp>(y, ctx.scalarLike(y, 1.0 / p));
}

LogicalResult lpPoolHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 3, "X")) || failed(requireFloat(ctx, x)))
    return failure();
  FailureOr<SmallVector<int64_t>> kernel = poolKernel(ctx, x);
  if (failed(kernel))
    return failure();
  double p = lpNorm(ctx);
  if (p <= 0)
    return ctx.error("p must be positive, got " + num(p));
  bool ceil = ctx.getInt("ceil_mode", 0);
  FailureOr<Window> window = readWindow(ctx, NodeContext::rank(x) - 2, ceil);
  if (failed(window))
    return failure();
  Value sum = ctx.create<SumPoolOp>(
      powAbs(ctx, x, p), ArrayRef(*kernel), ceil, /*normalize=*/false,
      /*count_include_pad=*/false, ArrayRef(window->strides),
      ArrayRef(window->dilations), window->padding, ArrayRef(window->before),
      ArrayRef(window->after));
  outputs.push_back(rootOf(ctx, sum, p));
  return success();
}

OpHandler globalPoolHandler(StringRef kind) {
  return [kind = kind.str()](NodeContext &ctx,
                             Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    if (failed(requireRank(ctx, x, 3, "X")))
      return failure();
    SmallVector<int64_t> axes = range(2, NodeContext::rank(x));
    if (kind == "max") {
      outputs.push_back(ctx.create<ReduceOp>(x, Reducer::Max, axes));
    } else if (kind == "average") {
      outputs.push_back(meanOver(ctx, x, axes));
    } else {
      if (failed(requireFloat(ctx, x)))
        return failure();
      double p = lpNorm(ctx);
      if (p <= 0)
        return ctx.error("p must be positive, got " + num(p));
      Value sum = ctx.create<ReduceOp>(powAbs(ctx, x, p), Reducer::Sum, axes);
      outputs.push_back(rootOf(ctx, sum, p));
    }
    return success();
  };
}

/// MaxUnpool: the values of X written at their flat indices I (over the
/// whole output, as MaxPool's indices are) into zeros of the output shape:
/// output_shape when given, otherwise the unpooled shape
/// `(x - 1) * stride + kernel - pads` per spatial axis. The indices address
/// output_shape itself, as onnxruntime and the current ONNX reference have
/// it (onnx 1.12's node test pads an unpooled tensor instead).
LogicalResult maxUnpoolHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (failed(requireRank(ctx, x, 3, "X")) ||
      failed(requireRank(ctx, indices, 3, "I")))
    return failure();
  int64_t rank = NodeContext::rank(x), spatialRank = rank - 2;
  Shape input = getShape(x);
  if (getShape(indices) != input)
    return ctx.error("I has shape " + shapeToString(getShape(indices)) +
                     ", X " + shapeToString(input));
  std::optional<SmallVector<int64_t>> kernel = ctx.getInts("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != spatialRank)
    return ctx.error("kernel_shape must have " + Twine(spatialRank) +
                     " values");
  SmallVector<int64_t> strides(spatialRank, 1), pads(2 * spatialRank, 0);
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("strides");
      given && !given->empty()) {
    if (static_cast<int64_t>(given->size()) != spatialRank)
      return ctx.error("strides must have " + Twine(spatialRank) + " values");
    strides = *given;
  }
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("pads");
      given && !given->empty()) {
    if (static_cast<int64_t>(given->size()) != 2 * spatialRank)
      return ctx.error("pads must have " + Twine(2 * spatialRank) + " values");
    pads = *given;
  }
  Shape unpooled{input[0], input[1]};
  for (int64_t i = 0; i < spatialRank; ++i)
    unpooled.push_back((input[i + 2] - TDim(1)) * TDim(strides[i]) +
                       TDim((*kernel)[i] - pads[i] - pads[spatialRank + i]));
  Shape target = unpooled;
  if (ctx.hasInput(2)) {
    std::optional<SmallVector<TDim>> shape = ctx.getDims(2);
    if (!shape)
      return ctx.unsupported("an output_shape that is not a constant or a "
                             "known shape");
    if (static_cast<int64_t>(shape->size()) != rank)
      return ctx.error("output_shape has " + Twine(shape->size()) +
                       " values, expected " + Twine(rank));
    target.assign(shape->begin(), shape->end());
  }
  MLIRContext *context = ctx.getContext();
  auto flatten = [&](Value v) {
    return ctx.create<ReshapeOp>(
        v, uint64_t(0), static_cast<uint64_t>(NodeContext::rank(v)),
        ShapeAttr::get(context, {volume(getShape(v))}));
  };
  Value zeros =
      ctx.create<BroadcastOp>(ctx.scalarLike(flatten(x), 0.0),
                              ShapeAttr::get(context, {volume(target)}));
  Value scattered = ctx.create<ScatterElementsOp>(
      zeros, flatten(indices), flatten(x), uint64_t(0), ScatterReduction::None);
  Value y = ctx.create<ReshapeOp>(scattered, uint64_t(0), uint64_t(1),
                                  ShapeAttr::get(context, target));
  outputs.push_back(y);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// BatchNormalization-14/15 in training mode: normalized by the batch's
/// own mean and (population) variance over every axis but the channels';
/// the running statistics move towards them by `1 - momentum`.
LogicalResult batchNormTraining(NodeContext &ctx, Value x, Outputs &outputs) {
  int64_t rank = NodeContext::rank(x);
  double epsilon = ctx.getFloat("epsilon", 1e-5f);
  double momentum = ctx.getFloat("momentum", 0.9f);
  Value scale = ctx.input(1), bias = ctx.input(2), mean = ctx.input(3),
        var = ctx.input(4);
  if (!scale || !bias || !mean || !var)
    return ctx.error("expected scale, B, input_mean and input_var inputs");
  SmallVector<int64_t> axes{0};
  for (int64_t axis = 2; axis < rank; ++axis)
    axes.push_back(axis);
  Value batchMean = meanOver(ctx, x, axes);
  Value centered = ctx.binary<SubOp>(x, batchMean);
  Value batchVar = ctx.create<ReduceOp>(centered, Reducer::MeanOfSquares, axes);
  Value invStd = ctx.create<RsqrtOp>(
      ctx.binary<AddOp>(batchVar, ctx.scalarLike(batchVar, epsilon)));
  outputs.push_back(
      ctx.binary<AddOp>(ctx.binary<MulOp>(ctx.binary<MulOp>(centered, invStd),
                                          channelwise(ctx, scale, rank)),
                        channelwise(ctx, bias, rank)));
  // The running statistics, per channel.
  auto running = [&](Value previous, Value batch) {
    Value perChannel = reshape(ctx, batch, 0, rank, {getShape(x)[1]});
    return ctx.binary<AddOp>(
        ctx.binary<MulOp>(previous, ctx.scalarLike(previous, momentum)),
        ctx.binary<MulOp>(perChannel,
                          ctx.scalarLike(perChannel, 1.0 - momentum)));
  };
  for (unsigned i = 1; i < ctx.getNumOutputs(); ++i)
    outputs.push_back(i == 1   ? running(mean, batchMean)
                      : i == 2 ? running(var, batchVar)
                               : Value());
  if (ctx.getNumOutputs() > 3)
    return ctx.error("training mode has three outputs");
  return success();
}

LogicalResult batchNormHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 2, "X")) || failed(requireFloat(ctx, x)))
    return failure();
  if (ctx.getOpset() >= 14 && ctx.getInt("training_mode", 0))
    return batchNormTraining(ctx, x, outputs);
  for (unsigned i = 1; i < ctx.getNumOutputs(); ++i)
    if (ctx.hasOutput(i))
      return ctx.unsupported("the training outputs (running or saved mean "
                             "and variance)");
  int64_t rank = NodeContext::rank(x);
  double epsilon = ctx.getFloat("epsilon", 1e-5f);
  Value scale = ctx.input(1), bias = ctx.input(2), mean = ctx.input(3),
        var = ctx.input(4);
  if (!scale || !bias || !mean || !var)
    return ctx.error("expected scale, B, mean and var inputs");
  // y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a; both
  // fold when the statistics are constants.
  Value a = ctx.binary<MulOp>(scale, ctx.create<RsqrtOp>(ctx.binary<AddOp>(
                                         var, ctx.scalarLike(var, epsilon))));
  Value shift = ctx.binary<SubOp>(bias, ctx.binary<MulOp>(mean, a));
  bool spatial = ctx.getOpset() >= 9 || ctx.getInt("spatial", 1);
  if (spatial) {
    a = channelwise(ctx, a, rank);
    shift = channelwise(ctx, shift, rank);
  } else {
    // Statistics per element of C x D1 x ...: only the batch broadcasts.
    a = ctx.unsqueezeTo(a, rank);
    shift = ctx.unsqueezeTo(shift, rank);
  }
  outputs.push_back(ctx.binary<AddOp>(ctx.binary<MulOp>(x, a), shift));
  return success();
}

/// (x - mean) / sqrt(var + eps) over `axes`, with mean and variance kept
/// as size 1; `invStd` receives 1 / sqrt(var + eps).
Value standardize(NodeContext &ctx, Value x, ArrayRef<int64_t> axes,
                  double epsilon, Value *meanOut = nullptr,
                  Value *invStdOut = nullptr) {
  Value mean = meanOver(ctx, x, axes);
  Value centered = ctx.binary<SubOp>(x, mean);
  Value var = ctx.create<ReduceOp>(centered, Reducer::MeanOfSquares, axes);
  Value invStd =
      ctx.create<RsqrtOp>(ctx.binary<AddOp>(var, ctx.scalarLike(var, epsilon)));
  if (meanOut)
    *meanOut = mean;
  if (invStdOut)
    *invStdOut = invStd;
  return ctx.binary<MulOp>(centered, invStd);
}

LogicalResult instanceNormHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 3, "input")) || failed(requireFloat(ctx, x)))
    return failure();
  if (!ctx.input(1) || !ctx.input(2))
    return ctx.error("expected scale and B inputs");
  int64_t rank = NodeContext::rank(x);
  Value y = standardize(ctx, x, range(2, rank), ctx.getFloat("epsilon", 1e-5f));
  y = ctx.binary<MulOp>(y, channelwise(ctx, ctx.input(1), rank));
  outputs.push_back(ctx.binary<AddOp>(y, channelwise(ctx, ctx.input(2), rank)));
  return success();
}

/// The element type computations are carried in (stash_type), or null
/// with an error recorded.
Type stashType(NodeContext &ctx, Type elementType) {
  std::optional<int64_t> stash = ctx.getOptInt("stash_type");
  if (!stash)
    return isa<FloatType>(elementType) &&
                   elementType.getIntOrFloatBitWidth() < 32
               ? Float32Type::get(ctx.getContext())
               : elementType;
  std::string name;
  Type type = convertDataType(ctx.getContext(), static_cast<int>(*stash), name);
  if (!type || !isa<FloatType>(type)) {
    (void)ctx.unsupported("stash_type " + Twine(*stash));
    return {};
  }
  return type;
}

/// The root-mean-square norm of onnxruntime's contrib ops over the axes
/// from `axis` on: x / sqrt(mean(x * x) + epsilon). tract's rms_norm when
/// that is the last axis alone and its inverse is not asked for.
Value rmsNormalize(NodeContext &ctx, Value x, int64_t axis, double epsilon,
                   Value *invStdOut) {
  int64_t rank = NodeContext::rank(x);
  if (axis == rank - 1 && !invStdOut)
    return ctx.create<RmsNormOp>(x, axis, APFloat(epsilon));
  Value meanSquare =
      ctx.create<ReduceOp>(x, Reducer::MeanOfSquares, range(axis, rank));
  Value invStd = ctx.create<RsqrtOp>(
      ctx.binary<AddOp>(meanSquare, ctx.scalarLike(meanSquare, epsilon)));
  if (invStdOut)
    *invStdOut = invStd;
  return ctx.binary<MulOp>(x, invStd);
}

/// LayerNormalization, and with `rms` onnxruntime's
/// SimplifiedLayerNormalization (registered in the ONNX domain as
/// onnxruntime does; Llama-style exports use it for their RMS norms): X,
/// scale (and B) -> Y over the axes from `axis`, computed in the stash
/// type, with the mean (not for the RMS norm) and the inverse deviation as
/// optional outputs.
OpHandler layerNormHandler(bool rms) {
  return [rms](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    if (failed(requireRank(ctx, x, 1, "X")) || failed(requireFloat(ctx, x)))
      return failure();
    int64_t rank = NodeContext::rank(x);
    FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", -1), rank);
    if (failed(axis))
      return failure();
    if (!ctx.input(1))
      return ctx.error("expected a Scale input");
    Type type = NodeContext::elementType(x);
    Type stash = stashType(ctx, type);
    if (!stash)
      return failure();
    double epsilon = ctx.getFloat("epsilon", 1e-5f);
    Value mean, invStd;
    Value y =
        rms ? rmsNormalize(ctx, ctx.castTo(x, stash), *axis, epsilon,
                           ctx.hasOutput(1) ? &invStd : nullptr)
            : standardize(ctx, ctx.castTo(x, stash), range(*axis, rank),
                          epsilon, &mean, &invStd);
    y = ctx.binary<MulOp>(ctx.castTo(y, type), ctx.input(1));
    if (!rms && ctx.hasInput(2))
      y = ctx.binary<AddOp>(y, ctx.input(2));
    outputs.push_back(y);
    if (rms) {
      outputs.push_back(invStd);
      return success();
    }
    outputs.push_back(ctx.hasOutput(1) ? mean : Value());
    outputs.push_back(ctx.hasOutput(2) ? invStd : Value());
    return success();
  };
}

/// com.microsoft's SkipLayerNormalization and
/// SkipSimplifiedLayerNormalization (`simplified`: an RMS norm, no beta):
/// the residual sum input + skip (+ bias), normalized over the last axis,
/// times gamma (plus beta). Outputs: the result, the mean and the inverse
/// standard deviation (optional; no mean for the RMS norm), and the sum.
OpHandler skipLayerNormHandler(bool simplified) {
  return [simplified](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0), skip = ctx.input(1), gamma = ctx.input(2);
    if (failed(requireRank(ctx, x, 2, "input")) ||
        failed(requireFloat(ctx, x)))
      return failure();
    if (!skip || !gamma)
      return ctx.error("expected skip and gamma inputs");
    Value beta = simplified ? Value() : ctx.input(3);
    Value bias = ctx.input(simplified ? 3 : 4);
    Value sum = ctx.binary<AddOp>(x, skip);
    if (bias)
      sum = ctx.binary<AddOp>(sum, bias);
    int64_t rank = NodeContext::rank(x);
    // onnxruntime's default.
    double epsilon = ctx.getFloat("epsilon", 1e-12f);
    Value mean, invStd;
    Value y = simplified
                  ? rmsNormalize(ctx, sum, rank - 1, epsilon,
                                 ctx.hasOutput(2) ? &invStd : nullptr)
                  : standardize(ctx, sum, {rank - 1}, epsilon, &mean, &invStd);
    y = ctx.binary<MulOp>(y, gamma);
    if (beta)
      y = ctx.binary<AddOp>(y, beta);
    outputs.push_back(y);
    if (simplified && ctx.hasOutput(1))
      return ctx.unsupported("the mean output of an RMS norm (onnxruntime "
                             "does not compute it)");
    outputs.push_back(ctx.hasOutput(1) ? mean : Value());
    outputs.push_back(ctx.hasOutput(2) ? invStd : Value());
    outputs.push_back(sum);
    return success();
  };
}

/// com.microsoft's EmbedLayerNormalization (a BERT's embeddings after
/// onnxruntime's transformer optimizer): the rows of word_embedding at
/// input_ids, plus those of position_embedding at position_ids (or 0 ..
/// S-1), plus those of segment_embedding at segment_ids (when both are
/// given), normalized over the hidden axis, times gamma plus beta. The
/// second output is each sequence's count of mask ones (the right-padding
/// end the Attention's mask_index takes), the third the sum before the
/// norm.
LogicalResult embedLayerNormHandler(NodeContext &ctx, Outputs &outputs) {
  Value ids = ctx.input(0), segmentIds = ctx.input(1), words = ctx.input(2),
        positions = ctx.input(3), segments = ctx.input(4),
        gamma = ctx.input(5), beta = ctx.input(6), mask = ctx.input(7),
        positionIds = ctx.input(8);
  if (!ids || !words || !positions || !gamma || !beta)
    return ctx.error("expected input_ids, word_embedding, "
                     "position_embedding, gamma and beta");
  if (NodeContext::rank(ids) != 2 || NodeContext::rank(words) != 2 ||
      NodeContext::rank(positions) != 2)
    return ctx.error("input_ids must be (batch, sequence) and the "
                     "embeddings matrices");
  if (failed(requireFloat(ctx, words)))
    return failure();
  Value sum = ctx.create<GatherOp>(words, ids, int64_t(0));
  Value rows;
  if (positionIds) {
    rows = ctx.create<GatherOp>(positions, positionIds, int64_t(0));
  } else {
    TDim length = getShape(ids)[1];
    rows = ctx.create<AddAxisOp>(
        ctx.create<SliceOp>(positions, uint64_t(0),
                            DimAttr::get(ctx.getContext(), TDim(0)),
                            DimAttr::get(ctx.getContext(), length)),
        uint64_t(0));
  }
  sum = ctx.binary<AddOp>(sum, rows);
  if (segmentIds && segments)
    sum = ctx.binary<AddOp>(
        sum, ctx.create<GatherOp>(segments, segmentIds, int64_t(0)));
  if (!sum)
    return failure();
  double epsilon = ctx.getFloat("epsilon", 1e-12f);
  Value y = standardize(ctx, sum, {2}, epsilon);
  y = ctx.binary<AddOp>(ctx.binary<MulOp>(y, gamma), beta);
  outputs.push_back(y);
  Value maskIndex;
  if (ctx.hasOutput(1)) {
    if (!mask)
      return ctx.unsupported("the mask_index output without a mask");
    Type i32 = IntegerType::get(ctx.getContext(), 32);
    maskIndex = ctx.create<ReduceOp>(ctx.castTo(mask, i32), Reducer::Sum,
                                     ArrayRef<int64_t>{1}, false);
    maskIndex = maskIndex ? ctx.create<RmAxisOp>(maskIndex, int64_t(1))
                          : Value();
  }
  outputs.push_back(maskIndex);
  outputs.push_back(ctx.hasOutput(2) ? sum : Value());
  return success();
}

LogicalResult groupNormHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 2, "X")) || failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = NodeContext::rank(x);
  if (!ctx.input(1) || !ctx.input(2))
    return ctx.error("expected scale and bias inputs");
  std::optional<int64_t> groups = ctx.getOptInt("num_groups");
  if (!groups || *groups < 1)
    return ctx.error("num_groups must be a positive attribute");
  TDim channels = getShape(x)[1];
  std::optional<int64_t> c = channels.getConstant();
  if (!c)
    return ctx.unsupported("a symbolic channel count " + channels.toString());
  if (*c % *groups)
    return ctx.error(Twine(*c) + " channels are not divisible into " +
                     Twine(*groups) + " groups");
  Type type = NodeContext::elementType(x);
  Type stash = ctx.getOpset() >= 21 ? stashType(ctx, type) : type;
  if (!stash)
    return failure();
  // N, C, … -> N, G, C/G, …, normalized over all axes after G.
  Value grouped = reshape(ctx, ctx.castTo(x, stash), 1, 1,
                          {TDim(*groups), TDim(*c / *groups)});
  Value y = standardize(ctx, grouped, range(2, rank + 1),
                        ctx.getFloat("epsilon", 1e-5f));
  y = ctx.castTo(y, type);
  Value scale = ctx.input(1), bias = ctx.input(2);
  if (ctx.getOpset() < 21) {
    // Scale and bias per group.
    y = ctx.binary<MulOp>(y, channelwise(ctx, scale, rank + 1));
    y = ctx.binary<AddOp>(y, channelwise(ctx, bias, rank + 1));
    outputs.push_back(reshape(ctx, y, 1, 2, {channels}));
    return success();
  }
  y = reshape(ctx, y, 1, 2, {channels});
  y = ctx.binary<MulOp>(y, channelwise(ctx, scale, rank));
  outputs.push_back(ctx.binary<AddOp>(y, channelwise(ctx, bias, rank)));
  return success();
}

LogicalResult lrnHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 2, "X")) || failed(requireFloat(ctx, x)))
    return failure();
  std::optional<int64_t> size = ctx.getOptInt("size");
  if (!size || *size < 1)
    return ctx.error("size must be a positive attribute");
  double alpha = ctx.getFloat("alpha", 1e-4f),
         beta = ctx.getFloat("beta", 0.75f), bias = ctx.getFloat("bias", 1.0f);
  int64_t rank = NodeContext::rank(x);
  // Sum of squares over a window of channels: a sum pool over N, 1, C, …
  // whose first spatial axis is the channel axis.
  Value squares =
      ctx.create<AddAxisOp>(ctx.create<SquareOp>(x), static_cast<uint64_t>(1));
  SmallVector<int64_t> kernel(rank - 1, 1), before(rank - 1, 0),
      after(rank - 1, 0);
  kernel[0] = *size;
  before[0] = (*size - 1) / 2;
  after[0] = *size - 1 - before[0];
  Value sum = ctx.create<SumPoolOp>(squares, ArrayRef(kernel), false, false,
                                    false, ArrayRef<int64_t>{},
                                    ArrayRef<int64_t>{}, Padding::Explicit,
                                    ArrayRef(before), ArrayRef(after));
  sum = ctx.create<RmAxisOp>(sum, static_cast<uint64_t>(1));
  Value base = ctx.binary<AddOp>(
      ctx.scalarLike(x, bias),
      ctx.binary<MulOp>(sum, ctx.scalarLike(x, alpha / *size)));
  outputs.push_back(
      ctx.binary<DivOp>(x, ctx.binary<PowOp>(base, ctx.scalarLike(x, beta))));
  return success();
}

LogicalResult mvnHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  if (failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = NodeContext::rank(x);
  SmallVector<int64_t> given =
      ctx.getInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> axes = ctx.normalizeAxes(given, rank);
  if (failed(axes))
    return failure();
  llvm::sort(*axes);
  axes->erase(std::unique(axes->begin(), axes->end()), axes->end());
  // (x - mean) / (sqrt(var) + 1e-9), as ONNX defines it.
  Value mean = meanOver(ctx, x, *axes);
  Value centered = ctx.binary<SubOp>(x, mean);
  Value std = ctx.create<SqrtOp>(
      ctx.create<ReduceOp>(centered, Reducer::MeanOfSquares, *axes));
  outputs.push_back(ctx.binary<DivOp>(
      centered, ctx.binary<AddOp>(std, ctx.scalarLike(std, 1e-9))));
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult gemmHandler(NodeContext &ctx, Outputs &outputs) {
  Value a = ctx.input(0), b = ctx.input(1), c = ctx.input(2);
  if (!a || !b)
    return ctx.error("missing A or B");
  if (NodeContext::rank(a) != 2 || NodeContext::rank(b) != 2)
    return ctx.error("A and B must be matrices, got ranks " +
                     Twine(NodeContext::rank(a)) + " and " +
                     Twine(NodeContext::rank(b)));
  std::string expr = ctx.getInt("transA", 0) ? "km," : "mk,";
  expr += ctx.getInt("transB", 0) ? "nk->mn" : "kn->mn";
  Value y = ctx.create<EinsumOp>(ValueRange{a, b}, expr);
  double alpha = ctx.getFloat("alpha", 1.0f), beta = ctx.getFloat("beta", 1.0f);
  if (alpha != 1.0)
    y = ctx.binary<MulOp>(y, ctx.scalarLike(y, alpha));
  if (c && beta != 0.0) {
    if (beta != 1.0)
      c = ctx.binary<MulOp>(c, ctx.scalarLike(c, beta));
    y = ctx.binary<AddOp>(y, c);
  }
  outputs.push_back(y);
  return success();
}

/// Numpy matmul: batch axes broadcast; a 1-D operand is a vector.
LogicalResult matMulHandler(NodeContext &ctx, Outputs &outputs) {
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return ctx.error("missing A or B");
  int64_t ra = NodeContext::rank(a), rb = NodeContext::rank(b);
  if (ra < 1 || rb < 1)
    return ctx.error("MatMul operands must have rank 1 or more");
  int64_t batchA = std::max<int64_t>(ra - 2, 0),
          batchB = std::max<int64_t>(rb - 2, 0);
  int64_t batch = std::max(batchA, batchB);
  if (batch > 20)
    return ctx.unsupported("more than 20 batch axes");
  std::string letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string batchLetters = letters.substr(0, batch);
  std::string specA =
      batchLetters.substr(batch - batchA) + (ra > 1 ? "mk" : "k");
  std::string specB =
      batchLetters.substr(batch - batchB) + (rb > 1 ? "kn" : "k");
  std::string out = batchLetters + (ra > 1 ? "m" : "") + (rb > 1 ? "n" : "");
  outputs.push_back(
      ctx.create<EinsumOp>(ValueRange{a, b}, specA + "," + specB + "->" + out));
  return success();
}

/// com.microsoft's MatMulNBits: A (..., K) times the transpose of B, an
/// N x K matrix stored in blocks of `block_size` values of `bits` bits
/// along K (B: N x blocks x block bytes, two 4-bit values a byte, the low
/// nibble first), each value (q - zero point) * scale, a scale and a zero
/// point per block (zero points packed the same way, or absent: 2^(bits-1)).
/// 4-bit blocks of 32 whose zero points are all 8 are tract's Q4_0, the
/// scale rounded to f16: a block_quant_matmul whose kernel reads them
/// (`q8_inputs` at accuracy level 4). Other layouts are dequantized into f32 weights at import.
LogicalResult matMulNBitsHandler(NodeContext &ctx, Outputs &outputs) {
  Value a = ctx.input(0);
  if (!a || failed(requireFloat(ctx, a)))
    return failure();
  std::optional<int64_t> k = ctx.getOptInt("K"), n = ctx.getOptInt("N"),
                         blockSize = ctx.getOptInt("block_size");
  int64_t bits = ctx.getInt("bits", 4);
  if (!k || !n || !blockSize || *k < 1 || *n < 1 || *blockSize < 16 ||
      (*blockSize & (*blockSize - 1)))
    return ctx.error("K, N and block_size (a power of two from 16) are "
                     "required");
  if (bits != 4 && bits != 8)
    return ctx.unsupported("MatMulNBits of " + Twine(bits) + " bits");
  if (ctx.hasInput(4))
    return ctx.unsupported("g_idx (blocks in another order)");
  // B may be a resource mapped from the model's file: read in place.
  ElementsAttr b = ctx.getConstantValue(1), scales = ctx.getConstantValue(2);
  DenseElementsAttr zeros = ctx.hasInput(3) ? ctx.getConstant(3) : nullptr;
  if (!b || !scales || (ctx.hasInput(3) && !zeros))
    return ctx.unsupported("B, scales or zero points that are not constants");
  int64_t blocks = llvm::divideCeil(*k, *blockSize);
  int64_t blockBytes = *blockSize * bits / 8;
  if (!b.getElementType().isInteger(8) ||
      b.getNumElements() != *n * blocks * blockBytes ||
      !isa<FloatType>(scales.getElementType()) ||
      scales.getNumElements() != *n * blocks)
    return ctx.error("B must be " + Twine(*n) + " x " + Twine(blocks) +
                     " x " + Twine(blockBytes) + " bytes and scales " +
                     Twine(*n * blocks) + " floats");
  std::vector<char> splatCodes;
  ArrayRef<char> codes;
  if (auto dense = dyn_cast<DenseElementsAttr>(b); dense && dense.isSplat()) {
    splatCodes.assign(dense.getNumElements(), dense.getRawData()[0]);
    codes = splatCodes;
  } else if (std::optional<ArrayRef<char>> bytes = tract::constantBytes(b)) {
    codes = *bytes;
  } else {
    return ctx.unsupported("B whose bytes cannot be read");
  }
  // Scales: one per block, tens of millions in a 1B model, so read from
  // their bytes where they are f32 or f16.
  std::vector<float> scale(scales.getNumElements());
  std::optional<ArrayRef<char>> scaleBytes = tract::constantBytes(scales);
  if (scaleBytes && scales.getElementType().isF32()) {
    std::memcpy(scale.data(), scaleBytes->data(), scale.size() * sizeof(float));
  } else if (scaleBytes && scales.getElementType().isF16()) {
    ArrayRef<char> raw = *scaleBytes;
    for (size_t i = 0; i < scale.size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, raw.data() + 2 * i, 2);
      scale[i] = halfToFloat(bits);
    }
  } else if (DenseElementsAttr dense = tract::denseOf(scales)) {
    llvm::transform(dense.getValues<APFloat>(), scale.begin(),
                    [](const APFloat &value) { return value.convertToFloat(); });
  } else {
    return ctx.unsupported("scales whose values cannot be read");
  }
  // Zero points: packed like B (a row of blocks per output), or floats.
  int64_t zeroRow = llvm::divideCeil(blocks * bits, 8);
  SmallVector<float> zero(*n * blocks, float(1 << (bits - 1)));
  if (zeros && isa<FloatType>(zeros.getElementType()) &&
      zeros.getNumElements() == *n * blocks) {
    zero.clear();
    for (const APFloat &value : zeros.getValues<APFloat>())
      zero.push_back(value.convertToFloat());
  } else if (zeros && zeros.getElementType().isInteger(8) &&
             zeros.getNumElements() == *n * zeroRow) {
    SmallVector<uint8_t> packed;
    for (const APInt &value : zeros.getValues<APInt>())
      packed.push_back(static_cast<uint8_t>(value.getZExtValue()));
    for (int64_t row = 0; row < *n; ++row)
      for (int64_t block = 0; block < blocks; ++block) {
        uint8_t byte = packed[row * zeroRow + block * bits / 8];
        zero[row * blocks + block] =
            bits == 8 ? byte : (block % 2 ? byte >> 4 : byte & 0x0f);
      }
  } else if (zeros) {
    return ctx.error("zero points must be " + Twine(*n * zeroRow) +
                     " packed bytes or " + Twine(*n * blocks) + " floats");
  }
  auto code = [&](int64_t row, int64_t index) -> int {
    int64_t block = index / *blockSize, at = index % *blockSize;
    auto byte = static_cast<uint8_t>(
        codes[(row * blocks + block) * blockBytes + at * bits / 8]);
    return bits == 8 ? byte : (at % 2 ? byte >> 4 : byte & 0x0f);
  };

  Type elementType = NodeContext::elementType(a);
  Value product;
  bool q4_0 = bits == 4 && *blockSize == kQ4_0BlockValues &&
              *k % kQ4_0BlockValues == 0 && elementType.isF32() &&
              llvm::all_of(zero, [](float z) { return z == 8; });
  if (q4_0) {
    // B's 16 bytes of codes per block are Q4_0's; the scale goes first,
    // as an f16. Large weights go into memory of their own (makeWeights),
    // and B's and the scales' mapped pages can go.
    auto type = RankedTensorType::get({*n, blocks, kQ4_0BlockBytes},
                                      IntegerType::get(ctx.getContext(), 8));
    Value weights = ctx.constant(tract::makeWeights(
        type, "tract_q4_0_weights", [&](MutableArrayRef<char> out) {
          for (int64_t block = 0; block < *n * blocks; ++block) {
            char *to = out.data() + block * kQ4_0BlockBytes;
            uint16_t half = floatToHalf(scale[block]);
            to[0] = static_cast<char>(half & 0xff);
            to[1] = static_cast<char>(half >> 8);
            std::memcpy(to + 2, codes.data() + block * blockBytes,
                        blockBytes);
          }
        }));
    tract::dropMappedPages(b);
    tract::dropMappedPages(scales);
    product = ctx.create<BlockQuantMatmulOp>(a, weights);
    // Accuracy level 4 lets onnxruntime round A to 8 bits per block and
    // multiply bytes; the kernel may do the same.
    if (ctx.getInt("accuracy_level", 0) == 4)
      cast<BlockQuantMatmulOp>(product.getDefiningOp()).setQ8Inputs(true);
  } else {
    // K x N floats.
    std::vector<float> values(*k * *n);
    for (int64_t row = 0; row < *n; ++row)
      for (int64_t index = 0; index < *k; ++index) {
        int64_t block = row * blocks + index / *blockSize;
        values[index * *n + row] =
            (code(row, index) - zero[block]) * scale[block];
      }
    tract::dropMappedPages(b);
    tract::dropMappedPages(scales);
    auto type = RankedTensorType::get({*k, *n}, ctx.getBuilder().getF32Type());
    Value weights = ctx.castTo(
        ctx.constant(DenseElementsAttr::get(type, ArrayRef<float>(values))),
        elementType);
    std::string batch = NodeContext::rank(a) > 1
                            ? std::string(NodeContext::rank(a) - 1, 'm')
                            : "";
    for (size_t i = 0; i < batch.size(); ++i)
      batch[i] = static_cast<char>('a' + i);
    product = ctx.create<EinsumOp>(ValueRange{a, weights},
                                   batch + "k,kn->" + batch + "n");
  }
  if (ctx.hasInput(5))
    product = ctx.binary<AddOp>(product, ctx.input(5));
  outputs.push_back(product);
  return success();
}

/// ONNX's einsum equation with ellipses expanded into letters and the
/// output made explicit.
LogicalResult einsumHandler(NodeContext &ctx, Outputs &outputs) {
  std::optional<std::string> equation = ctx.getOptString("equation");
  if (!equation)
    return ctx.error("missing equation");
  std::string eq;
  for (char ch : *equation)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      eq.push_back(ch);
  StringRef lhs = eq, rhs;
  bool explicitOutput = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = StringRef(eq).take_front(arrow);
    rhs = StringRef(eq).drop_front(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    if (!ctx.input(i))
      return ctx.error("missing input " + Twine(i));
    inputs.push_back(ctx.input(i));
  }
  if (terms.size() != inputs.size())
    return ctx.error("equation '" + *equation + "' names " +
                     Twine(terms.size()) + " inputs, the node has " +
                     Twine(inputs.size()));
  // Letters the equation does not use name the ellipsis axes.
  std::string spare;
  for (char ch = 'A'; ch <= 'Z'; ++ch)
    if (eq.find(ch) == std::string::npos)
      spare.push_back(ch);
  for (char ch = 'a'; ch <= 'z'; ++ch)
    if (eq.find(ch) == std::string::npos)
      spare.push_back(ch);
  SmallVector<std::string> specs;
  int64_t ellipsisRank = 0;
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    size_t dots = term.find("...");
    int64_t named =
        static_cast<int64_t>(term.size()) - (dots == StringRef::npos ? 0 : 3);
    for (char ch : term)
      if (ch != '.' && !std::isalpha(static_cast<unsigned char>(ch)))
        return ctx.error("invalid character in equation '" + *equation + "'");
    int64_t covered = NodeContext::rank(input) - named;
    if (dots == StringRef::npos ? covered != 0 : covered < 0)
      return ctx.error("term '" + term + "' does not match an input of rank " +
                       Twine(NodeContext::rank(input)));
    ellipsisRank = std::max(ellipsisRank, covered);
  }
  if (ellipsisRank > static_cast<int64_t>(spare.size()))
    return ctx.unsupported("too many axes under the ellipsis");
  std::string ellipsis = spare.substr(0, ellipsisRank);
  auto expand = [&](StringRef term, int64_t covered) {
    size_t dots = term.find("...");
    if (dots == StringRef::npos)
      return term.str();
    return (term.take_front(dots) + ellipsis.substr(ellipsisRank - covered) +
            term.drop_front(dots + 3))
        .str();
  };
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    int64_t named =
        static_cast<int64_t>(term.size()) - (term.contains("...") ? 3 : 0);
    specs.push_back(expand(term, NodeContext::rank(input) - named));
  }
  std::string output;
  if (explicitOutput) {
    output = expand(rhs, ellipsisRank);
  } else {
    std::map<char, int> counts;
    for (StringRef term : terms)
      for (char ch : term)
        if (ch != '.')
          ++counts[ch];
    output = ellipsis;
    for (auto [letter, count] : counts)
      if (count == 1)
        output.push_back(letter);
  }
  std::string expr = llvm::join(specs, ",") + "->" + output;
  outputs.push_back(ctx.create<EinsumOp>(ValueRange(inputs), expr));
  return success();
}

/// Det of static n <= 3 matrices, by Leibniz' formula: the sum over the
/// permutations p of sign(p) * prod_i x[i, p(i)], from element slices.
LogicalResult detHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 2, "X")) || failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = NodeContext::rank(x);
  Shape shape = getShape(x);
  std::optional<int64_t> n = shape[rank - 1].getConstant();
  if (!n || shape[rank - 2] != shape[rank - 1])
    return ctx.error("the matrices are " + shape[rank - 2].toString() + "x" +
                     shape[rank - 1].toString() + ", not square");
  if (*n < 1 || *n > 3)
    return ctx.unsupported("the determinant of " + Twine(*n) + "x" + Twine(*n) +
                           " matrices (only up to 3x3 expand)");
  MLIRContext *context = ctx.getContext();
  // elements[i * n + j]: x[..., i:i+1, j:j+1]
  SmallVector<Value> elements;
  for (int64_t i = 0; i < *n; ++i) {
    Value row =
        ctx.create<SliceOp>(x, uint64_t(rank - 2), DimAttr::get(context, i),
                            DimAttr::get(context, i + 1));
    for (int64_t j = 0; j < *n; ++j)
      elements.push_back(ctx.create<SliceOp>(row, uint64_t(rank - 1),
                                             DimAttr::get(context, j),
                                             DimAttr::get(context, j + 1)));
  }
  auto element = [&](int64_t i, int64_t j) { return elements[i * *n + j]; };
  SmallVector<int64_t> permutation = range(0, *n);
  Value det;
  do {
    // The sign: the parity of the number of inversions.
    int64_t inversions = 0;
    for (int64_t i = 0; i < *n; ++i)
      for (int64_t j = i + 1; j < *n; ++j)
        inversions += permutation[i] > permutation[j];
    Value term = element(0, permutation[0]);
    for (int64_t i = 1; i < *n; ++i)
      term = ctx.create<MulOp>(term, element(i, permutation[i]));
    if (!det)
      det = inversions % 2 ? ctx.create<NegOp>(term) : term;
    else if (inversions % 2)
      det = ctx.create<SubOp>(det, term);
    else
      det = ctx.create<AddOp>(det, term);
  } while (std::next_permutation(permutation.begin(), permutation.end()));
  det = ctx.create<RmAxisOp>(det, uint64_t(rank - 1));
  outputs.push_back(ctx.create<RmAxisOp>(det, uint64_t(rank - 2)));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax family
//===----------------------------------------------------------------------===//

/// Before opset 13 the input is seen as a matrix flattened at `axis`, so
/// the normalization runs over all axes from `axis` on; from 13 over one.
FailureOr<SmallVector<int64_t>> softmaxAxes(NodeContext &ctx, Value x) {
  int64_t rank = NodeContext::rank(x);
  bool flattened = ctx.getOpset() < 13;
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", flattened ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  return flattened ? range(*axis, rank) : SmallVector<int64_t>{*axis};
}

template <typename OpTy> OpHandler softmaxHandler() {
  return [](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    if (failed(requireRank(ctx, x, 1, "input")) || failed(requireFloat(ctx, x)))
      return failure();
    FailureOr<SmallVector<int64_t>> axes = softmaxAxes(ctx, x);
    if (failed(axes))
      return failure();
    outputs.push_back(ctx.create<OpTy>(x, ArrayRef(*axes)));
    return success();
  };
}

/// One-hot of the first maximum along the axes.
LogicalResult hardmaxHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (failed(requireRank(ctx, x, 1, "input")))
    return failure();
  FailureOr<SmallVector<int64_t>> axes = softmaxAxes(ctx, x);
  if (failed(axes))
    return failure();
  Shape shape = getShape(x);
  int64_t axis = axes->front();
  Value flat = x;
  if (axes->size() > 1)
    flat = reshape(ctx, x, axis, axes->size(),
                   {volume(ArrayRef(shape).drop_front(axis))});
  if (!flat)
    return failure();
  TDim length = getShape(flat)[axis];
  std::optional<int64_t> n = length.getConstant();
  if (!n)
    return ctx.unsupported("hardmax along the symbolic axis " +
                           length.toString());
  Value index = ctx.create<RmAxisOp>(
      ctx.create<ReduceOp>(flat, Reducer::ArgMax, ArrayRef<int64_t>{axis}),
      static_cast<uint64_t>(axis));
  Type type = NodeContext::elementType(x);
  auto attr = [&](double value) -> TypedAttr {
    if (isa<FloatType>(type))
      return FloatAttr::get(type, value);
    return IntegerAttr::get(type, static_cast<int64_t>(value));
  };
  Value y = ctx.create<OneHotOp>(index, static_cast<uint64_t>(axis),
                                 static_cast<uint64_t>(*n), attr(0), attr(1));
  if (axes->size() > 1)
    y = reshape(ctx, y, axis, 1, ArrayRef(shape).drop_front(axis));
  outputs.push_back(y);
  return success();
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// A tensor of `x`'s shape filled with `value` of `elementType`.
Value filledLike(NodeContext &ctx, Value x, Type elementType, int64_t value) {
  Value one = ctx.intScalar(elementType, value, NodeContext::rank(x));
  return ctx.create<BroadcastOp>(one,
                                 ShapeAttr::get(ctx.getContext(), getShape(x)));
}

/// Dropout that may train (a training_mode that is true or only known when
/// the model runs): where training, an element is kept when a uniform draw
/// is at least the ratio, and scaled by 1 / (1 - ratio); the mask says
/// which were kept (all of them when not training).
LogicalResult trainingDropout(NodeContext &ctx, Value x, Outputs &outputs) {
  Type type = NodeContext::elementType(x);
  int64_t rank = NodeContext::rank(x);
  Type i1 = IntegerType::get(ctx.getContext(), 1);
  auto scalarInput = [&](unsigned i, Type to) {
    Value v = ctx.castTo(ctx.input(i), to);
    return v ? ctx.unsqueezeTo(reshape(ctx, v, 0, NodeContext::rank(v), {}),
                               rank)
             : v;
  };
  Value ratio =
      ctx.hasInput(1) ? scalarInput(1, type) : ctx.scalar(type, 0.5, rank);
  Value training = scalarInput(2, i1);
  Value draw = randomLike(ctx, x, type, RandomDistribution::Uniform, 0.0, 1.0);
  if (!draw || !ratio || !training)
    return failure();
  Value kept = ctx.create<OrOp>(ctx.binary<GeOp>(draw, ratio),
                                ctx.create<NotOp>(training));
  Value scale = ctx.create<SelectOp>(training,
                                     ctx.create<RecipOp>(ctx.binary<SubOp>(
                                         ctx.scalar(type, 1.0, rank), ratio)),
                                     ctx.scalar(type, 1.0, rank));
  outputs.push_back(ctx.create<SelectOp>(kept, ctx.binary<MulOp>(x, scale),
                                         ctx.scalar(type, 0.0, rank)));
  if (ctx.hasOutput(1))
    outputs.push_back(kept);
  return success();
}

LogicalResult dropoutHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  if (ctx.getOpset() >= 12 && ctx.hasInput(2)) {
    std::optional<SmallVector<int64_t>> training = ctx.getConstInts(2);
    std::optional<SmallVector<double>> ratio =
        ctx.hasInput(1) ? ctx.getConstFloats(1)
                        : std::optional<SmallVector<double>>({0.5});
    bool identity = training && training->size() == 1 &&
                    (!training->front() ||
                     (ratio && ratio->size() == 1 && ratio->front() == 0.0));
    if (!identity)
      return trainingDropout(ctx, x, outputs);
  }
  outputs.push_back(x);
  if (ctx.hasOutput(1)) {
    // Nothing is dropped: the mask is all true (all ones before opset 10).
    Type maskType = ctx.getOpset() >= 10 ? IntegerType::get(ctx.getContext(), 1)
                                         : NodeContext::elementType(x);
    outputs.push_back(filledLike(ctx, x, maskType, 1));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

struct ResizeMode {
  CoordTransform transform = CoordTransform::HalfPixel;
  Interpolator interpolator = Interpolator::Nearest;
  NearestMode nearest = NearestMode::Floor;
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  /// Starts then ends, one per axis (tf_crop_and_resize only), or the
  /// tensor holding them when they are only known when the model runs.
  SmallVector<double> roi;
  Value roiValues;
  double extrapolationValue = 0.0;
};

FailureOr<Interpolator> readInterpolator(NodeContext &ctx,
                                         bool allowCubic = true) {
  std::string mode = ctx.getString("mode", "nearest");
  // Upsample-9 spells linear "bilinear".
  std::optional<Interpolator> interpolator =
      symbolizeInterpolator(mode == "bilinear" ? "linear" : mode);
  if (!interpolator || (*interpolator == Interpolator::Cubic && !allowCubic))
    return ctx.unsupported("mode '" + mode + "'");
  return *interpolator;
}

/// Whether `scale` is exactly `size / dim`, so that tract.resize can derive
/// it from the shapes.
bool scaleIsImplied(const TDim &dim, const TDim &size, double scale) {
  std::optional<int64_t> x = dim.getConstant(), y = size.getConstant();
  if (x && y)
    return *x > 0 && static_cast<double>(*y) / static_cast<double>(*x) == scale;
  return scale == std::floor(scale) &&
         size == dim * TDim(static_cast<int64_t>(scale));
}

Value buildResize(NodeContext &ctx, Value x, ArrayRef<TDim> sizes,
                  ArrayRef<double> scales, const ResizeMode &mode,
                  Value scaleValues = {}) {
  // Scales are only spelled out when the output shape does not imply them.
  Shape input = getShape(x);
  bool implied =
      llvm::all_of(llvm::seq<size_t>(0, scales.size()), [&](size_t i) {
        return scaleIsImplied(input[i], sizes[i], scales[i]);
      });
  bool cubic = mode.interpolator == Interpolator::Cubic;
  bool crop = mode.transform == CoordTransform::TfCropAndResize;
  return ctx.create<ResizeOp>(
      x, scaleValues, mode.roiValues, ShapeAttr::get(ctx.getContext(), sizes),
      mode.transform, mode.interpolator, mode.nearest,
      implied ? ArrayRef<double>() : scales,
      APFloat(cubic ? mode.cubicCoeffA : -0.75), cubic && mode.excludeOutside,
      ArrayRef<double>(mode.roi),
      APFloat(crop ? mode.extrapolationValue : 0.0));
}

/// The values of `given` (a 1-D f64 tensor) from `offset`, one per axis of
/// `axes`, spread over the `rank` axes with `fallback` on the others: the
/// parts to concatenate, one per axis.
void spreadOverAxes(NodeContext &ctx, Value given, ArrayRef<int64_t> axes,
                    int64_t rank, int64_t offset, double fallback,
                    SmallVectorImpl<Value> &parts) {
  Type f64 = ctx.getBuilder().getF64Type();
  for (int64_t axis = 0; axis < rank; ++axis) {
    const int64_t *at = llvm::find(axes, axis);
    if (at == axes.end()) {
      parts.push_back(ctx.scalar(f64, fallback, 1));
      continue;
    }
    int64_t j = offset + (at - axes.begin());
    parts.push_back(ctx.create<SliceOp>(
        given, uint64_t(0), DimAttr::get(ctx.getContext(), TDim(j)),
        DimAttr::get(ctx.getContext(), TDim(j + 1))));
  }
}

/// Scales that only the model's values decide (a graph input): the output
/// dims of `axes` become fresh dims bound to `floor(in * scale)`, computed
/// on the values, and stored into `sizes`; returns the scale of every axis
/// (1 off `axes`) as a 1-D f64 tensor for tract.resize to read. Null, with
/// the reason recorded, when `scales` has no static length of one value per
/// axis of `axes`.
Value bindScaledSizes(NodeContext &ctx, Value x, Value scales,
                      ArrayRef<int64_t> axes, Shape &sizes) {
  Shape given = getShape(scales);
  if (given.size() != 1 ||
      given[0] != TDim(static_cast<int64_t>(axes.size()))) {
    (void)ctx.error("scales of shape [" + shapeToString(given) +
                    "], expected one value per axis (" + Twine(axes.size()) +
                    ")");
    return {};
  }
  OpBuilder &b = ctx.getBuilder();
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto type = RankedTensorType::get({static_cast<int64_t>(axes.size())}, i64);
  Value indices = ctx.constant(DenseElementsAttr::get(type, axes));
  Value dims =
      ctx.create<GatherOp>(ctx.create<ShapeOfOp>(x), indices, uint64_t(0));
  Value wide = ctx.castTo(scales, f64);
  Value scaled =
      ctx.create<FloorOp>(ctx.binary<MulOp>(ctx.castTo(dims, f64), wide));
  std::optional<SmallVector<TDim>> bound =
      ctx.bindValuesAsDims(ctx.castTo(scaled, i64), "size");
  if (!bound)
    return {};
  for (auto [j, axis] : llvm::enumerate(axes))
    sizes[axis] = (*bound)[j];
  // One scale per axis: the given ones on `axes`, 1 elsewhere.
  if (axes.size() == sizes.size())
    return wide;
  SmallVector<Value> parts;
  spreadOverAxes(ctx, wide, axes, sizes.size(), 0, 1.0, parts);
  return parts.size() == 1 ? parts.front()
                           : ctx.create<ConcatOp>(parts, uint64_t(0));
}

/// Reads the coordinate transformation, nearest rounding and cubic
/// attributes of Resize-11 and later.
LogicalResult readResizeAttributes(NodeContext &ctx, ResizeMode &mode) {
  std::string transform =
      ctx.getString("coordinate_transformation_mode", "half_pixel");
  std::optional<CoordTransform> coordTransform =
      symbolizeCoordTransform(transform);
  if (!coordTransform)
    return ctx.unsupported("coordinate_transformation_mode '" + transform +
                           "'");
  mode.transform = *coordTransform;
  std::string nearest = ctx.getString("nearest_mode", "round_prefer_floor");
  std::optional<NearestMode> nearestMode = symbolizeNearestMode(nearest);
  if (!nearestMode)
    return ctx.unsupported("nearest_mode '" + nearest + "'");
  mode.nearest = *nearestMode;
  mode.cubicCoeffA = ctx.getFloat("cubic_coeff_a", -0.75f);
  mode.excludeOutside = ctx.getInt("exclude_outside", 0) != 0;
  mode.extrapolationValue = ctx.getFloat("extrapolation_value", 0.0f);
  return success();
}

LogicalResult resizeHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  if (failed(requireFloat(ctx, x)))
    return failure();
  int64_t rank = NodeContext::rank(x);
  Shape input = getShape(x);
  ResizeMode mode;
  // Resize-10 has no cubic mode.
  FailureOr<Interpolator> interpolator =
      readInterpolator(ctx, ctx.getOpset() >= 11);
  if (failed(interpolator))
    return failure();
  mode.interpolator = *interpolator;
  unsigned scalesInput = 1, sizesInput = 0;
  if (ctx.getOpset() < 11) {
    // Resize-10 is Upsample: asymmetric coordinates, nearest rounds down.
    mode.transform = CoordTransform::Asymmetric;
    mode.nearest = NearestMode::Floor;
  } else {
    scalesInput = 2;
    sizesInput = 3;
    if (failed(readResizeAttributes(ctx, mode)))
      return failure();
  }
  // The axes scales and sizes apply to (opset 18), all by default.
  SmallVector<int64_t> axes = range(0, rank);
  if (std::optional<SmallVector<int64_t>> given = ctx.getInts("axes")) {
    FailureOr<SmallVector<int64_t>> normalized =
        ctx.normalizeAxes(*given, rank);
    if (failed(normalized))
      return failure();
    axes = *normalized;
    for (size_t i = 1; i < axes.size(); ++i)
      if (llvm::is_contained(ArrayRef(axes).take_front(i), axes[i]))
        return ctx.error("axis " + Twine(axes[i]) + " is repeated in axes");
  }
  // The region of interest, in units of each axis' length - 1: only
  // tf_crop_and_resize reads it.
  if (mode.transform == CoordTransform::TfCropAndResize) {
    if (!ctx.hasInput(1))
      return ctx.unsupported("tf_crop_and_resize without a roi");
    int64_t count = axes.size();
    if (std::optional<SmallVector<double>> roi = ctx.getConstFloats(1)) {
      if (roi->size() != 2 * axes.size())
        return ctx.error("roi has " + Twine(roi->size()) +
                         " values, expected " + Twine(2 * axes.size()));
      mode.roi.assign(rank, 0.0);
      mode.roi.append(rank, 1.0);
      for (auto [i, axis] : llvm::enumerate(axes)) {
        mode.roi[axis] = (*roi)[i];
        mode.roi[rank + axis] = (*roi)[count + i];
      }
    } else {
      // A roi known when the model runs: one start and end per axis (0 and
      // 1 off `axes`), read by tract.resize; the output needs sizes.
      Value given = ctx.input(1);
      if (getShape(given) != Shape{TDim(2 * count)})
        return ctx.error("roi must hold a start and an end per axis");
      if (!sizesInput || !ctx.hasInput(sizesInput))
        return ctx.unsupported("tf_crop_and_resize with scales and a roi "
                               "decided when the model runs");
      Value wide = ctx.castTo(given, ctx.getBuilder().getF64Type());
      SmallVector<Value> parts;
      if (count < rank) {
        spreadOverAxes(ctx, wide, axes, rank, 0, 0.0, parts);
        spreadOverAxes(ctx, wide, axes, rank, count, 1.0, parts);
      }
      mode.roiValues =
          parts.empty() ? wide : ctx.create<ConcatOp>(parts, uint64_t(0));
      if (!mode.roiValues)
        return failure();
    }
  }
  Shape sizes = input;
  // The scale of each axis that the coordinate transform uses.
  SmallVector<double> scales(rank, 1.0);
  bool scaled = false;
  std::optional<SmallVector<double>> givenScales;
  Value scaleValues;
  if (ctx.hasInput(scalesInput)) {
    givenScales = ctx.getConstFloats(scalesInput);
    Shape shape = getShape(ctx.input(scalesInput));
    if (!givenScales && shape.size() == 1 && shape[0] == TDim(0))
      givenScales.emplace();
  }
  if (ctx.hasInput(scalesInput) && !givenScales) {
    if (mode.transform == CoordTransform::TfCropAndResize)
      return ctx.unsupported("tf_crop_and_resize with scales decided when the "
                             "model runs");
    if (ctx.getOpset() >= 18 && ctx.getInt("antialias", 0) &&
        mode.interpolator != Interpolator::Nearest)
      return ctx.unsupported("antialias = 1 with linear or cubic mode and "
                             "scales decided when the model runs");
    scaleValues = bindScaledSizes(ctx, x, ctx.input(scalesInput), axes, sizes);
    if (!scaleValues)
      return failure();
    outputs.push_back(buildResize(ctx, x, sizes, {}, mode, scaleValues));
    return success();
  }
  if (givenScales && !givenScales->empty()) {
    if (givenScales->size() != axes.size())
      return ctx.error("scales has " + Twine(givenScales->size()) +
                       " values, expected " + Twine(axes.size()));
    for (auto [axis, scale] : llvm::zip(axes, *givenScales)) {
      if (!(scale > 0) || !std::isfinite(scale))
        return ctx.error("scale " + num(scale) + " on axis " + Twine(axis) +
                         " is not positive");
      // floor(in * (roi_end - roi_start) * scale); the roi is [0, 1]
      // but with tf_crop_and_resize.
      double factor = scale;
      if (!mode.roi.empty())
        factor = (mode.roi[rank + axis] - mode.roi[axis]) * scale;
      std::optional<TDim> size = floorScaled(input[axis], factor);
      if (!size)
        return ctx.unsupported("scale " + num(scale) + " of the dim " +
                               input[axis].toString());
      scales[axis] = scale;
      sizes[axis] = *size;
    }
    scaled = true;
  } else if (sizesInput && ctx.hasInput(sizesInput)) {
    std::optional<SmallVector<TDim>> given = ctx.getDims(sizesInput);
    if (!given)
      given = ctx.bindValuesAsDims(ctx.input(sizesInput), "size");
    if (!given)
      return ctx.unsupported("sizes of unknown length");
    if (given->size() != axes.size())
      return ctx.error("sizes has " + Twine(given->size()) +
                       " values, expected " + Twine(axes.size()));
    std::string policy =
        ctx.getOpset() >= 18
            ? ctx.getString("keep_aspect_ratio_policy", "stretch")
            : "stretch";
    if (policy == "stretch") {
      for (auto [axis, size] : llvm::zip(axes, *given))
        sizes[axis] = size;
    } else if (policy == "not_larger" || policy == "not_smaller") {
      // One scale for all the axes, the smallest (largest) of the asked
      // ones; sizes are round(scale * in), halves up.
      std::optional<double> common;
      for (auto [axis, size] : llvm::zip(axes, *given)) {
        std::optional<int64_t> in = input[axis].getConstant();
        std::optional<int64_t> out = size.getConstant();
        if (!in || !out || *in <= 0)
          return ctx.unsupported("keep_aspect_ratio_policy '" + policy +
                                 "' with the symbolic or empty dim " +
                                 input[axis].toString() + " -> " +
                                 size.toString());
        double scale = static_cast<double>(*out) / static_cast<double>(*in);
        if (!common ||
            (policy == "not_larger" ? scale < *common : scale > *common))
          common = scale;
      }
      if (common) {
        for (int64_t axis : axes) {
          double in = static_cast<double>(*input[axis].getConstant());
          sizes[axis] =
              TDim(static_cast<int64_t>(std::floor(*common * in + 0.5)));
          scales[axis] = *common;
        }
        scaled = true;
      }
    } else {
      return ctx.unsupported("keep_aspect_ratio_policy '" + policy + "'");
    }
  } else {
    return ctx.error("neither scales nor sizes is given");
  }
  // An antialiasing filter only changes linear and cubic downsampling.
  if (ctx.getOpset() >= 18 && ctx.getInt("antialias", 0) &&
      mode.interpolator != Interpolator::Nearest) {
    for (int64_t axis : axes) {
      // Unknown when a size is symbolic, unless it is the input's.
      std::optional<int64_t> in = input[axis].getConstant();
      std::optional<int64_t> out = sizes[axis].getConstant();
      bool downsampled =
          scaled ? scales[axis] < 1.0
                 : sizes[axis] != input[axis] && (!in || !out || *out < *in);
      if (downsampled)
        return ctx.unsupported("antialias = 1 when downsampling axis " +
                               Twine(axis) + " with linear or cubic mode");
    }
  }
  outputs.push_back(buildResize(
      ctx, x, sizes, scaled ? ArrayRef<double>(scales) : ArrayRef<double>(),
      mode));
  return success();
}

LogicalResult upsampleHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  if (failed(requireFloat(ctx, x)))
    return failure();
  ResizeMode mode;
  mode.transform = CoordTransform::Asymmetric;
  mode.nearest = NearestMode::Floor;
  FailureOr<Interpolator> interpolator = readInterpolator(ctx, false);
  if (failed(interpolator))
    return failure();
  mode.interpolator = *interpolator;
  std::optional<SmallVector<double>> scales;
  if (ctx.getOpset() < 9) {
    if (std::optional<SmallVector<float>> given = ctx.getFloats("scales"))
      scales = SmallVector<double>(given->begin(), given->end());
    else
      return ctx.error("missing scales");
  } else {
    scales = ctx.getConstFloats(1);
    if (!scales) {
      if (!ctx.input(1))
        return ctx.error("missing scales");
      int64_t rank = NodeContext::rank(x);
      Shape sizes = getShape(x);
      Value scaleValues =
          bindScaledSizes(ctx, x, ctx.input(1), range(0, rank), sizes);
      if (!scaleValues)
        return failure();
      outputs.push_back(buildResize(ctx, x, sizes, {}, mode, scaleValues));
      return success();
    }
  }
  int64_t rank = NodeContext::rank(x);
  if (static_cast<int64_t>(scales->size()) != rank)
    return ctx.error("scales has " + Twine(scales->size()) +
                     " values, expected " + Twine(rank));
  Shape sizes = getShape(x);
  for (auto [axis, scale] : llvm::enumerate(*scales)) {
    if (!(scale > 0) || !std::isfinite(scale))
      return ctx.error("scale " + num(scale) + " on axis " + Twine(axis) +
                       " is not positive");
    std::optional<TDim> size = floorScaled(sizes[axis], scale);
    if (!size)
      return ctx.unsupported("scale " + num(scale) + " of the dim " +
                             sizes[axis].toString());
    sizes[axis] = *size;
  }
  outputs.push_back(buildResize(ctx, x, sizes, *scales, mode));
  return success();
}

/// GridSample-16 (modes bilinear/nearest/bicubic, 4-D in the standard; any
/// rank is taken) and -20 (modes linear/nearest/cubic).
LogicalResult gridSampleHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), grid = ctx.input(1);
  if (!x || !grid)
    return ctx.error("expected inputs X and grid");
  if (failed(requireFloat(ctx, x)) || failed(requireFloat(ctx, grid)))
    return failure();
  if (failed(requireRank(ctx, x, 3, "X")))
    return failure();
  std::string mode = ctx.getString("mode", "bilinear");
  // Before opset 20, linear and cubic were spelled bilinear and bicubic.
  StringRef name = mode;
  if (ctx.getOpset() < 20 && name != "nearest" &&
      (!name.consume_front("bi") || name == "nearest"))
    return ctx.unsupported("mode '" + mode + "'");
  std::optional<Interpolator> interpolator = symbolizeInterpolator(name);
  if (!interpolator)
    return ctx.unsupported("mode '" + mode + "'");
  std::string padding = ctx.getString("padding_mode", "zeros");
  std::optional<GridPadding> paddingMode = symbolizeGridPadding(padding);
  if (!paddingMode)
    return ctx.unsupported("padding_mode '" + padding + "'");
  // The grid is read in the input's type.
  grid = ctx.castTo(grid, NodeContext::elementType(x));
  outputs.push_back(
      ctx.create<GridSampleOp>(x, grid, *interpolator, *paddingMode,
                               ctx.getInt("align_corners", 0) != 0));
  return success();
}

/// RoiAlign-10 (regions shifted by half a pixel only in the output) and
/// -16 (`coordinate_transformation_mode`, half_pixel by default).
LogicalResult roiAlignHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0), rois = ctx.input(1), batch = ctx.input(2);
  if (!x || !rois || !batch)
    return ctx.error("expected inputs X, rois and batch_indices");
  if (failed(requireFloat(ctx, x)) || failed(requireFloat(ctx, rois)))
    return failure();
  std::string mode = ctx.getString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.unsupported("mode '" + mode + "'");
  std::string transform =
      ctx.getOpset() >= 16
          ? ctx.getString("coordinate_transformation_mode", "half_pixel")
          : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return ctx.unsupported("coordinate_transformation_mode '" + transform +
                           "'");
  int64_t height = ctx.getInt("output_height", 1);
  int64_t width = ctx.getInt("output_width", 1);
  int64_t sampling = ctx.getInt("sampling_ratio", 0);
  if (height < 1 || width < 1 || sampling < 0)
    return ctx.error("output sizes must be positive and sampling_ratio not "
                     "negative");
  Value output = ctx.create<RoiAlignOp>(
      x, ctx.castTo(rois, NodeContext::elementType(x)),
      ctx.castTo(batch, ctx.getBuilder().getI64Type()), mode == "max", height,
      width, sampling,
      APFloat(static_cast<double>(ctx.getFloat("spatial_scale", 1.0f))),
      transform == "half_pixel");
  if (!output)
    return ctx.error("invalid RoiAlign");
  outputs.push_back(output);
  return success();
}

/// NonMaxSuppression-10/11: the optional inputs take their defaults (no
/// box, threshold 0, no score threshold) as constants.
LogicalResult nonMaxSuppressionHandler(NodeContext &ctx, Outputs &outputs) {
  Value boxes = ctx.input(0), scores = ctx.input(1);
  if (!boxes || !scores)
    return ctx.error("expected inputs boxes and scores");
  if (failed(requireFloat(ctx, boxes)) || failed(requireFloat(ctx, scores)))
    return failure();
  Type type = NodeContext::elementType(boxes);
  scores = ctx.castTo(scores, type);
  OpBuilder &builder = ctx.getBuilder();
  Value maxOutput = ctx.hasInput(2)
                        ? ctx.castTo(ctx.input(2), builder.getI64Type())
                        : ctx.intScalar(builder.getI64Type(), 0);
  Value iou =
      ctx.hasInput(3) ? ctx.castTo(ctx.input(3), type) : ctx.scalar(type, 0.0);
  Value score =
      ctx.hasInput(4)
          ? ctx.castTo(ctx.input(4), type)
          : ctx.scalar(type, -std::numeric_limits<double>::infinity());
  int64_t centerPointBox = ctx.getInt("center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1)
    return ctx.error("center_point_box must be 0 or 1, not " +
                     Twine(centerPointBox));
  Value selected = ctx.create<NonMaxSuppressionOp>(
      boxes, scores, maxOutput, iou, score, centerPointBox == 1,
      DimAttr::get(ctx.getContext(), ctx.freshSymbol("selected")));
  if (!selected)
    return ctx.error("invalid NonMaxSuppression");
  outputs.push_back(selected);
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The negative log-likelihood of `logProb` (N, C, d…) at the classes of
/// `target` (N, d…), weighted, with `ignore_index` entries counting zero,
/// and reduced as the node's `reduction` says.
Value negativeLogLikelihood(NodeContext &ctx, Value logProb, Value target,
                            Value weight) {
  if (!logProb || !target)
    return {};
  std::optional<int64_t> ignoreIndex = ctx.getOptInt("ignore_index");
  // Ignored targets may be out of range: gather class 0 for them instead.
  Value ignored, classes = target;
  if (ignoreIndex) {
    ignored = ctx.binary<EqOp>(target, ctx.scalarLike(target, *ignoreIndex));
    classes = ctx.create<SelectOp>(ignored, ctx.scalarLike(target, 0), target);
  }
  Value picked = ctx.create<GatherElementsOp>(
      logProb, ctx.create<AddAxisOp>(classes, static_cast<uint64_t>(1)),
      static_cast<uint64_t>(1));
  Value loss =
      ctx.create<NegOp>(ctx.create<RmAxisOp>(picked, static_cast<uint64_t>(1)));
  // Per-element weights: weight[target], zero where ignored.
  Value weights;
  if (weight)
    weights = ctx.create<GatherOp>(weight, classes, static_cast<uint64_t>(0));
  if (ignored)
    weights = ctx.create<SelectOp>(ignored, ctx.scalarLike(loss, 0),
                                   weights ? weights : ctx.scalarLike(loss, 1));
  if (weights)
    loss = ctx.binary<MulOp>(loss, weights);
  if (!loss)
    return {};
  std::string reduction = ctx.getString("reduction", "mean");
  if (reduction == "none")
    return loss;
  if (reduction != "sum" && reduction != "mean") {
    (void)ctx.unsupported("reduction '" + reduction + "'");
    return {};
  }
  // Removes the unit axes of a reduced tensor.
  auto toScalar = [&](Value x) -> Value {
    for (int64_t axis = NodeContext::rank(x) - 1; axis >= 0; --axis)
      x = ctx.create<RmAxisOp>(x, static_cast<uint64_t>(axis));
    return x;
  };
  SmallVector<int64_t> all = range(0, NodeContext::rank(loss));
  Value total = toScalar(ctx.create<ReduceOp>(loss, Reducer::Sum, all));
  if (reduction == "sum")
    return total;
  Value count;
  if (weights) {
    // Broadcast the weights to the loss's shape before summing them.
    Value full = ctx.create<BroadcastOp>(
        weights, ShapeAttr::get(ctx.getContext(), getShape(loss)));
    count = ctx.create<ReduceOp>(full, Reducer::Sum, all);
  } else if (std::optional<int64_t> size =
                 volume(getShape(loss)).getConstant()) {
    return ctx.binary<DivOp>(total,
                             ctx.scalar(NodeContext::elementType(loss), *size));
  } else {
    count = ctx.axesVolume(loss, all);
  }
  return ctx.binary<DivOp>(total, toScalar(count));
}

LogicalResult nllLossHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  if (failed(requireRank(ctx, input, 2, "input")) ||
      failed(requireFloat(ctx, input)) ||
      failed(requireRank(ctx, ctx.input(1), 1, "target")))
    return failure();
  outputs.push_back(
      negativeLogLikelihood(ctx, input, ctx.input(1), ctx.input(2)));
  return success();
}

LogicalResult softmaxCrossEntropyHandler(NodeContext &ctx, Outputs &outputs) {
  Value scores = ctx.input(0);
  if (failed(requireRank(ctx, scores, 2, "scores")) ||
      failed(requireFloat(ctx, scores)) ||
      failed(requireRank(ctx, ctx.input(1), 1, "labels")))
    return failure();
  Value logProb = ctx.create<LogSoftmaxOp>(scores, ArrayRef<int64_t>{1});
  outputs.push_back(
      negativeLogLikelihood(ctx, logProb, ctx.input(1), ctx.input(2)));
  outputs.push_back(ctx.hasOutput(1) ? logProb : Value());
  return success();
}

} // namespace

void mlir::tract::onnx::registerNNOps(OpRegistry &registry) {
  // Convolutions and pools.
  registry.add("Conv", {1, 11}, convHandler);
  registry.add("ConvTranspose", {1, 11}, convTransposeHandler);
  registry.add("MaxPool", {1, 8, 10, 11, 12}, maxPoolHandler);
  registry.add("AveragePool", {1, 7, 10, 11, 19}, averagePoolHandler);
  registry.add("LpPool", {1, 2, 11, 18}, lpPoolHandler);
  registry.add("GlobalAveragePool", 1, globalPoolHandler("average"));
  registry.add("GlobalMaxPool", 1, globalPoolHandler("max"));
  registry.add("GlobalLpPool", {1, 2}, globalPoolHandler("lp"));
  registry.add("MaxUnpool", {9, 11}, maxUnpoolHandler);

  // Normalizations.
  registry.add("BatchNormalization", {1, 6, 7, 9, 14, 15}, batchNormHandler);
  registry.add("InstanceNormalization", {1, 6}, instanceNormHandler);
  registry.add("LayerNormalization", 17, layerNormHandler(/*rms=*/false));
  registry.add("GroupNormalization", {18, 21}, groupNormHandler);
  registry.add("LRN", {1, 13}, lrnHandler);
  registry.add("MeanVarianceNormalization", {9, 13}, mvnHandler);
  // onnxruntime's, in the ONNX domain.
  registry.add("SimplifiedLayerNormalization", 1,
               layerNormHandler(/*rms=*/true));

  // Matrix products.
  registry.add("Gemm", {1, 6, 7, 9, 11, 13}, gemmHandler);
  registry.add("MatMul", {1, 9, 13}, matMulHandler);
  registry.add("Einsum", 12, einsumHandler);
  registry.add("Det", 11, detHandler);

  // Softmax family.
  registry.add("Softmax", {1, 11, 13}, softmaxHandler<SoftmaxOp>());
  registry.add("LogSoftmax", {1, 11, 13}, softmaxHandler<LogSoftmaxOp>());
  registry.add("Hardmax", {1, 11, 13}, hardmaxHandler);

  // Inference-time identities and resampling.
  registry.add("Dropout", {1, 6, 7, 10, 12, 13}, dropoutHandler);
  registry.add("Resize", {10, 11, 13, 18, 19}, resizeHandler);
  registry.add("Upsample", {7, 9}, upsampleHandler);
  registry.add("GridSample", {16, 20, 22}, gridSampleHandler);
  registry.add("NonMaxSuppression", {10, 11}, nonMaxSuppressionHandler);
  registry.add("RoiAlign", {10, 16}, roiAlignHandler);

  // Losses, at inference.
  registry.add("NegativeLogLikelihoodLoss", {12, 13, 22}, nllLossHandler);
  registry.add("SoftmaxCrossEntropyLoss", {12, 13}, softmaxCrossEntropyHandler);
}

void mlir::tract::onnx::registerMicrosoftOps(OpRegistry &registry) {
  registry.add("com.microsoft.SimplifiedLayerNormalization", 1,
               layerNormHandler(/*rms=*/true));
  registry.add("com.microsoft.EmbedLayerNormalization", 1,
               embedLayerNormHandler);
  registry.add("com.microsoft.SkipLayerNormalization", 1,
               skipLayerNormHandler(/*simplified=*/false));
  registry.add("com.microsoft.SkipSimplifiedLayerNormalization", 1,
               skipLayerNormHandler(/*simplified=*/true));
  registry.add("com.microsoft.MatMulNBits", 1, matMulNBitsHandler);
}
