//===- SequenceOps.cpp - ONNX sequences as lists of tensors ---------------===//
//
// The sequences that exporters build inside a graph (SequenceConstruct,
// SplitToSequence, then SequenceAt or ConcatFromSequence) are lists of
// tensors whose length is known at import: the importer keeps them as
// lists of values and never builds a sequence in the IR. A position known
// only when the model runs picks among the elements with selects, which
// needs elements of one type. Sequences as graph inputs or outputs, and
// lists whose length the values decide, are refused.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ops/ValueShapes.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

/// Sequence input `i`, or an error naming it.
FailureOr<SmallVector<Value>> sequenceArg(NodeContext &ctx, unsigned i) {
  if (const SmallVector<Value> *sequence = ctx.sequenceInput(i))
    return *sequence;
  (void)ctx.error("input " + Twine(i) + " is not a sequence");
  return failure();
}

/// Makes output 0 the sequence `values`.
LogicalResult produce(NodeContext &ctx, Outputs &outputs,
                      ArrayRef<Value> values) {
  ctx.setSequenceOutput(0, values);
  outputs.push_back(Value());
  return success();
}

/// A constant position counted from the start of a list of `length`
/// (`extra` more allowed at the end, as for an insertion).
FailureOr<int64_t> normalizePosition(NodeContext &ctx, int64_t position,
                                     int64_t length, int64_t extra) {
  int64_t normalized = position < 0 ? position + length : position;
  if (normalized < 0 || normalized >= length + extra)
    return ctx.error("position " + Twine(position) +
                     " is out of range for a sequence of " + Twine(length));
  return normalized;
}

/// A position known at run time, counted from the start.
Value normalizeRuntime(NodeContext &ctx, Value position, int64_t length) {
  Type i64 = ctx.getBuilder().getI64Type();
  auto scalar = [&](int64_t v) {
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({}, i64), v));
  };
  return ctx.create<SelectOp>(ctx.binary<LtOp>(position, scalar(0)),
                              ctx.binary<AddOp>(position, scalar(length)),
                              position);
}

/// A position input into a sequence of `length` (`extra` more allowed at the
/// end, as for an insertion), counted from the start: its constant value,
/// or the i64 scalar holding it.
struct Position {
  std::optional<int64_t> constant;
  Value value;
};

FailureOr<Position> positionArg(NodeContext &ctx, unsigned i, int64_t length,
                                int64_t extra) {
  if (std::optional<SmallVector<int64_t>> values = ctx.getConstInts(i)) {
    if (values->size() != 1)
      return ctx.error("a position must be one integer");
    FailureOr<int64_t> at =
        normalizePosition(ctx, values->front(), length, extra);
    if (failed(at))
      return failure();
    return Position{*at, Value()};
  }
  Value value = ctx.input(i);
  if (!value || volume(getShape(value)) != TDim(1))
    return ctx.error("a position must be one integer");
  value = ctx.castTo(value, ctx.getBuilder().getI64Type());
  while (value && NodeContext::rank(value) > 0)
    value = ctx.create<RmAxisOp>(value, int64_t(0));
  if (!value)
    return failure();
  return Position{std::nullopt, normalizeRuntime(ctx, value, length)};
}

/// `whenTrue` where the scalar `cond` holds, else `whenFalse` (one type).
Value choose(NodeContext &ctx, Value cond, Value whenTrue, Value whenFalse) {
  if (!whenTrue || !whenFalse)
    return {};
  if (whenTrue.getType() != whenFalse.getType()) {
    (void)ctx.unsupported(
        "elements of different types at a position known only when the "
        "model runs (" +
        NodeContext::typeName(whenTrue.getType()) + ", " +
        NodeContext::typeName(whenFalse.getType()) + ")");
    return {};
  }
  return ctx.create<SelectOp>(
      ctx.unsqueezeTo(cond, NodeContext::rank(whenTrue)), whenTrue, whenFalse);
}

/// `position == index` (or `<`), for a run-time position.
Value compare(NodeContext &ctx, Value position, int64_t index, bool less) {
  Value constant = ctx.constant(DenseElementsAttr::get(
      RankedTensorType::get({}, ctx.getBuilder().getI64Type()), index));
  return less ? ctx.binary<LtOp>(constant, position)
              : ctx.binary<EqOp>(constant, position);
}

LogicalResult sequenceEmptyHandler(NodeContext &ctx, Outputs &outputs) {
  return produce(ctx, outputs, {});
}

LogicalResult sequenceConstructHandler(NodeContext &ctx, Outputs &outputs) {
  SmallVector<Value> values;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    Value value = ctx.input(i);
    if (!value)
      return ctx.error("input " + Twine(i) + " is not a tensor");
    values.push_back(value);
  }
  return produce(ctx, outputs, values);
}

LogicalResult sequenceLengthHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<Value>> sequence = sequenceArg(ctx, 0);
  if (failed(sequence))
    return failure();
  auto type = RankedTensorType::get({}, ctx.getBuilder().getI64Type());
  outputs.push_back(ctx.constant(
      DenseElementsAttr::get(type, static_cast<int64_t>(sequence->size()))));
  return success();
}

LogicalResult sequenceAtHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<Value>> sequence = sequenceArg(ctx, 0);
  if (failed(sequence))
    return failure();
  int64_t length = sequence->size();
  if (length == 0)
    return ctx.error("SequenceAt of an empty sequence");
  FailureOr<Position> position = positionArg(ctx, 1, length, 0);
  if (failed(position))
    return failure();
  if (position->constant) {
    outputs.push_back((*sequence)[*position->constant]);
    return success();
  }
  Value at = position->value;
  Value result = sequence->back();
  for (int64_t i = length - 2; i >= 0 && result; --i)
    result = choose(ctx, compare(ctx, at, i, false), (*sequence)[i], result);
  return pushOutput(outputs, result);
}

LogicalResult sequenceInsertHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<Value>> sequence = sequenceArg(ctx, 0);
  Value tensor = ctx.input(1);
  if (failed(sequence))
    return failure();
  if (!tensor)
    return ctx.error("the inserted value is not a tensor");
  SmallVector<Value> result(*sequence);
  int64_t length = result.size();
  if (!ctx.hasInput(2)) {
    result.push_back(tensor);
    return produce(ctx, outputs, result);
  }
  FailureOr<Position> position = positionArg(ctx, 2, length, 1);
  if (failed(position))
    return failure();
  if (position->constant) {
    result.insert(result.begin() + *position->constant, tensor);
    return produce(ctx, outputs, result);
  }
  // Element i: the old one before the position, the new one at it, the
  // old one before it after it.
  Value at = position->value;
  SmallVector<Value> inserted;
  for (int64_t i = 0; i <= length; ++i) {
    Value after = i > 0 ? choose(ctx, compare(ctx, at, i, false), tensor,
                                 (*sequence)[i - 1])
                        : tensor;
    Value element = i < length ? choose(ctx, compare(ctx, at, i, true),
                                        (*sequence)[i], after)
                               : after;
    if (!element)
      return failure();
    inserted.push_back(element);
  }
  return produce(ctx, outputs, inserted);
}

LogicalResult sequenceEraseHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<Value>> sequence = sequenceArg(ctx, 0);
  if (failed(sequence))
    return failure();
  SmallVector<Value> result(*sequence);
  int64_t length = result.size();
  if (length == 0)
    return ctx.error("SequenceErase of an empty sequence");
  if (!ctx.hasInput(1)) {
    result.pop_back();
    return produce(ctx, outputs, result);
  }
  FailureOr<Position> position = positionArg(ctx, 1, length, 0);
  if (failed(position))
    return failure();
  if (position->constant) {
    result.erase(result.begin() + *position->constant);
    return produce(ctx, outputs, result);
  }
  // Element i: the old one before the position, the next one from it.
  Value at = position->value;
  SmallVector<Value> erased;
  for (int64_t i = 0; i + 1 < length; ++i) {
    Value element = choose(ctx, compare(ctx, at, i, true), (*sequence)[i],
                           (*sequence)[i + 1]);
    if (!element)
      return failure();
    erased.push_back(element);
  }
  return produce(ctx, outputs, erased);
}

/// SplitToSequence: the parts of Split (sizes given, constant or bound
/// when the model runs; one size for equal chunks, the last smaller; none
/// for parts of 1, squeezed unless keepdims).
LogicalResult splitToSequenceHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SplitAxis> split = getSplitAxis(ctx);
  if (failed(split))
    return failure();
  auto [input, axis, dim] = *split;
  SmallVector<TDim> sizes;
  bool squeeze = false;
  if (!ctx.hasInput(1)) {
    std::optional<int64_t> n = dim.getConstant();
    if (!n)
      return ctx.unsupported("a sequence of one part per element of the "
                             "symbolic dim " +
                             dim.toString());
    sizes.assign(*n, TDim(1));
    squeeze = !ctx.getInt("keepdims", 1);
  } else if (std::optional<SmallVector<TDim>> given = ctx.getDims(1);
             given && NodeContext::rank(ctx.input(1)) == 0) {
    std::optional<int64_t> chunk = given->front().getConstant();
    std::optional<int64_t> n = dim.getConstant();
    if (!chunk || !n || *chunk < 1)
      return ctx.unsupported("a split size that is not a positive constant "
                             "over a constant dim");
    for (int64_t start = 0; start < *n; start += *chunk)
      sizes.push_back(TDim(std::min(*chunk, *n - start)));
  } else if (given) {
    sizes = *given;
  } else {
    std::optional<SmallVector<TDim>> bound =
        splitSizesFromValues(ctx, ctx.input(1), dim);
    if (!bound)
      return ctx.unsupported("split sizes of unknown count");
    sizes = *bound;
  }
  SmallVector<Value> parts;
  TDim offset(0);
  for (const TDim &size : sizes) {
    Value part = ctx.create<SliceOp>(
        input, uint64_t(axis), DimAttr::get(ctx.getContext(), offset),
        DimAttr::get(ctx.getContext(), offset + size));
    if (squeeze)
      part = ctx.create<RmAxisOp>(part, axis);
    if (!part)
      return failure();
    parts.push_back(part);
    offset += size;
  }
  return produce(ctx, outputs, parts);
}

LogicalResult concatFromSequenceHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<Value>> sequence = sequenceArg(ctx, 0);
  if (failed(sequence))
    return failure();
  if (sequence->empty())
    return ctx.error("ConcatFromSequence of an empty sequence");
  bool newAxis = ctx.getInt("new_axis", 0);
  int64_t rank = NodeContext::rank(sequence->front()) + (newAxis ? 1 : 0);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (Value value : *sequence)
    parts.push_back(newAxis ? ctx.create<AddAxisOp>(value, *axis) : value);
  outputs.push_back(parts.size() == 1
                        ? parts.front()
                        : ctx.create<ConcatOp>(ValueRange(parts), *axis));
  return success();
}

} // namespace

void mlir::tract::onnx::registerSequenceOps(OpRegistry &registry) {
  registry.add("SequenceEmpty", 11, sequenceEmptyHandler);
  registry.add("SequenceConstruct", 11, sequenceConstructHandler);
  registry.add("SequenceLength", 11, sequenceLengthHandler);
  registry.add("SequenceAt", 11, sequenceAtHandler);
  registry.add("SequenceInsert", 11, sequenceInsertHandler);
  registry.add("SequenceErase", 11, sequenceEraseHandler);
  registry.add("SplitToSequence", 11, splitToSequenceHandler);
  registry.add("ConcatFromSequence", 11, concatFromSequenceHandler);
}
