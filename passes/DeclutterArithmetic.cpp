//===- DeclutterArithmetic.cpp - absorbing elements, division by constants ===//
//
// Neutral elements (x + 0, x - 0, x * 1, x / 1) are the folders' job
// (dialects/tract/TractElementwiseOps.cpp); these patterns do what needs a
// new op.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractInterfaces.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

DenseElementsAttr mlir::tract::getConstantValue(Value value) {
  Attribute attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return {};
  return dyn_cast<DenseElementsAttr>(attr);
}

bool mlir::tract::eitherOrder(Operation *op,
                              function_ref<bool(Value, Value)> fn) {
  return fn(op->getOperand(0), op->getOperand(1)) ||
         fn(op->getOperand(1), op->getOperand(0));
}

std::optional<double> mlir::tract::getSplatFloat(Value value) {
  DenseElementsAttr dense = getConstantValue(value);
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

namespace {

/// x * 0 is 0 for integers only: for floats, NaN * 0 and Inf * 0 are NaN and
/// -x * 0 is -0, so the multiplication stays.
LogicalResult integerMulByZero(MulOp op, PatternRewriter &rewriter) {
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

/// x / c becomes x * (1 / c) for float constants c. The reciprocal is
/// rounded, so the result may differ from the division by one ulp; an
/// integer division is never rewritten, and neither is the quantization of
/// a model's input (an input divided by a scale and rounded to integers
/// next, as QuantizeLinear does): an image's pixels lie on half steps of
/// such a scale often enough that the ulp moves some to the other integer
/// (onnxruntime divides there too; inside the graph, where it computes
/// quantized ops with scale ratios, the product stays).
LogicalResult divByConstantToMul(DivOp op, PatternRewriter &rewriter) {
  DenseElementsAttr divisor = getConstantValue(op.getRhs());
  if (!divisor || !isa<FloatType>(divisor.getElementType()))
    return rewriter.notifyMatchFailure(op, "not a float constant divisor");
  if (isa<BlockArgument>(op.getLhs()) &&
      llvm::any_of(op->getUsers(), [](Operation *user) {
        return isa<RoundOp, RoundEvenOp>(user);
      }))
    return rewriter.notifyMatchFailure(op, "an input quantized");
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

/// (x op c1) op c2 -> x op (c1 op c2) for op in {add, mul} and constants
/// c1, c2 that fold together: two scalings or shifts in a row (a batch norm
/// after an activation, a division turned product) become one.
template <typename Op> struct CombineConstantOperands : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;

  LogicalResult matchAndRewrite(Op op,
                                PatternRewriter &rewriter) const override {
    Type elementType = getElementTypeOrSelf(op.getType());
    if (elementType.isInteger(1))
      return rewriter.notifyMatchFailure(op, "booleans");
    for (unsigned i = 0; i < 2; ++i) {
      Value c2 = op->getOperand(1 - i);
      auto inner = op->getOperand(i).template getDefiningOp<Op>();
      if (!inner || !inner->hasOneUse() || !small(getConstantValue(c2)))
        continue;
      for (unsigned j = 0; j < 2; ++j) {
        Value x = inner->getOperand(j), c1 = inner->getOperand(1 - j);
        if (!small(getConstantValue(c1)) || getConstantValue(x))
          continue;
        // Broadcasting is associative, but check that the shapes agree.
        FailureOr<Shape> constants =
            broadcastShapes(std::nullopt, getShape(c1), getShape(c2));
        if (failed(constants))
          continue;
        FailureOr<Shape> shape =
            broadcastShapes(std::nullopt, getShape(x), *constants);
        if (failed(shape) || *shape != getShape(op.getType()))
          continue;
        Value combined = Op::create(rewriter, op.getLoc(), c1, c2);
        Value result = Op::create(rewriter, op.getLoc(), x, combined);
        rewriter.replaceOp(op, result);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "no constant pair to combine");
  }

  static bool small(DenseElementsAttr value) {
    return value &&
           (value.isSplat() || value.getNumElements() <= kFoldElementBudget);
  }
};

/// An explicit broadcast into an element-wise op that broadcasts its
/// operands anyway (Expand before Add, as exporters write a bias or a mask)
/// is dropped when the op's result keeps its shape without it, as tract's
/// declutter does: the op reads the smaller tensor instead.
struct DropImplicitBroadcast : RewritePattern {
  DropImplicitBroadcast(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isElementwise(op) || op->getNumOperands() < 2 ||
        op->getNumResults() != 1)
      return failure();
    Shape result = getShape(op->getResult(0).getType());
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      auto broadcast = op->getOperand(i).getDefiningOp<BroadcastOp>();
      if (!broadcast)
        continue;
      Value input = broadcast.getInput();
      if (getShape(input).size() != result.size())
        continue;
      // The shape the op would have with the broadcast's input instead.
      Shape shape = getShape(input);
      bool fits = true;
      for (unsigned j = 0; j < op->getNumOperands() && fits; ++j) {
        if (j == i)
          continue;
        FailureOr<Shape> both = broadcastShapes(
            std::nullopt, shape, getShape(op->getOperand(j).getType()));
        fits = succeeded(both);
        if (fits)
          shape = *both;
      }
      if (!fits || shape != result)
        continue;
      rewriter.modifyOpInPlace(op, [&] { op->setOperand(i, input); });
      return success();
    }
    return failure();
  }
};

} // namespace

void mlir::tract::populateDeclutterArithmeticPatterns(
    RewritePatternSet &patterns) {
  patterns.add(integerMulByZero)
      .add(divByConstantToMul)
      .add<CombineConstantOperands<AddOp>, CombineConstantOperands<MulOp>,
           DropImplicitBroadcast>(patterns.getContext());
}
