//===- TractShapes.h - symbolic shapes of tract tensors ---------*- C++ -*-===//
//
// A tract tensor type is a ranked tensor whose dynamic dims are described by
// a #tract.dims encoding. These helpers convert between such types and lists
// of TDims, so that ops reason about shapes with the dimension algebra.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTSHAPES_H
#define DIALECTS_TRACT_TRACTSHAPES_H

#include "dialects/tdim/TDim.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>

namespace mlir::tract {

using Shape = llvm::SmallVector<TDim, 4>;

/// True for a ranked tensor whose dynamic dims are all described by a
/// #tract.dims encoding (or that has none).
bool isTractTensorType(Type type);

/// The dims of a tract tensor type. The type must satisfy isTractTensorType.
Shape getShape(Type type);
/// The dims of a value of tract tensor type.
inline Shape getShape(Value value) { return getShape(value.getType()); }

/// The tensor type with these dims: constants become static dims, the rest
/// are carried by a #tract.dims encoding.
RankedTensorType getTensorType(MLIRContext *context, llvm::ArrayRef<TDim> dims,
                               Type elementType);

/// The tensor type with these dims and the element type of `like`.
RankedTensorType getTensorTypeLike(Type like, llvm::ArrayRef<TDim> dims);
inline RankedTensorType getTensorTypeLike(Value like,
                                          llvm::ArrayRef<TDim> dims) {
  return getTensorTypeLike(like.getType(), dims);
}

/// The product of the dims (1 for a scalar).
TDim volume(llvm::ArrayRef<TDim> shape);

/// Checks that `axis` names an axis of a tensor of rank `rank`; the error
/// calls it `what`.
LogicalResult checkAxis(std::optional<Location> location, int64_t axis,
                        size_t rank, llvm::StringRef what = "axis");

/// `shape` as tract prints a fact: `1,S,64`.
std::string shapeToString(llvm::ArrayRef<TDim> shape);

/// The numpy broadcast of two shapes of equal rank; on failure emits an
/// error at `location` (when given) naming the axis.
FailureOr<Shape> broadcastShapes(std::optional<Location> location,
                                 llvm::ArrayRef<TDim> lhs,
                                 llvm::ArrayRef<TDim> rhs);

/// Channels-last layouts (ConvOp's `channels_last`): `N, C, spatial…` as
/// `N, spatial…, C` and back, and a kernel `k…, C/group, O` as
/// `O, C/group, k…`. Any element type: these move entries of a list.
template <typename T>
SmallVector<T, 4> channelsLastOf(llvm::ArrayRef<T> shape) {
  SmallVector<T, 4> result(shape.begin(), shape.end());
  if (result.size() > 2)
    std::rotate(result.begin() + 1, result.begin() + 2, result.end());
  return result;
}
template <typename T>
SmallVector<T, 4> channelsFirst(llvm::ArrayRef<T> shape) {
  SmallVector<T, 4> result(shape.begin(), shape.end());
  if (result.size() > 2)
    std::rotate(result.begin() + 1, result.end() - 1, result.end());
  return result;
}
template <typename T>
SmallVector<T, 4> kernelOutputFirst(llvm::ArrayRef<T> kernel) {
  SmallVector<T, 4> result;
  if (kernel.size() < 2)
    return SmallVector<T, 4>(kernel.begin(), kernel.end());
  result.push_back(kernel.back());
  result.push_back(kernel[kernel.size() - 2]);
  result.append(kernel.begin(), kernel.end() - 2);
  return result;
}
inline Shape channelsLastOf(const Shape &shape) {
  return channelsLastOf(llvm::ArrayRef<TDim>(shape));
}
inline Shape channelsFirst(const Shape &shape) {
  return channelsFirst(llvm::ArrayRef<TDim>(shape));
}
inline Shape kernelOutputFirst(const Shape &shape) {
  return kernelOutputFirst(llvm::ArrayRef<TDim>(shape));
}

/// Recomputes the result types of `op` from its operands' types, with the
/// op's own inference (and for scan and if, that of their regions); an
/// error at the op when its operands contradict it.
LogicalResult inferOpResultTypes(Operation *op);
/// The same for every op of `block`, in order.
LogicalResult inferBlockResultTypes(Block &block);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTSHAPES_H
