//===- ReduceOps.cpp - ONNX reduction operators ---------------------------===//
//
// The Reduce* family, ArgMax/ArgMin and CumSum. tract.reduce keeps reduced
// axes as size 1, so keepdims=0 removes them afterwards; the reductions
// tract has no reducer for (mean, L1, L2, log-sum, log-sum-exp, sum of
// squares) expand into element-wise math around a sum, max or prod.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/ops/ValueShapes.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// Removes the (size 1) `axes` of `x`, last first.
Value removeAxes(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  for (int64_t axis : llvm::reverse(axes))
    x = ctx.create<RmAxisOp>(x, static_cast<uint64_t>(axis));
  return x;
}

enum class Kind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

/// The opset from which `axes` is an input rather than an attribute.
int axesInputSince(Kind kind) { return kind == Kind::Sum ? 13 : 18; }

/// The normalized, sorted, deduplicated axes a reduction applies to, or
/// std::nullopt (with no error) when the node is the identity: empty axes
/// with noop_with_empty_axes.
FailureOr<std::optional<SmallVector<int64_t>>>
reductionAxes(NodeContext &ctx, Kind kind, int64_t rank) {
  std::optional<SmallVector<int64_t>> given;
  if (ctx.getOpset() < axesInputSince(kind)) {
    given = ctx.getInts("axes");
  } else if (ctx.hasInput(1)) {
    given = ctx.getConstInts(1);
    // An input of no elements needs no values.
    if (!given && getShape(ctx.input(1)) == Shape{TDim(0)})
      given.emplace();
    if (!given)
      return ctx.unsupported("axes must be a constant");
  }
  SmallVector<int64_t> axes;
  if (!given || given->empty()) {
    if (ctx.getOpset() >= axesInputSince(kind) &&
        ctx.getInt("noop_with_empty_axes", 0))
      return std::optional<SmallVector<int64_t>>();
    for (int64_t axis = 0; axis < rank; ++axis)
      axes.push_back(axis);
    return std::optional<SmallVector<int64_t>>(axes);
  }
  for (int64_t axis : *given) {
    FailureOr<int64_t> normalized = ctx.normalizeAxis(axis, rank);
    if (failed(normalized))
      return failure();
    axes.push_back(*normalized);
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return std::optional<SmallVector<int64_t>>(axes);
}

Value reduce(NodeContext &ctx, Value x, Reducer reducer,
             ArrayRef<int64_t> axes) {
  return ctx.create<ReduceOp>(x, reducer, axes);
}

/// The axes of a reduction when only their values, known when the model
/// runs, tell: a flag per axis, and the dims of the output with the reduced
/// axes kept (1) and, unless `keepDims`, removed, bound to fresh symbols.
struct ValueAxes {
  Value flags;
  SmallVector<TDim> keptDims;
  std::optional<SmallVector<TDim>> removedDims;
};

FailureOr<ValueAxes> bindValueAxes(NodeContext &ctx, Value x, Value axes,
                                   int64_t count, bool keepDims) {
  int64_t rank = NodeContext::rank(x);
  ValueAxes result;
  result.flags = axisFlags(ctx, axes, rank);
  Value dims = ctx.create<ShapeOfOp>(x);
  Type i64 = ctx.getBuilder().getI64Type();
  auto one = RankedTensorType::get({1}, i64);
  Value kept = ctx.create<SelectOp>(
      result.flags, ctx.constant(DenseElementsAttr::get(one, int64_t(1))),
      dims);
  std::optional<SmallVector<TDim>> bound =
      kept ? ctx.bindValuesAsDims(kept, "reduced") : std::nullopt;
  if (!bound)
    return failure();
  result.keptDims = *bound;
  if (!keepDims) {
    if (count > rank)
      return ctx.error(Twine(count) + " axes for rank " + Twine(rank));
    Value left = unflaggedDims(ctx, dims, result.flags, rank - count);
    result.removedDims =
        left ? ctx.bindValuesAsDims(left, "reduced") : std::nullopt;
    if (!result.removedDims)
      return failure();
  }
  return result;
}

/// `x` reduced over the flagged axes, keeping them: each axis is reduced or
/// not by a select on its flag (a reduced axis holds its result along its
/// whole length), then cut to its bound dim.
Value reduceFlagged(NodeContext &ctx, Value x, Reducer reducer,
                    const ValueAxes &axes) {
  int64_t rank = NodeContext::rank(x);
  SmallVector<TDim> ones(rank, TDim(1));
  Value y = x;
  for (int64_t axis = 0; axis < rank && y; ++axis) {
    Value flag = ctx.create<SliceOp>(
        axes.flags, uint64_t(0), DimAttr::get(ctx.getContext(), TDim(axis)),
        DimAttr::get(ctx.getContext(), TDim(axis + 1)));
    for (int64_t i = 1; i < rank && flag; ++i)
      flag = ctx.create<AddAxisOp>(flag, i);
    y = ctx.create<SelectOp>(flag, reduce(ctx, y, reducer, {axis}), y);
  }
  for (int64_t axis = 0; axis < rank && y; ++axis)
    y = ctx.create<SliceOp>(
        y, uint64_t(axis), DimAttr::get(ctx.getContext(), TDim(0)),
        DimAttr::get(ctx.getContext(), axes.keptDims[axis]));
  return y;
}

OpHandler reduceHandler(Kind kind) {
  return [kind](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    if (!x)
      return ctx.error("missing input");
    std::optional<ValueAxes> valueAxes;
    if (ctx.getOpset() >= axesInputSince(kind) && ctx.hasInput(1) &&
        !ctx.getConstInts(1)) {
      Shape shape = getShape(ctx.input(1));
      std::optional<int64_t> count =
          shape.size() == 1 ? shape[0].getConstant() : std::nullopt;
      if (!count)
        return ctx.unsupported("axes of unknown length");
      if (*count > 0) {
        if (kind == Kind::Mean || kind == Kind::LogSumExp)
          return ctx.unsupported(ctx.getOpType() +
                                 " over axes decided when the model runs");
        FailureOr<ValueAxes> bound = bindValueAxes(ctx, x, ctx.input(1), *count,
                                                   ctx.getInt("keepdims", 1));
        if (failed(bound))
          return failure();
        valueAxes = *bound;
      }
    }
    auto reduce = [&](NodeContext &ctx, Value v, Reducer reducer,
                      ArrayRef<int64_t> axes) {
      return valueAxes ? reduceFlagged(ctx, v, reducer, *valueAxes)
                       : ::reduce(ctx, v, reducer, axes);
    };
    FailureOr<std::optional<SmallVector<int64_t>>> found =
        valueAxes
            ? FailureOr<std::optional<SmallVector<int64_t>>>(
                  std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{}))
            : reductionAxes(ctx, kind, NodeContext::rank(x));
    if (failed(found))
      return failure();
    if (!*found) {
      outputs.push_back(x);
      return success();
    }
    SmallVector<int64_t> axes = **found;
    Type type = NodeContext::elementType(x);
    bool isBool = type.isInteger(1);
    if ((kind == Kind::L2 || kind == Kind::LogSum || kind == Kind::LogSumExp) &&
        !isa<FloatType>(type))
      return ctx.unsupported(ctx.getOpType() + " of non-float tensors");
    Value y;
    switch (kind) {
    case Kind::Sum:
      y = reduce(ctx, x, Reducer::Sum, axes);
      break;
    case Kind::Mean:
      y = ctx.binary<DivOp>(reduce(ctx, x, Reducer::Sum, axes),
                            ctx.axesVolume(x, axes));
      break;
    case Kind::Max:
      y = reduce(ctx, x, isBool ? Reducer::Any : Reducer::Max, axes);
      break;
    case Kind::Min:
      y = reduce(ctx, x, isBool ? Reducer::All : Reducer::Min, axes);
      break;
    case Kind::Prod:
      y = reduce(ctx, x, Reducer::Prod, axes);
      break;
    case Kind::L1:
      y = reduce(ctx, ctx.create<AbsOp>(x), Reducer::Sum, axes);
      break;
    case Kind::L2:
      y = ctx.create<SqrtOp>(
          reduce(ctx, ctx.create<SquareOp>(x), Reducer::Sum, axes));
      break;
    case Kind::LogSum:
      y = ctx.create<LnOp>(reduce(ctx, x, Reducer::Sum, axes));
      break;
    case Kind::LogSumExp: {
      // max + ln(sum(exp(x - max))) stays finite for large inputs.
      Value max = reduce(ctx, x, Reducer::Max, axes);
      Value sum = reduce(ctx, ctx.create<ExpOp>(ctx.binary<SubOp>(x, max)),
                         Reducer::Sum, axes);
      y = ctx.binary<AddOp>(ctx.create<LnOp>(sum), max);
      break;
    }
    case Kind::SumSquare:
      y = reduce(ctx, ctx.create<SquareOp>(x), Reducer::Sum, axes);
      break;
    }
    if (valueAxes && valueAxes->removedDims)
      y = reshapeToBoundDims(ctx, y, *valueAxes->removedDims);
    else if (!ctx.getInt("keepdims", 1))
      y = removeAxes(ctx, y, axes);
    outputs.push_back(y);
    return success();
  };
}

OpHandler argHandler(Reducer reducer) {
  return [reducer](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    if (!x)
      return ctx.error("missing input");
    FailureOr<int64_t> axis =
        ctx.normalizeAxis(ctx.getInt("axis", 0), NodeContext::rank(x));
    if (failed(axis))
      return failure();
    bool last = ctx.getInt("select_last_index", 0);
    Value y = ctx.create<ReduceOp>(x, reducer, ArrayRef<int64_t>{*axis}, last);
    if (!ctx.getInt("keepdims", 1))
      y = removeAxes(ctx, y, {*axis});
    outputs.push_back(y);
    return success();
  };
}

/// The [n, n] matrix m of `elementType` such that the cumulative sum is
/// `out[i] = sum_j m[i][j] * x[j]`.
DenseElementsAttr cumSumMatrix(Type elementType, int64_t n, bool exclusive,
                               bool reverse) {
  auto type = RankedTensorType::get({n, n}, elementType);
  auto contributes = [&](int64_t i, int64_t j) {
    if (reverse)
      return exclusive ? j > i : j >= i;
    return exclusive ? j < i : j <= i;
  };
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    SmallVector<APFloat> values;
    values.reserve(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        values.push_back(contributes(i, j) ? APFloat::getOne(semantics)
                                           : APFloat::getZero(semantics));
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      values.push_back(APInt(width, contributes(i, j) ? 1 : 0));
  return DenseElementsAttr::get(type, values);
}

/// The cumulative sum of `x` along `axis`, as a contraction with a
/// triangular 0/1 matrix; null with the reason recorded when the axis is
/// symbolic or too long for the matrix.
Value cumSumAlong(NodeContext &ctx, Value x, int64_t axis) {
  int64_t rank = NodeContext::rank(x);
  Type elementType = NodeContext::elementType(x);
  std::optional<int64_t> length = getShape(x)[axis].getConstant();
  if (!length) {
    (void)ctx.unsupported("cumulative sum along the symbolic axis of size " +
                          getShape(x)[axis].toString());
    return {};
  }
  constexpr int64_t kMaxLength = 4096;
  if (*length > kMaxLength) {
    (void)ctx.unsupported("cumulative sum along an axis of " +
                          llvm::Twine(*length) + " elements (at most " +
                          llvm::Twine(kMaxLength) + ")");
    return {};
  }
  Value matrix = ctx.constant(cumSumMatrix(elementType, *length,
                                           ctx.getInt("exclusive", 0),
                                           ctx.getInt("reverse", 0)));
  // x: "abc", matrix: "Zb", output: "aZc" for axis 1.
  std::string input, output;
  for (int64_t i = 0; i < rank; ++i)
    input.push_back(static_cast<char>('a' + i));
  output = input;
  output[axis] = 'Z';
  std::string expr = input + ",Z" + std::string(1, input[axis]) + "->" + output;
  return ctx.create<EinsumOp>(ValueRange{x, matrix}, expr);
}

LogicalResult cumSumHandler(NodeContext &ctx, Outputs &outputs) {
  Value x = ctx.input(0);
  if (!x)
    return ctx.error("missing input");
  int64_t rank = NodeContext::rank(x);
  Type elementType = NodeContext::elementType(x);
  if (!elementType.isIntOrFloat() || elementType.isInteger(1))
    return ctx.unsupported("cumulative sum of booleans");
  if (rank < 1)
    return ctx.error("CumSum needs an input of rank 1 or more, got a scalar");
  if (rank > 25)
    return ctx.unsupported("cumulative sum of rank " + llvm::Twine(rank));
  if (std::optional<SmallVector<int64_t>> axisValues = ctx.getConstInts(1)) {
    if (axisValues->size() != 1)
      return ctx.error("the axis must be a scalar");
    FailureOr<int64_t> axis = ctx.normalizeAxis(axisValues->front(), rank);
    if (failed(axis))
      return failure();
    outputs.push_back(cumSumAlong(ctx, x, *axis));
    return success();
  }
  // An axis known when the model runs: the sums along every axis, the one
  // it names selected.
  Value axis = ctx.input(1);
  if (!axis || getShape(axis).size() > 1 || volume(getShape(axis)) != TDim(1))
    return ctx.error("the axis must be a scalar");
  Value flags = axisFlags(ctx, ctx.unsqueezeTo(axis, 1), rank);
  Value y = cumSumAlong(ctx, x, rank - 1);
  for (int64_t i = rank - 2; i >= 0 && y; --i) {
    Value flag = ctx.create<SliceOp>(
        flags, uint64_t(0), DimAttr::get(ctx.getContext(), TDim(i)),
        DimAttr::get(ctx.getContext(), TDim(i + 1)));
    flag = ctx.unsqueezeTo(flag, rank);
    y = ctx.create<SelectOp>(flag, cumSumAlong(ctx, x, i), y);
  }
  outputs.push_back(y);
  return success();
}

} // namespace

void mlir::tract::onnx::registerReduceOps(OpRegistry &registry) {
  registry.add("ReduceSum", {1, 11, 13}, reduceHandler(Kind::Sum));
  registry.add("ReduceMean", {1, 11, 13, 18}, reduceHandler(Kind::Mean));
  registry.add("ReduceMax", {1, 11, 12, 13, 18, 20}, reduceHandler(Kind::Max));
  registry.add("ReduceMin", {1, 11, 12, 13, 18, 20}, reduceHandler(Kind::Min));
  registry.add("ReduceProd", {1, 11, 13, 18}, reduceHandler(Kind::Prod));
  registry.add("ReduceL1", {1, 11, 13, 18}, reduceHandler(Kind::L1));
  registry.add("ReduceL2", {1, 11, 13, 18}, reduceHandler(Kind::L2));
  registry.add("ReduceLogSum", {1, 11, 13, 18}, reduceHandler(Kind::LogSum));
  registry.add("ReduceLogSumExp", {1, 11, 13, 18},
               reduceHandler(Kind::LogSumExp));
  registry.add("ReduceSumSquare", {1, 11, 13, 18},
               reduceHandler(Kind::SumSquare));
  registry.add("ArgMax", {1, 11, 12, 13}, argHandler(Reducer::ArgMax));
  registry.add("ArgMin", {1, 11, 12, 13}, argHandler(Reducer::ArgMin));
  registry.add("CumSum", {11, 14}, cumSumHandler);
}
