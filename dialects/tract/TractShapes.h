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

/// Recomputes the result types of `op` from its operands' types, with the
/// op's own inference (and for scan and if, that of their regions); an
/// error at the op when its operands contradict it.
LogicalResult inferOpResultTypes(Operation *op);
/// The same for every op of `block`, in order.
LogicalResult inferBlockResultTypes(Block &block);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTSHAPES_H
