//===- SignalOps.cpp - ONNX signal-processing operators -------------------===//
//
// The window generators (Hann, Hamming, Blackman): a range over the window
// length, then cosine terms. The length is a runtime scalar, so the window's
// size is a symbol unless the length is known at import.
//
// MelWeightMatrix of constant parameters is computed at import.
//
// TfIdfVectorizer counts the pool's n-grams in windows of each row.
//
// DFT and STFT of static lengths are linear maps: a contraction with
// constant cosine and sine matrices built at import (an einsum for DFT; a
// strided convolution whose kernels are the windowed matrices for STFT,
// which frames the signal at the same time). Complex tensors are real
// ones with a trailing axis of 2 (real, imaginary), as ONNX has them.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// The float type `output_datatype` names (f32 by default).
FailureOr<Type> floatOutputType(NodeContext &ctx) {
  std::string dtypeName;
  Type type = convertDataType(ctx.getContext(),
                              ctx.getInt("output_datatype", 1), dtypeName);
  if (!type || !isa<FloatType>(type))
    return ctx.unsupported("output_datatype " +
                           (type ? NodeContext::typeName(type) : dtypeName));
  return type;
}

/// a0 - a1 cos(2πn/N) + a2 cos(4πn/N), n in [0, size), N = size when
/// periodic, size - 1 otherwise.
OpHandler cosineWindow(double a0, double a1, double a2) {
  return [=](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value size = ctx.input(0);
    if (!size)
      return failure();
    if (NodeContext::rank(size) != 0)
      return ctx.error("the window size must be a scalar");
    FailureOr<Type> outputType = floatOutputType(ctx);
    if (failed(outputType))
      return failure();
    Type type = *outputType;
    TDim length = ctx.freshSymbol("window");
    if (std::optional<SmallVector<TDim>> dims = ctx.getDims(0);
        dims && dims->size() == 1)
      length = dims->front();
    Type indexType = NodeContext::elementType(size);
    Value n = ctx.create<RangeOp>(ctx.intScalar(indexType, 0), size,
                                  ctx.intScalar(indexType, 1),
                                  DimAttr::get(ctx.getContext(), length));
    n = ctx.castTo(n, type);
    Value period = ctx.castTo(size, type);
    if (!ctx.getInt("periodic", 1))
      period = ctx.binary<SubOp>(period, ctx.scalar(type, 1.0));
    // phase = 2πn / N
    Value phase =
        ctx.binary<DivOp>(ctx.binary<MulOp>(n, ctx.scalar(type, 2 * M_PI, 1)),
                          ctx.create<AddAxisOp>(period, int64_t(0)));
    Value window = ctx.binary<SubOp>(
        ctx.scalar(type, a0, 1),
        ctx.binary<MulOp>(ctx.scalar(type, a1, 1), ctx.create<CosOp>(phase)));
    if (a2 != 0)
      window = ctx.binary<AddOp>(
          window, ctx.binary<MulOp>(ctx.scalar(type, a2, 1),
                                    ctx.create<CosOp>(ctx.binary<MulOp>(
                                        phase, ctx.scalar(type, 2.0, 1)))));
    outputs.push_back(window);
    return success();
  };
}

/// A constant of float type `elementType` and shape `shape` from doubles.
Value floatConstant(NodeContext &ctx, Type elementType, ArrayRef<int64_t> shape,
                    ArrayRef<double> values) {
  auto floatType = cast<FloatType>(elementType);
  SmallVector<APFloat> converted;
  converted.reserve(values.size());
  for (double value : values) {
    APFloat v(value);
    bool losesInfo;
    (void)v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
    converted.push_back(v);
  }
  return ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get(shape, elementType), converted));
}

/// The largest constant table built at import (a DFT matrix, a TfIdf
/// routing), in elements.
constexpr int64_t kMaxTableElements = int64_t(1) << 24;

/// Whether a table of the product of `factors` (non-negative) elements
/// exceeds kMaxTableElements, the product computed without overflow.
bool exceedsTableBudget(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t factor : factors)
    if (llvm::MulOverflow(product, factor, product) ||
        product > kMaxTableElements)
      return true;
  return false;
}

/// The DFT as a linear map of length `length` (the signal is truncated or
/// zero-padded to it) over `samples` input samples of `components` (1: real,
/// 2: real and imaginary) to `frequencies` outputs of 2 components:
/// `coefficient(k, n, c, o)` is the weight of component c of sample n in
/// component o of frequency k, times `window[n]` when a window is given.
/// The forward transform is sum_n x[n] e^(-2πi kn/L), the inverse
/// sum_n x[n] e^(2πi kn/L) / L.
struct DftMatrix {
  int64_t frequencies, samples, components, length;
  bool inverse;
  ArrayRef<double> window;

  double coefficient(int64_t k, int64_t n, int64_t c, int64_t o) const {
    if (n >= length)
      return 0.0;
    // θ = 2π r / L with r = kn mod L; quarter turns are exact.
    int64_t r = (k * n) % length;
    double cosine, sine;
    if ((4 * r) % length == 0) {
      static const double quarterCos[] = {1, 0, -1, 0};
      static const double quarterSin[] = {0, 1, 0, -1};
      cosine = quarterCos[4 * r / length];
      sine = quarterSin[4 * r / length];
    } else {
      double theta =
          2 * M_PI * static_cast<double>(r) / static_cast<double>(length);
      cosine = std::cos(theta);
      sine = std::sin(theta);
    }
    // σ sin θ, with σ = -1 forward and 1 inverse:
    // (xr + i xi)(cos + i σ sin) = xr cos - xi σ sin + i (xr σ sin + xi cos)
    if (!inverse)
      sine = -sine;
    double value = c == o ? cosine : (c == 0 ? sine : -sine);
    if (inverse)
      value /= static_cast<double>(length);
    if (!window.empty())
      value *= window[n];
    return value + 0.0; // no negative zeros
  }
};

/// The number of output frequencies: all, or the non-redundant half of a
/// real signal's spectrum.
int64_t frequencyCount(int64_t length, bool onesided) {
  return onesided ? length / 2 + 1 : length;
}

/// The scalar value of constant input `i`, if it is one.
std::optional<int64_t> constScalar(NodeContext &ctx, unsigned i) {
  std::optional<SmallVector<int64_t>> values = ctx.getConstInts(i);
  if (!values || values->size() != 1)
    return std::nullopt;
  return values->front();
}

/// Checks the trailing complex axis of a signal; returns its size (1 or 2).
FailureOr<int64_t> complexComponents(NodeContext &ctx, Value x,
                                     int64_t minRank) {
  if (NodeContext::rank(x) < minRank)
    return ctx.error("the input has rank " + Twine(NodeContext::rank(x)) +
                     ", expected at least " + Twine(minRank));
  if (!isa<FloatType>(NodeContext::elementType(x)))
    return ctx.unsupported(ctx.getOpType() + " of " +
                           NodeContext::typeName(NodeContext::elementType(x)) +
                           " tensors");
  std::optional<int64_t> components = getShape(x).back().getConstant();
  if (!components || (*components != 1 && *components != 2))
    return ctx.error("the last axis must be 1 (real) or 2 (complex), got " +
                     getShape(x).back().toString());
  return *components;
}

LogicalResult dftHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  FailureOr<int64_t> components = complexComponents(ctx, x, 2);
  if (failed(components))
    return failure();
  int64_t rank = NodeContext::rank(x);
  // The axis: an attribute (default 1) until opset 20, then a scalar input
  // (default -2); negative values count from the back. The last axis holds
  // the components and cannot be transformed.
  int64_t axis = 1;
  if (ctx.getOpset() >= 20) {
    axis = -2;
    if (ctx.hasInput(2)) {
      std::optional<int64_t> given = constScalar(ctx, 2);
      if (!given)
        return ctx.unsupported("a non-constant axis");
      axis = *given;
    }
  } else {
    axis = ctx.getInt("axis", 1);
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return ctx.error("axis " + Twine(axis < 0 ? axis - rank : axis) +
                     " is out of range for a signal of rank " +
                     Twine(rank - 1));
  std::optional<int64_t> samples = getShape(x)[axis].getConstant();
  if (!samples)
    return ctx.unsupported("DFT over the symbolic dim " +
                           getShape(x)[axis].toString());
  int64_t length = *samples;
  if (ctx.hasInput(1)) {
    std::optional<int64_t> given = constScalar(ctx, 1);
    if (!given)
      return ctx.unsupported("a non-constant dft_length");
    if (*given < 1)
      return ctx.error("dft_length must be positive, got " + Twine(*given));
    length = *given;
  }
  if (length < 1)
    return ctx.unsupported("DFT of an empty signal");
  bool inverse = ctx.getInt("inverse", 0) != 0;
  bool onesided = ctx.getInt("onesided", 0) != 0;
  if (onesided && *components == 2)
    return ctx.unsupported("onesided = 1 with a complex input");
  if (onesided && inverse)
    return ctx.unsupported("onesided = 1 with inverse = 1");
  DftMatrix dft{frequencyCount(length, onesided),
                *samples,
                *components,
                length,
                inverse,
                {}};
  if (exceedsTableBudget({dft.frequencies, dft.samples, dft.components, 2}))
    return ctx.unsupported("a DFT matrix of " + Twine(dft.frequencies) + "x" +
                           Twine(dft.samples) + " (too large to build)");
  // matrix[k, n, c, o]
  SmallVector<double> values;
  for (int64_t k = 0; k < dft.frequencies; ++k)
    for (int64_t n = 0; n < dft.samples; ++n)
      for (int64_t c = 0; c < dft.components; ++c)
        for (int64_t o = 0; o < 2; ++o)
          values.push_back(dft.coefficient(k, n, c, o));
  Value matrix =
      floatConstant(ctx, NodeContext::elementType(x),
                    {dft.frequencies, dft.samples, dft.components, 2}, values);
  // x: "ab…n…c", matrix: "knco" -> "ab…k…o" (k and o are spare letters).
  std::string letters = "abdefghijlmpqrstuvwxyz";
  if (rank > static_cast<int64_t>(letters.size()))
    return ctx.unsupported("DFT of rank " + Twine(rank));
  std::string input = letters.substr(0, rank);
  input[axis] = 'n';
  input[rank - 1] = 'c';
  std::string output = input;
  output[axis] = 'k';
  output[rank - 1] = 'o';
  outputs.push_back(
      ctx.create<EinsumOp>(ValueRange{x, matrix}, input + ",knco->" + output));
  return success();
}

LogicalResult stftHandler(NodeContext &ctx, Outputs &outputs) {
  Value signal = ctx.input(0), window = ctx.input(2);
  if (!signal)
    return ctx.error("missing signal");
  FailureOr<int64_t> components = complexComponents(ctx, signal, 3);
  if (failed(components))
    return failure();
  if (NodeContext::rank(signal) != 3)
    return ctx.error("the signal must be [batch, length, 1 or 2], got rank " +
                     Twine(NodeContext::rank(signal)));
  // A frame_step known when the model runs: frames at every sample, of
  // which every step-th is taken (a count bound on the values).
  std::optional<int64_t> step = constScalar(ctx, 1);
  Value stepValue;
  if (!step) {
    stepValue = ctx.input(1);
    if (!stepValue || volume(getShape(stepValue)) != TDim(1) ||
        !isa<IntegerType>(NodeContext::elementType(stepValue)))
      return ctx.error("frame_step must be one integer");
    step = 1;
  }
  if (*step < 1)
    return ctx.error("frame_step must be positive, got " + Twine(*step));
  // The frame length: the window's, or frame_length.
  std::optional<int64_t> length;
  if (window) {
    if (NodeContext::rank(window) != 1)
      return ctx.error("the window must be 1-D, got rank " +
                       Twine(NodeContext::rank(window)));
    length = getShape(window).front().getConstant();
    if (!length)
      return ctx.unsupported("a window of symbolic length " +
                             getShape(window).front().toString());
  }
  if (ctx.hasInput(3)) {
    std::optional<int64_t> given = constScalar(ctx, 3);
    if (!given)
      return ctx.unsupported("a non-constant frame_length");
    if (length && *length != *given)
      return ctx.error("frame_length " + Twine(*given) +
                       " differs from the window's length " + Twine(*length));
    length = *given;
  }
  if (!length)
    return ctx.error("neither a window nor frame_length is given");
  if (*length < 1)
    return ctx.error("frame_length must be positive, got " + Twine(*length));
  bool onesided = ctx.getInt("onesided", 1) != 0;
  if (onesided && *components == 2)
    return ctx.unsupported("onesided = 1 with a complex signal");
  Type type = NodeContext::elementType(signal);
  // A constant window is folded into the matrix; another one multiplies it.
  std::optional<SmallVector<double>> windowValues;
  if (window)
    windowValues = ctx.getConstFloats(2);
  DftMatrix dft{frequencyCount(*length, onesided),
                *length,
                *components,
                *length,
                false,
                windowValues ? ArrayRef<double>(*windowValues)
                             : ArrayRef<double>()};
  if (exceedsTableBudget({dft.frequencies, dft.samples, dft.components, 2}))
    return ctx.unsupported("a DFT matrix of " + Twine(dft.frequencies) + "x" +
                           Twine(dft.samples) + " (too large to build)");
  // The convolution kernel [2K, C, n]: output channel 2k + o.
  SmallVector<double> values;
  for (int64_t k = 0; k < dft.frequencies; ++k)
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t c = 0; c < dft.components; ++c)
        for (int64_t n = 0; n < dft.samples; ++n)
          values.push_back(dft.coefficient(k, n, c, o));
  Value kernel = floatConstant(
      ctx, type, {2 * dft.frequencies, dft.components, dft.samples}, values);
  if (window && !windowValues)
    kernel = ctx.binary<MulOp>(kernel, ctx.castTo(window, type));
  // [B, L, C] -> [B, C, L] -> conv -> [B, 2K, F] -> [B, K, 2, F]
  // -> [B, F, K, 2].
  Value x = ctx.create<MoveAxisOp>(signal, int64_t(2), int64_t(1));
  SmallVector<int64_t> strides;
  if (*step != 1)
    strides.push_back(*step);
  Value frames = ctx.create<ConvOp>(x, kernel, Value(), uint64_t(1), strides,
                                    ArrayRef<int64_t>(), Padding::Valid,
                                    ArrayRef<int64_t>(), ArrayRef<int64_t>());
  if (stepValue && frames) {
    // Frames 0, step, 2 * step, ...: (positions - 1) / step + 1 of them.
    Type i64 = ctx.getBuilder().getI64Type();
    auto scalar = [&](int64_t v) {
      return ctx.constant(
          DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
    };
    Value by = ctx.castTo(stepValue, i64);
    while (by && NodeContext::rank(by) > 0)
      by = ctx.create<RmAxisOp>(by, int64_t(0));
    std::optional<int64_t> positions = getShape(frames)[2].getConstant();
    if (!positions)
      return ctx.unsupported("a frame_step decided when the model runs over "
                             "a signal of symbolic length");
    Value available = ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({1}, i64), *positions));
    // A step below 1 is refused where the values are bound; until then
    // the division must not trap.
    Value count = ctx.binary<AddOp>(
        ctx.binary<DivOp>(ctx.binary<SubOp>(available, scalar(1)),
                          ctx.binary<MaxOp>(by, scalar(1))),
        scalar(1));
    Value countAndStep = ctx.create<ConcatOp>(
        ValueRange{count, ctx.create<AddAxisOp>(by, int64_t(0))}, int64_t(0));
    std::optional<SmallVector<TDim>> bound =
        countAndStep ? ctx.bindValuesAsDims(countAndStep, "frames")
                     : std::nullopt;
    if (!bound)
      return failure();
    ctx.getGraph().assumeAtMost(TDim(1), (*bound)[1]);
    Value taken = ctx.create<RangeOp>(
        scalar(0),
        ctx.binary<MulOp>(ctx.create<RmAxisOp>(count, int64_t(0)), by), by,
        DimAttr::get(ctx.getContext(), bound->front()));
    frames = ctx.create<GatherOp>(frames, taken, int64_t(2));
  }
  frames = ctx.create<ReshapeOp>(
      frames, int64_t(1), int64_t(1),
      ShapeAttr::get(ctx.getContext(),
                     {TDim(dft.frequencies), TDim(int64_t(2))}));
  outputs.push_back(ctx.create<MoveAxisOp>(frames, int64_t(3), int64_t(1)));
  return success();
}

/// TfIdfVectorizer over integer rows: per gram length n and skip s, the
/// windows x[i], x[i + s + 1], ... of each row compared with the pool's
/// n-grams and counted; a constant matrix sends each gram's count to its
/// output index. Unigrams count once (skips do not apply to them). TF
/// gives the counts, IDF the weight where a count is positive, TFIDF the
/// counts times the weights.
LogicalResult tfIdfVectorizerHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  Type elementType = NodeContext::elementType(x);
  if (!isa<IntegerType>(elementType) || elementType.isInteger(1))
    return ctx.unsupported("TfIdfVectorizer of " +
                           NodeContext::typeName(elementType) +
                           " (integers only; pool_strings is unsupported)");
  int64_t rank = NodeContext::rank(x);
  if (rank != 1 && rank != 2)
    return ctx.error("the input must be [C] or [N, C], got rank " +
                     Twine(rank));
  std::optional<int64_t> length = getShape(x).back().getConstant();
  if (!length)
    return ctx.unsupported("rows of symbolic length " +
                           getShape(x).back().toString());
  std::string mode = ctx.getString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.error("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  int64_t minLength = ctx.getInt("min_gram_length", 0);
  int64_t maxLength = ctx.getInt("max_gram_length", 0);
  int64_t maxSkip = ctx.getInt("max_skip_count", 0);
  std::optional<SmallVector<int64_t>> counts = ctx.getInts("ngram_counts");
  std::optional<SmallVector<int64_t>> indexes = ctx.getInts("ngram_indexes");
  std::optional<SmallVector<int64_t>> pool = ctx.getInts("pool_int64s");
  if (!pool)
    return ctx.unsupported(ctx.hasAttr("pool_strings")
                               ? "pool_strings"
                               : "a TfIdfVectorizer without pool_int64s");
  if (!counts || !indexes || minLength < 1 || maxLength < minLength ||
      maxSkip < 0 || static_cast<int64_t>(counts->size()) < maxLength)
    return ctx.error("invalid gram lengths, ngram_counts or ngram_indexes");
  std::optional<SmallVector<float>> weights = ctx.getFloats("weights");
  int64_t width = 0;
  for (int64_t index : *indexes) {
    if (index < 0)
      return ctx.error("negative ngram index");
    if (index >= kMaxTableElements)
      return ctx.unsupported("ngram index " + Twine(index) + " (at most " +
                             Twine(kMaxTableElements - 1) + ")");
    width = std::max(width, index + 1);
  }
  if (weights && weights->size() != indexes->size())
    return ctx.error("weights must match ngram_indexes");
  // Each gram length routes its grams through a dense [grams, width] table.
  if (exceedsTableBudget({width, static_cast<int64_t>(pool->size())}))
    return ctx.unsupported("a TfIdfVectorizer with " + Twine(width) +
                           " outputs and " + Twine(pool->size()) +
                           " pool values (at most " + Twine(kMaxTableElements) +
                           " entries in its tables)");

  OpBuilder &b = ctx.getBuilder();
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  Value rows =
      ctx.castTo(rank == 1 ? ctx.create<AddAxisOp>(x, int64_t(0)) : x, i64);
  Value total;
  // Grams of length n start at counts[n - 1] in the pool; their k-th is
  // the (start / n + k)-th gram of the whole pool's numbering.
  int64_t gramNumber = 0;
  for (int64_t n = 1; n <= static_cast<int64_t>(counts->size()); ++n) {
    int64_t begin = (*counts)[n - 1];
    int64_t end = n < static_cast<int64_t>(counts->size())
                      ? (*counts)[n]
                      : static_cast<int64_t>(pool->size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool->size()) ||
        (end - begin) % n)
      return ctx.error("ngram_counts do not split the pool into grams");
    int64_t grams = (end - begin) / n;
    int64_t first = gramNumber;
    gramNumber += grams;
    if (n < minLength || n > maxLength || grams == 0)
      continue;
    if (gramNumber > static_cast<int64_t>(indexes->size()))
      return ctx.error("fewer ngram_indexes than grams in the pool");
    // [grams, n] of the pool; [grams, outputs] sending each to its index.
    SmallVector<int64_t> gramValues(pool->begin() + begin, pool->begin() + end);
    auto gramType = RankedTensorType::get({1, 1, grams, n}, i64);
    Value gramTable = ctx.constant(
        DenseElementsAttr::get(gramType, ArrayRef<int64_t>(gramValues)));
    SmallVector<float> routes(grams * width, 0.0f);
    for (int64_t g = 0; g < grams; ++g)
      routes[g * width + (*indexes)[first + g]] = 1.0f;
    Value route = ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({grams, width}, f32), ArrayRef<float>(routes)));
    for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      int64_t span = (n - 1) * (skip + 1);
      int64_t positions = *length - span;
      if (positions <= 0)
        break;
      // [N, positions, 1, n]: the windows.
      SmallVector<Value> parts;
      for (int64_t k = 0; k < n; ++k) {
        Value part = ctx.create<SliceOp>(
            rows, uint64_t(1),
            DimAttr::get(ctx.getContext(), TDim(k * (skip + 1))),
            DimAttr::get(ctx.getContext(), TDim(k * (skip + 1) + positions)));
        part = ctx.create<AddAxisOp>(part, int64_t(2));
        parts.push_back(ctx.create<AddAxisOp>(part, int64_t(3)));
      }
      Value windows =
          n == 1 ? parts.front() : ctx.create<ConcatOp>(parts, int64_t(3));
      Value same = ctx.binary<EqOp>(windows, gramTable);
      Value matched =
          ctx.create<ReduceOp>(same, Reducer::All, ArrayRef<int64_t>{3});
      Value count = ctx.create<ReduceOp>(ctx.castTo(matched, f32), Reducer::Sum,
                                         ArrayRef<int64_t>{1, 3});
      // [N, 1, grams, 1] -> [N, grams] -> [N, outputs].
      count = ctx.create<ReshapeOp>(
          count, int64_t(1), int64_t(3),
          ShapeAttr::get(ctx.getContext(), {TDim(grams)}));
      Value routed =
          ctx.create<EinsumOp>(ValueRange{count, route}, "ng,go->no");
      total = total ? ctx.binary<AddOp>(total, routed) : routed;
    }
  }
  if (!total) {
    SmallVector<TDim> shape{getShape(rows)[0], TDim(width)};
    total = ctx.create<BroadcastOp>(ctx.scalar(f32, 0.0, 2),
                                    ShapeAttr::get(ctx.getContext(), shape));
  }
  if (mode != "TF") {
    SmallVector<float> perOutput(width, 1.0f);
    if (weights)
      for (auto [i, index] : llvm::enumerate(*indexes))
        perOutput[index] = (*weights)[i];
    Value weight = ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({1, width}, f32), ArrayRef<float>(perOutput)));
    if (mode == "IDF")
      total =
          ctx.create<SelectOp>(ctx.binary<GtOp>(total, ctx.scalar(f32, 0.0, 2)),
                               weight, ctx.scalar(f32, 0.0, 2));
    else
      total = ctx.binary<MulOp>(total, weight);
  }
  if (rank == 1)
    total = ctx.create<RmAxisOp>(total, int64_t(0));
  outputs.push_back(total);
  return success();
}

/// mel(f) = 2595 log10(1 + f / 700) and its inverse.
double hertzToMel(double hertz) {
  return 2595.0 * std::log10(1.0 + hertz / 700.0);
}
double melToHertz(double mel) {
  return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
}

/// The [dft_length / 2 + 1, num_mel_bins] matrix of triangular filters,
/// computed at import as the ONNX operator defines it: num_mel_bins + 2
/// edges equally spaced on the mel scale from the lower edge by
/// (high - low) / (num_mel_bins + 2), each mapped to the spectrogram bin
/// floor((dft_length + 1) * hertz / sample_rate); filter i rises from edge
/// i to edge i + 1 (1 there) and falls to edge i + 2.
LogicalResult melWeightMatrixHandler(NodeContext &ctx, Outputs &outputs) {
  std::optional<int64_t> melBins = constScalar(ctx, 0);
  std::optional<int64_t> dftLength = constScalar(ctx, 1);
  std::optional<int64_t> sampleRate = constScalar(ctx, 2);
  std::optional<SmallVector<double>> lower = ctx.getConstFloats(3);
  std::optional<SmallVector<double>> upper = ctx.getConstFloats(4);
  if (!melBins || !dftLength || !sampleRate || !lower || lower->size() != 1 ||
      !upper || upper->size() != 1)
    return ctx.unsupported("non-constant parameters (the matrix is computed "
                           "at import)");
  if (*melBins < 1 || *dftLength < 1 || *sampleRate < 1)
    return ctx.error("num_mel_bins, dft_length and sample_rate must be "
                     "positive");
  FailureOr<Type> type = floatOutputType(ctx);
  if (failed(type))
    return failure();
  int64_t spectrogramBins = *dftLength / 2 + 1;
  if (exceedsTableBudget({spectrogramBins, *melBins}))
    return ctx.unsupported("a mel weight matrix of " + Twine(spectrogramBins) +
                           "x" + Twine(*melBins) + " (too large to build)");
  double lowMel = hertzToMel(lower->front());
  double highMel = hertzToMel(upper->front());
  double melStep = (highMel - lowMel) / static_cast<double>(*melBins + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < *melBins + 2; ++i) {
    double hertz = melToHertz(static_cast<double>(i) * melStep + lowMel);
    edges.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(*dftLength + 1) * hertz /
                   static_cast<double>(*sampleRate))));
    if (edges.back() < 0 || edges.back() >= spectrogramBins)
      return ctx.error("the mel edge " + Twine(i) + " falls in bin " +
                       Twine(edges.back()) + ", outside the " +
                       Twine(spectrogramBins) +
                       " spectrogram bins (edges beyond the Nyquist rate?)");
  }
  SmallVector<double> values(spectrogramBins * *melBins, 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double & {
    return values[bin * *melBins + mel];
  };
  for (int64_t i = 0; i < *melBins; ++i) {
    int64_t low = edges[i], center = edges[i + 1], high = edges[i + 2];
    if (center == low) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = low; j <= center; ++j)
        at(j, i) =
            static_cast<double>(j - low) / static_cast<double>(center - low);
    }
    for (int64_t j = center; j < high; ++j)
      at(j, i) =
          static_cast<double>(high - j) / static_cast<double>(high - center);
  }
  outputs.push_back(
      floatConstant(ctx, *type, {spectrogramBins, *melBins}, values));
  return success();
}

} // namespace

void mlir::tract::onnx::registerSignalOps(OpRegistry &registry) {
  registry.add("HannWindow", 17, cosineWindow(0.5, 0.5, 0));
  registry.add("HammingWindow", 17, cosineWindow(25.0 / 46, 21.0 / 46, 0));
  registry.add("BlackmanWindow", 17, cosineWindow(0.42, 0.5, 0.08));
  registry.add("DFT", {17, 20}, dftHandler);
  registry.add("STFT", 17, stftHandler);
  registry.add("TfIdfVectorizer", 9, tfIdfVectorizerHandler);
  registry.add("MelWeightMatrix", 17, melWeightMatrixHandler);
}
