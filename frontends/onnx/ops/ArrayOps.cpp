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
#include "frontends/onnx/ops/Random.h"
#include "frontends/onnx/ops/ValueShapes.h"

#include "dialects/tract/TractFolding.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/onnx.pb.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// ONNX writes "to the end" as INT_MAX or INT64_MAX; anything this large is
/// past any real dim.
constexpr int64_t kLargeIndex = std::numeric_limits<int32_t>::max();

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
  if (!values || !elementType || !isa<IntegerType>(elementType) ||
      elementType.isInteger(1))
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

Shape shapeOf(Value value) { return value ? getShape(value) : Shape(); }

/// The symbolic value of input `i`, a shape tensor: constant, computed from
/// shapes, or else decided by its values when the model runs (fresh dims
/// bound to them); `fromValues` tells the last case.
FailureOr<SmallVector<TDim>> shapeInput(NodeContext &ctx, unsigned i,
                                        StringRef what,
                                        bool *fromValues = nullptr) {
  if (fromValues)
    *fromValues = false;
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(i))
    return *dims;
  std::optional<SmallVector<TDim>> bound =
      ctx.bindValuesAsDims(ctx.input(i), what);
  if (!bound) {
    (void)ctx.unsupported(what + " of unknown length, neither constant nor "
                                 "computed from shapes");
    return failure();
  }
  if (fromValues)
    *fromValues = true;
  return *bound;
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

/// The axes input `input` (from `inputSince`) when only its values, known
/// when the model runs, tell: a 1-D integer tensor of static length, given
/// with that length; nothing when the axes are an attribute, a constant or
/// absent.
std::optional<std::pair<Value, int64_t>>
axesFromValues(NodeContext &ctx, int64_t inputSince, unsigned input) {
  if (ctx.getOpset() < inputSince || !ctx.hasInput(input) ||
      ctx.getConstInts(input))
    return std::nullopt;
  Value axes = ctx.input(input);
  Shape shape = shapeOf(axes);
  Type type = NodeContext::elementType(axes);
  if (shape.size() != 1 || !shape[0].getConstant() || !isa<IntegerType>(type) ||
      type.isInteger(1))
    return std::nullopt;
  return std::make_pair(axes, *shape[0].getConstant());
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

/// The 0-D integer tensor of dim `axis` of `input`.
Value dimScalar(NodeContext &ctx, Value input, int64_t axis, Type elementType) {
  Shape shape = shapeOf(input);
  if (Value constant = dimsConstant(ctx, shape[axis], elementType, {}))
    return constant;
  Value dims = shapeTensor(ctx, input, axis, axis + 1, elementType);
  return withDims(ctx, ctx.create<RmAxisOp>(dims, int64_t(0)), shape[axis]);
}

/// Reverses `axis`: a gather of the indices dim-1, ..., 0.
Value reverseAxis(NodeContext &ctx, Value input, int64_t axis) {
  if (!input)
    return input;
  TDim dim = getShape(input)[axis];
  Type i64 = ctx.getBuilder().getI64Type();
  Value indices;
  if (std::optional<int64_t> n = dim.getConstant()) {
    SmallVector<int64_t> values;
    for (int64_t i = *n - 1; i >= 0; --i)
      values.push_back(i);
    indices = i64Constant(ctx, values, {*n});
  } else {
    Value last = ctx.binary<SubOp>(dimScalar(ctx, input, axis, i64),
                                   i64Constant(ctx, 1, {}));
    Value minusOne = i64Constant(ctx, -1, {});
    indices = ctx.create<RangeOp>(last, minusOne, minusOne, dimAttr(ctx, dim));
  }
  return ctx.create<GatherOp>(input, indices, axis);
}

/// The positions 0, 1, ... of axis `axis` of `input`, laid along axis `at`
/// of an i64 tensor of rank `rank` whose other dims are 1.
Value positions(NodeContext &ctx, Value input, int64_t axis, int64_t at,
                int64_t rank) {
  TDim dim = shapeOf(input)[axis];
  SmallVector<int64_t> shape(rank, 1);
  if (std::optional<int64_t> n = dim.getConstant()) {
    shape[at] = *n;
    return i64Constant(ctx, llvm::to_vector(llvm::seq<int64_t>(0, *n)), shape);
  }
  Type i64 = ctx.getBuilder().getI64Type();
  Value result = ctx.create<RangeOp>(
      i64Constant(ctx, 0, {}), dimScalar(ctx, input, axis, i64),
      i64Constant(ctx, 1, {}), dimAttr(ctx, dim));
  for (int64_t i = 0; i < rank; ++i)
    if (i != at)
      result = ctx.create<AddAxisOp>(result, i);
  return result;
}

/// Indices that may count from the end, made non-negative (those before the
/// start stay, for the op to report). The k-th element
/// (in row-major order) indexes an axis of dim `dims[k % dims.size()]`;
/// `dimsTensor` builds those dims as a tensor that broadcasts against the
/// indices. Constant indices are rewritten; others get a select.
Value normalizeIndices(NodeContext &ctx, Value indices, ArrayRef<TDim> dims,
                       function_ref<Value(Type)> dimsTensor) {
  if (!indices)
    return indices;
  Type elementType = NodeContext::elementType(indices);
  if (!isa<IntegerType>(elementType) || elementType.isUnsignedInteger() ||
      elementType.isInteger(1))
    return indices; // unsigned needs nothing; the op rejects non-integers
  if (DenseElementsAttr constant = [&]() -> DenseElementsAttr {
        if (auto op = indices.getDefiningOp<ConstOp>())
          return dyn_cast<DenseElementsAttr>(op.getValue());
        return {};
      }()) {
    std::optional<SmallVector<int64_t>> values = getIntValues(constant);
    if (values && llvm::all_of(*values, [](int64_t v) { return v >= 0; }))
      return indices;
    std::optional<SmallVector<int64_t>> sizes = constantValues(dims);
    if (values && sizes) {
      // One past the start stays negative: the op fails on it when the
      // model runs, as onnxruntime does.
      for (auto [k, value] : llvm::enumerate(*values))
        if (int64_t size = (*sizes)[k % sizes->size()];
            value < 0 && value >= -size)
          value += size;
      return intConstant(ctx, *values, elementType,
                         constant.getType().getShape());
    }
  }
  int64_t rank = NodeContext::rank(indices);
  Value dim;
  if (std::optional<SmallVector<int64_t>> sizes = constantValues(dims)) {
    SmallVector<int64_t> shape(rank, 1);
    if (sizes->size() > 1)
      shape.back() = sizes->size();
    dim = intConstant(ctx, *sizes, elementType, shape);
  } else {
    dim = ctx.unsqueezeTo(dimsTensor(elementType), rank);
  }
  Value zero = intConstant(ctx, 0, elementType, SmallVector<int64_t>(rank, 1));
  Value isNegative = ctx.binary<LtOp>(indices, zero);
  Value wrapped = ctx.binary<AddOp>(indices, dim);
  // An index before the start stays as it is, out of range: the op's check
  // reports it when the model runs.
  Value inRange = ctx.binary<AndOp>(isNegative, ctx.binary<GeOp>(wrapped, zero));
  return ctx.create<SelectOp>(inRange, wrapped, indices);
}

/// Indices along `axis` of `data`, made non-negative.
Value normalizeAxisIndices(NodeContext &ctx, Value indices, Value data,
                           int64_t axis) {
  return normalizeIndices(ctx, indices, shapeOf(data)[axis], [&](Type type) {
    return dimScalar(ctx, data, axis, type);
  });
}

/// The rows of the last axis of ND indices address axes [from, from + n) of
/// `data`; made non-negative.
Value normalizeNdIndices(NodeContext &ctx, Value indices, Value data,
                         int64_t from) {
  if (!indices || !data || NodeContext::rank(indices) < 1)
    return indices;
  std::optional<int64_t> n = shapeOf(indices).back().getConstant();
  if (!n || from + *n > NodeContext::rank(data))
    return indices; // the op reports the shape error
  Shape shape = shapeOf(data);
  return normalizeIndices(
      ctx, indices, ArrayRef<TDim>(shape).slice(from, *n),
      [&](Type type) { return shapeTensor(ctx, data, from, from + *n, type); });
}

/// Checks that the first `count` inputs are given before running `handler`.
OpHandler withInputs(unsigned count, OpHandler handler) {
  return [count, handler](NodeContext &ctx, Outputs &outputs) {
    for (unsigned i = 0; i < count; ++i)
      if (!ctx.hasInput(i))
        return ctx.error("missing input " + Twine(i));
    return handler(ctx, outputs);
  };
}

/// Input `i`, when given, must hold integer indices.
LogicalResult checkIndices(NodeContext &ctx, unsigned i, StringRef what) {
  Type type = NodeContext::elementType(ctx.input(i));
  if (ctx.hasInput(i) && (!isa<IntegerType>(type) || type.isInteger(1)))
    return ctx.error(what + " must be integers");
  return success();
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

/// The dims a Reshape's `shape` input asks for when only its values tell:
/// the zeros become the input's dims (unless `allowZero`) and a -1 the
/// volume left over, computed on the values, which are then bound as fresh
/// dims. Null when the shape has no static length.
std::optional<SmallVector<TDim>> reshapeDimsFromValues(NodeContext &ctx,
                                                       Value input, Value shape,
                                                       bool allowZero) {
  Type i64 = ctx.getBuilder().getI64Type();
  int64_t rank = NodeContext::rank(input);
  std::optional<int64_t> count = shapeOf(shape).size() == 1
                                     ? shapeOf(shape)[0].getConstant()
                                     : std::nullopt;
  if (!count)
    return std::nullopt;
  Value requested = ctx.castTo(shape, i64);
  Value inputDims = shapeTensor(ctx, input, 0, rank, i64);
  auto fill = [&](int64_t value) { return i64Constant(ctx, value, {1}); };
  if (!allowZero && *count > 0) {
    // Dim i of the input for position i (positions past the rank copy
    // nothing and keep their zero).
    Value copied = sliceAxis(ctx, inputDims, 0, TDim(0),
                             TDim(std::min<int64_t>(*count, rank)));
    if (*count > rank)
      copied = ctx.create<ConcatOp>(
          ValueRange{copied,
                     i64Constant(ctx, SmallVector<int64_t>(*count - rank, 0),
                                 {*count - rank})},
          int64_t(0));
    requested = ctx.create<SelectOp>(ctx.binary<EqOp>(requested, fill(0)),
                                     copied, requested);
  }
  if (*count > 0) {
    Value inferred = ctx.binary<EqOp>(requested, fill(-1));
    Value known =
        ctx.create<ReduceOp>(ctx.create<SelectOp>(inferred, fill(1), requested),
                             Reducer::Prod, ArrayRef<int64_t>{0});
    Value total = rank == 0 ? fill(1)
                            : ctx.create<ReduceOp>(inputDims, Reducer::Prod,
                                                   ArrayRef<int64_t>{0});
    requested = ctx.create<SelectOp>(inferred, ctx.binary<DivOp>(total, known),
                                     requested);
  }
  if (!requested)
    return std::nullopt;
  return ctx.bindValuesAsDims(requested, "shape");
}

LogicalResult reshapeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  SmallVector<TDim> requested;
  bool allowZero = ctx.getOpset() >= 14 && ctx.getInt("allowzero", 0);
  if (ctx.getOpset() < 5) {
    std::optional<SmallVector<int64_t>> attr = ctx.getInts("shape");
    if (!attr)
      return ctx.error("missing shape attribute");
    requested = llvm::to_vector_of<TDim>(*attr);
  } else if (std::optional<SmallVector<TDim>> dims = ctx.getDims(1)) {
    requested = *dims;
  } else {
    std::optional<SmallVector<TDim>> bound =
        reshapeDimsFromValues(ctx, input, ctx.input(1), allowZero);
    if (!bound)
      return ctx.unsupported("a shape of unknown length");
    outputs.push_back(reshapeToBoundDims(ctx, input, *bound));
    return success();
  }
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
  Value result = reshapeTo(ctx, input, target);
  // A scalar shape value reshaped to [1] (or back) keeps its value.
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(input))
    withDims(ctx, result, *dims);
  outputs.push_back(result);
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
  if (auto fromValues = axesFromValues(ctx, 13, 1)) {
    // Axes known when the model runs: the dims off them, bound.
    auto [axes, count] = *fromValues;
    int64_t rank = shape.size();
    if (count > rank)
      return ctx.error(Twine(count) + " axes for rank " + Twine(rank));
    Value dims = unflaggedDims(ctx, ctx.create<ShapeOfOp>(input),
                               axisFlags(ctx, axes, rank), rank - count);
    std::optional<SmallVector<TDim>> bound =
        dims ? ctx.bindValuesAsDims(dims, "squeezed") : std::nullopt;
    if (!bound)
      return failure();
    outputs.push_back(reshapeToBoundDims(ctx, input, *bound));
    return success();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      axesOperand(ctx, 13, 1);
  if (failed(given))
    return failure();
  SmallVector<int64_t> axes;
  if (*given) {
    FailureOr<SmallVector<int64_t>> normalized =
        ctx.normalizeAxes(**given, shape.size(), /*sortedUnique=*/true);
    if (failed(normalized))
      return failure();
    axes = *normalized;
  } else {
    // Without axes, every dim known to be 1 goes.
    for (auto [axis, dim] : llvm::enumerate(shape))
      if (dim == TDim(1))
        axes.push_back(axis);
  }
  // A symbolic dim squeezed must be 1 when the model runs.
  Value result = input;
  for (int64_t axis : llvm::reverse(axes)) {
    FailureOr<Value> single =
        ctx.assumeDim(result, axis, TDim(1), "the squeezed input");
    if (failed(single))
      return failure();
    result = ctx.create<RmAxisOp>(*single, axis);
  }
  if (std::optional<SmallVector<TDim>> dims = ctx.getDims(input))
    withDims(ctx, result, *dims);
  outputs.push_back(result);
  return success();
}

LogicalResult unsqueezeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  if (auto fromValues = axesFromValues(ctx, 13, 1)) {
    // Axes known when the model runs: unit dims where they say, bound.
    auto [axes, count] = *fromValues;
    int64_t rank = NodeContext::rank(input) + count;
    Value dims = dimsWithUnitsAt(ctx, input, axisFlags(ctx, axes, rank));
    std::optional<SmallVector<TDim>> bound =
        dims ? ctx.bindValuesAsDims(dims, "unsqueezed") : std::nullopt;
    if (!bound)
      return failure();
    outputs.push_back(reshapeToBoundDims(ctx, input, *bound));
    return success();
  }
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      axesOperand(ctx, 13, 1);
  if (failed(given))
    return failure();
  if (!*given)
    return ctx.error("missing axes");
  FailureOr<SmallVector<int64_t>> axes =
      ctx.normalizeAxes(**given, NodeContext::rank(input) + (*given)->size(),
                        /*sortedUnique=*/true);
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
  // The other axes must agree; symbolic dims the shapes cannot prove
  // equal are assumed so, and checked when the model runs.
  Shape first = shapeOf(inputs.front());
  for (auto [index, input] : llvm::enumerate(inputs)) {
    Shape shape = shapeOf(input);
    if (shape.size() != first.size())
      break;
    for (int64_t i = 0; i < rank; ++i)
      if (i != *axis && shape[i] != first[i]) {
        FailureOr<Value> aligned =
            ctx.assumeDim(input, i, first[i], "input " + Twine(index));
        if (failed(aligned))
          return failure();
        input = *aligned;
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

//===----------------------------------------------------------------------===//
// Slicing
//===----------------------------------------------------------------------===//

/// Resolves an ONNX slice bound against `dim`: negative counts from the end,
/// out of range clamps (to [0, dim] for positive steps, to [-1, dim - 1] for
/// the end and [0, dim - 1] for the start of negative steps). Against a
/// symbolic dim, a constant bound is taken as in range, and the INT_MAX of
/// ONNX exports means the end of the axis.
TDim resolveBound(const TDim &bound, const TDim &dim, int64_t step,
                  bool isEnd) {
  std::optional<int64_t> value = bound.getConstant();
  if (!value)
    return bound;
  constexpr int64_t kHuge = int64_t(1) << 62;
  int64_t v = std::clamp(*value, -kHuge, kHuge);
  int64_t lowest = step < 0 && isEnd ? -1 : 0;
  if (std::optional<int64_t> n = dim.getConstant()) {
    if (v < 0)
      v += *n;
    return std::clamp(v, lowest, step < 0 ? *n - 1 : *n);
  }
  if (v >= kLargeIndex)
    return step < 0 ? dim - TDim(1) : dim;
  if (v <= -kLargeIndex)
    return TDim(lowest);
  return v < 0 ? dim + TDim(v) : TDim(v);
}

/// One axis of an ONNX slice with resolved bounds: a tract.slice, then for
/// negative steps a reversal, then a downsample for strides.
Value sliceWithStep(NodeContext &ctx, Value input, int64_t axis, TDim start,
                    TDim end, int64_t step) {
  if (step > 0) {
    std::optional<int64_t> s = start.getConstant(), e = end.getConstant();
    if (s && e && *e < *s)
      end = start;
    Value result = sliceAxis(ctx, input, axis, start, end);
    if (step > 1)
      result = ctx.create<DownsampleOp>(result, axis, step, int64_t(0));
    return result;
  }
  // Elements start, start + step, ... down to end (excluded): the range
  // (end, start] reversed.
  TDim low = end + TDim(1), high = start + TDim(1);
  std::optional<int64_t> l = low.getConstant(), h = high.getConstant();
  if (l && h && *h < *l)
    high = low;
  Value result = reverseAxis(ctx, sliceAxis(ctx, input, axis, low, high), axis);
  if (step < -1)
    result = ctx.create<DownsampleOp>(result, axis, -step, int64_t(0));
  return result;
}

/// The positions an ONNX slice picks out of a constant-length axis.
SmallVector<int64_t> slicePositions(int64_t n, int64_t start, int64_t end,
                                    int64_t step) {
  SmallVector<int64_t> positions;
  TDim dim(n);
  int64_t s = *resolveBound(start, dim, step, false).getConstant();
  int64_t e = *resolveBound(end, dim, step, true).getConstant();
  for (int64_t i = s; step > 0 ? i < e : i > e; i += step)
    positions.push_back(i);
  return positions;
}

/// Element `i` of a 1-D integer tensor, as a scalar.
Value elementOf(NodeContext &ctx, Value vector, int64_t i) {
  return ctx.create<GatherOp>(vector, i64Constant(ctx, i, {}), int64_t(0));
}

/// A slice bound only known at run time, resolved like resolveBound with a
/// positive step: wrapped when negative, clamped to [0, dim].
Value resolveDynamicBound(NodeContext &ctx, Value bound, Value input,
                          int64_t axis) {
  Type type = NodeContext::elementType(bound);
  Value dim = dimScalar(ctx, input, axis, type);
  Value zero = intConstant(ctx, 0, type, {});
  Value wrapped = ctx.create<SelectOp>(ctx.binary<LtOp>(bound, zero),
                                       ctx.binary<AddOp>(bound, dim), bound);
  return ctx.binary<MinOp>(ctx.binary<MaxOp>(wrapped, zero), dim);
}

/// A Slice whose axes or steps only the model's values tell. Per axis that
/// may be sliced (those of constant `axes`, else every axis, taking the
/// defaults where the axes do not name it), the bounds are resolved on the
/// values as ONNX says (negative from the end, clamped by the step's sign),
/// the length bound to a fresh dim, and the positions start + step * i
/// gathered.
Value sliceFromValues(NodeContext &ctx, Value input,
                      std::optional<SmallVector<int64_t>> axes, int64_t count) {
  Type i64 = ctx.getBuilder().getI64Type();
  int64_t rank = NodeContext::rank(input);
  auto scalar = [&](int64_t v) { return i64Constant(ctx, v, {}); };
  Value starts = ctx.castTo(ctx.input(1), i64);
  Value ends = ctx.castTo(ctx.input(2), i64);
  Value steps = ctx.hasInput(4)
                    ? ctx.castTo(ctx.input(4), i64)
                    : i64Constant(ctx, SmallVector<int64_t>(count, 1), {count});
  SmallVector<int64_t> sliced;
  std::function<Value(Value, int64_t, int64_t)> element;
  if (axes) {
    sliced = *axes;
    element = [&](Value values, int64_t i, int64_t) {
      return elementOf(ctx, values, i);
    };
  } else {
    // [rank, count]: axis a is named by axes[j]; an axis no one names
    // takes the default bound.
    sliced = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    Value given = ctx.castTo(ctx.input(3), i64);
    Value wrapped =
        ctx.create<SelectOp>(ctx.binary<LtOp>(given, scalar(0)),
                             ctx.binary<AddOp>(given, scalar(rank)), given);
    Value named = ctx.binary<EqOp>(
        i64Constant(ctx, llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                    {rank, 1}),
        ctx.create<AddAxisOp>(wrapped, int64_t(0)));
    Value any = ctx.create<ReduceOp>(named, Reducer::Any, ArrayRef<int64_t>{1});
    element = [&, named, any](Value values, int64_t axis, int64_t fallback) {
      Value picked = ctx.create<ReduceOp>(
          ctx.create<SelectOp>(named, ctx.create<AddAxisOp>(values, int64_t(0)),
                               i64Constant(ctx, 0, {1, 1})),
          Reducer::Sum, ArrayRef<int64_t>{1});
      Value full =
          ctx.create<SelectOp>(any, picked, i64Constant(ctx, fallback, {1, 1}));
      Value row = sliceAxis(ctx, full, 0, TDim(axis), TDim(axis + 1));
      return ctx.create<RmAxisOp>(ctx.create<RmAxisOp>(row, int64_t(1)),
                                  int64_t(0));
    };
  }
  struct Bounds {
    Value start, step, length;
  };
  SmallVector<Bounds> bounds;
  SmallVector<Value> lengths, strides;
  for (auto [i, axis] : llvm::enumerate(sliced)) {
    Value start = element(starts, i, 0);
    Value end = element(ends, i, kLargeIndex);
    Value step = element(steps, i, 1);
    Value dim = dimScalar(ctx, input, axis, i64);
    auto wrap = [&](Value v) {
      return ctx.create<SelectOp>(ctx.binary<LtOp>(v, scalar(0)),
                                  ctx.binary<AddOp>(v, dim), v);
    };
    auto clamp = [&](Value v, Value low, Value high) {
      return ctx.binary<MinOp>(ctx.binary<MaxOp>(v, low), high);
    };
    start = wrap(start);
    end = wrap(end);
    Value last = ctx.binary<SubOp>(dim, scalar(1));
    Value forward = ctx.binary<GtOp>(step, scalar(0));
    start = ctx.create<SelectOp>(forward, clamp(start, scalar(0), dim),
                                 clamp(start, scalar(0), last));
    end = ctx.create<SelectOp>(forward, clamp(end, scalar(0), dim),
                               clamp(end, scalar(-1), last));
    Value span = ctx.create<SelectOp>(forward, ctx.binary<SubOp>(end, start),
                                      ctx.binary<SubOp>(start, end));
    Value stride = ctx.create<SelectOp>(forward, step, ctx.create<NegOp>(step));
    span = ctx.binary<MaxOp>(span, scalar(0));
    // A step of 0 is refused where the values are bound; until then the
    // division must not trap.
    Value divisor = ctx.binary<MaxOp>(stride, scalar(1));
    Value length = ctx.binary<DivOp>(
        ctx.binary<AddOp>(span, ctx.binary<SubOp>(divisor, scalar(1))),
        divisor);
    bounds.push_back({start, step, length});
    lengths.push_back(ctx.create<AddAxisOp>(length, int64_t(0)));
    strides.push_back(ctx.create<AddAxisOp>(stride, int64_t(0)));
  }
  // The lengths, then the strides (each checked >= 1 where bound).
  SmallVector<Value> all(lengths);
  all.append(strides);
  Value allValues = ctx.create<ConcatOp>(ValueRange(all), int64_t(0));
  std::optional<SmallVector<TDim>> bound =
      allValues ? ctx.bindValuesAsDims(allValues, "slice") : std::nullopt;
  if (!bound)
    return {};
  for (size_t i = 0; i < sliced.size(); ++i)
    ctx.getGraph().assumeAtMost(TDim(1), (*bound)[sliced.size() + i]);
  Value result = input;
  for (auto [i, axis] : llvm::enumerate(sliced)) {
    const Bounds &b = bounds[i];
    Value counter = ctx.create<RangeOp>(scalar(0), b.length, scalar(1),
                                        dimAttr(ctx, (*bound)[i]));
    Value positions =
        ctx.binary<AddOp>(ctx.binary<MulOp>(counter, b.step), b.start);
    result = ctx.create<GatherOp>(result, positions, axis);
  }
  return result;
}

LogicalResult sliceHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = shape.size();
  std::optional<SmallVector<TDim>> starts, ends;
  std::optional<SmallVector<int64_t>> axes, steps;
  if (ctx.getOpset() < 10) {
    std::optional<SmallVector<int64_t>> s = ctx.getInts("starts");
    std::optional<SmallVector<int64_t>> e = ctx.getInts("ends");
    if (!s || !e)
      return ctx.error("missing starts or ends");
    starts = llvm::to_vector_of<TDim>(*s);
    ends = llvm::to_vector_of<TDim>(*e);
    axes = ctx.getInts("axes");
  } else {
    auto isIndexVector = [&](unsigned i) {
      Type type = NodeContext::elementType(ctx.input(i));
      return ctx.hasInput(i) && NodeContext::rank(ctx.input(i)) == 1 &&
             isa<IntegerType>(type) && !type.isInteger(1);
    };
    if (!isIndexVector(1) || !isIndexVector(2))
      return ctx.error("starts and ends must be 1-D integer tensors");
    starts = ctx.getDims(1);
    ends = ctx.getDims(2);
    bool valueAxes = ctx.hasInput(3) && !(axes = ctx.getConstInts(3));
    bool valueSteps = ctx.hasInput(4) && !(steps = ctx.getConstInts(4));
    bool unitSteps =
        !ctx.hasInput(4) ||
        (steps && llvm::all_of(*steps, [](int64_t s) { return s == 1; }));
    if (valueAxes || valueSteps || ((!starts || !ends) && !unitSteps)) {
      // Axes or steps known when the model runs, or run-time bounds with
      // strides.
      std::optional<int64_t> count =
          shapeOf(ctx.input(1)).front().getConstant();
      if (!count)
        return ctx.unsupported("starts of unknown length");
      if (valueSteps && !isIndexVector(4))
        return ctx.error("steps must be a 1-D integer tensor");
      if (valueAxes && !isIndexVector(3))
        return ctx.error("axes must be a 1-D integer tensor");
      if (axes) {
        FailureOr<SmallVector<int64_t>> normalized = ctx.normalizeAxes(
            *axes, NodeContext::rank(input), /*sortedUnique=*/true);
        if (failed(normalized))
          return failure();
        for (int64_t &axis : *axes)
          axis = *ctx.normalizeAxis(axis, NodeContext::rank(input));
      }
      if (steps && llvm::is_contained(*steps, 0))
        return ctx.error("a slice step is 0");
      if ((axes && static_cast<int64_t>(axes->size()) != *count) ||
          (steps && static_cast<int64_t>(steps->size()) != *count))
        return ctx.error("starts, axes and steps differ in length");
      Value result = sliceFromValues(ctx, input, axes, *count);
      return pushOutput(outputs, result);
    }
  }
  // The number of sliced axes, from whichever operand tells it.
  int64_t count =
      starts ? starts->size()
      : ends ? ends->size()
      : axes ? axes->size()
             : shapeOf(ctx.input(1)).front().getConstant().value_or(-1);
  if (count < 0)
    return ctx.unsupported("starts of unknown length");
  if (!axes)
    axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  if (!steps)
    steps = SmallVector<int64_t>(count, 1);
  if ((starts && static_cast<int64_t>(starts->size()) != count) ||
      (ends && static_cast<int64_t>(ends->size()) != count) ||
      static_cast<int64_t>(axes->size()) != count ||
      static_cast<int64_t>(steps->size()) != count)
    return ctx.error("starts, ends, axes and steps differ in length");
  FailureOr<SmallVector<int64_t>> sortedAxes =
      ctx.normalizeAxes(*axes, rank, /*sortedUnique=*/true);
  if (failed(sortedAxes))
    return failure();
  for (int64_t &axis : *axes)
    axis = *ctx.normalizeAxis(axis, rank);
  constexpr int64_t kLargestStep = int64_t(1) << 62;
  if (llvm::any_of(*steps, [&](int64_t step) {
        return step == 0 || step > kLargestStep || step < -kLargestStep;
      }))
    return ctx.error("slice steps " +
                     dimsToString(llvm::to_vector_of<TDim>(*steps)) +
                     " hold 0 or a step out of range");

  // Slicing a shape vector slices its symbolic value.
  std::optional<SmallVector<TDim>> dims = ctx.getDims(input);
  if (dims && rank == 1 && starts && ends) {
    std::optional<SmallVector<int64_t>> s = constantValues(*starts);
    std::optional<SmallVector<int64_t>> e = constantValues(*ends);
    if (s && e) {
      SmallVector<TDim> picked;
      for (int64_t i :
           slicePositions(dims->size(), s->front(), e->front(), steps->front()))
        picked.push_back((*dims)[i]);
      Type type = NodeContext::elementType(input);
      if (Value constant = dimsConstant(
              ctx, picked, type, {static_cast<int64_t>(picked.size())})) {
        outputs.push_back(constant);
        return success();
      }
      Value result = sliceWithStep(
          ctx, input, 0,
          resolveBound((*starts)[0], shape[0], steps->front(), false),
          resolveBound((*ends)[0], shape[0], steps->front(), true),
          steps->front());
      outputs.push_back(withDims(ctx, result, picked));
      return success();
    }
  }

  Value result = input;
  if (starts && ends) {
    for (int64_t i = 0; i < count; ++i) {
      int64_t axis = (*axes)[i], step = (*steps)[i];
      TDim dim = shape[axis];
      result = sliceWithStep(ctx, result, axis,
                             resolveBound((*starts)[i], dim, step, false),
                             resolveBound((*ends)[i], dim, step, true), step);
    }
    outputs.push_back(result);
    return success();
  }
  // Bounds known at run time only: a dyn_slice per axis, of a fresh length.
  if (llvm::any_of(*steps, [](int64_t step) { return step != 1; }))
    return ctx.unsupported("steps other than 1 with non-constant starts or "
                           "ends");
  Value startValues = ctx.input(1), endValues = ctx.input(2);
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = (*axes)[i];
    Value start =
        resolveDynamicBound(ctx, elementOf(ctx, startValues, i), input, axis);
    Value end =
        resolveDynamicBound(ctx, elementOf(ctx, endValues, i), input, axis);
    end = ctx.binary<MaxOp>(end, start);
    result = ctx.create<DynSliceOp>(result, start, end, axis,
                                    dimAttr(ctx, ctx.freshSymbol("slice")));
  }
  outputs.push_back(result);
  return success();
}

LogicalResult splitHandler(NodeContext &ctx, Outputs &outputs) {
  FailureOr<SplitAxis> split = getSplitAxis(ctx);
  if (failed(split))
    return failure();
  auto [input, axis, dim] = *split;
  int64_t parts = ctx.getNumOutputs();
  if (parts < 1)
    return ctx.error("no outputs");
  SmallVector<TDim> sizes;
  std::optional<SmallVector<TDim>> splitSizes;
  if (ctx.getOpset() >= 13 || (ctx.getOpset() < 2 && ctx.hasInput(1))) {
    if (ctx.hasInput(1) && !(splitSizes = ctx.getDims(1))) {
      splitSizes = splitSizesFromValues(ctx, ctx.input(1), dim);
      if (!splitSizes)
        return ctx.unsupported("split sizes of unknown length");
    }
  } else if (std::optional<SmallVector<int64_t>> attr = ctx.getInts("split")) {
    splitSizes = llvm::to_vector_of<TDim>(*attr);
  }
  if (splitSizes) {
    sizes = *splitSizes;
  } else if (std::optional<int64_t> n = ctx.getOptInt("num_outputs");
             n && ctx.getOpset() >= 18) {
    // Chunks of ceil(dim / n), the last one smaller.
    if (*n < 1)
      return ctx.error("num_outputs must be positive");
    TDim chunk = dim.ceilDiv(*n);
    sizes.assign(*n - 1, chunk);
    sizes.push_back(dim - chunk * TDim(*n - 1));
  } else {
    if (ctx.getOpset() >= 18)
      return ctx.error("neither split nor num_outputs is given");
    TDim chunk = dim.floorDiv(parts);
    if (chunk * TDim(parts) != dim)
      return ctx.error("dim " + dim.toString() + " does not split into " +
                       Twine(parts) + " equal parts");
    sizes.assign(parts, chunk);
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    return ctx.error(Twine(sizes.size()) + " split sizes for " + Twine(parts) +
                     " outputs");
  TDim total(0);
  for (const TDim &size : sizes)
    total += size;
  if (std::optional<int64_t> excess = (total - dim).getConstant();
      excess && *excess != 0)
    return ctx.error("split sizes " + dimsToString(sizes) +
                     " do not add up to dim " + dim.toString());
  TDim offset(0);
  for (const TDim &size : sizes) {
    if (std::optional<int64_t> value = size.getConstant(); value && *value < 0)
      return ctx.error("negative split size in " + dimsToString(sizes));
    outputs.push_back(sliceAxis(ctx, input, axis, offset, offset + size));
    offset += size;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

LogicalResult gatherHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "indices")))
    return failure();
  Value data = ctx.input(0), indices = ctx.input(1);
  int64_t rank = NodeContext::rank(data);
  FailureOr<int64_t> axis = ctx.normalizeAxis(ctx.getInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  // Picking from a shape vector picks symbolic values.
  std::optional<SmallVector<TDim>> dims = ctx.getDims(data);
  std::optional<SmallVector<int64_t>> positions = ctx.getConstInts(1);
  if (dims && rank == 1 && positions && NodeContext::rank(indices) <= 1) {
    SmallVector<TDim> picked;
    for (int64_t position : *positions) {
      int64_t n = dims->size();
      if (position < -n || position >= n)
        return ctx.error("index " + Twine(position) +
                         " is out of range for dim " + Twine(n));
      picked.push_back((*dims)[position < 0 ? position + n : position]);
    }
    SmallVector<int64_t> shape;
    if (NodeContext::rank(indices) == 1)
      shape.push_back(picked.size());
    if (Value constant =
            dimsConstant(ctx, picked, NodeContext::elementType(data), shape)) {
      outputs.push_back(constant);
      return success();
    }
    outputs.push_back(
        withDims(ctx, ctx.create<GatherOp>(data, indices, *axis), picked));
    return success();
  }
  outputs.push_back(ctx.create<GatherOp>(data, indices, *axis));
  return success();
}

LogicalResult gatherElementsHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "indices")))
    return failure();
  Value data = ctx.input(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), NodeContext::rank(data));
  if (failed(axis))
    return failure();
  Value indices = normalizeAxisIndices(ctx, ctx.input(1), data, *axis);
  outputs.push_back(ctx.create<GatherElementsOp>(data, indices, *axis));
  return success();
}

LogicalResult gatherNdHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "indices")))
    return failure();
  Value data = ctx.input(0);
  int64_t batchDims = ctx.getInt("batch_dims", 0);
  if (batchDims < 0)
    return ctx.error("negative batch_dims");
  Value indices = normalizeNdIndices(ctx, ctx.input(1), data, batchDims);
  outputs.push_back(ctx.create<GatherNdOp>(data, indices, batchDims));
  return success();
}

FailureOr<ScatterReduction> scatterReduction(NodeContext &ctx) {
  std::string reduction = ctx.getString("reduction", "none");
  if (reduction == "none")
    return ScatterReduction::None;
  if (reduction == "add")
    return ScatterReduction::Add;
  if (reduction == "mul")
    return ScatterReduction::Mul;
  if (reduction == "min" && ctx.getOpset() >= 18)
    return ScatterReduction::Min;
  if (reduction == "max" && ctx.getOpset() >= 18)
    return ScatterReduction::Max;
  (void)ctx.unsupported("reduction '" + reduction + "'");
  return failure();
}

LogicalResult scatterElementsHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "indices")))
    return failure();
  Value data = ctx.input(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", 0), NodeContext::rank(data));
  FailureOr<ScatterReduction> reduction = scatterReduction(ctx);
  if (failed(axis) || failed(reduction))
    return failure();
  Value indices = normalizeAxisIndices(ctx, ctx.input(1), data, *axis);
  outputs.push_back(ctx.create<ScatterElementsOp>(data, indices, ctx.input(2),
                                                  *axis, *reduction));
  return success();
}

LogicalResult scatterNdHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "indices")))
    return failure();
  Value data = ctx.input(0);
  FailureOr<ScatterReduction> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  Value indices = normalizeNdIndices(ctx, ctx.input(1), data, 0);
  outputs.push_back(
      ctx.create<ScatterNdOp>(data, indices, ctx.input(2), *reduction));
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting, tiling, padding
//===----------------------------------------------------------------------===//

LogicalResult expandHandler(NodeContext &ctx, Outputs &outputs) {
  bool fromValues;
  FailureOr<SmallVector<TDim>> requested =
      shapeInput(ctx, 1, "shape", &fromValues);
  if (failed(requested))
    return failure();
  int64_t rank =
      std::max<int64_t>(NodeContext::rank(ctx.input(0)), requested->size());
  Value input = ctx.unsqueezeTo(ctx.input(0), rank);
  Shape shape = shapeOf(input);
  // The target is aligned to the right; the broadcast goes both ways.
  SmallVector<TDim> target(rank - requested->size(), TDim(1));
  llvm::append_range(target, *requested);
  for (auto [dim, wanted] : llvm::zip(shape, target)) {
    // A dim other than 1 stays; a value decided at run time may only be 1
    // or that dim there.
    if (wanted == TDim(1) || wanted == dim || (fromValues && dim != TDim(1))) {
      wanted = dim;
      continue;
    }
    if (dim == TDim(1))
      continue;
    std::optional<TDim> both = TDim::broadcast(dim, wanted);
    if (!both || *both != dim)
      return ctx.error("cannot expand dim " + dim.toString() + " to " +
                       wanted.toString());
    wanted = dim;
  }
  if (ArrayRef<TDim>(target) == ArrayRef<TDim>(shape)) {
    outputs.push_back(input);
    return success();
  }
  outputs.push_back(ctx.create<BroadcastOp>(input, shapeAttr(ctx, target)));
  return success();
}

LogicalResult tileHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  int64_t rank = NodeContext::rank(input);
  SmallVector<TDim> multipliers;
  if (ctx.getOpset() < 6) {
    // Tile-1 repeats one axis, both given as scalar inputs.
    std::optional<SmallVector<int64_t>> tiles = ctx.getConstInts(1);
    std::optional<SmallVector<int64_t>> axis = ctx.getConstInts(2);
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1)
      return ctx.unsupported("non-constant tiles or axis");
    FailureOr<int64_t> normalized = ctx.normalizeAxis(axis->front(), rank);
    if (failed(normalized))
      return failure();
    multipliers.assign(rank, TDim(1));
    multipliers[*normalized] = TDim(tiles->front());
  } else {
    FailureOr<SmallVector<TDim>> repeats = shapeInput(ctx, 1, "repeats");
    if (failed(repeats))
      return failure();
    multipliers = *repeats;
  }
  if (static_cast<int64_t>(multipliers.size()) != rank)
    return ctx.error(Twine(multipliers.size()) + " repeats for rank " +
                     Twine(rank));
  for (const TDim &multiplier : multipliers)
    if (std::optional<int64_t> value = multiplier.getConstant();
        value && *value < 0)
      return ctx.error("negative repeats " + dimsToString(multipliers));
  if (llvm::all_of(multipliers, [](const TDim &multiplier) {
        return multiplier == TDim(1);
      })) {
    outputs.push_back(input);
    return success();
  }
  outputs.push_back(ctx.create<TileOp>(input, shapeAttr(ctx, multipliers)));
  return success();
}

/// A scalar attribute of `type` with the value `value`.
TypedAttr scalarAttr(Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(floatType, value);
  return IntegerAttr::get(type, APInt(type.getIntOrFloatBitWidth(),
                                      static_cast<int64_t>(value),
                                      /*isSigned=*/true,
                                      /*implicitTrunc=*/true));
}

/// A Pad whose pads only the model's values tell: per axis, the crops
/// (negative pads) and pads are bound to fresh dims, the axis cut, and the
/// border built from the fill value, the edges, or a reflection, then
/// concatenated around it.
Value padFromValues(NodeContext &ctx, Value input, ArrayRef<int64_t> axes,
                    PadMode mode, Value fill) {
  Type i64 = ctx.getBuilder().getI64Type();
  int64_t count = axes.size();
  Value pads = ctx.castTo(ctx.input(1), i64);
  Value zero = i64Constant(ctx, 0, {1});
  // [crop before, crop after, pad before, pad after] per axis.
  Value crops = ctx.binary<MaxOp>(ctx.create<NegOp>(pads), zero);
  Value grows = ctx.binary<MaxOp>(pads, zero);
  Value amounts = ctx.create<ConcatOp>(ValueRange{crops, grows}, int64_t(0));
  std::optional<SmallVector<TDim>> bound =
      amounts ? ctx.bindValuesAsDims(amounts, "pad") : std::nullopt;
  if (!bound)
    return {};
  Value result = input;
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axes[i];
    TDim cropBefore = (*bound)[i], cropAfter = (*bound)[count + i];
    TDim before = (*bound)[2 * count + i], after = (*bound)[3 * count + i];
    TDim dim = shapeOf(result)[axis];
    // What the values must allow, checked where they are bound: crops
    // within the axis, a reflection shorter than what is left, an edge to
    // repeat.
    TDim kept = dim - cropBefore - cropAfter;
    ctx.getGraph().assumeAtMost(TDim(0), kept);
    if (mode == PadMode::Reflect) {
      ctx.getGraph().assumeAtMost(before + TDim(1), kept);
      ctx.getGraph().assumeAtMost(after + TDim(1), kept);
    } else if (mode == PadMode::Edge) {
      ctx.getGraph().assumeAtMost(TDim(1), kept);
    }
    result = sliceAxis(ctx, result, axis, cropBefore, dim - cropAfter);
    dim = shapeOf(result)[axis];
    auto border = [&](const TDim &size, bool head) -> Value {
      Shape shape = shapeOf(result);
      shape[axis] = size;
      switch (mode) {
      case PadMode::Constant:
        return ctx.create<BroadcastOp>(fill, shapeAttr(ctx, shape));
      case PadMode::Edge: {
        Value edge = head ? sliceAxis(ctx, result, axis, TDim(0), TDim(1))
                          : sliceAxis(ctx, result, axis, dim - TDim(1), dim);
        return ctx.create<BroadcastOp>(edge, shapeAttr(ctx, shape));
      }
      case PadMode::Reflect: {
        Value mirrored =
            head ? sliceAxis(ctx, result, axis, TDim(1), size + TDim(1))
                 : sliceAxis(ctx, result, axis, dim - size - TDim(1),
                             dim - TDim(1));
        return reverseAxis(ctx, mirrored, axis);
      }
      }
      llvm_unreachable("every pad mode is handled");
    };
    result = ctx.create<ConcatOp>(
        ValueRange{border(before, true), result, border(after, false)},
        int64_t(axis));
  }
  return result;
}

LogicalResult padHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = shape.size();
  Type elementType = NodeContext::elementType(input);
  std::string modeName = ctx.getString("mode", "constant");
  PadMode mode;
  if (modeName == "constant")
    mode = PadMode::Constant;
  else if (modeName == "reflect")
    mode = PadMode::Reflect;
  else if (modeName == "edge")
    mode = PadMode::Edge;
  else
    return ctx.unsupported("mode '" + modeName + "'");

  std::optional<SmallVector<int64_t>> pads;
  TypedAttr value;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (ctx.getOpset() < 11) {
    pads = ctx.getInts(ctx.getOpset() < 2 ? "paddings" : "pads");
    if (!pads)
      return ctx.error("missing pads");
    if (float fill = ctx.getFloat("value", 0.0f); fill != 0.0f)
      value = scalarAttr(elementType, fill);
  } else {
    pads = ctx.getConstInts(1);
    if (!pads) {
      // Pads known when the model runs.
      if (ctx.hasInput(3) && !ctx.getConstInts(3))
        return ctx.unsupported("axes decided when the model runs");
      SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      if (ctx.hasInput(3))
        axes = *ctx.getConstInts(3);
      for (int64_t &axis : axes) {
        FailureOr<int64_t> normalized = ctx.normalizeAxis(axis, rank);
        if (failed(normalized))
          return failure();
        axis = *normalized;
      }
      if (shapeOf(ctx.input(1)) !=
          Shape{TDim(2 * static_cast<int64_t>(axes.size()))})
        return ctx.error("pads must hold two values per padded axis");
      Value fill;
      if (mode == PadMode::Constant) {
        fill = ctx.hasInput(2) ? ctx.input(2) : Value();
        if (fill && volume(shapeOf(fill)) != TDim(1))
          return ctx.error("constant_value must hold one value");
        fill = fill ? reshapeTo(ctx, fill, SmallVector<TDim>(rank, TDim(1)))
                    : ctx.scalar(elementType, 0.0, rank);
        if (NodeContext::elementType(fill) != elementType)
          return ctx.error("constant_value is not of the data's type");
      }
      Value result = padFromValues(ctx, input, axes, mode, fill);
      return pushOutput(outputs, result);
    }
    if (ctx.hasInput(2)) {
      DenseElementsAttr fill = ctx.getConstant(2);
      if (!fill || fill.getNumElements() != 1)
        return ctx.unsupported("non-constant or non-scalar constant_value");
      if (fill.getElementType() != elementType)
        return ctx.error("constant_value is not of the data's type");
      auto attr = cast<TypedAttr>(*fill.value_begin<Attribute>());
      if (attr != scalarAttr(elementType, 0))
        value = attr;
    }
    if (ctx.hasInput(3)) {
      std::optional<SmallVector<int64_t>> given = ctx.getConstInts(3);
      if (!given)
        return ctx.unsupported("non-constant axes");
      axes.clear();
      for (int64_t axis : *given) {
        FailureOr<int64_t> normalized = ctx.normalizeAxis(axis, rank);
        if (failed(normalized))
          return failure();
        axes.push_back(*normalized);
      }
    }
  }
  int64_t count = axes.size();
  if (static_cast<int64_t>(pads->size()) != 2 * count)
    return ctx.error(Twine(pads->size()) + " pads for " + Twine(count) +
                     " axes");
  if (failed(ctx.checkSizes(*pads, "pad")))
    return failure();
  if (mode != PadMode::Constant)
    value = {};
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  Value result = input;
  for (auto [i, axis] : llvm::enumerate(axes)) {
    int64_t head = (*pads)[i], tail = (*pads)[i + count];
    // Negative pads crop.
    TDim start(std::max<int64_t>(0, -head));
    TDim end = shape[axis] - TDim(std::max<int64_t>(0, -tail));
    if (std::optional<int64_t> kept = (end - start).getConstant();
        kept && *kept < 0)
      return ctx.error("pads " + dimsToString(llvm::to_vector_of<TDim>(*pads)) +
                       " crop more than dim " + shape[axis].toString());
    result = sliceAxis(ctx, result, axis, start, end);
    before[axis] = std::max<int64_t>(0, head);
    after[axis] = std::max<int64_t>(0, tail);
  }
  if (llvm::all_of(before, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(after, [](int64_t p) { return p == 0; })) {
    outputs.push_back(result);
    return success();
  }
  outputs.push_back(ctx.create<PadOp>(result, before, after, mode, value));
  return success();
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

LogicalResult rangeHandler(NodeContext &ctx, Outputs &outputs) {
  Value start = ctx.input(0), limit = ctx.input(1), delta = ctx.input(2);
  Type elementType = NodeContext::elementType(start);
  TDim length;
  std::optional<SmallVector<double>> first = ctx.getConstFloats(0);
  std::optional<SmallVector<double>> last = ctx.getConstFloats(1);
  std::optional<SmallVector<double>> step = ctx.getConstFloats(2);
  std::optional<SmallVector<TDim>> from = ctx.getDims(0), to = ctx.getDims(1);
  std::optional<SmallVector<int64_t>> stride = ctx.getConstInts(2);
  if (step && step->size() == 1 && step->front() == 0)
    return ctx.error("range delta is 0");
  if (first && last && step && first->size() == 1 && last->size() == 1 &&
      step->size() == 1) {
    double count = std::ceil((last->front() - first->front()) / step->front());
    if (!std::isfinite(count) || count > double(int64_t(1) << 40))
      return ctx.error("range of " + std::to_string(count) + " elements");
    length = TDim(std::max<int64_t>(0, static_cast<int64_t>(count)));
  } else if (from && to && stride && from->size() == 1 && to->size() == 1 &&
             stride->size() == 1) {
    int64_t by = stride->front();
    TDim span =
        by > 0 ? to->front() - from->front() : from->front() - to->front();
    length = span.ceilDiv(std::abs(by));
  } else {
    length = ctx.freshSymbol("range");
  }
  if (!isa<FloatType>(elementType) &&
      (!isa<IntegerType>(elementType) || elementType.isInteger(1)))
    return ctx.unsupported("range of booleans");
  outputs.push_back(
      ctx.create<RangeOp>(start, limit, delta, dimAttr(ctx, length)));
  return success();
}

/// OneHot whose depth or [off, on] values only the model's values decide:
/// the positions 0..depth-1 (a range of a fresh length bound to the depth)
/// compared with the indices pick `on` or `off` from the values.
Value oneHotFromValues(NodeContext &ctx, Value indices, int64_t axis) {
  Type i64 = ctx.getBuilder().getI64Type();
  int64_t rank = NodeContext::rank(indices);
  Value depth = ctx.castTo(ctx.input(1), i64);
  if (NodeContext::rank(depth) == 0)
    depth = ctx.create<AddAxisOp>(depth, int64_t(0));
  std::optional<SmallVector<TDim>> bound = ctx.bindValuesAsDims(depth, "depth");
  Value values = ctx.input(2);
  if (!bound || bound->size() != 1 || shapeOf(values) != Shape{TDim(2)}) {
    (void)ctx.error("depth must hold one value and values two");
    return {};
  }
  TDim dim = bound->front();
  Value depthScalar = ctx.create<RmAxisOp>(depth, int64_t(0));
  indices = normalizeIndices(ctx, indices, dim, [&](Type type) {
    return ctx.castTo(depthScalar, type);
  });
  Value positions =
      ctx.create<RangeOp>(i64Constant(ctx, 0, {}), depthScalar,
                          i64Constant(ctx, 1, {}), dimAttr(ctx, dim));
  for (int64_t i = 0; i <= rank; ++i)
    if (i != axis)
      positions = ctx.create<AddAxisOp>(positions, i);
  Value hit = ctx.binary<EqOp>(
      ctx.create<AddAxisOp>(ctx.castTo(indices, i64), axis), positions);
  SmallVector<TDim> ones(rank + 1, TDim(1));
  Value off = reshapeTo(ctx, sliceAxis(ctx, values, 0, TDim(0), TDim(1)), ones);
  Value on = reshapeTo(ctx, sliceAxis(ctx, values, 0, TDim(1), TDim(2)), ones);
  return ctx.create<SelectOp>(hit, on, off);
}

LogicalResult oneHotHandler(NodeContext &ctx, Outputs &outputs) {
  Value indices = ctx.input(0);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), NodeContext::rank(indices) + 1);
  if (failed(axis))
    return failure();
  // Indices of any numeric type are taken as integers.
  Type indexType = NodeContext::elementType(indices);
  if (!isa<IntegerType>(indexType) || indexType.isInteger(1))
    indices = ctx.castTo(indices, ctx.getBuilder().getI64Type());
  std::optional<SmallVector<double>> depth = ctx.getConstFloats(1);
  DenseElementsAttr values = ctx.getConstant(2);
  if (!depth || !values) {
    outputs.push_back(oneHotFromValues(ctx, indices, *axis));
    return success();
  }
  if (depth->size() != 1)
    return ctx.error("depth must hold one value");
  if (values.getNumElements() != 2)
    return ctx.error("values must be an [off, on] pair");
  int64_t dim = static_cast<int64_t>(depth->front());
  if (dim < 1)
    return ctx.error("depth " + Twine(dim) + " is not positive");
  indices = normalizeIndices(ctx, indices, TDim(dim), [&](Type type) {
    return intConstant(ctx, dim, type, {});
  });
  auto pair = llvm::to_vector(values.getValues<Attribute>());
  outputs.push_back(ctx.create<OneHotOp>(
      indices, *axis, dim, cast<TypedAttr>(pair[0]), cast<TypedAttr>(pair[1])));
  return success();
}

/// The seed of a random op: its `seed` attribute (a float for the random
/// ops, taken by value, an int for Dropout), or a hash of the node's name,
/// distinct per node and the same on every import.
int64_t randomSeed(NodeContext &ctx) {
  if (const auto *attribute = ctx.getAttr("seed")) {
    if (attribute->type() == ::onnx::AttributeProto::INT)
      return attribute->i();
    // Within int64, NaN aside.
    if (std::optional<float> seed = ctx.getOptFloat("seed");
        seed && std::fabs(*seed) < 0x1p62f)
      return static_cast<int64_t>(*seed);
  }
  std::string name = ctx.getName().str();
  if (name.empty() && ctx.getNode().output_size())
    name = ctx.getNode().output(0);
  // FNV-1a: the same on every import and every machine.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name)
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return static_cast<int64_t>(hash & 0x7fffffffffffffffull);
}

/// The dtype attribute of a random op, or `fallback`.
Type randomType(NodeContext &ctx, Type fallback) {
  std::optional<int64_t> dtype = ctx.getOptInt("dtype");
  if (!dtype)
    return fallback;
  std::string name;
  Type type = convertDataType(ctx.getContext(), static_cast<int>(*dtype), name);
  return type ? type : fallback;
}

/// RandomUniform / RandomNormal (a shape attribute) and their `Like` forms
/// (the input's shape and, by default, dtype).
OpHandler randomHandler(RandomDistribution distribution, bool like) {
  return [distribution, like](NodeContext &ctx,
                              Outputs &outputs) -> LogicalResult {
    bool uniform = distribution == RandomDistribution::Uniform;
    double a = uniform ? ctx.getFloat("low", 0.0f) : ctx.getFloat("mean", 0.0f);
    double b =
        uniform ? ctx.getFloat("high", 1.0f) : ctx.getFloat("scale", 1.0f);
    Value shapeOf;
    Type elementType;
    if (like) {
      shapeOf = ctx.input(0);
      if (!shapeOf)
        return ctx.error("missing input");
      elementType = randomType(ctx, NodeContext::elementType(shapeOf));
    } else {
      std::optional<SmallVector<int64_t>> shape = ctx.getInts("shape");
      if (!shape)
        return ctx.error("missing shape attribute");
      Type f32 = ctx.getBuilder().getF32Type();
      elementType = randomType(ctx, f32);
      SmallVector<TDim> dims = llvm::to_vector_of<TDim>(*shape);
      shapeOf = ctx.create<BroadcastOp>(ctx.scalar(f32, 0.0, dims.size()),
                                        shapeAttr(ctx, dims));
    }
    Value result = randomLike(ctx, shapeOf, elementType, distribution, a, b);
    return pushOutput(outputs, result);
  };
}

/// Bernoulli: 1 where a uniform draw falls below the probability.
LogicalResult bernoulliHandler(NodeContext &ctx, Outputs &outputs) {
  Value p = ctx.input(0);
  if (!p)
    return ctx.error("missing input");
  Type type = NodeContext::elementType(p);
  Value draw = randomLike(ctx, p, type, RandomDistribution::Uniform, 0.0, 1.0);
  if (!draw)
    return failure();
  outputs.push_back(
      ctx.castTo(ctx.binary<LtOp>(draw, p), randomType(ctx, type)));
  return success();
}

LogicalResult eyeLikeHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  if (NodeContext::rank(input) != 2)
    return ctx.error("EyeLike needs a 2-D input");
  Type elementType = NodeContext::elementType(input);
  if (std::optional<int64_t> dtype = ctx.getOptInt("dtype")) {
    std::string name;
    elementType = convertDataType(ctx.getContext(), *dtype, name);
    if (!elementType)
      return ctx.unsupported("dtype " + name);
  }
  int64_t k = ctx.getInt("k", 0);
  Shape shape = shapeOf(input);
  std::optional<SmallVector<int64_t>> sizes = constantValues(shape);
  if (sizes && (*sizes)[0] * (*sizes)[1] <= kFoldElementBudget) {
    auto type = RankedTensorType::get(*sizes, elementType);
    SmallVector<Attribute> data;
    TypedAttr zero = scalarAttr(elementType, 0),
              one = scalarAttr(elementType, 1);
    if (elementType.isInteger(1)) {
      zero = BoolAttr::get(ctx.getContext(), false);
      one = BoolAttr::get(ctx.getContext(), true);
    }
    for (int64_t row = 0; row < (*sizes)[0]; ++row)
      for (int64_t col = 0; col < (*sizes)[1]; ++col)
        data.push_back(col == row + k ? one : zero);
    outputs.push_back(ctx.constant(DenseElementsAttr::get(type, data)));
    return success();
  }
  // Symbolic: (row + k == col) from two ranges.
  Value rows = positions(ctx, input, 0, 0, 2);
  if (k != 0)
    rows = ctx.binary<AddOp>(rows, i64Constant(ctx, k, {1, 1}));
  Value cols = positions(ctx, input, 1, 1, 2);
  Value eye = ctx.create<EqOp>(rows, cols);
  outputs.push_back(ctx.castTo(eye, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

/// Builds a multi-result tract op whose result types the dialect infers.
template <typename OpTy, typename... Args>
Operation *createMulti(NodeContext &ctx, Args &&...args) {
  OperationState state(ctx.getLoc(), OpTy::getOperationName());
  OpTy::build(ctx.getBuilder(), state, TypeRange(),
              std::forward<Args>(args)...);
  if (llvm::any_of(state.operands, [](Value v) { return !v; }))
    return nullptr;
  SmallVector<Type> types;
  if (failed(OpTy::inferReturnTypes(
          ctx.getContext(), ctx.getLoc(), state.operands,
          state.attributes.getDictionary(ctx.getContext()),
          state.getRawProperties(), state.regions, types)))
    return nullptr;
  state.addTypes(types);
  return ctx.createWithTypes(state);
}

LogicalResult topKHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  FailureOr<int64_t> axis =
      ctx.normalizeAxis(ctx.getInt("axis", -1), shape.size());
  if (failed(axis))
    return failure();
  bool largest = ctx.getOpset() < 11 || ctx.getInt("largest", 1);
  Value k;
  TDim len;
  if (ctx.getOpset() < 10) {
    std::optional<int64_t> attr = ctx.getOptInt("k");
    if (!attr)
      return ctx.error("missing k");
    k = i64Constant(ctx, *attr, {});
    len = TDim(*attr);
  } else {
    k = ctx.input(1);
    if (failed(checkIndices(ctx, 1, "k")))
      return failure();
    if (volume(shapeOf(k)) != TDim(1))
      return ctx.error("k must hold a single value");
    std::optional<SmallVector<TDim>> dims = ctx.getDims(1);
    len = dims ? dims->front() : ctx.freshSymbol("k");
  }
  std::optional<int64_t> count = len.getConstant();
  std::optional<int64_t> dim = shape[*axis].getConstant();
  if (count && (*count < 0 || (dim && *count > *dim)))
    return ctx.error("k = " + Twine(*count) + " is out of range for dim " +
                     shape[*axis].toString());
  Operation *op =
      createMulti<TopKOp>(ctx, input, k, *axis, largest, dimAttr(ctx, len));
  if (!op)
    return ctx.error("invalid topk");
  outputs.push_back(op->getResult(0));
  outputs.push_back(op->getResult(1));
  return success();
}

/// NonZero: the count of non-zero elements is a fresh symbol, bound when
/// the model runs.
LogicalResult nonZeroHandler(NodeContext &ctx, Outputs &outputs) {
  Value op = ctx.create<NonZeroOp>(ctx.input(0),
                                   dimAttr(ctx, ctx.freshSymbol("nonzero")));
  if (!op)
    return ctx.error("invalid non_zero");
  outputs.push_back(op);
  return success();
}

/// Unique: the slices along `axis` (or the elements) as the rows of a
/// matrix, whose distinct rows tract.unique finds; their count is a fresh
/// symbol, bound when the model runs.
LogicalResult uniqueHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = static_cast<int64_t>(shape.size());
  std::optional<int64_t> axis;
  if (std::optional<int64_t> attr = ctx.getOptInt("axis")) {
    FailureOr<int64_t> normalized = ctx.normalizeAxis(*attr, rank);
    if (failed(normalized))
      return failure();
    axis = *normalized;
  }
  Value rows;
  Shape rest;
  if (!axis) {
    rows = reshapeTo(ctx, input, {volume(shape), TDim(1)});
  } else {
    Value moved =
        *axis == 0 ? input : ctx.create<MoveAxisOp>(input, *axis, int64_t(0));
    Shape movedShape = shapeOf(moved);
    rest.assign(movedShape.begin() + 1, movedShape.end());
    rows = reshapeTo(ctx, moved, {movedShape[0], volume(ArrayRef<TDim>(rest))});
  }
  TDim count = ctx.freshSymbol("unique");
  Operation *op = createMulti<UniqueOp>(ctx, rows, ctx.getInt("sorted", 1) != 0,
                                        dimAttr(ctx, count));
  if (!op)
    return ctx.error("invalid unique");
  Value values = op->getResult(0);
  if (!axis) {
    values = reshapeTo(ctx, values, {count});
  } else {
    Shape unmoved{count};
    unmoved.append(rest.begin(), rest.end());
    values = reshapeTo(ctx, values, unmoved);
    if (*axis != 0)
      values = ctx.create<MoveAxisOp>(values, int64_t(0), *axis);
  }
  outputs.push_back(values);
  for (unsigned i = 1; i < 4; ++i)
    outputs.push_back(op->getResult(i));
  return success();
}

LogicalResult triluHandler(NodeContext &ctx, Outputs &outputs) {
  if (failed(checkIndices(ctx, 1, "k")))
    return failure();
  Value k = ctx.hasInput(1) ? ctx.input(1) : i64Constant(ctx, 0, {});
  bool upper = ctx.getInt("upper", 1);
  outputs.push_back(ctx.create<TriluOp>(ctx.input(0), k, upper));
  return success();
}

LogicalResult compressHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  std::optional<SmallVector<int64_t>> condition = ctx.getConstInts(1);
  if (NodeContext::rank(ctx.input(1)) != 1)
    return ctx.error("condition must have rank 1");
  int64_t axis = 0;
  if (std::optional<int64_t> attr = ctx.getOptInt("axis")) {
    FailureOr<int64_t> normalized =
        ctx.normalizeAxis(*attr, NodeContext::rank(input));
    if (failed(normalized))
      return failure();
    axis = *normalized;
  } else {
    input = reshapeTo(ctx, input, {volume(shapeOf(input))});
  }
  if (!condition) {
    // Known when the model runs: the positions of the condition's true
    // values, as many as a symbol bound then says.
    Value positions = ctx.create<NonZeroOp>(
        ctx.input(1), dimAttr(ctx, ctx.freshSymbol("compress")));
    positions = ctx.create<RmAxisOp>(positions, int64_t(0));
    outputs.push_back(ctx.create<GatherOp>(input, positions, axis));
    return success();
  }
  SmallVector<int64_t> positions;
  for (auto [i, keep] : llvm::enumerate(*condition))
    if (keep)
      positions.push_back(i);
  std::optional<int64_t> dim = shapeOf(input)[axis].getConstant();
  if (dim && !positions.empty() && positions.back() >= *dim)
    return ctx.error("condition selects index " + Twine(positions.back()) +
                     " of a dim of " + Twine(*dim));
  Value indices =
      i64Constant(ctx, positions, {static_cast<int64_t>(positions.size())});
  outputs.push_back(ctx.create<GatherOp>(input, indices, axis));
  return success();
}

LogicalResult reverseSequenceHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t rank = shape.size();
  int64_t batchAxis = ctx.getInt("batch_axis", 1);
  int64_t timeAxis = ctx.getInt("time_axis", 0);
  if (rank < 2 ||
      !((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return ctx.error("batch_axis and time_axis must be 0 and 1");
  // index[t, b] = t < len[b] ? len[b] - 1 - t : t, along the time axis.
  Type i64 = ctx.getBuilder().getI64Type();
  Value lens = ctx.castTo(ctx.input(1), i64);
  Value times = positions(ctx, input, timeAxis, timeAxis, 2);
  lens = ctx.create<AddAxisOp>(lens, timeAxis);
  Value reversed = ctx.binary<SubOp>(ctx.binary<SubOp>(lens, times),
                                     i64Constant(ctx, 1, {1, 1}));
  Value index =
      ctx.create<SelectOp>(ctx.binary<LtOp>(times, lens), reversed, times);
  for (int64_t axis = 2; axis < rank; ++axis)
    index = ctx.create<AddAxisOp>(index, axis);
  index = ctx.create<BroadcastOp>(index, shapeAttr(ctx, shape));
  outputs.push_back(ctx.create<GatherElementsOp>(input, index, timeAxis));
  return success();
}

//===----------------------------------------------------------------------===//
// Depth and space
//===----------------------------------------------------------------------===//

/// `dim / divisor`, or an error when it does not divide.
FailureOr<TDim> divideDim(NodeContext &ctx, const TDim &dim, int64_t divisor) {
  TDim quotient = dim.floorDiv(divisor);
  if (quotient * TDim(divisor) != dim) {
    (void)ctx.error("dim " + dim.toString() + " is not a multiple of " +
                    Twine(divisor));
    return failure();
  }
  return quotient;
}

/// DepthToSpace and SpaceToDepth multiply blocksize by itself and by dims:
/// a bound keeps those products in range.
constexpr int64_t kMaxBlockSize = int64_t(1) << 16;

LogicalResult depthToSpaceHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t block = ctx.getInt("blocksize", 0);
  if (shape.size() != 4 || block < 1 || block > kMaxBlockSize)
    return ctx.error("DepthToSpace needs a 4-D input and a blocksize from 1 "
                     "to " +
                     Twine(kMaxBlockSize));
  std::string mode = ctx.getOpset() < 11 ? "DCR" : ctx.getString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return ctx.unsupported("mode '" + mode + "'");
  FailureOr<TDim> depth = divideDim(ctx, shape[1], block * block);
  if (failed(depth))
    return failure();
  TDim b(block);
  // Split the channels into the blocks and the depth, interleave the blocks
  // with the spatial axes: [N, C', H, b, W, b].
  Value x;
  if (mode == "DCR") {
    x = ctx.create<ReshapeOp>(input, int64_t(1), int64_t(1),
                              shapeAttr(ctx, {b, b, *depth}));
    x = transposeBy(ctx, x, {0, 3, 4, 1, 5, 2});
  } else {
    x = ctx.create<ReshapeOp>(input, int64_t(1), int64_t(1),
                              shapeAttr(ctx, {*depth, b, b}));
    x = transposeBy(ctx, x, {0, 1, 4, 2, 5, 3});
  }
  outputs.push_back(ctx.create<ReshapeOp>(
      x, int64_t(2), int64_t(4), shapeAttr(ctx, {shape[2] * b, shape[3] * b})));
  return success();
}

LogicalResult spaceToDepthHandler(NodeContext &ctx, Outputs &outputs) {
  Value input = ctx.input(0);
  Shape shape = shapeOf(input);
  int64_t block = ctx.getInt("blocksize", 0);
  if (shape.size() != 4 || block < 1 || block > kMaxBlockSize)
    return ctx.error("SpaceToDepth needs a 4-D input and a blocksize from 1 "
                     "to " +
                     Twine(kMaxBlockSize));
  FailureOr<TDim> height = divideDim(ctx, shape[2], block);
  FailureOr<TDim> width = divideDim(ctx, shape[3], block);
  if (failed(height) || failed(width))
    return failure();
  TDim b(block);
  // [N, C, H', b, W', b] -> [N, b, b, C, H', W'] -> [N, b*b*C, H', W'].
  Value x = ctx.create<ReshapeOp>(input, int64_t(2), int64_t(2),
                                  shapeAttr(ctx, {*height, b, *width, b}));
  x = transposeBy(ctx, x, {0, 3, 5, 1, 2, 4});
  outputs.push_back(ctx.create<ReshapeOp>(x, int64_t(1), int64_t(3),
                                          shapeAttr(ctx, {b * b * shape[1]})));
  return success();
}
} // namespace

void mlir::tract::onnx::registerArrayOps(OpRegistry &registry) {
  // Constants and shapes.
  registry.add("Constant", {1, 9, 11, 12, 13, 19, 21}, constantHandler);
  registry.add("ConstantOfShape", {9, 20, 21},
               withInputs(1, constantOfShapeHandler));
  registry.add("Shape", {1, 13, 15, 19, 21}, withInputs(1, shapeHandler));
  registry.add("Size", {1, 13, 19, 21}, withInputs(1, sizeHandler));

  // Reshapes and axis moves.
  registry.add("Reshape", {1, 5, 13, 14, 19, 21},
               withInputs(1, reshapeHandler));
  registry.add("Flatten", {1, 9, 11, 13, 21}, withInputs(1, flattenHandler));
  registry.add("Squeeze", {1, 11, 13, 21}, withInputs(1, squeezeHandler));
  registry.add("Unsqueeze", {1, 11, 13, 21}, withInputs(1, unsqueezeHandler));
  registry.add("Transpose", {1, 13, 21}, withInputs(1, transposeHandler));
  registry.add("Concat", {1, 4, 11, 13}, concatHandler);

  // Slicing.
  registry.add("Slice", {1, 10, 11, 13}, withInputs(1, sliceHandler));
  registry.add("Split", {1, 2, 11, 13, 18}, withInputs(1, splitHandler));

  // Gather and scatter.
  registry.add("Gather", {1, 11, 13}, withInputs(2, gatherHandler));
  registry.add("GatherElements", {11, 13},
               withInputs(2, gatherElementsHandler));
  registry.add("GatherND", {11, 12, 13}, withInputs(2, gatherNdHandler));
  registry.add("Scatter", {9, 11}, withInputs(3, scatterElementsHandler));
  registry.add("ScatterElements", {11, 13, 16, 18},
               withInputs(3, scatterElementsHandler));
  registry.add("ScatterND", {11, 13, 16, 18}, withInputs(3, scatterNdHandler));

  // Broadcasting, tiling, padding.
  registry.add("Expand", {8, 13}, withInputs(2, expandHandler));
  registry.add("Tile", {1, 6, 13}, withInputs(2, tileHandler));
  registry.add("Pad", {1, 2, 11, 13, 18, 19, 21}, withInputs(1, padHandler));

  // Generators.
  registry.add("Range", 11, withInputs(3, rangeHandler));
  registry.add("OneHot", {9, 11}, withInputs(3, oneHotHandler));
  registry.add("EyeLike", {9, 22}, withInputs(1, eyeLikeHandler));
  registry.add("RandomUniform", {1, 22},
               randomHandler(RandomDistribution::Uniform, false));
  registry.add("RandomNormal", {1, 22},
               randomHandler(RandomDistribution::Normal, false));
  registry.add("RandomUniformLike", {1, 22},
               withInputs(1, randomHandler(RandomDistribution::Uniform, true)));
  registry.add("RandomNormalLike", {1, 22},
               withInputs(1, randomHandler(RandomDistribution::Normal, true)));
  registry.add("Bernoulli", {15, 22}, withInputs(1, bernoulliHandler));

  // Selection.
  registry.add("TopK", {1, 10, 11}, withInputs(1, topKHandler));
  registry.add("Trilu", 14, withInputs(1, triluHandler));
  registry.add("NonZero", {9, 13}, withInputs(1, nonZeroHandler));
  registry.add("Unique", 11, withInputs(1, uniqueHandler));
  registry.add("Compress", {9, 11}, withInputs(2, compressHandler));
  registry.add("ReverseSequence", 10, withInputs(2, reverseSequenceHandler));

  // Depth and space.
  registry.add("DepthToSpace", {1, 11, 13}, withInputs(1, depthToSpaceHandler));
  registry.add("SpaceToDepth", {1, 13}, withInputs(1, spaceToDepthHandler));
}

/// tract.random of `like`'s shape and `elementType` (a float type; f16
/// and bf16 are drawn as f32 and cast).
Value mlir::tract::onnx::randomLike(NodeContext &ctx, Value like,
                                    Type elementType,
                                    RandomDistribution distribution, double a,
                                    double b) {
  if (!like || !isa<FloatType>(elementType)) {
    (void)ctx.unsupported("random values of " +
                          NodeContext::typeName(elementType));
    return {};
  }
  Type drawn = elementType.isF64() ? elementType
                                   : Builder(ctx.getContext()).getF32Type();
  OperationState state(ctx.getLoc(), RandomOp::getOperationName());
  RandomOp::build(ctx.getBuilder(), state,
                  getTensorType(ctx.getContext(), getShape(like), drawn), like,
                  distribution, APFloat(a), APFloat(b), randomSeed(ctx));
  Operation *op = ctx.createWithTypes(state);
  return op ? ctx.castTo(op->getResult(0), elementType) : Value();
}

Value mlir::tract::onnx::axisPositions(NodeContext &ctx, Value input,
                                       int64_t axis, int64_t at,
                                       int64_t rank) {
  return positions(ctx, input, axis, at, rank);
}
