//===- TractElementwiseOps.cpp - constants, element-wise ops, cast --------===//

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;

//===----------------------------------------------------------------------===//
// Broadcasting result types
//===----------------------------------------------------------------------===//

LogicalResult
mlir::tract::inferBroadcastResultType(std::optional<Location> location,
                                      ValueRange operands, bool boolResult,
                                      SmallVectorImpl<Type> &results) {
  for (Value operand : operands)
    if (!isTractTensorType(operand.getType()))
      return emitOptionalError(location, "operands must be tract tensors");
  FailureOr<Shape> shape = getShape(operands.front());
  for (Value operand : operands.drop_front()) {
    shape = broadcastShapes(location, *shape, getShape(operand));
    if (failed(shape))
      return failure();
  }
  MLIRContext *context = operands.front().getContext();
  Type elementType = boolResult
                         ? IntegerType::get(context, 1)
                         : getElementTypeOrSelf(operands.back().getType());
  results.push_back(getTensorType(context, *shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// ConstOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Unary operators
//===----------------------------------------------------------------------===//

namespace {

APFloat negate(const APFloat &v) { return -v; }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu(double x) { return x * sigmoid(x); }
double mish(double x) {
  // softplus(x) = max(x, 0) + ln(1 + exp(-|x|)), exact for large |x|.
  return x * std::tanh(std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))));
}
double hardSwish(double x) {
  return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
}
double geluApproxOfPower(double x, double power) {
  const double kAlpha = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(kAlpha * (x + 0.044715 * power)));
}
double geluApprox(double x) { return geluApproxOfPower(x, x * x * x); }
double geluApproxFast(double x) { return geluApproxOfPower(x, x * x); }
double rsqrt(double x) { return 1.0 / std::sqrt(x); }
double recip(double x) { return 1.0 / x; }
double roundHalfAway(double x) { return std::round(x); }
double roundHalfEven(double x) { return std::nearbyint(x); }

} // namespace

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(), [](const APFloat &v) { return abs(v); },
      [](const APInt &v, bool isUnsigned) {
        return std::optional<APInt>(isUnsigned ? v : v.abs());
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return foldUnary(adaptor.getInput(), getType(), negate,
                   [](const APInt &v, bool isUnsigned) {
                     return isUnsigned ? std::nullopt
                                       : std::optional<APInt>(-v);
                   });
}

OpFoldResult SquareOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(), [](const APFloat &v) { return v * v; },
      [](const APInt &v, bool) { return std::optional<APInt>(v * v); });
}

OpFoldResult SignOp::fold(FoldAdaptor adaptor) {
  return foldUnary(
      adaptor.getInput(), getType(),
      [](const APFloat &v) {
        if (v.isNaN() || v.isZero())
          return v;
        return APFloat::getOne(v.getSemantics(), v.isNegative());
      },
      [](const APInt &v, bool isUnsigned) {
        int64_t sign =
            isUnsigned ? !v.isZero() : (v.isNegative() ? -1 : !v.isZero());
        return std::optional<APInt>(APInt(v.getBitWidth(), sign, true));
      });
}

#define TRACT_FOLD_VIA_DOUBLE(OP, FN)                                          \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldUnaryViaDouble(adaptor.getInput(), getType(), FN);              \
  }

TRACT_FOLD_VIA_DOUBLE(ExpOp, ::exp)
TRACT_FOLD_VIA_DOUBLE(LnOp, ::log)
TRACT_FOLD_VIA_DOUBLE(SqrtOp, ::sqrt)
TRACT_FOLD_VIA_DOUBLE(RsqrtOp, rsqrt)
TRACT_FOLD_VIA_DOUBLE(RecipOp, recip)
TRACT_FOLD_VIA_DOUBLE(SinOp, ::sin)
TRACT_FOLD_VIA_DOUBLE(CosOp, ::cos)
TRACT_FOLD_VIA_DOUBLE(TanOp, ::tan)
TRACT_FOLD_VIA_DOUBLE(AsinOp, ::asin)
TRACT_FOLD_VIA_DOUBLE(AcosOp, ::acos)
TRACT_FOLD_VIA_DOUBLE(AtanOp, ::atan)
TRACT_FOLD_VIA_DOUBLE(SinhOp, ::sinh)
TRACT_FOLD_VIA_DOUBLE(CoshOp, ::cosh)
TRACT_FOLD_VIA_DOUBLE(TanhOp, ::tanh)
TRACT_FOLD_VIA_DOUBLE(AsinhOp, ::asinh)
TRACT_FOLD_VIA_DOUBLE(AcoshOp, ::acosh)
TRACT_FOLD_VIA_DOUBLE(AtanhOp, ::atanh)
TRACT_FOLD_VIA_DOUBLE(SigmoidOp, sigmoid)
TRACT_FOLD_VIA_DOUBLE(ErfOp, ::erf)
TRACT_FOLD_VIA_DOUBLE(SiluOp, silu)
TRACT_FOLD_VIA_DOUBLE(HardSwishOp, hardSwish)
TRACT_FOLD_VIA_DOUBLE(MishOp, mish)
TRACT_FOLD_VIA_DOUBLE(RoundOp, roundHalfAway)
TRACT_FOLD_VIA_DOUBLE(RoundEvenOp, roundHalfEven)
TRACT_FOLD_VIA_DOUBLE(FloorOp, ::floor)
TRACT_FOLD_VIA_DOUBLE(CeilOp, ::ceil)
#undef TRACT_FOLD_VIA_DOUBLE

OpFoldResult GeluApproxOp::fold(FoldAdaptor adaptor) {
  return foldUnaryViaDouble(adaptor.getInput(), getType(),
                            getFastImpl() ? geluApproxFast : geluApprox);
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!dense || !dense.isSplat())
    return {};
  return DenseElementsAttr::get(getType(), !dense.getSplatValue<bool>());
}

OpFoldResult BitNotOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<BitNotOp>())
    return inner.getInput();
  return foldUnary(
      adaptor.getInput(), getType(), nullptr,
      [](const APInt &v, bool) { return std::optional<APInt>(~v); });
}

LogicalResult IsNanOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  results.push_back(getTensorType(context, getShape(adaptor.getInput()),
                                  IntegerType::get(context, 1)));
  return success();
}

LogicalResult IsInfOp::inferReturnTypes(MLIRContext *context,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  results.push_back(getTensorType(context, getShape(adaptor.getInput()),
                                  IntegerType::get(context, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Binary operators
//===----------------------------------------------------------------------===//

namespace {

std::optional<APFloat> floatMinMax(const APFloat &a, const APFloat &b,
                                   bool isMin) {
  if (a.isNaN())
    return a;
  if (b.isNaN())
    return b;
  return isMin ? minnum(a, b) : maxnum(a, b);
}

std::optional<APInt> intPow(const APInt &base, const APInt &exponent,
                            bool isUnsigned) {
  if (!isUnsigned && exponent.isNegative())
    return std::nullopt; // fractional for |base| > 1: leave it to run time
  APInt result(base.getBitWidth(), 1);
  uint64_t e = exponent.getLimitedValue(64);
  for (uint64_t i = 0; i < e; ++i)
    result *= base;
  return result;
}

/// The value of `x op rhs` when `rhs` is a splat neutral element and no
/// broadcasting happens.
Value foldNeutral(Value x, Attribute constant, Type resultType,
                  int64_t neutral) {
  if (isSplatOf(constant, neutral) && x.getType() == resultType)
    return x;
  return {};
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getLhs(), adaptor.getRhs(), getType(), 0))
    return x;
  if (Value x = foldNeutral(getRhs(), adaptor.getLhs(), getType(), 0))
    return x;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional<APFloat>(a + b);
      },
      [](const APInt &a, const APInt &b, bool) {
        return std::optional<APInt>(a + b);
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getLhs(), adaptor.getRhs(), getType(), 0))
    return x;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional<APFloat>(a - b);
      },
      [](const APInt &a, const APInt &b, bool) {
        return std::optional<APInt>(a - b);
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getLhs(), adaptor.getRhs(), getType(), 1))
    return x;
  if (Value x = foldNeutral(getRhs(), adaptor.getLhs(), getType(), 1))
    return x;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional<APFloat>(a * b);
      },
      [](const APInt &a, const APInt &b, bool) {
        return std::optional<APInt>(a * b);
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getLhs(), adaptor.getRhs(), getType(), 1))
    return x;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return std::optional<APFloat>(a / b);
      },
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero() ||
            (!isUnsigned && a.isMinSignedValue() && b.isAllOnes()))
          return std::nullopt; // a run-time error, not a constant
        return isUnsigned ? a.udiv(b) : a.sdiv(b);
      });
}

OpFoldResult RemOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        APFloat r = a;
        r.mod(b);
        return std::optional<APFloat>(r);
      },
      [](const APInt &a, const APInt &b,
         bool isUnsigned) -> std::optional<APInt> {
        if (b.isZero() ||
            (!isUnsigned && a.isMinSignedValue() && b.isAllOnes()))
          return std::nullopt;
        return isUnsigned ? a.urem(b) : a.srem(b);
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (Value x = foldNeutral(getLhs(), adaptor.getRhs(), getType(), 1))
    return x;
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        APFloat r(std::pow(a.convertToDouble(), b.convertToDouble()));
        bool lost;
        r.convert(a.getSemantics(), APFloat::rmNearestTiesToEven, &lost);
        return std::optional<APFloat>(r);
      },
      intPow);
}

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return floatMinMax(a, b, true);
      },
      [](const APInt &a, const APInt &b, bool isUnsigned) {
        return std::optional<APInt>(isUnsigned ? llvm::APIntOps::umin(a, b)
                                               : llvm::APIntOps::smin(a, b));
      });
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBinary(
      adaptor.getLhs(), adaptor.getRhs(), getType(),
      [](const APFloat &a, const APFloat &b) {
        return floatMinMax(a, b, false);
      },
      [](const APInt &a, const APInt &b, bool isUnsigned) {
        return std::optional<APInt>(isUnsigned ? llvm::APIntOps::umax(a, b)
                                               : llvm::APIntOps::smax(a, b));
      });
}

namespace {

/// Folds a comparison; NaN compares unequal to everything.
Attribute
foldComparison(Attribute lhs, Attribute rhs, Type resultType,
               APFloat::cmpResult floatWanted1, APFloat::cmpResult floatWanted2,
               bool negate,
               function_ref<bool(const APInt &, const APInt &, bool)> intFn) {
  return foldPredicate(
      lhs, rhs, resultType,
      [&](const APFloat &a, const APFloat &b) {
        APFloat::cmpResult c = a.compare(b);
        bool holds = c == floatWanted1 || c == floatWanted2;
        return negate ? !holds : holds;
      },
      intFn);
}

} // namespace

OpFoldResult EqOp::fold(FoldAdaptor adaptor) {
  return foldComparison(
      adaptor.getLhs(), adaptor.getRhs(), getType(), APFloat::cmpEqual,
      APFloat::cmpEqual, false,
      [](const APInt &a, const APInt &b, bool) { return a == b; });
}

OpFoldResult NeOp::fold(FoldAdaptor adaptor) {
  return foldComparison(
      adaptor.getLhs(), adaptor.getRhs(), getType(), APFloat::cmpEqual,
      APFloat::cmpEqual, true,
      [](const APInt &a, const APInt &b, bool) { return a != b; });
}

OpFoldResult LtOp::fold(FoldAdaptor adaptor) {
  return foldComparison(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        APFloat::cmpLessThan, APFloat::cmpLessThan, false,
                        [](const APInt &a, const APInt &b, bool isUnsigned) {
                          return isUnsigned ? a.ult(b) : a.slt(b);
                        });
}

OpFoldResult LeOp::fold(FoldAdaptor adaptor) {
  return foldComparison(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        APFloat::cmpLessThan, APFloat::cmpEqual, false,
                        [](const APInt &a, const APInt &b, bool isUnsigned) {
                          return isUnsigned ? a.ule(b) : a.sle(b);
                        });
}

OpFoldResult GtOp::fold(FoldAdaptor adaptor) {
  return foldComparison(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        APFloat::cmpGreaterThan, APFloat::cmpGreaterThan, false,
                        [](const APInt &a, const APInt &b, bool isUnsigned) {
                          return isUnsigned ? a.ugt(b) : a.sgt(b);
                        });
}

OpFoldResult GeOp::fold(FoldAdaptor adaptor) {
  return foldComparison(adaptor.getLhs(), adaptor.getRhs(), getType(),
                        APFloat::cmpGreaterThan, APFloat::cmpEqual, false,
                        [](const APInt &a, const APInt &b, bool isUnsigned) {
                          return isUnsigned ? a.uge(b) : a.sge(b);
                        });
}

namespace {

/// Bitwise (and, for booleans, logical) folding.
Attribute foldBits(Attribute lhs, Attribute rhs, Type resultType,
                   APInt (*fn)(const APInt &, const APInt &)) {
  return foldBinary(lhs, rhs, resultType, nullptr,
                    [&](const APInt &a, const APInt &b, bool) {
                      return std::optional<APInt>(fn(a, b));
                    });
}

APInt bitAnd(const APInt &a, const APInt &b) { return a & b; }
APInt bitOr(const APInt &a, const APInt &b) { return a | b; }
APInt bitXor(const APInt &a, const APInt &b) { return a ^ b; }

} // namespace

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitAnd);
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  if (getLhs() == getRhs())
    return getLhs();
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitOr);
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitXor);
}

OpFoldResult BitAndOp::fold(FoldAdaptor adaptor) {
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitAnd);
}

OpFoldResult BitOrOp::fold(FoldAdaptor adaptor) {
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitOr);
}

OpFoldResult BitXorOp::fold(FoldAdaptor adaptor) {
  return foldBits(adaptor.getLhs(), adaptor.getRhs(), getType(), bitXor);
}

OpFoldResult ShlOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
                    [](const APInt &a, const APInt &b, bool) {
                      uint64_t shift = b.getLimitedValue(a.getBitWidth());
                      return std::optional<APInt>(a.shl(shift));
                    });
}

OpFoldResult ShrOp::fold(FoldAdaptor adaptor) {
  return foldBinary(adaptor.getLhs(), adaptor.getRhs(), getType(), nullptr,
                    [](const APInt &a, const APInt &b, bool isUnsigned) {
                      uint64_t shift = b.getLimitedValue(a.getBitWidth());
                      return std::optional<APInt>(isUnsigned ? a.lshr(shift)
                                                             : a.ashr(shift));
                    });
}

//===----------------------------------------------------------------------===//
// SelectOp and CastOp
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> location,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  if (getElementTypeOrSelf(adaptor.getOnTrue().getType()) !=
      getElementTypeOrSelf(adaptor.getOnFalse().getType()))
    return emitOptionalError(location,
                             "both values must have the same element type");
  return inferBroadcastResultType(
      location, {adaptor.getCond(), adaptor.getOnTrue(), adaptor.getOnFalse()},
      /*boolResult=*/false, results);
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto cond = dyn_cast_if_present<DenseElementsAttr>(adaptor.getCond());
  Value chosen;
  if (cond && cond.isSplat())
    chosen = cond.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  else if (getOnTrue() == getOnFalse())
    chosen = getOnTrue();
  if (chosen && chosen.getType() == getType())
    return chosen;
  return {};
}

void CastOp::build(OpBuilder &builder, OperationState &state, Value input,
                   Type elementType) {
  build(builder, state,
        getTensorType(builder.getContext(), getShape(input), elementType),
        input);
}

LogicalResult CastOp::verify() {
  if (getShape(getInput()) != getShape(getOutput()))
    return emitOpError("changes the shape from ")
           << shapeToString(getShape(getInput())) << " to "
           << shapeToString(getShape(getOutput()));
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Quantizing a constant makes a quantized constant, which tract-opl has
  // no attribute for.
  if (isQuantized(getType()) || isQuantized(getInput().getType()))
    return {};
  return foldCast(adaptor.getInput(), getType());
}
