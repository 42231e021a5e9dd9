//===- ArrayOps.cpp - ONNX shape, layout and indexing operators -----------===//
//
// Constants, shape computations, reshapes, axis moves, slicing, gathers and
// scatters, padding and tiling. Shape subgraphs (Shape -> Gather -> Concat
// -> Reshape) are followed symbolically: every handler that computes an
// integer tensor from known dims records its symbolic value (setDims), so
// that Reshape, Expand, ConstantOfShape and Range downstream see shapes like
// [1, S, 64]. When all the values are known constants, a constant is
// produced instead and the ops computing it are never built.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "dialects/tract/TractFolding.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/onnx.pb.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>> constantValues(ArrayRef<TDim> dims) {
  SmallVector<int64_t> values;
  for (const TDim &dim : dims) {
    std::optional<int64_t> value = dim.getConstant();
    if (!value)
      return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

/// A constant integer tensor of `shape` holding `values`.
Value intConstant(NodeContext &ctx, ArrayRef<int64_t> values, Type elementType,
                  ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, elementType);
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> data;
  for (int64_t value : values)
    data.push_back(
        APInt(width, value, /*isSigned=*/true, /*implicitTrunc=*/true));
  return ctx.constant(DenseElementsAttr::get(type, data));
}

Value i64Constant(NodeContext &ctx, ArrayRef<int64_t> values,
                  ArrayRef<int64_t> shape) {
  return intConstant(ctx, values, ctx.getBuilder().getI64Type(), shape);
}

/// The constant holding `dims` when they are all known, as a tensor of
/// `elementType` and `shape` (1-D, or 0-D for a scalar); null otherwise.
Value dimsConstant(NodeContext &ctx, ArrayRef<TDim> dims, Type elementType,
                   ArrayRef<int64_t> shape) {
  std::optional<SmallVector<int64_t>> values = constantValues(dims);
  if (!values || !isa<IntegerType>(elementType) || elementType.isInteger(1))
    return {};
  return intConstant(ctx, *values, elementType, shape);
}

/// Records the symbolic value of a computed integer tensor.
Value withDims(NodeContext &ctx, Value computed, ArrayRef<TDim> dims) {
  Type elementType = NodeContext::elementType(computed);
  if (computed && isa<IntegerType>(elementType) && !elementType.isInteger(1) &&
      NodeContext::rank(computed) <= 1)
    ctx.setDims(computed, dims);
  return computed;
}

DimAttr dimAttr(NodeContext &ctx, const TDim &dim) {
  return DimAttr::get(ctx.getContext(), dim);
}

ShapeAttr shapeAttr(NodeContext &ctx, ArrayRef<TDim> dims) {
  return ShapeAttr::get(ctx.getContext(), dims);
}

std::string dimsToString(ArrayRef<TDim> dims) {
  return "[" + shapeToString(dims) + "]";
}

Shape shapeOf(Value value) { return value ? getShape(value) : Shape(); }

/// A symbolic shape given by input `i` (a shape tensor), with every dim
/// checked non-negative when constant.
FailureOr<SmallVector<TDim>> shapeInput(NodeContext &ctx, unsigned i,
                                        StringRef what) {
  std::optional<SmallVector<TDim>> dims = ctx.getDims(i);
  if (!dims) {
    (void)ctx.unsupported(what + " that is neither constant nor computed "
                                 "from shapes");
    return failure();
  }
  return *dims;
}

/// The normalized, sorted, unique axes of `values` against `rank`.
FailureOr<SmallVector<int64_t>>
normalizeAxes(NodeContext &ctx, ArrayRef<int64_t> values, int64_t rank) {
  SmallVector<int64_t> axes;
  for (int64_t value : values) {
    FailureOr<int64_t> axis = ctx.normalizeAxis(value, rank);
    if (failed(axis))
      return failure();
    axes.push_back(*axis);
  }
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    (void)ctx.error("repeated axis in " + dimsToString(llvm::to_vector_of<TDim>(
                                              ArrayRef<int64_t>(values))));
    return failure();
  }
  return axes;
}

/// Axes from an attribute (before `inputSince`) or from a constant input.
FailureOr<std::optional<SmallVector<int64_t>>>
axesOperand(NodeContext &ctx, int64_t inputSince, unsigned input) {
  if (ctx.getOpset() < inputSince)
    return ctx.getInts("axes");
  if (!ctx.hasInput(input))
    return std::optional<SmallVector<int64_t>>();
  std::optional<SmallVector<int64_t>> axes = ctx.getConstInts(input);
  if (!axes) {
    (void)ctx.unsupported("non-constant axes");
    return failure();
  }
  return axes;
}

/// Reshapes `input` to `target`, replacing only the run of axes between the
/// common prefix and suffix.
Value reshapeTo(NodeContext &ctx, Value input, ArrayRef<TDim> target) {
  if (!input)
    return input;
  Shape shape = getShape(input);
  size_t prefix = 0;
  while (prefix < shape.size() && prefix < target.size() &&
         shape[prefix] == target[prefix])
    ++prefix;
  size_t suffix = 0;
  while (suffix + prefix < shape.size() && suffix + prefix < target.size() &&
         shape[shape.size() - 1 - suffix] == target[target.size() - 1 - suffix])
    ++suffix;
  if (prefix + suffix == shape.size() && shape.size() == target.size())
    return input;
  int64_t count = shape.size() - prefix - suffix;
  return ctx.create<ReshapeOp>(
      input, int64_t(prefix), count,
      shapeAttr(ctx, target.slice(prefix, target.size() - prefix - suffix)));
}

/// Moves axes so that output axis i is input axis perm[i], with the fewest
/// moves: the axes of a longest increasing run of `perm` stay in place.
Value transposeBy(NodeContext &ctx, Value input, ArrayRef<int64_t> perm) {
  size_t rank = perm.size();
  // length[i]: the longest increasing subsequence of perm ending at i.
  SmallVector<int64_t> length(rank, 1), previous(rank, -1);
  for (size_t i = 0; i < rank; ++i)
    for (size_t j = 0; j < i; ++j)
      if (perm[j] < perm[i] && length[j] + 1 > length[i]) {
        length[i] = length[j] + 1;
        previous[i] = j;
      }
  SmallVector<bool> placed(rank, false);
  if (rank) {
    int64_t last =
        std::max_element(length.begin(), length.end()) - length.begin();
    for (int64_t i = last; i >= 0; i = previous[i])
      placed[i] = true;
  }
  SmallVector<int64_t> order =
      llvm::to_vector(llvm::seq<int64_t>(0, static_cast<int64_t>(rank)));
  auto position = [&](int64_t axis) {
    return static_cast<int64_t>(llvm::find(order, axis) - order.begin());
  };
  for (size_t i = 0; i < rank; ++i) {
    if (placed[i])
      continue;
    // Put the axis right after the placed one that precedes it in perm.
    int64_t from = position(perm[i]);
    order.erase(order.begin() + from);
    int64_t to = 0;
    for (int64_t j = static_cast<int64_t>(i) - 1; j >= 0; --j)
      if (placed[j]) {
        to = position(perm[j]) + 1;
        break;
      }
    order.insert(order.begin() + to, perm[i]);
    placed[i] = true;
    if (from != to)
      input = ctx.create<MoveAxisOp>(input, from, to);
  }
  return input;
}

/// Slices [start, end) of `axis`, or returns the input for the whole axis.
Value sliceAxis(NodeContext &ctx, Value input, int64_t axis, const TDim &start,
                const TDim &end) {
  if (!input)
    return input;
  if (start == TDim(0) && end == getShape(input)[axis])
    return input;
  return ctx.create<SliceOp>(input, axis, dimAttr(ctx, start),
                             dimAttr(ctx, end));
}

/// The 1-D integer tensor of the dims [from, to) of `input`'s shape, with
/// its symbolic value recorded.
Value shapeTensor(NodeContext &ctx, Value input, int64_t from, int64_t to,
                  Type elementType) {
  Shape shape = shapeOf(input);
  ArrayRef<TDim> dims = ArrayRef<TDim>(shape).slice(from, to - from);
  if (Value constant = dimsConstant(ctx, dims, elementType,
                                    {static_cast<int64_t>(to - from)}))
    return constant;
  Value result = ctx.create<ShapeOfOp>(input);
  result = sliceAxis(ctx, result, 0, TDim(from), TDim(to));
  result = ctx.castTo(result, elementType);
  return withDims(ctx, result, dims);
}

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

LogicalResult constantHandler(NodeContext &ctx, Outputs &outputs) {
  Builder b(ctx.getContext());
  if (const ::onnx::TensorProto *tensor = ctx.getTensor("value")) {
    std::string error;
    FailureOr<DenseElementsAttr> value =
        ctx.getGraph().readTensor(*tensor, error);
    if (failed(value))
      return ctx.unsupported(error);
    outputs.push_back(ctx.constant(*value));
    return success();
  }
  if (std::optional<float> value = ctx.getOptFloat("value_float")) {
    outputs.push_back(ctx.scalar(b.getF32Type(), *value));
    return success();
  }
  if (std::optional<SmallVector<float>> values =
          ctx.getFloats("value_floats")) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values->size())},
                                      b.getF32Type());
    outputs.push_back(
        ctx.constant(DenseElementsAttr::get(type, ArrayRef<float>(*values))));
    return success();
  }
  if (std::optional<int64_t> value = ctx.getOptInt("value_int")) {
    outputs.push_back(i64Constant(ctx, *value, {}));
    return success();
  }
  if (std::optional<SmallVector<int64_t>> values = ctx.getInts("value_ints")) {
    outputs.push_back(
        i64Constant(ctx, *values, {static_cast<int64_t>(values->size())}));
    return success();
  }
  if (ctx.hasAttr("sparse_value"))
    return ctx.unsupported("sparse constant");
  if (ctx.hasAttr("value_string") || ctx.hasAttr("value_strings"))
    return ctx.unsupported("string constant");
  return ctx.error("constant without a value");
}

LogicalResult constantOfShapeHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SmallVector<TDim>> dims = shapeInput(ctx, 0, "shape");
  if (failed(dims))
    return failure();
  DenseElementsAttr value;
  if (const ::onnx::TensorProto *tensor = ctx.getTensor("value")) {
    std::string error;
    FailureOr<DenseElementsAttr> read =
        ctx.getGraph().readTensor(*tensor, error);
    if (failed(read))
      return ctx.unsupported(error);
    if (read->getNumElements() != 1)
      return ctx.error("value must hold one element");
    value = *read;
  } else {
    auto type =
        RankedTensorType::get({1}, Builder(ctx.getContext()).getF32Type());
    value = DenseElementsAttr::get(type, 0.0f);
  }
  for (const TDim &dim : *dims)
    if (std::optional<int64_t> constant = dim.getConstant();
        constant && *constant < 0)
      return ctx.error("negative dim in shape " + dimsToString(*dims));
  auto type = RankedTensorType::get(SmallVector<int64_t>(dims->size(), 1),
                                    value.getElementType());
  Value scalar = ctx.constant(value.reshape(type));
  outputs.push_back(ctx.create<BroadcastOp>(scalar, shapeAttr(ctx, *dims)));
  return success();
}

LogicalResult shapeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = shape.size();
  int64_t start = 0, end = rank;
  if (ctx.getOpset() >= 15) {
    // Out of range bounds are clamped.
    auto clamp = [&](int64_t bound) {
      if (bound < 0)
        bound += rank;
      return std::clamp<int64_t>(bound, 0, rank);
    };
    start = clamp(ctx.getInt("start", 0));
    end = std::max(start, clamp(ctx.getInt("end", rank)));
  }
  outputs.push_back(shapeTensor(ctx, input, start, end,
                                Builder(ctx.getContext()).getI64Type()));
  return success();
}

LogicalResult sizeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  TDim size = volume(shapeOf(input));
  Type i64 = Builder(ctx.getContext()).getI64Type();
  if (Value constant = dimsConstant(ctx, size, i64, {})) {
    outputs.push_back(constant);
    return success();
  }
  Value dims = ctx.create<ShapeOfOp>(input);
  Value product =
      ctx.create<ReduceOp>(dims, Reducer::Prod, ArrayRef<int64_t>{0});
  outputs.push_back(
      withDims(ctx, ctx.create<RmAxisOp>(product, int64_t(0)), size));
  return success();
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// `numerator / denominator` when exact: equal factors are cancelled first,
/// then the rest divides by a constant, or by a product of symbols whose
/// quotient checks back.
std::optional<TDim> divideExactly(ArrayRef<TDim> numerator,
                                  ArrayRef<TDim> denominator) {
  SmallVector<TDim> top(numerator), bottom;
  for (const TDim &factor : denominator) {
    auto it = llvm::find(top, factor);
    if (it != top.end())
      top.erase(it);
    else
      bottom.push_back(factor);
  }
  TDim n = volume(top), d = volume(bottom);
  if (n == d)
    return TDim(1);
  // Setting the symbols of the denominator to 1 leaves its constant factor,
  // and divides them out of the numerator if they are factors of it.
  std::set<std::string> symbols;
  d.collectSymbols(symbols);
  SymbolValues ones;
  for (const std::string &symbol : symbols)
    ones[symbol] = 1;
  std::optional<int64_t> scale = d.substitute(ones).getConstant();
  if (!scale || *scale <= 0)
    return std::nullopt;
  TDim quotient = n.substitute(ones).floorDiv(*scale);
  if (quotient * d != n)
    return std::nullopt;
  return quotient;
}

LogicalResult reshapeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  SmallVector<TDim> requested;
  if (ctx.getOpset() < 5) {
    std::optional<SmallVector<int64_t>> attr = ctx.getInts("shape");
    if (!attr)
      return ctx.error("missing shape attribute");
    requested = llvm::to_vector_of<TDim>(*attr);
  } else {
    FailureOr<SmallVector<TDim>> dims = shapeInput(ctx, 1, "shape");
    if (failed(dims))
      return failure();
    requested = *dims;
  }
  bool allowZero = ctx.getOpset() >= 14 && ctx.getInt("allowzero", 0);
  SmallVector<TDim> target;
  std::optional<size_t> inferred;
  for (auto [i, dim] : llvm::enumerate(requested)) {
    std::optional<int64_t> value = dim.getConstant();
    if (value == 0 && !allowZero) {
      if (i >= shape.size())
        return ctx.error("shape " + dimsToString(requested) + " copies dim " +
                         Twine(i) + " of a rank " + Twine(shape.size()) +
                         " input");
      target.push_back(shape[i]);
    } else if (value == -1) {
      if (inferred)
        return ctx.error("shape " + dimsToString(requested) +
                         " has more than one -1");
      inferred = i;
      target.push_back(TDim(1));
    } else if (value && *value < 0) {
      return ctx.error("negative dim in shape " + dimsToString(requested));
    } else {
      target.push_back(dim);
    }
  }
  if (inferred) {
    SmallVector<TDim> known(target);
    known.erase(known.begin() + *inferred);
    std::optional<TDim> dim = divideExactly(shape, known);
    if (!dim)
      return ctx.error("cannot infer the -1 of shape " +
                       dimsToString(requested) + ": volume " +
                       volume(shape).toString() + " is not a multiple of " +
                       volume(known).toString());
    target[*inferred] = *dim;
  }
  outputs.push_back(reshapeTo(ctx, input, target));
  return success();
}

LogicalResult flattenHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = shape.size();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.error("axis " + Twine(ctx.getInt("axis", 1)) +
                     " is out of range for rank " + Twine(rank));
  ArrayRef<TDim> dims(shape);
  outputs.push_back(reshapeTo(
      ctx, input,
      {volume(dims.take_front(axis)), volume(dims.drop_front(axis))}));
  return success();
}

LogicalResult squeezeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      axesOperand(ctx, 13, 1);
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes;
  if (*given) {
    FailureOr<SmallVector<int64_t>> normalized =
        normalizeAxes(ctx, **given, shape.size());
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    // Without axes, every dim known to be 1 goes.
    for (auto [axis, dim] : llvm::enumerate(shape))
      if (dim == TDim(1))
        axes.push_back(axis);
  }
  Value result = input;
  for (int64_t axis : llvm::reverse(axes)) {
    if (shape[axis] != TDim(1))
      return ctx.error("cannot squeeze axis " + Twine(axis) + " of dim " +
                       shape[axis].toString());
    result = ctx.create<RmAxisOp>(result, axis);
  }
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(input))
    withDims(ctx, result, *dims);
  outputs.push_back(result);
  return success();
}

LogicalResult unsqueezeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      axesOperand(ctx, 13, 1);
  if (failed(given))
    return failure();
  if (!*given)
    return ctx.error("missing axes");
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(ctx, **given, NodeContext::rank(input) + (*given)->size());
  if (failed(axes))
    return failure();
  Value result = input;
  for (int64_t axis : *axes)
    result = ctx.create<AddAxisOp>(result, axis);
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(input))
    withDims(ctx, result, *dims);
  outputs.push_back(result);
  return success();
}

LogicalResult transposeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  int64_t rank = NodeContext::rank(input);
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> attr = ctx.getInts("perm")) {
    perm = *attr;
  } else {
    for (int64_t axis = rank - 1; axis >= 0; --axis)
      perm.push_back(axis);
  }
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if (static_cast<int64_t>(perm.size()) != rank ||
      !llvm::equal(sorted, llvm::seq<int64_t>(0, rank)))
    return ctx.error("perm is not a permutation of the " + Twine(rank) +
                     " axes");
  outputs.push_back(transposeBy(ctx, input, perm));
  return success();
}

LogicalResult concatHandler(NodeContext &ctx, Outputs &outputs) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    if (ctx.hasInput(i))
      inputs.push_back(ctx.input(i));
  if (inputs.empty())
    return ctx.error("no inputs");
  int64_t rank = NodeContext::rank(inputs.front());
  // Before opset 4, the axis defaulted to 1.
  std::optional<int64_t> attr = ctx.getOptInt("axis");
  if (!attr && ctx.getOpset() >= 4)
    return ctx.error("missing axis");
  FailureOr<int64_t> axis = ctx.normalizeAxis(attr.value_or(1), rank);
  if (failed(axis))
    return failure();
  // Shape vectors concatenate symbolically.
  SmallVector<TDim> dims;
  bool known = rank == 1;
  for (Value input : inputs) {
    std::optional<SmallVector<TDim>> part = ctx.getDims(input);
    if (!part) {
      known = false;
      break;
    }
    llvm::append_range(dims, *part);
  }
  Type elementType = NodeContext::elementType(inputs.front());
  if (known) {
    if (Value constant = dimsConstant(ctx, dims, elementType,
                                      {static_cast<int64_t>(dims.size())})) {
      outputs.push_back(constant);
      return success();
    }
  }
  Value result = inputs.size() == 1
                     ? inputs.front()
                     : ctx.create<ConcatOp>(ValueRange(inputs), *axis);
  if (known)
    withDims(ctx, result, dims);
  outputs.push_back(result);
  return success();
}

} // namespace

void mlir::tract::onnx::registerArrayOps(OpRegistry &registry) {
  // Constants and shapes.
  registry.add("Constant", {1, 9, 11, 12, 13, 19, 21}, constantHandler);
  registry.add("ConstantOfShape", {9, 20, 21}, constantOfShapeHandler);
  registry.add("Shape", {1, 13, 15, 19, 21}, shapeHandler);
  registry.add("Size", {1, 13, 19, 21}, sizeHandler);

  // Reshapes and axis moves.
  registry.add("Reshape", {1, 5, 13, 14, 19, 21}, reshapeHandler);
  registry.add("Flatten", {1, 9, 11, 13, 21}, flattenHandler);
  registry.add("Squeeze", {1, 11, 13, 21}, squeezeHandler);
  registry.add("Unsqueeze", {1, 11, 13, 21}, unsqueezeHandler);
  registry.add("Transpose", {1, 13, 21}, transposeHandler);
  registry.add("Concat", {1, 4, 11, 13}, concatHandler);
}
