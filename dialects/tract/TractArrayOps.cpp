//===- TractArrayOps.cpp - shape, indexing and axis operators -------------===//

#include "dialects/tract/TractOps.h"

#include "mlir/IR/Builders.h"
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
  auto dense = dyn_cast_if_present<DenseElementsAttr>(input);
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!dense || !type || !type.hasStaticShape())
    return {};
  return dense.reshape(type);
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
  return reshapeSplat(adaptor.getInput(), getType());
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
  return reshapeSplat(adaptor.getInput(), getType());
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
  return reshapeSplat(adaptor.getInput(), getType());
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
  return reshapeSplat(adaptor.getInput(), getType());
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

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
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

LogicalResult ShapeOfOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  int64_t rank = getShape(adaptor.getInput()).size();
  results.push_back(
      RankedTensorType::get({rank}, IntegerType::get(context, 64)));
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
