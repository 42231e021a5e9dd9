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

LogicalResult
mlir::tract::inferBroadcastResultType(std::optional<Location> location,
                                      Value lhs, Value rhs,
                                      SmallVectorImpl<Type> &results) {
  auto lhsType = dyn_cast<RankedTensorType>(lhs.getType());
  auto rhsType = dyn_cast<RankedTensorType>(rhs.getType());
  if (!lhsType || !rhsType)
    return emitOptionalError(location, "operands must be ranked tensors");
  if (lhsType.getRank() != rhsType.getRank())
    return emitOptionalError(location, "operands must have equal ranks, got ",
                             lhsType.getRank(), " and ", rhsType.getRank(),
                             " (make rank changes explicit with axis ops)");
  SmallVector<int64_t> shape;
  for (auto [axis, dims] :
       llvm::enumerate(llvm::zip(lhsType.getShape(), rhsType.getShape()))) {
    auto [a, b] = dims;
    if (a == 1) {
      shape.push_back(b);
    } else if (b == 1 || a == b) {
      shape.push_back(a);
    } else if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b)) {
      // A dynamic dim facing a static one must be 1 or equal to it.
      shape.push_back(ShapedType::isDynamic(a) ? b : a);
    } else {
      return emitOptionalError(location, "dims ", a, " and ", b, " on axis ",
                               axis, " do not broadcast");
    }
  }
  results.push_back(RankedTensorType::get(shape, lhsType.getElementType()));
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
