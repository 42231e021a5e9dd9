#include "dialects/tract/TractOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

LogicalResult mlir::tract::inferBroadcastResultType(
    std::optional<Location> location, Value lhs, Value rhs,
    SmallVectorImpl<Type> &results) {
  if (!isTractTensorType(lhs.getType()) || !isTractTensorType(rhs.getType()))
    return emitOptionalError(location, "operands must be tract tensors");
  FailureOr<Shape> shape =
      broadcastShapes(location, getShape(lhs), getShape(rhs));
  if (failed(shape))
    return failure();
  results.push_back(getTensorType(lhs.getContext(), *shape,
                                  getElementTypeOrSelf(lhs.getType())));
  return success();
}

//===----------------------------------------------------------------------===//
// Folding helpers
//===----------------------------------------------------------------------===//

/// True if `attr` is a constant whose every element equals `value`.
static bool isSplatOf(Attribute attr, int64_t value) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().isExactlyValue(value);
  if (elementType.isInteger(1))
    return false; // booleans have no arithmetic neutral elements
  if (isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>() == value;
  return false;
}

/// Folds `lhs op rhs` when both are constants of the result's type, so that
/// no broadcasting is involved.
template <typename FloatFn, typename IntFn>
static OpFoldResult foldSameTypeConstants(Operation *op,
                                          ArrayRef<Attribute> operands,
                                          FloatFn floatFn, IntFn intFn) {
  Type type = op->getResult(0).getType();
  if (op->getOperand(0).getType() != type ||
      op->getOperand(1).getType() != type)
    return {};
  Type elementType = getElementTypeOrSelf(type);
  if (isa<FloatType>(elementType))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(operands, floatFn);
  if (isa<IntegerType>(elementType) && !elementType.isInteger(1))
    return constFoldBinaryOp<IntegerAttr, APInt, void>(operands, intFn);
  return {};
}

//===----------------------------------------------------------------------===//
// ConstOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Unary operators
//===----------------------------------------------------------------------===//

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  Type elementType = getElementTypeOrSelf(getType());
  if (isa<FloatType>(elementType))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(
        adaptor.getOperands(), [](const APFloat &a) { return -a; });
  if (isa<IntegerType>(elementType) && !elementType.isInteger(1))
    return constFoldUnaryOp<IntegerAttr, APInt, void>(
        adaptor.getOperands(), [](const APInt &a) { return -a; });
  return {};
}

//===----------------------------------------------------------------------===//
// Binary operators
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x, unless the zero broadcasts x to a larger shape.
  if (isSplatOf(adaptor.getRhs(), 0) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 0) && getRhs().getType() == getType())
    return getRhs();
  return foldSameTypeConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0) && getLhs().getType() == getType())
    return getLhs();
  return foldSameTypeConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 1) && getRhs().getType() == getType())
    return getRhs();
  return foldSameTypeConstants(
      *this, adaptor.getOperands(),
      [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

#define GET_OP_CLASSES
#include "dialects/tract/TractOps.cpp.inc"
