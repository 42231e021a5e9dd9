//===- DeclutterArithmetic.cpp - absorbing elements, division by constants ===//
//
// Neutral elements (x + 0, x - 0, x * 1, x / 1) are the folders' job
// (dialects/tract/TractElementwiseOps.cpp); these patterns do what needs a
// new op.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tract;

DenseElementsAttr mlir::tract::getConstantValue(Value value) {
  Attribute attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return {};
  return dyn_cast<DenseElementsAttr>(attr);
}

namespace {

/// x * 0 is 0 for integers only: for floats, NaN * 0 and Inf * 0 are NaN and
/// -x * 0 is -0, so the multiplication stays.
struct IntegerMulByZero : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    auto intType = dyn_cast<IntegerType>(type.getElementType());
    if (!intType || intType.getWidth() == 1)
      return rewriter.notifyMatchFailure(op, "not an integer multiplication");
    DenseElementsAttr zero = getConstantValue(op.getRhs());
    if (!isSplatOf(zero, 0))
      zero = getConstantValue(op.getLhs());
    if (!isSplatOf(zero, 0))
      return rewriter.notifyMatchFailure(op, "no splat zero operand");
    auto splat = DenseElementsAttr::get(
        RankedTensorType::get(SmallVector<int64_t>(type.getRank(), 1), intType),
        zero.getSplatValue<Attribute>());
    Value result = ConstOp::create(rewriter, op.getLoc(), splat.getType(),
                                   cast<ElementsAttr>(splat));
    if (result.getType() != type)
      result = BroadcastOp::create(
          rewriter, op.getLoc(), result,
          ShapeAttr::get(rewriter.getContext(), getShape(type)));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// x / c becomes x * (1 / c) for float constants c. The reciprocal is
/// rounded, so the result may differ from the division by one ulp; an
/// integer division is never rewritten.
struct DivByConstantToMul : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DivOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr divisor = getConstantValue(op.getRhs());
    if (!divisor || !isa<FloatType>(divisor.getElementType()))
      return rewriter.notifyMatchFailure(op, "not a float constant divisor");
    if (!divisor.isSplat() && divisor.getNumElements() > kFoldElementBudget)
      return rewriter.notifyMatchFailure(op, "divisor over the fold budget");
    auto reciprocal = [](const APFloat &value) {
      APFloat one(value.getSemantics(), 1);
      one.divide(value, APFloat::rmNearestTiesToEven);
      return one;
    };
    DenseElementsAttr inverse;
    if (divisor.isSplat()) {
      inverse = DenseElementsAttr::get(
          divisor.getType(), reciprocal(divisor.getSplatValue<APFloat>()));
    } else {
      SmallVector<APFloat> values;
      for (const APFloat &value : divisor.getValues<APFloat>())
        values.push_back(reciprocal(value));
      inverse = DenseElementsAttr::get(divisor.getType(), values);
    }
    Value constant =
        ConstOp::create(rewriter, op.getRhs().getLoc(), inverse.getType(),
                        cast<ElementsAttr>(inverse));
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), op.getLhs(), constant);
    return success();
  }
};

} // namespace

void mlir::tract::populateDeclutterArithmeticPatterns(
    RewritePatternSet &patterns) {
  patterns.add<IntegerMulByZero, DivByConstantToMul>(patterns.getContext());
}
