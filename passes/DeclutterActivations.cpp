//===- DeclutterActivations.cpp - fused ops from their expanded forms -----===//
//
// Exporters often write silu, gelu, rms_norm and softmax as a handful of
// element-wise ops and reductions; the dialect has one op for each, which
// lowers to one fused loop nest. Each pattern matches the expanded form
// rooted at its last op and only fires when the result has the input's type
// (no broadcasting hidden in the expansion).
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractOps.h"
#include "passes/DeclutterPatterns.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;

namespace {

bool isSplatNear(Value value, double expected, double tolerance = 1e-6) {
  std::optional<double> v = getSplatFloat(value);
  return v && std::abs(*v - expected) <= tolerance * std::abs(expected);
}

/// x * sigmoid(x) -> silu(x).
LogicalResult recognizeSilu(MulOp op, PatternRewriter &rewriter) {
  Value x;
  eitherOrder(op, [&](Value a, Value b) {
    auto sigmoid = b.getDefiningOp<SigmoidOp>();
    if (sigmoid && sigmoid.getInput() == a)
      x = a;
    return static_cast<bool>(x);
  });
  if (!x || x.getType() != op.getType())
    return rewriter.notifyMatchFailure(op, "not x * sigmoid(x)");
  rewriter.replaceOpWithNewOp<SiluOp>(op, x);
  return success();
}

/// x * x * x, x ** 3.
bool isCube(Value value, Value x) {
  if (auto pow = value.getDefiningOp<PowOp>())
    return pow.getLhs() == x && isSplatNear(pow.getRhs(), 3.0, 0);
  auto mul = value.getDefiningOp<MulOp>();
  return mul && eitherOrder(mul, [&](Value a, Value b) {
           auto square = b.getDefiningOp<MulOp>();
           return a == x &&
                  ((square && square.getLhs() == x && square.getRhs() == x) ||
                   (b.getDefiningOp<SquareOp>() &&
                    b.getDefiningOp<SquareOp>().getInput() == x));
         });
}

/// x * x, x ** 2.
bool isSquare(Value value, Value x) {
  if (auto pow = value.getDefiningOp<PowOp>())
    return pow.getLhs() == x && isSplatNear(pow.getRhs(), 2.0, 0);
  if (auto square = value.getDefiningOp<SquareOp>())
    return square.getInput() == x;
  auto mul = value.getDefiningOp<MulOp>();
  return mul && mul.getLhs() == x && mul.getRhs() == x;
}

/// 1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)), or x^2 in tract's fast
/// form (`fast` says which): the x it is a function of, or null.
Value geluTanhArgument(Value value, bool &fast) {
  auto add = value.getDefiningOp<AddOp>();
  Value x;
  if (!add)
    return {};
  eitherOrder(add, [&](Value one, Value t) {
    auto tanh = t.getDefiningOp<TanhOp>();
    if (!isSplatNear(one, 1.0, 0) || !tanh)
      return false;
    auto scaled = tanh.getInput().getDefiningOp<MulOp>();
    if (!scaled)
      return false;
    return eitherOrder(scaled, [&](Value alpha, Value inner) {
      auto sum = inner.getDefiningOp<AddOp>();
      if (!isSplatNear(alpha, std::sqrt(2.0 / M_PI), 1e-5) || !sum)
        return false;
      return eitherOrder(sum, [&](Value candidate, Value term) {
        auto cubic = term.getDefiningOp<MulOp>();
        if (!cubic)
          return false;
        bool ok = eitherOrder(cubic, [&](Value k, Value power) {
          if (!isSplatNear(k, 0.044715, 1e-5))
            return false;
          fast = !isCube(power, candidate) && isSquare(power, candidate);
          return fast || isCube(power, candidate);
        });
        if (ok)
          x = candidate;
        return ok;
      });
    });
  });
  return x;
}

/// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), the three
/// factors in any order and grouping -> gelu_approx(x); with x^2, tract's
/// fast form, gelu_approx(x) {fast_impl}.
LogicalResult recognizeGeluApprox(MulOp op, PatternRewriter &rewriter) {
  // The three factors of a product of two nested muls.
  SmallVector<Value, 3> factors;
  bool fast = false;
  eitherOrder(op, [&](Value a, Value b) {
    auto inner = b.getDefiningOp<MulOp>();
    if (!inner || !inner->hasOneUse())
      return false;
    factors = {a, inner.getLhs(), inner.getRhs()};
    for (unsigned i = 0; i < 3; ++i) {
      Value x = geluTanhArgument(factors[i], fast);
      if (!x)
        continue;
      Value p = factors[(i + 1) % 3], q = factors[(i + 2) % 3];
      if ((p == x && isSplatNear(q, 0.5, 0)) ||
          (q == x && isSplatNear(p, 0.5, 0))) {
        factors = {x};
        return true;
      }
    }
    factors.clear();
    return false;
  });
  if (factors.size() != 1 || factors[0].getType() != op.getType())
    return rewriter.notifyMatchFailure(op, "not an expanded gelu_approx");
  auto gelu = rewriter.replaceOpWithNewOp<GeluApproxOp>(op, factors[0]);
  if (fast)
    gelu.setFastImpl(true);
  return success();
}

/// min(max(v, lo), hi) or max(min(v, hi), lo): v, or null.
Value clampedOperand(Value value, double lo, double hi) {
  Value v;
  auto inner = [&](Operation *op, double bound, auto innerOp, double other) {
    return op && eitherOrder(op, [&](Value a, Value b) {
             auto in = a.getDefiningOp<decltype(innerOp)>();
             if (!in || !isSplatNear(b, bound, 1e-6))
               return false;
             return eitherOrder(in, [&](Value c, Value d) {
               if (!isSplatNear(d, other, 1e-6))
                 return false;
               v = c;
               return true;
             });
           });
  };
  Operation *op = value.getDefiningOp();
  if (isa_and_present<MinOp>(op) && inner(op, hi, MaxOp(), lo))
    return v;
  if (isa_and_present<MaxOp>(op) && inner(op, lo, MinOp(), hi))
    return v;
  return {};
}

/// x + c: x, or null.
Value plusConstant(Value value, double c) {
  auto add = value.getDefiningOp<AddOp>();
  Value x;
  if (add)
    eitherOrder(add, [&](Value a, Value b) {
      if (!isSplatNear(b, c))
        return false;
      x = a;
      return true;
    });
  return x;
}

/// x / 6 or x * (1 / 6): x, or null.
Value sixth(Value value) {
  if (auto div = value.getDefiningOp<DivOp>())
    return isSplatNear(div.getRhs(), 6.0) ? div.getLhs() : Value();
  auto mul = value.getDefiningOp<MulOp>();
  Value x;
  if (mul)
    eitherOrder(mul, [&](Value a, Value b) {
      if (!isSplatNear(b, 1.0 / 6.0, 1e-5))
        return false;
      x = a;
      return true;
    });
  return x;
}

/// x * relu6(x + 3) -> hard_swish(x) * 6, so that the division by 6 that
/// follows (perhaps already merged with a later scale) folds into the
/// constant; x * hard_sigmoid(x) with alpha 1/6 and beta 1/2, that is
/// x * clip(x / 6 + 1/2, 0, 1) -> hard_swish(x).
LogicalResult recognizeHardSwish(MulOp op, PatternRewriter &rewriter) {
  Value x;
  bool scaled = false;
  eitherOrder(op, [&](Value a, Value b) {
    if (plusConstant(clampedOperand(b, 0.0, 6.0), 3.0) == a) {
      x = a;
      scaled = true;
    } else if (Value v = plusConstant(clampedOperand(b, 0.0, 1.0), 0.5);
               v && sixth(v) == a) {
      x = a;
    }
    return static_cast<bool>(x);
  });
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!x || x.getType() != type || !isa<FloatType>(type.getElementType()))
    return rewriter.notifyMatchFailure(op, "not an expanded hard_swish");
  Value result = HardSwishOp::create(rewriter, op.getLoc(), x);
  if (scaled) {
    auto sixType = RankedTensorType::get(
        SmallVector<int64_t>(type.getRank(), 1), type.getElementType());
    Value six = ConstOp::create(
        rewriter, op.getLoc(), sixType,
        DenseElementsAttr::get(sixType,
                               FloatAttr::get(type.getElementType(), 6.0)));
    result = MulOp::create(rewriter, op.getLoc(), type, result, six);
  }
  rewriter.replaceOp(op, result);
  return success();
}

/// x * x, square(x), x ** 2: x, or null.
Value squared(Value value) {
  if (auto square = value.getDefiningOp<SquareOp>())
    return square.getInput();
  if (auto mul = value.getDefiningOp<MulOp>())
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  if (auto pow = value.getDefiningOp<PowOp>())
    return isSplatNear(pow.getRhs(), 2.0, 0) ? pow.getLhs() : Value();
  return {};
}

/// The mean of x * x over one axis: reduce<mean_of_squares>, or a sum of
/// squares divided by (or multiplied by the inverse of) the axis' length.
/// Sets `x` and `axis`.
bool isMeanOfSquares(Value value, Value &x, int64_t &axis) {
  auto reduceOf = [&](Value v, Reducer reducer) -> ReduceOp {
    auto reduce = v.getDefiningOp<ReduceOp>();
    if (!reduce || reduce.getReducer() != reducer ||
        reduce.getAxes().size() != 1)
      return {};
    return reduce;
  };
  if (ReduceOp reduce = reduceOf(value, Reducer::MeanOfSquares)) {
    x = reduce.getInput();
    axis = reduce.getAxes()[0];
    return true;
  }
  Operation *scale = value.getDefiningOp();
  if (!isa_and_present<MulOp, DivOp>(scale))
    return false;
  ReduceOp sum = reduceOf(scale->getOperand(0), Reducer::Sum);
  Value factor = scale->getOperand(1);
  if (!sum && isa<MulOp>(scale)) {
    sum = reduceOf(scale->getOperand(1), Reducer::Sum);
    factor = scale->getOperand(0);
  }
  if (!sum || !(x = squared(sum.getInput())))
    return false;
  axis = sum.getAxes()[0];
  int64_t length = cast<RankedTensorType>(x.getType()).getDimSize(axis);
  if (ShapedType::isDynamic(length))
    return false;
  double expected = isa<DivOp>(scale) ? length : 1.0 / length;
  return isSplatNear(factor, expected);
}

/// What `value` is the reciprocal square root of: rsqrt(v), or 1 / sqrt(v)
/// (torch's rsqrt as exported by some versions); null otherwise.
Value reciprocalSqrtOf(Value value) {
  if (auto rsqrt = value.getDefiningOp<RsqrtOp>())
    return rsqrt.getInput();
  auto div = value.getDefiningOp<DivOp>();
  if (!div || !isSplatNear(div.getLhs(), 1.0, 0))
    return {};
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  return sqrt ? sqrt.getInput() : Value();
}

/// x * rsqrt(mean(x * x, axis) + eps), x * (1 / sqrt(...)), or
/// x / sqrt(...) -> rms_norm.
struct RecognizeRmsNorm : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    Value x;
    int64_t axis = 0;
    double eps = 0;
    bool found = eitherOrder(op, [&](Value a, Value b) {
      Value denominator = reciprocalSqrtOf(b);
      return denominator && matchDenominator(denominator, a, x, axis, eps);
    });
    if (!found || x.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not an expanded rms_norm");
    rewriter.replaceOpWithNewOp<RmsNormOp>(
        op, x, rewriter.getI64IntegerAttr(axis), rewriter.getF64FloatAttr(eps));
    return success();
  }

  /// `value` is mean(x * x, axis) + eps with x == `input`.
  static bool matchDenominator(Value value, Value input, Value &x,
                               int64_t &axis, double &eps) {
    auto add = value.getDefiningOp<AddOp>();
    return add && eitherOrder(add, [&](Value mean, Value epsilon) {
             std::optional<double> e = getSplatFloat(epsilon);
             if (!e || !isMeanOfSquares(mean, x, axis) || x != input)
               return false;
             eps = *e;
             return true;
           });
  }
};

LogicalResult recognizeRmsNormDiv(DivOp op, PatternRewriter &rewriter) {
  auto sqrt = op.getRhs().getDefiningOp<SqrtOp>();
  Value x;
  int64_t axis = 0;
  double eps = 0;
  if (!sqrt ||
      !RecognizeRmsNorm::matchDenominator(sqrt.getInput(), op.getLhs(), x, axis,
                                          eps) ||
      x.getType() != op.getType())
    return rewriter.notifyMatchFailure(op, "not an expanded rms_norm");
  rewriter.replaceOpWithNewOp<RmsNormOp>(
      op, x, rewriter.getI64IntegerAttr(axis), rewriter.getF64FloatAttr(eps));
  return success();
}

/// exp(x - max(x)) / sum(exp(x - max(x))) over the same axes (or without
/// the max) -> softmax(x).
LogicalResult recognizeSoftmax(DivOp op, PatternRewriter &rewriter) {
  auto exp = op.getLhs().getDefiningOp<ExpOp>();
  auto sum = op.getRhs().getDefiningOp<ReduceOp>();
  if (!exp || !sum || sum.getReducer() != Reducer::Sum ||
      sum.getInput() != exp.getResult())
    return rewriter.notifyMatchFailure(op, "not exp(x) / sum(exp(x))");
  Value x = exp.getInput();
  if (auto sub = x.getDefiningOp<SubOp>()) {
    auto max = sub.getRhs().getDefiningOp<ReduceOp>();
    if (max && max.getReducer() == Reducer::Max &&
        max.getInput() == sub.getLhs() && max.getAxes() == sum.getAxes())
      x = sub.getLhs();
  }
  if (x.getType() != op.getType())
    return rewriter.notifyMatchFailure(op, "broadcasting softmax");
  rewriter.replaceOpWithNewOp<SoftmaxOp>(op, x, sum.getAxesAttr());
  return success();
}

} // namespace

void mlir::tract::populateDeclutterActivationPatterns(
    RewritePatternSet &patterns) {
  patterns.add(recognizeSilu)
      .add(recognizeGeluApprox)
      .add(recognizeHardSwish)
      .add<RecognizeRmsNorm>(patterns.getContext())
      .add(recognizeRmsNormDiv)
      .add(recognizeSoftmax);
}
