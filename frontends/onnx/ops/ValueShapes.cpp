//===- ValueShapes.cpp - shapes that only run-time values decide ----------===//
//
// The shape computations are small integer tensor programs: comparisons of
// the axes against the positions 0..rank-1, counts of flags before each
// position (a product with a strictly lower triangular matrix), and picks by
// equality, so that every step is an element-wise op or a reduction.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/ValueShapes.h"

#include "frontends/onnx/GraphImporter.h"

#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

Value i64Tensor(NodeContext &ctx, ArrayRef<int64_t> values,
                ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, ctx.getBuilder().getI64Type());
  return ctx.constant(DenseElementsAttr::get(type, values));
}

/// 0, 1, ..., n-1 along axis `at` of a rank-2 i64 tensor.
Value positions(NodeContext &ctx, int64_t n, int64_t at) {
  SmallVector<int64_t> shape{1, 1};
  shape[at] = n;
  return i64Tensor(ctx, llvm::to_vector(llvm::seq<int64_t>(0, n)), shape);
}

/// The sum of a rank-2 tensor's rows, as a 1-D tensor.
Value sumRows(NodeContext &ctx, Value matrix) {
  Value sum = ctx.create<ReduceOp>(matrix, Reducer::Sum, ArrayRef<int64_t>{1});
  return sum ? ctx.create<RmAxisOp>(sum, int64_t(1)) : sum;
}

/// For each position i of `counts` (a 1-D i64 tensor of `n` elements), the
/// sum of the elements before it.
Value sumBefore(NodeContext &ctx, Value counts, int64_t n) {
  SmallVector<int64_t> lower;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      lower.push_back(j < i ? 1 : 0);
  Value row = ctx.create<AddAxisOp>(counts, int64_t(0));
  return sumRows(ctx, ctx.binary<MulOp>(i64Tensor(ctx, lower, {n, n}), row));
}

} // namespace

Value mlir::tract::onnx::axisFlags(NodeContext &ctx, Value axes, int64_t rank) {
  Type i64 = ctx.getBuilder().getI64Type();
  Value given = ctx.castTo(axes, i64);
  Value wrapped = ctx.create<SelectOp>(
      ctx.binary<LtOp>(given, i64Tensor(ctx, 0, {1})),
      ctx.binary<AddOp>(given, i64Tensor(ctx, rank, {1})), given);
  // [rank, k]: axis i is named by axes[j].
  Value named = ctx.binary<EqOp>(positions(ctx, rank, 0),
                                 ctx.create<AddAxisOp>(wrapped, int64_t(0)));
  Value any = ctx.create<ReduceOp>(named, Reducer::Any, ArrayRef<int64_t>{1});
  return any ? ctx.create<RmAxisOp>(any, int64_t(1)) : any;
}

Value mlir::tract::onnx::unflaggedDims(NodeContext &ctx, Value dims,
                                       Value flags, int64_t count) {
  Type i64 = ctx.getBuilder().getI64Type();
  if (count == 0)
    return i64Tensor(ctx, {}, {0});
  int64_t rank = NodeContext::rank(dims) == 1
                     ? getShape(dims)[0].getConstant().value_or(0)
                     : 0;
  Value kept = ctx.create<NotOp>(flags);
  // Output position q takes the kept dim with q kept dims before it.
  Value keptBefore = sumBefore(ctx, ctx.castTo(kept, i64), rank);
  Value picked = ctx.create<AndOp>(
      ctx.binary<EqOp>(ctx.create<AddAxisOp>(keptBefore, int64_t(0)),
                       positions(ctx, count, 0)),
      ctx.create<AddAxisOp>(kept, int64_t(0)));
  return sumRows(
      ctx, ctx.create<SelectOp>(picked, ctx.create<AddAxisOp>(dims, int64_t(0)),
                                i64Tensor(ctx, 0, {1, 1})));
}

Value mlir::tract::onnx::dimsWithUnitsAt(NodeContext &ctx, Value input,
                                         Value flags) {
  Type i64 = ctx.getBuilder().getI64Type();
  int64_t rank = NodeContext::rank(input);
  int64_t outRank = getShape(flags)[0].getConstant().value_or(0);
  Value ones = i64Tensor(ctx, SmallVector<int64_t>(outRank, 1), {outRank});
  if (rank == 0)
    return ones;
  // Output axis p is input axis p - (units before p), where no unit goes.
  Value unitsBefore = sumBefore(ctx, ctx.castTo(flags, i64), outRank);
  Value source = ctx.binary<SubOp>(
      i64Tensor(ctx, llvm::to_vector(llvm::seq<int64_t>(0, outRank)),
                {outRank}),
      unitsBefore);
  source = ctx.binary<MinOp>(ctx.binary<MaxOp>(source, i64Tensor(ctx, 0, {1})),
                             i64Tensor(ctx, rank - 1, {1}));
  Value dims =
      ctx.create<GatherOp>(ctx.create<ShapeOfOp>(input), source, int64_t(0));
  return ctx.create<SelectOp>(flags, ones, dims);
}

FailureOr<SplitAxis> mlir::tract::onnx::getSplitAxis(NodeContext &ctx) {
  Value input = ctx.input(0);
  if (!input)
    return ctx.error("missing input");
  Shape shape = getShape(input);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), shape.size());
  if (failed(axis))
    return failure();
  return SplitAxis{input, *axis, shape[*axis]};
}

std::optional<SmallVector<TDim>>
mlir::tract::onnx::splitSizesFromValues(NodeContext &ctx, Value sizes,
                                        const TDim &dim) {
  if (!sizes || getShape(sizes).size() != 1)
    return std::nullopt;
  std::optional<int64_t> count = getShape(sizes)[0].getConstant();
  if (!count)
    return std::nullopt;
  if (dim == TDim(0))
    return SmallVector<TDim>(*count, TDim(0));
  std::optional<SmallVector<TDim>> parts = ctx.bindValuesAsDims(sizes, "split");
  if (!parts || parts->empty())
    return parts;
  TDim others(0);
  for (const TDim &size : ArrayRef<TDim>(*parts).drop_back())
    others += size;
  // The parts must add up to the dim, checked where they are bound.
  ctx.getGraph().assumeEqual(others + parts->back(), dim);
  parts->back() = dim - others;
  return parts;
}

Value mlir::tract::onnx::reshapeToBoundDims(NodeContext &ctx, Value input,
                                            ArrayRef<TDim> dims) {
  if (!input)
    return input;
  Shape shape = getShape(input);
  Value flat =
      ctx.create<ReshapeOp>(input, int64_t(0), int64_t(shape.size()),
                            ShapeAttr::get(ctx.getContext(), {volume(shape)}));
  if (!flat)
    return flat;
  FailureOr<Value> taken =
      ctx.assumeDim(flat, 0, volume(dims), "the reshaped tensor");
  if (failed(taken))
    return Value();
  return ctx.create<ReshapeOp>(*taken, int64_t(0), int64_t(1),
                               ShapeAttr::get(ctx.getContext(), dims));
}
