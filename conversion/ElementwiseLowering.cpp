//===- ElementwiseLowering.cpp - element-wise tract ops to linalg ---------===//
//
// Unary, binary, predicate, select and cast ops become one `linalg.generic`
// each, with numpy broadcasting expressed in the indexing maps (an operand
// axis of size 1 against a larger result axis reads index 0). The scalar
// body is chosen from the op and the original (tract) element type, which
// still says whether integers are unsigned.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Builds the scalar result from the block arguments (one per operand).
/// `element` is the tract element type of the (first) operand.
using BodyBuilder =
    std::function<Value(OpBuilder &, Location, ValueRange, Type element)>;

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value negated = arith::NegFOp::create(b, loc, x);
  Value exp = math::ExpOp::create(b, loc, negated);
  Value one = floatConstant(b, loc, type, 1.0);
  Value denominator = arith::AddFOp::create(b, loc, one, exp);
  return arith::DivFOp::create(b, loc, one, denominator);
}

/// Integer division and remainder that never trap: by zero gives 0, and a
/// signed division by -1 is a negation (INT_MIN / -1 wraps).
Value safeIntegerDivision(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          bool isUnsigned, bool remainder) {
  Type type = lhs.getType();
  Value zero = intConstant(b, loc, type, 0);
  Value one = intConstant(b, loc, type, 1);
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, zero);
  if (isUnsigned) {
    Value divisor = arith::SelectOp::create(b, loc, isZero, one, rhs);
    Value result =
        remainder ? arith::RemUIOp::create(b, loc, lhs, divisor).getResult()
                  : arith::DivUIOp::create(b, loc, lhs, divisor).getResult();
    return arith::SelectOp::create(b, loc, isZero, zero, result);
  }
  Value minusOne = intConstant(b, loc, type, -1);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rhs, minusOne);
  Value special = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value divisor = arith::SelectOp::create(b, loc, special, one, rhs);
  Value result = remainder
                     ? arith::RemSIOp::create(b, loc, lhs, divisor).getResult()
                     : arith::DivSIOp::create(b, loc, lhs, divisor).getResult();
  Value byMinusOne =
      remainder ? zero : arith::SubIOp::create(b, loc, zero, lhs).getResult();
  result = arith::SelectOp::create(b, loc, isMinusOne, byMinusOne, result);
  return arith::SelectOp::create(b, loc, isZero, zero, result);
}

/// Shifts by the bit width or more give 0 (or the sign for arithmetic right
/// shifts) instead of LLVM's poison.
Value safeShift(OpBuilder &b, Location loc, Value lhs, Value rhs, bool left,
                bool isUnsigned) {
  Type type = lhs.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  Value limit = intConstant(b, loc, type, width);
  Value tooFar =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, rhs, limit);
  if (left) {
    Value shifted = arith::ShLIOp::create(b, loc, lhs, rhs);
    return arith::SelectOp::create(b, loc, tooFar, intConstant(b, loc, type, 0),
                                   shifted);
  }
  if (isUnsigned) {
    Value shifted = arith::ShRUIOp::create(b, loc, lhs, rhs);
    return arith::SelectOp::create(b, loc, tooFar, intConstant(b, loc, type, 0),
                                   shifted);
  }
  Value clamped = arith::SelectOp::create(
      b, loc, tooFar, intConstant(b, loc, type, width - 1), rhs);
  return arith::ShRSIOp::create(b, loc, lhs, clamped);
}

Value compare(OpBuilder &b, Location loc, Value lhs, Value rhs, Type element,
              arith::CmpFPredicate floatPredicate,
              arith::CmpIPredicate signedPredicate,
              arith::CmpIPredicate unsignedPredicate) {
  if (isFloat(element))
    return arith::CmpFOp::create(b, loc, floatPredicate, lhs, rhs);
  return arith::CmpIOp::create(
      b, loc, isUnsignedInteger(element) ? unsignedPredicate : signedPredicate,
      lhs, rhs);
}

/// The body of min or max: NaN-propagating for floats, unsigned for unsigned
/// integers and booleans.
template <typename FloatOp, typename UnsignedOp, typename SignedOp>
BodyBuilder extremum() {
  return [](OpBuilder &b, Location loc, ValueRange a, Type e) -> Value {
    if (isFloat(e))
      return FloatOp::create(b, loc, a[0], a[1]);
    if (isUnsignedInteger(e) || e.isInteger(1))
      return UnsignedOp::create(b, loc, a[0], a[1]);
    return SignedOp::create(b, loc, a[0], a[1]);
  };
}

/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^p))), p = 3, or 2 for
/// tract's fast form.
BodyBuilder geluApproxBody(bool fast) {
  return [fast](OpBuilder &b, Location loc, ValueRange a, Type) -> Value {
    Type type = a[0].getType();
    Value x = a[0];
    Value power = arith::MulFOp::create(b, loc, x, x);
    if (!fast)
      power = arith::MulFOp::create(b, loc, x, power);
    Value inner = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, power,
                              floatConstant(b, loc, type, 0.044715))
            .getResult());
    Value scaled = arith::MulFOp::create(
        b, loc, inner, floatConstant(b, loc, type, std::sqrt(2.0 / M_PI)));
    Value tanh = math::TanhOp::create(b, loc, scaled);
    Value onePlus =
        arith::AddFOp::create(b, loc, floatConstant(b, loc, type, 1.0), tanh);
    Value half =
        arith::MulFOp::create(b, loc, x, floatConstant(b, loc, type, 0.5));
    return arith::MulFOp::create(b, loc, half, onePlus);
  };
}

/// The scalar body of each element-wise op, keyed by op name.
const llvm::StringMap<BodyBuilder> &bodyBuilders() {
  static const llvm::StringMap<BodyBuilder> table = [] {
    llvm::StringMap<BodyBuilder> t;
    // Float-only unary ops that are one math op.
    auto mathUnary = [&](StringRef name, auto tag) {
      using MathOp = decltype(tag);
      t[name] = [](OpBuilder &b, Location loc, ValueRange a, Type) -> Value {
        return MathOp::create(b, loc, a[0]);
      };
    };
    mathUnary(ExpOp::getOperationName(), math::ExpOp());
    mathUnary(LnOp::getOperationName(), math::LogOp());
    mathUnary(SqrtOp::getOperationName(), math::SqrtOp());
    mathUnary(RsqrtOp::getOperationName(), math::RsqrtOp());
    mathUnary(SinOp::getOperationName(), math::SinOp());
    mathUnary(CosOp::getOperationName(), math::CosOp());
    mathUnary(TanOp::getOperationName(), math::TanOp());
    mathUnary(AsinOp::getOperationName(), math::AsinOp());
    mathUnary(AcosOp::getOperationName(), math::AcosOp());
    mathUnary(AtanOp::getOperationName(), math::AtanOp());
    mathUnary(SinhOp::getOperationName(), math::SinhOp());
    mathUnary(CoshOp::getOperationName(), math::CoshOp());
    mathUnary(TanhOp::getOperationName(), math::TanhOp());
    mathUnary(AsinhOp::getOperationName(), math::AsinhOp());
    mathUnary(AcoshOp::getOperationName(), math::AcoshOp());
    mathUnary(AtanhOp::getOperationName(), math::AtanhOp());
    mathUnary(ErfOp::getOperationName(), math::ErfOp());
    mathUnary(RoundOp::getOperationName(), math::RoundOp());
    mathUnary(RoundEvenOp::getOperationName(), math::RoundEvenOp());
    mathUnary(FloorOp::getOperationName(), math::FloorOp());
    mathUnary(CeilOp::getOperationName(), math::CeilOp());

    t[AbsOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      if (isFloat(e))
        return math::AbsFOp::create(b, loc, a[0]);
      if (isUnsignedInteger(e))
        return a[0];
      return math::AbsIOp::create(b, loc, a[0]);
    };
    t[NegOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      if (isFloat(e))
        return arith::NegFOp::create(b, loc, a[0]);
      return arith::SubIOp::create(
          b, loc, intConstant(b, loc, a[0].getType(), 0), a[0]);
    };
    t[SquareOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                         ValueRange a, Type e) -> Value {
      if (isFloat(e))
        return arith::MulFOp::create(b, loc, a[0], a[0]);
      return arith::MulIOp::create(b, loc, a[0], a[0]);
    };
    t[SignOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                       Type e) -> Value {
      Type type = a[0].getType();
      if (isFloat(e)) {
        // NaN and zeros are kept as they are.
        Value zero = floatConstant(b, loc, type, 0.0);
        Value positive = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGT, a[0], zero);
        Value negative = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLT, a[0], zero);
        Value result = arith::SelectOp::create(
            b, loc, negative, floatConstant(b, loc, type, -1.0), a[0]);
        return arith::SelectOp::create(
            b, loc, positive, floatConstant(b, loc, type, 1.0), result);
      }
      Value zero = intConstant(b, loc, type, 0);
      Value positive = arith::CmpIOp::create(b, loc,
                                             isUnsignedInteger(e)
                                                 ? arith::CmpIPredicate::ne
                                                 : arith::CmpIPredicate::sgt,
                                             a[0], zero);
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a[0], zero);
      Value result = zero;
      if (!isUnsignedInteger(e))
        result = arith::SelectOp::create(b, loc, negative,
                                         intConstant(b, loc, type, -1), zero);
      return arith::SelectOp::create(b, loc, positive,
                                     intConstant(b, loc, type, 1), result);
    };
    t[RecipOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                        ValueRange a, Type) -> Value {
      return arith::DivFOp::create(
          b, loc, floatConstant(b, loc, a[0].getType(), 1.0), a[0]);
    };
    t[SigmoidOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                          ValueRange a, Type) -> Value {
      return sigmoid(b, loc, a[0]);
    };
    t[SiluOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                       Type) -> Value {
      return arith::MulFOp::create(b, loc, a[0], sigmoid(b, loc, a[0]));
    };
    t[MishOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                       Type) -> Value {
      // softplus(x) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
      Type type = a[0].getType();
      Value positive = arith::MaximumFOp::create(
          b, loc, a[0], floatConstant(b, loc, type, 0.0));
      Value tail = math::Log1pOp::create(
          b, loc,
          math::ExpOp::create(b, loc,
                              arith::NegFOp::create(
                                  b, loc, math::AbsFOp::create(b, loc, a[0]))));
      Value softplus = arith::AddFOp::create(b, loc, positive, tail);
      return arith::MulFOp::create(b, loc, a[0],
                                   math::TanhOp::create(b, loc, softplus));
    };
    t[HardSwishOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                            ValueRange a, Type) -> Value {
      Type type = a[0].getType();
      Value shifted =
          arith::AddFOp::create(b, loc, a[0], floatConstant(b, loc, type, 3.0));
      Value low = arith::MaximumFOp::create(b, loc, shifted,
                                            floatConstant(b, loc, type, 0.0));
      Value relu6 = arith::MinimumFOp::create(b, loc, low,
                                              floatConstant(b, loc, type, 6.0));
      Value scaled = arith::MulFOp::create(b, loc, a[0], relu6);
      return arith::DivFOp::create(b, loc, scaled,
                                   floatConstant(b, loc, type, 6.0));
    };
    t[NotOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type) -> Value {
      return arith::XOrIOp::create(b, loc, a[0],
                                   intConstant(b, loc, a[0].getType(), 1));
    };
    t[BitNotOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                         ValueRange a, Type) -> Value {
      return arith::XOrIOp::create(b, loc, a[0],
                                   intConstant(b, loc, a[0].getType(), -1));
    };
    t[IsNanOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                        ValueRange a, Type) -> Value {
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a[0],
                                   a[0]);
    };

    // Binary.
    auto arithmetic = [&](StringRef name, auto floatTag, auto intTag) {
      using FloatOp = decltype(floatTag);
      using IntOp = decltype(intTag);
      t[name] = [](OpBuilder &b, Location loc, ValueRange a, Type e) -> Value {
        if (isFloat(e))
          return FloatOp::create(b, loc, a[0], a[1]);
        return IntOp::create(b, loc, a[0], a[1]);
      };
    };
    arithmetic(AddOp::getOperationName(), arith::AddFOp(), arith::AddIOp());
    arithmetic(SubOp::getOperationName(), arith::SubFOp(), arith::SubIOp());
    arithmetic(MulOp::getOperationName(), arith::MulFOp(), arith::MulIOp());
    t[DivOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      if (isFloat(e))
        return arith::DivFOp::create(b, loc, a[0], a[1]);
      return safeIntegerDivision(b, loc, a[0], a[1], isUnsignedInteger(e),
                                 /*remainder=*/false);
    };
    t[RemOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      if (isFloat(e))
        return arith::RemFOp::create(b, loc, a[0], a[1]);
      return safeIntegerDivision(b, loc, a[0], a[1], isUnsignedInteger(e),
                                 /*remainder=*/true);
    };
    t[PowOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      if (isFloat(e))
        return math::PowFOp::create(b, loc, a[0], a[1]);
      return math::IPowIOp::create(b, loc, a[0], a[1]);
    };
    t[MinOp::getOperationName()] =
        extremum<arith::MinimumFOp, arith::MinUIOp, arith::MinSIOp>();
    t[MaxOp::getOperationName()] =
        extremum<arith::MaximumFOp, arith::MaxUIOp, arith::MaxSIOp>();
    auto comparison = [&](StringRef name, arith::CmpFPredicate f,
                          arith::CmpIPredicate s, arith::CmpIPredicate u) {
      t[name] = [f, s, u](OpBuilder &b, Location loc, ValueRange a,
                          Type e) -> Value {
        return compare(b, loc, a[0], a[1], e, f, s, u);
      };
    };
    using F = arith::CmpFPredicate;
    using I = arith::CmpIPredicate;
    comparison(EqOp::getOperationName(), F::OEQ, I::eq, I::eq);
    comparison(NeOp::getOperationName(), F::UNE, I::ne, I::ne);
    comparison(LtOp::getOperationName(), F::OLT, I::slt, I::ult);
    comparison(LeOp::getOperationName(), F::OLE, I::sle, I::ule);
    comparison(GtOp::getOperationName(), F::OGT, I::sgt, I::ugt);
    comparison(GeOp::getOperationName(), F::OGE, I::sge, I::uge);
    auto bitwise = [&](StringRef name, auto tag) {
      using IntOp = decltype(tag);
      t[name] = [](OpBuilder &b, Location loc, ValueRange a, Type) -> Value {
        return IntOp::create(b, loc, a[0], a[1]);
      };
    };
    bitwise(AndOp::getOperationName(), arith::AndIOp());
    bitwise(OrOp::getOperationName(), arith::OrIOp());
    bitwise(XorOp::getOperationName(), arith::XOrIOp());
    bitwise(BitAndOp::getOperationName(), arith::AndIOp());
    bitwise(BitOrOp::getOperationName(), arith::OrIOp());
    bitwise(BitXorOp::getOperationName(), arith::XOrIOp());
    t[ShlOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      return safeShift(b, loc, a[0], a[1], /*left=*/true, isUnsignedInteger(e));
    };
    t[ShrOp::getOperationName()] = [](OpBuilder &b, Location loc, ValueRange a,
                                      Type e) -> Value {
      return safeShift(b, loc, a[0], a[1], /*left=*/false,
                       isUnsignedInteger(e));
    };
    t[SelectOp::getOperationName()] = [](OpBuilder &b, Location loc,
                                         ValueRange a, Type) -> Value {
      return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
    };
    return t;
  }();
  return table;
}

/// Lowers any element-wise op of the table to a linalg.generic.
/// It matches any op with the trait rather than one op type, so it is the
/// one pattern that does not derive TractLoweringPattern: it makes the same
/// check of the symbols first.
struct ElementwiseLowering : public ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isElementwise(op))
      return failure();
    if (std::optional<std::string> unbound = findUnboundSymbol(op))
      return rewriter.notifyMatchFailure(op, "symbol " + *unbound +
                                                 " has no value here");
    StringRef name = op->getName().getStringRef();
    BodyBuilder body;
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
    if (auto gelu = dyn_cast<GeluApproxOp>(op)) {
      body = geluApproxBody(gelu.getFastImpl());
    } else if (auto found = bodyBuilders().find(name);
               found != bodyBuilders().end()) {
      body = found->second;
      // Select's values decide the semantics, not its condition.
      if (isa<SelectOp>(op))
        element = getElementTypeOrSelf(op->getOperand(1).getType());
    } else if (auto isInf = dyn_cast<IsInfOp>(op)) {
      bool positive = isInf.getDetectPositive();
      bool negative = isInf.getDetectNegative();
      body = [positive, negative](OpBuilder &b, Location loc, ValueRange a,
                                  Type) -> Value {
        Type type = a[0].getType();
        Value result = intConstant(b, loc, b.getI1Type(), 0);
        if (positive)
          result =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[0],
                                    floatConstant(b, loc, type, INFINITY));
        if (negative)
          result = arith::OrIOp::create(
              b, loc, result,
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a[0],
                                    floatConstant(b, loc, type, -INFINITY))
                  .getResult());
        return result;
      };
    } else if (isa<CastOp>(op)) {
      body = [resultElement](OpBuilder &b, Location loc, ValueRange a,
                             Type e) -> Value {
        return castScalar(b, loc, a[0], e, resultElement);
      };
    } else {
      return op->emitOpError("is element-wise but has no scalar body in the "
                             "lowering");
    }

    Location loc = op->getLoc();
    Type resultType = op->getResult(0).getType();
    Value init = emptyTensor(rewriter, loc, resultType);
    if (!init)
      return rewriter.notifyMatchFailure(op, "a result size is unbound");
    Shape resultShape = getShape(resultType);
    unsigned rank = resultShape.size();
    SmallVector<AffineMap> maps;
    for (Value operand : op->getOperands()) {
      Shape shape = getShape(operand.getType());
      if (shape.size() != rank)
        return rewriter.notifyMatchFailure(op, "operand ranks differ");
      SmallVector<AffineExpr> exprs;
      for (unsigned axis = 0; axis < rank; ++axis) {
        if (shape[axis] == resultShape[axis]) {
          exprs.push_back(rewriter.getAffineDimExpr(axis));
        } else if (shape[axis] == TDim(1)) {
          exprs.push_back(rewriter.getAffineConstantExpr(0));
        } else {
          return op->emitError()
                 << "cannot lower a broadcast of dim " << shape[axis].toString()
                 << " to " << resultShape[axis].toString()
                 << " decided at run time";
        }
      }
      maps.push_back(AffineMap::get(rank, 0, exprs, rewriter.getContext()));
    }
    rewriter.replaceOp(
        op, buildGeneric(rewriter, loc, init, operands, maps,
                         [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
                           return body(b, bodyLoc, args, element);
                         }));
    return success();
  }
};

} // namespace

void mlir::tract::populateElementwiseLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering>(converter, patterns.getContext());
}
