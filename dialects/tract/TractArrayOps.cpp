//===- TractArrayOps.cpp - shape, indexing and axis operators -------------===//

#include "dialects/tract/TractOps.h"

#include "dialects/tract/TractFolding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// A constant operand with the op's result shape and element type, when the
/// result is static: enough to fold ops that only move splat elements.
OpFoldResult reshapeSplat(Attribute input, Type resultType) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(input);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!splat || !type || !type.hasStaticShape())
    return {};
  return SplatElementsAttr::get(type, splat.getSplatValue<Attribute>());
}

/// Reinterprets a dense constant with a new static shape of equal volume.
OpFoldResult reshapeDense(Attribute input, Type resultType) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || !type.hasStaticShape())
    return {};
  // A resource (weights read in place): the same data, of the new shape.
  if (auto resource = dyn_cast_if_present<DenseResourceElementsAttr>(input))
    return DenseResourceElementsAttr::get(type, resource.getRawHandle());
  auto dense = dyn_cast_if_present<DenseElementsAttr>(input);
  if (!dense)
    return {};
  return dense.reshape(type);
}

/// The static shape of `value`'s type, or nullopt.
std::optional<ArrayRef<int64_t>> staticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getShape();
}

/// Folds an op that copies elements of a constant `input` to a static result:
/// `inputIndex` rewrites a result multi-index into the input multi-index it
/// reads, in place, or returns false to stop folding; a coordinate of -1 on
/// any axis selects `fill`.
OpFoldResult
foldByInputIndex(Value input, Attribute constant, Type resultType,
                 function_ref<bool(MutableArrayRef<int64_t>)> inputIndex,
                 Attribute fill = {}) {
  std::optional<ArrayRef<int64_t>> shape = staticShape(input);
  if (!constant || !shape)
    return {};
  SmallVector<int64_t> strides = getStrides(*shape);
  SmallVector<int64_t> index;
  return foldIndexMap(
      constant, resultType,
      [&](ArrayRef<int64_t> resultIndex) -> std::optional<int64_t> {
        index.assign(resultIndex.begin(), resultIndex.end());
        if (!inputIndex(index))
          return std::nullopt;
        int64_t flat = 0;
        for (auto [i, stride] : llvm::zip(index, strides)) {
          if (i == -1)
            return -1;
          flat += i * stride;
        }
        return flat;
      },
      fill);
}

/// Wraps a negative index once and checks it is in [0, dim).
bool normalizeIndex(int64_t &index, int64_t dim) {
  if (index < 0)
    index += dim;
  return index >= 0 && index < dim;
}

/// A zero of `type`, the default fill of padding.
Attribute zeroOf(Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(floatType, 0.0);
  return IntegerAttr::get(type, 0);
}

} // namespace

//===----------------------------------------------------------------------===//
// Axis operators
//===----------------------------------------------------------------------===//

LogicalResult AddAxisOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size() + 1)))
    return failure();
  shape.insert(shape.begin() + axis, TDim(1));
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult AddAxisOp::fold(FoldAdaptor adaptor) {
  return reshapeDense(adaptor.getInput(), getType());
}

LogicalResult RmAxisOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  if (shape[axis] != TDim(1))
    return emitOptionalError(location, "axis ", axis, " has dim ",
                             shape[axis].toString(), ", not 1");
  shape.erase(shape.begin() + axis);
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult RmAxisOp::fold(FoldAdaptor adaptor) {
  return reshapeDense(adaptor.getInput(), getType());
}

LogicalResult MoveAxisOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t from = adaptor.getFrom(), to = adaptor.getTo();
  if (failed(checkAxis(location, from, shape.size(), "from")) ||
      failed(checkAxis(location, to, shape.size(), "to")))
    return failure();
  TDim moved = shape[from];
  shape.erase(shape.begin() + from);
  shape.insert(shape.begin() + to, moved);
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult MoveAxisOp::fold(FoldAdaptor adaptor) {
  if (getFrom() == getTo())
    return getInput();
  if (OpFoldResult splat = reshapeSplat(adaptor.getInput(), getType()))
    return splat;
  int64_t from = getFrom(), to = getTo();
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            // Undo the move: take the coordinate at `to` back
                            // to `from`.
                            int64_t moved = index[to];
                            SmallVector<int64_t> rest(index.begin(),
                                                      index.end());
                            rest.erase(rest.begin() + to);
                            rest.insert(rest.begin() + from, moved);
                            llvm::copy(rest, index.begin());
                            return true;
                          });
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t at = adaptor.getAt(), count = adaptor.getCount();
  if (static_cast<size_t>(at + count) > shape.size())
    return emitOptionalError(location, "axes ", at, "..", at + count,
                             " are out of range for rank ", shape.size());
  ArrayRef<TDim> to = adaptor.getTo().getDims();
  ArrayRef<TDim> replaced = ArrayRef<TDim>(shape).slice(at, count);
  if (volume(replaced) != volume(to))
    return emitOptionalError(
        location, "cannot reshape ", shapeToString(replaced), " (volume ",
        volume(replaced).toString(), ") to ", shapeToString(to), " (volume ",
        volume(to).toString(), ")");
  Shape result(shape.begin(), shape.begin() + at);
  llvm::append_range(result, to);
  result.append(shape.begin() + at + count, shape.end());
  results.push_back(getTensorTypeLike(adaptor.getInput(), result));
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return reshapeDense(adaptor.getInput(), getType());
}

LogicalResult BroadcastOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  Shape input = tract::getShape(adaptor.getInput());
  ArrayRef<TDim> target = adaptor.getShape().getDims();
  if (input.size() != target.size())
    return emitOptionalError(location, "cannot broadcast rank ", input.size(),
                             " to rank ", target.size());
  for (auto [axis, dims] : llvm::enumerate(llvm::zip(input, target))) {
    auto [from, to] = dims;
    if (from != TDim(1) && from != to)
      return emitOptionalError(location, "cannot broadcast dim ",
                               from.toString(), " to ", to.toString(),
                               " on axis ", axis);
  }
  results.push_back(getTensorTypeLike(adaptor.getInput(), target));
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (OpFoldResult splat = reshapeSplat(adaptor.getInput(), getType()))
    return splat;
  std::optional<ArrayRef<int64_t>> shape = staticShape(getInput());
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            for (auto [i, dim] : llvm::zip(index, *shape))
                              if (dim == 1)
                                i = 0;
                            return true;
                          });
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  ArrayRef<TDim> multipliers = adaptor.getMultipliers().getDims();
  if (shape.size() != multipliers.size())
    return emitOptionalError(location, "expected ", shape.size(),
                             " multipliers, got ", multipliers.size());
  for (auto [dim, multiplier] : llvm::zip(shape, multipliers))
    dim *= multiplier;
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult TileOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (OpFoldResult splat = reshapeSplat(adaptor.getInput(), getType()))
    return splat;
  std::optional<ArrayRef<int64_t>> shape = staticShape(getInput());
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            for (auto [i, dim] : llvm::zip(index, *shape))
                              i %= dim;
                            return true;
                          });
}

//===----------------------------------------------------------------------===//
// Slicing, padding, concatenation
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  TDim start = adaptor.getStart().getValue(), end = adaptor.getEnd().getValue();
  TDim len = end - start;
  if (std::optional<int64_t> value = len.getConstant(); value && *value < 0)
    return emitOptionalError(location, "slice end ", end.toString(),
                             " is before its start ", start.toString());
  if (std::optional<int64_t> value = start.getConstant(); value && *value < 0)
    return emitOptionalError(location, "slice start ", *value, " is negative");
  // A constant end beyond a constant dim is out of bounds.
  std::optional<int64_t> endValue = end.getConstant();
  std::optional<int64_t> dimValue = shape[axis].getConstant();
  if (endValue && dimValue && *endValue > *dimValue)
    return emitOptionalError(location, "slice end ", *endValue,
                             " is past the dim ", *dimValue);
  shape[axis] = len;
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() && getStart().getValue() == TDim(0))
    return getInput();
  if (OpFoldResult splat = reshapeSplat(adaptor.getInput(), getType()))
    return splat;
  std::optional<int64_t> start = getStart().getValue().getConstant();
  if (!start)
    return {};
  int64_t axis = getAxis();
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            index[axis] += *start;
                            return true;
                          });
}

LogicalResult DynSliceOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  for (Value bound : {adaptor.getStart(), adaptor.getEnd()})
    if (volume(getShape(bound)) != TDim(1))
      return emitOptionalError(location, "slice bounds must be scalars");
  shape[axis] = adaptor.getLen().getValue();
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult DownsampleOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  int64_t stride = adaptor.getStride(), modulo = adaptor.getModulo();
  shape[axis] = (shape[axis] - TDim(modulo)).ceilDiv(stride);
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

OpFoldResult DownsampleOp::fold(FoldAdaptor adaptor) {
  if (getStride() == 1 && getModulo() == 0)
    return getInput();
  if (OpFoldResult splat = reshapeSplat(adaptor.getInput(), getType()))
    return splat;
  int64_t axis = getAxis(), stride = getStride(), modulo = getModulo();
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            index[axis] = index[axis] * stride + modulo;
                            return true;
                          });
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  ArrayRef<int64_t> before = adaptor.getBefore(), after = adaptor.getAfter();
  if (before.size() != shape.size() || after.size() != shape.size())
    return emitOptionalError(location, "expected ", shape.size(),
                             " pads before and after, got ", before.size(),
                             " and ", after.size());
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (before[i] < 0 || after[i] < 0)
      return emitOptionalError(location, "pads must be non-negative");
    dim = dim + TDim(before[i] + after[i]);
  }
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  return success();
}

LogicalResult PadOp::verify() {
  Type elementType = getElementTypeOrSelf(getInput().getType());
  if (std::optional<TypedAttr> value = getValue()) {
    if (getMode() != PadMode::Constant)
      return emitOpError("a pad value only applies to constant padding");
    if (value->getType() != elementType)
      return emitOpError("pad value of type ")
             << value->getType() << " does not match the element type "
             << elementType;
  }
  return success();
}

OpFoldResult PadOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  std::optional<ArrayRef<int64_t>> shape = staticShape(getInput());
  if (!shape)
    return {};
  ArrayRef<int64_t> before = getBefore();
  PadMode mode = getMode();
  Attribute fill = getValue() ? Attribute(*getValue())
                              : zeroOf(getElementTypeOrSelf(getType()));
  return foldByInputIndex(
      getInput(), adaptor.getInput(), getType(),
      [&](MutableArrayRef<int64_t> index) {
        bool outside = false;
        for (auto [axis, i] : llvm::enumerate(index)) {
          int64_t dim = (*shape)[axis];
          i -= before[axis];
          if (i >= 0 && i < dim)
            continue;
          switch (mode) {
          case PadMode::Constant:
            outside = true;
            break;
          case PadMode::Edge:
            i = std::clamp<int64_t>(i, 0, dim - 1);
            break;
          case PadMode::Reflect:
            if (dim == 1)
              i = 0;
            else
              i = i < 0 ? -i : 2 * (dim - 1) - i;
            if (i < 0 || i >= dim)
              return false; // reflected more than once
            break;
          }
        }
        if (outside)
          index.front() = -1;
        return true;
      },
      fill);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(location, "expected at least one input");
  Shape shape = getShape(inputs.front());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  for (auto [index, input] : llvm::enumerate(inputs.drop_front())) {
    Shape other = getShape(input);
    if (other.size() != shape.size())
      return emitOptionalError(location, "input ", index + 1, " has rank ",
                               other.size(), ", expected ", shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<int64_t>(i) == axis)
        continue;
      if (other[i] != shape[i])
        return emitOptionalError(location, "input ", index + 1, " has dim ",
                                 other[i].toString(), " on axis ", i,
                                 ", expected ", shape[i].toString());
    }
    shape[axis] += other[axis];
  }
  results.push_back(getTensorTypeLike(inputs.front(), shape));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return foldConcat(adaptor.getInputs(), getType(), getAxis());
}

//===----------------------------------------------------------------------===//
// Gather, scatter
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  Shape result(shape.begin(), shape.begin() + axis);
  llvm::append_range(result, getShape(adaptor.getIndices()));
  result.append(shape.begin() + axis + 1, shape.end());
  results.push_back(getTensorTypeLike(adaptor.getInput(), result));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  std::optional<ArrayRef<int64_t>> shape = staticShape(getInput());
  std::optional<ArrayRef<int64_t>> indicesShape = staticShape(getIndices());
  std::optional<SmallVector<int64_t>> indices =
      getIntValues(adaptor.getIndices());
  if (!shape || !indicesShape || !indices)
    return {};
  int64_t axis = getAxis(), rank = indicesShape->size();
  SmallVector<int64_t> indexStrides = getStrides(*indicesShape);
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            int64_t flat = 0;
                            for (int64_t k = 0; k < rank; ++k)
                              flat += index[axis + k] * indexStrides[k];
                            int64_t picked = (*indices)[flat];
                            if (!normalizeIndex(picked, (*shape)[axis]))
                              return false;
                            SmallVector<int64_t> input(index.take_front(axis));
                            input.push_back(picked);
                            llvm::append_range(input,
                                               index.drop_front(axis + rank));
                            llvm::copy(input, index.begin());
                            return true;
                          });
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  Shape indices = getShape(adaptor.getIndices());
  if (indices.size() != shape.size())
    return emitOptionalError(location, "indices have rank ", indices.size(),
                             ", expected ", shape.size());
  if (failed(checkAxis(location, adaptor.getAxis(), shape.size())))
    return failure();
  results.push_back(getTensorTypeLike(adaptor.getInput(), indices));
  return success();
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  std::optional<ArrayRef<int64_t>> shape = staticShape(getInput());
  std::optional<ArrayRef<int64_t>> indicesShape = staticShape(getIndices());
  std::optional<SmallVector<int64_t>> indices =
      getIntValues(adaptor.getIndices());
  if (!shape || !indicesShape || !indices)
    return {};
  int64_t axis = getAxis();
  SmallVector<int64_t> indexStrides = getStrides(*indicesShape);
  return foldByInputIndex(getInput(), adaptor.getInput(), getType(),
                          [&](MutableArrayRef<int64_t> index) {
                            int64_t flat = 0;
                            for (auto [i, stride] :
                                 llvm::zip(index, indexStrides))
                              flat += i * stride;
                            index[axis] = (*indices)[flat];
                            return normalizeIndex(index[axis], (*shape)[axis]);
                          });
}

LogicalResult GatherNdOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> location,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  Shape indices = getShape(adaptor.getIndices());
  size_t batchDims = adaptor.getBatchDims();
  if (indices.empty())
    return emitOptionalError(location, "indices must have rank >= 1");
  std::optional<int64_t> n = indices.back().getConstant();
  if (!n || *n < 1 || batchDims + *n > shape.size())
    return emitOptionalError(
        location, "the last indices dim ", indices.back().toString(),
        " must be a constant in 1..", shape.size() - batchDims);
  if (batchDims >= indices.size())
    return emitOptionalError(location, "batch_dims ", batchDims,
                             " must be less than the indices' rank");
  Shape result(indices.begin(), indices.end() - 1);
  result.append(shape.begin() + batchDims + *n, shape.end());
  results.push_back(getTensorTypeLike(adaptor.getInput(), result));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape data = getShape(adaptor.getData());
  if (getShape(adaptor.getIndices()) != getShape(adaptor.getUpdates()))
    return emitOptionalError(location,
                             "indices and updates must have the same shape");
  if (getElementTypeOrSelf(adaptor.getUpdates().getType()) !=
      getElementTypeOrSelf(adaptor.getData().getType()))
    return emitOptionalError(location,
                             "updates must have the data's element type");
  if (failed(checkAxis(location, adaptor.getAxis(), data.size())))
    return failure();
  results.push_back(adaptor.getData().getType());
  return success();
}

LogicalResult ScatterNdOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  Shape data = getShape(adaptor.getData());
  Shape indices = getShape(adaptor.getIndices());
  Shape updates = getShape(adaptor.getUpdates());
  if (indices.empty())
    return emitOptionalError(location, "indices must have rank >= 1");
  std::optional<int64_t> n = indices.back().getConstant();
  if (!n || *n < 1 || static_cast<size_t>(*n) > data.size())
    return emitOptionalError(location, "the last indices dim must be a "
                                       "constant no larger than the rank");
  Shape expected(indices.begin(), indices.end() - 1);
  expected.append(data.begin() + *n, data.end());
  if (updates != expected)
    return emitOptionalError(location, "updates have shape ",
                             shapeToString(updates), ", expected ",
                             shapeToString(expected));
  if (getElementTypeOrSelf(adaptor.getUpdates().getType()) !=
      getElementTypeOrSelf(adaptor.getData().getType()))
    return emitOptionalError(location,
                             "updates must have the data's element type");
  results.push_back(adaptor.getData().getType());
  return success();
}

LogicalResult OneHotOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size() + 1)))
    return failure();
  Type elementType = adaptor.getOn().getType();
  if (adaptor.getOff().getType() != elementType)
    return emitOptionalError(location, "on and off values differ in type");
  shape.insert(shape.begin() + axis, TDim(adaptor.getDim()));
  results.push_back(getTensorType(context, shape, elementType));
  return success();
}

OpFoldResult OneHotOp::fold(FoldAdaptor adaptor) {
  auto type = dyn_cast<RankedTensorType>(getType());
  std::optional<ArrayRef<int64_t>> indicesShape = staticShape(getIndices());
  std::optional<SmallVector<int64_t>> indices =
      getIntValues(adaptor.getIndices());
  if (!type || !type.hasStaticShape() || type.getEncoding() || !indices ||
      !indicesShape || type.getNumElements() > kFoldElementBudget)
    return {};
  int64_t axis = getAxis(), dim = getDim();
  SmallVector<Attribute> out;
  // Result order: outer indices, the one-hot axis, inner indices.
  int64_t outer = 1, inner = 1;
  for (int64_t d : indicesShape->take_front(axis))
    outer *= d;
  for (int64_t d : indicesShape->drop_front(axis))
    inner *= d;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t index = (*indices)[o * inner + i];
        if (index < 0)
          index += dim;
        out.push_back(index == j ? getOn() : getOff());
      }
  return DenseElementsAttr::get(type, out);
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> location,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(location, axis, shape.size())))
    return failure();
  if (volume(getShape(adaptor.getK())) != TDim(1))
    return emitOptionalError(location, "k must be a scalar");
  shape[axis] = adaptor.getLen().getValue();
  results.push_back(getTensorTypeLike(adaptor.getInput(), shape));
  results.push_back(
      getTensorType(context, shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult NonZeroOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  Shape shape{TDim(int64_t(getShape(adaptor.getInput()).size())),
              adaptor.getLen().getValue()};
  results.push_back(
      getTensorType(context, shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult UniqueOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  Shape shape = getShape(adaptor.getInput());
  if (shape.size() != 2)
    return emitOptionalError(location, "unique takes rows: rank 2, not ",
                             shape.size());
  TDim len = adaptor.getLen().getValue();
  Type i64 = IntegerType::get(context, 64);
  results.push_back(getTensorTypeLike(adaptor.getInput(), {len, shape[1]}));
  results.push_back(getTensorType(context, {len}, i64));
  results.push_back(getTensorType(context, {shape[0]}, i64));
  results.push_back(getTensorType(context, {len}, i64));
  return success();
}

LogicalResult NonMaxSuppressionOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  Shape boxes = getShape(adaptor.getBoxes());
  Shape scores = getShape(adaptor.getScores());
  if (boxes.size() != 3 || boxes[2] != TDim(4))
    return emitOptionalError(location, "boxes must be B, N, 4");
  if (scores.size() != 3)
    return emitOptionalError(location, "scores must be B, C, N");
  for (auto [a, b] :
       {std::pair(boxes[0], scores[0]), std::pair(boxes[1], scores[2])}) {
    std::optional<int64_t> x = a.getConstant(), y = b.getConstant();
    if (x && y && *x != *y)
      return emitOptionalError(location, "boxes (", a.toString(),
                               " batches of ", boxes[1].toString(),
                               ") do not match scores (", scores[0].toString(),
                               " batches of ", scores[2].toString(), ")");
  }
  for (Value single : {adaptor.getMaxOutput(), adaptor.getIouThreshold(),
                       adaptor.getScoreThreshold()})
    if (volume(getShape(single)) != TDim(1))
      return emitOptionalError(location, "max_output, iou_threshold and "
                                         "score_threshold are single values");
  if (getElementTypeOrSelf(adaptor.getScores()) !=
      getElementTypeOrSelf(adaptor.getBoxes()))
    return emitOptionalError(location, "boxes and scores must have one type");
  Shape shape{adaptor.getLen().getValue(), TDim(3)};
  results.push_back(
      getTensorType(context, shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult TriluOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  if (getShape(adaptor.getInput()).size() < 2)
    return emitOptionalError(location, "trilu needs rank >= 2");
  if (volume(getShape(adaptor.getK())) != TDim(1))
    return emitOptionalError(location, "k must be a scalar");
  results.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult RangeOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> location,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  Type elementType = getElementTypeOrSelf(adaptor.getStart().getType());
  for (Value operand :
       {adaptor.getStart(), adaptor.getEnd(), adaptor.getStep()}) {
    if (volume(getShape(operand)) != TDim(1))
      return emitOptionalError(location, "range bounds must be scalars");
    if (getElementTypeOrSelf(operand.getType()) != elementType)
      return emitOptionalError(location,
                               "range bounds must share one element type");
  }
  results.push_back(
      getTensorTypeLike(adaptor.getStart(), {adaptor.getLen().getValue()}));
  return success();
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto type = dyn_cast<RankedTensorType>(getType());
  auto start = dyn_cast_if_present<DenseElementsAttr>(adaptor.getStart());
  auto step = dyn_cast_if_present<DenseElementsAttr>(adaptor.getStep());
  if (!type || !type.hasStaticShape() || type.getEncoding() || !start ||
      !step || type.getNumElements() > kFoldElementBudget)
    return {};
  Type elementType = type.getElementType();
  SmallVector<Attribute> out;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    APFloat first = start.getSplatValue<APFloat>();
    APFloat delta = step.getSplatValue<APFloat>();
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      APFloat count(first.getSemantics());
      count.convertFromAPInt(APInt(64, i), false, APFloat::rmNearestTiesToEven);
      out.push_back(FloatAttr::get(floatType, first + count * delta));
    }
  } else if (isa<IntegerType>(elementType) && !elementType.isInteger(1)) {
    APInt first = start.getSplatValue<APInt>();
    APInt delta = step.getSplatValue<APInt>();
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.push_back(IntegerAttr::get(elementType, first + delta * i));
  } else {
    return {};
  }
  return DenseElementsAttr::get(type, out);
}

LogicalResult ShapeOfOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  int64_t rank = getShape(adaptor.getInput()).size();
  results.push_back(
      RankedTensorType::get({rank}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult ShapeValueOp::inferReturnTypes(MLIRContext *context,
                                             std::optional<Location>,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  int64_t rank = adaptor.getDims().getDims().size();
  results.push_back(
      RankedTensorType::get({rank}, IntegerType::get(context, 64)));
  return success();
}

OpFoldResult ShapeValueOp::fold(FoldAdaptor) {
  SmallVector<APInt> dims;
  for (const TDim &dim : getDims().getDims()) {
    std::optional<int64_t> value = dim.getConstant();
    if (!value)
      return {};
    dims.push_back(APInt(64, *value));
  }
  return DenseElementsAttr::get(cast<ShapedType>(getType()), dims);
}

LogicalResult RandomOp::verify() {
  if (getShape(getLike()) != getShape(getOutput()))
    return emitOpError("result shape [")
           << shapeToString(getShape(getOutput())) << "] differs from ["
           << shapeToString(getShape(getLike())) << "]";
  if (getDistribution() == RandomDistribution::Normal &&
      !(getB().convertToDouble() >= 0))
    return emitOpError("a normal distribution needs a scale >= 0");
  return success();
}

LogicalResult BindDimsOp::verify() {
  Shape shape = getShape(getValues());
  size_t count = getDims().getDims().size();
  if (shape.size() != 1 || shape[0] != TDim(static_cast<int64_t>(count)))
    return emitOpError("binds ")
           << count << " dims from values of shape [" << shapeToString(shape)
           << "]; it needs a 1-D tensor of " << count << " elements";
  return success();
}

OpFoldResult ShapeOfOp::fold(FoldAdaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (!input.hasStaticShape())
    return {};
  SmallVector<APInt> dims;
  for (int64_t dim : input.getShape())
    dims.push_back(APInt(64, dim));
  return DenseElementsAttr::get(cast<ShapedType>(getType()), dims);
}

//===----------------------------------------------------------------------===//
// Axis tracking: reading the input before a permutation of its axes
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
SliceOp::getResultPermutation(ArrayRef<int64_t> perm) {
  return SmallVector<int64_t>(perm);
}
void SliceOp::readUnpermuted(ArrayRef<int64_t> perm) {
  setAxis(static_cast<uint64_t>(perm[getAxis()]));
}

/// The axis is removed where it came from and the rest of the permutation
/// stays (the identity when it was the moved one).
std::optional<SmallVector<int64_t>>
RmAxisOp::getResultPermutation(ArrayRef<int64_t> perm) {
  int64_t removed = perm[getAxis()];
  SmallVector<int64_t> rest;
  for (int64_t axis : perm)
    if (axis != removed)
      rest.push_back(axis - (axis > removed));
  return rest;
}
void RmAxisOp::readUnpermuted(ArrayRef<int64_t> perm) {
  setAxis(static_cast<uint64_t>(perm[getAxis()]));
}

/// The axis an add_axis inserts in the unpermuted input: right after the
/// one that precedes it in the permuted value.
static int64_t unpermutedInsertion(AddAxisOp op, ArrayRef<int64_t> perm) {
  int64_t added = op.getAxis();
  return added == 0 ? 0 : perm[added - 1] + 1;
}
std::optional<SmallVector<int64_t>>
AddAxisOp::getResultPermutation(ArrayRef<int64_t> perm) {
  int64_t inserted = unpermutedInsertion(*this, perm);
  SmallVector<int64_t> extended;
  for (int64_t axis : perm)
    extended.push_back(axis + (axis >= inserted));
  extended.insert(extended.begin() + getAxis(), inserted);
  return extended;
}
void AddAxisOp::readUnpermuted(ArrayRef<int64_t> perm) {
  setAxis(static_cast<uint64_t>(unpermutedInsertion(*this, perm)));
}
