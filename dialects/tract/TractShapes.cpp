#include "dialects/tract/TractShapes.h"

#include "dialects/tract/TractAttrs.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tract;

bool mlir::tract::isTractTensorType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return false;
  auto dims = dyn_cast_if_present<DimsAttr>(tensor.getEncoding());
  if (!dims)
    return !tensor.getEncoding() && tensor.hasStaticShape();
  return dims.getDims().size() ==
         static_cast<size_t>(tensor.getNumDynamicDims());
}

Shape mlir::tract::getShape(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  auto dims = dyn_cast_if_present<DimsAttr>(tensor.getEncoding());
  Shape shape;
  size_t next = 0;
  for (int64_t dim : tensor.getShape()) {
    if (!ShapedType::isDynamic(dim)) {
      shape.push_back(TDim(dim));
      continue;
    }
    assert(dims && next < dims.getDims().size() && "not a tract tensor type");
    shape.push_back(dims.getDims()[next++]);
  }
  return shape;
}

RankedTensorType mlir::tract::getTensorType(MLIRContext *context,
                                            ArrayRef<TDim> dims,
                                            Type elementType) {
  SmallVector<int64_t> staticShape;
  SmallVector<TDim> symbolic;
  for (const TDim &dim : dims) {
    if (std::optional<int64_t> value = dim.getConstant()) {
      staticShape.push_back(*value);
    } else {
      staticShape.push_back(ShapedType::kDynamic);
      symbolic.push_back(dim);
    }
  }
  Attribute encoding;
  if (!symbolic.empty())
    encoding = DimsAttr::get(context, symbolic);
  return RankedTensorType::get(staticShape, elementType, encoding);
}

RankedTensorType mlir::tract::getTensorTypeLike(Type like,
                                                ArrayRef<TDim> dims) {
  return getTensorType(like.getContext(), dims, getElementTypeOrSelf(like));
}

TDim mlir::tract::volume(ArrayRef<TDim> shape) {
  TDim result(1);
  for (const TDim &dim : shape)
    result *= dim;
  return result;
}

LogicalResult mlir::tract::checkAxis(std::optional<Location> location,
                                     int64_t axis, size_t rank,
                                     StringRef what) {
  if (axis < 0 || static_cast<size_t>(axis) >= rank)
    return emitOptionalError(location, what, " ", axis,
                             " is out of range for rank ", rank);
  return success();
}

std::string mlir::tract::shapeToString(ArrayRef<TDim> shape) {
  std::string text;
  llvm::ListSeparator separator(",");
  for (const TDim &dim : shape)
    text += llvm::StringRef(separator).str() + dim.toString();
  return text;
}

FailureOr<Shape> mlir::tract::broadcastShapes(std::optional<Location> location,
                                              ArrayRef<TDim> lhs,
                                              ArrayRef<TDim> rhs) {
  if (lhs.size() != rhs.size())
    return emitOptionalError(location, "operands must have equal ranks, got ",
                             lhs.size(), " and ", rhs.size(),
                             " (make rank changes explicit with axis ops)");
  Shape result;
  for (auto [axis, dims] : llvm::enumerate(llvm::zip(lhs, rhs))) {
    auto [a, b] = dims;
    std::optional<TDim> dim = TDim::broadcast(a, b);
    if (!dim)
      return emitOptionalError(location, "dims ", a.toString(), " and ",
                               b.toString(), " on axis ", axis,
                               " do not broadcast");
    result.push_back(*dim);
  }
  return result;
}
