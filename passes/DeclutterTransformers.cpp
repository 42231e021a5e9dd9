//===- DeclutterTransformers.cpp - transformer ops from their expansions --===//
//
// A decoder exported to ONNX spells out its rotary embedding and its
// attention in elementary ops; tract runs them as ApplyRope and as scaled
// dot-product attention, and so does the dialect:
//
// * x * cos + rotate_half(x) * sin, with rotate_half(x) the concatenation of
//   -x[h:] and x[:h] on the last axis (of width 2h) -> apply_rope(x, cos,
//   sin);
// * einsum(softmax(einsum(q, k) [* scale] [+ mask]), v), the first einsum
//   q . k^T and the second p . v over the same batch axes -> sdpa(q, k, v,
//   mask), followed by the axis moves the second einsum's output order
//   asks for. A mask that is causal (built from ranges of positions, the
//   offset read from the past's shape) becomes the causal flag. Keys and
//   values repeated for grouped-query attention
//   (add_axis, broadcast, reshape: HuggingFace's repeat_kv) are taken
//   before the repetition: sdpa reads a key/value head for each group of
//   query heads without copying it.
//
// Each intermediate result must have no other use, so that the rewrite
// removes work rather than duplicating it.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The x of `value` = concat(-x[h:], x[:h]) on the last axis of x, whose
/// last dim is 2h; null otherwise.
Value rotateHalfOf(Value value) {
  auto concat = value.getDefiningOp<ConcatOp>();
  if (!concat || concat.getInputs().size() != 2)
    return {};
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  auto low = concat.getInputs()[1].getDefiningOp<SliceOp>();
  auto high = neg ? neg.getInput().getDefiningOp<SliceOp>() : SliceOp();
  if (!low || !high || low.getInput() != high.getInput())
    return {};
  Value x = low.getInput();
  Shape shape = getShape(x);
  uint64_t last = shape.size() - 1;
  std::optional<int64_t> width = shape.back().getConstant();
  if (!width || *width % 2 || concat.getAxis() != last ||
      low.getAxis() != last || high.getAxis() != last)
    return {};
  TDim half(*width / 2);
  if (low.getStartAttr().getValue() != TDim(0) ||
      low.getEndAttr().getValue() != half ||
      high.getStartAttr().getValue() != half ||
      high.getEndAttr().getValue() != TDim(*width))
    return {};
  return x;
}

/// x * cos + rotate_half(x) * sin -> apply_rope(x, cos, sin), the products
/// in either order; cos and sin of the input's rank.
LogicalResult recognizeApplyRope(AddOp op, PatternRewriter &rewriter) {
  auto lhs = op.getLhs().getDefiningOp<MulOp>();
  auto rhs = op.getRhs().getDefiningOp<MulOp>();
  if (!lhs || !rhs)
    return rewriter.notifyMatchFailure(op, "not a sum of two products");
  for (auto [cosProduct, sinProduct] : {std::pair(lhs, rhs), {rhs, lhs}}) {
    Value x, sin, cos;
    bool rotated = eitherOrder(sinProduct, [&](Value a, Value b) {
      x = rotateHalfOf(a);
      sin = b;
      return static_cast<bool>(x);
    });
    if (!rotated || !eitherOrder(cosProduct, [&](Value a, Value b) {
          cos = b;
          return a == x;
        }))
      continue;
    size_t rank = getShape(x).size();
    if (x.getType() != op.getType() || getShape(cos).size() != rank ||
        getShape(sin).size() != rank ||
        !isa<FloatType>(getElementTypeOrSelf(cos)) ||
        !isa<FloatType>(getElementTypeOrSelf(sin)) || !lhs->hasOneUse() ||
        !rhs->hasOneUse())
      continue;
    rewriter.replaceOpWithNewOp<ApplyRopeOp>(op, op.getType(), x, cos, sin);
    return success();
  }
  return rewriter.notifyMatchFailure(op, "not x * cos + rotate_half(x) * sin");
}

/// `value` = reshape(broadcast(add_axis(x, 2)), merging axes 1 and 2): a
/// rank-4 x (b, h, s, d) with each head repeated (HuggingFace's repeat_kv);
/// x, or `value` itself.
Value beforeRepetition(Value value) {
  auto reshape = value.getDefiningOp<ReshapeOp>();
  if (!reshape || reshape.getAt() != 1 || reshape.getCount() != 2 ||
      !value.hasOneUse())
    return value;
  auto broadcast = reshape.getInput().getDefiningOp<BroadcastOp>();
  if (!broadcast || !broadcast->hasOneUse())
    return value;
  auto addAxis = broadcast.getInput().getDefiningOp<AddAxisOp>();
  if (!addAxis || addAxis.getAxis() != 2 || !addAxis->hasOneUse())
    return value;
  Value x = addAxis.getInput();
  Shape shape = getShape(x), repeated = getShape(broadcast);
  if (shape.size() != 4 || repeated.size() != 5 || !repeated[2].getConstant() ||
      repeated[0] != shape[0] || repeated[1] != shape[1] ||
      repeated[3] != shape[2] || repeated[4] != shape[3])
    return value;
  return x;
}

/// The batch letters of an attention einsum's operands: `spec` is the
/// batch then `rows` and `inner` letters.
bool splitSpec(StringRef spec, std::string &batch, char &rows, char &inner) {
  if (spec.size() < 3)
    return false;
  batch = spec.drop_back(2).str();
  rows = spec[spec.size() - 2];
  inner = spec.back();
  return true;
}

/// The symbolic value of a scalar integer tensor computed from shapes: a
/// constant, a dim read from a shape_of, their sums and differences, and
/// the unit axes added around them.
std::optional<TDim> scalarDim(Value value) {
  if (DenseElementsAttr constant = getConstantValue(value)) {
    if (!isa<IntegerType>(constant.getElementType()) ||
        constant.getNumElements() != 1)
      return std::nullopt;
    return TDim((*constant.getValues<APInt>().begin()).getSExtValue());
  }
  Operation *op = value.getDefiningOp();
  if (auto addAxis = dyn_cast_or_null<AddAxisOp>(op))
    return scalarDim(addAxis.getInput());
  if (auto gather = dyn_cast_or_null<GatherOp>(op)) {
    auto shapeOf = gather.getInput().getDefiningOp<ShapeOfOp>();
    std::optional<TDim> index = scalarDim(gather.getIndices());
    std::optional<int64_t> at = index ? index->getConstant() : std::nullopt;
    Shape shape = shapeOf ? getShape(shapeOf.getInput()) : Shape();
    if (!shapeOf || !at || *at < 0 || *at >= int64_t(shape.size()))
      return std::nullopt;
    return shape[*at];
  }
  if (isa_and_present<AddOp, SubOp>(op)) {
    std::optional<TDim> lhs = scalarDim(op->getOperand(0));
    std::optional<TDim> rhs = scalarDim(op->getOperand(1));
    if (!lhs || !rhs)
      return std::nullopt;
    return isa<AddOp>(op) ? *lhs + *rhs : *lhs - *rhs;
  }
  return std::nullopt;
}

/// `value` = range(0, n) of length `length`, with unit axes added: the
/// positions 0..length-1 along one axis.
bool isPositions(Value value, const TDim &length) {
  while (auto addAxis = value.getDefiningOp<AddAxisOp>())
    value = addAxis.getInput();
  auto range = value.getDefiningOp<RangeOp>();
  return range && scalarDim(range.getStart()) == TDim(0) &&
         scalarDim(range.getStep()) == TDim(1) &&
         range.getLenAttr().getValue() == length;
}

/// Whether `mask` (added to scores of `queries` x `keys`) is a causal one:
/// select(j > i + (keys - queries), a very negative value, 0) for query i
/// and key j, the positions made by ranges and the offset read from the
/// shapes (the past's length), with unit axes in front.
bool isCausalMask(Value mask, const TDim &queries, const TDim &keys) {
  while (auto addAxis = mask.getDefiningOp<AddAxisOp>())
    mask = addAxis.getInput();
  auto select = mask.getDefiningOp<SelectOp>();
  if (!select || getShape(mask).size() != 2)
    return false;
  std::optional<double> masked = getSplatFloat(select.getOnTrue());
  Value zeros = select.getOnFalse();
  if (auto broadcast = zeros.getDefiningOp<BroadcastOp>())
    zeros = broadcast.getInput();
  if (!masked || *masked > -1e30 || getSplatFloat(zeros) != 0.0)
    return false;
  // j > i + offset, or i + offset < j.
  Value keyPositions, queryPositions;
  if (auto gt = select.getCond().getDefiningOp<GtOp>()) {
    keyPositions = gt.getLhs();
    queryPositions = gt.getRhs();
  } else if (auto lt = select.getCond().getDefiningOp<LtOp>()) {
    keyPositions = lt.getRhs();
    queryPositions = lt.getLhs();
  } else {
    return false;
  }
  if (getShape(keyPositions).size() != 2 ||
      getShape(keyPositions)[0] != TDim(1) ||
      getShape(queryPositions).size() != 2 ||
      getShape(queryPositions)[1] != TDim(1) ||
      !isPositions(keyPositions, keys))
    return false;
  auto shifted = queryPositions.getDefiningOp<AddOp>();
  if (!shifted)
    return false;
  return eitherOrder(shifted, [&](Value positions, Value offset) {
    return isPositions(positions, queries) &&
           scalarDim(offset) == keys - queries;
  });
}

/// einsum(softmax(einsum(q, k) [* scale] [+ mask]), v) -> sdpa, then the
/// moves to the second einsum's output order.
LogicalResult recognizeSdpa(EinsumOp op, PatternRewriter &rewriter) {
  auto fail = [&](const char *why) {
    return rewriter.notifyMatchFailure(op, why);
  };
  if (op.getInputs().size() != 2)
    return fail("not a product of two operands");
  auto softmax = op.getInputs()[0].getDefiningOp<SoftmaxOp>();
  Value v = op.getInputs()[1];
  if (!softmax || !softmax->hasOneUse())
    return fail("not a product of a softmax");
  size_t rank = getShape(softmax).size();
  if ((rank != 3 && rank != 4) || softmax.getAxes().size() != 1 ||
      softmax.getAxes()[0] != static_cast<int64_t>(rank - 1))
    return fail("not a softmax over the last axis of a rank 3 or 4 tensor");

  // The second product: p (batch, m, n) . v (batch, n, e).
  EinsumExpr outer = EinsumExpr::parse(op.getExpr());
  std::string batch, valueBatch;
  char m, n, n2, e;
  if (!splitSpec(outer.inputs[0], batch, m, n) ||
      !splitSpec(outer.inputs[1], valueBatch, n2, e) || batch != valueBatch ||
      n2 != n || outer.inputs[0].size() != rank || outer.output.size() != rank)
    return fail("not p . v over the batch axes");
  std::string product = batch + m + e;
  std::string sortedOutput = outer.output, sortedProduct = product;
  llvm::sort(sortedOutput);
  llvm::sort(sortedProduct);
  if (sortedOutput != sortedProduct ||
      std::unique(sortedProduct.begin(), sortedProduct.end()) !=
          sortedProduct.end())
    return fail("the second product sums or repeats an axis");

  // The scores: [mask +] [scale *] q . k^T.
  Value scores = softmax.getInput();
  Value mask;
  if (auto add = scores.getDefiningOp<AddOp>(); add && scores.hasOneUse())
    eitherOrder(add, [&](Value product, Value addend) {
      if (!isa_and_present<MulOp, EinsumOp>(product.getDefiningOp()))
        return false;
      mask = addend;
      scores = product;
      return true;
    });
  double scale = 1.0;
  if (auto mul = scores.getDefiningOp<MulOp>(); mul && scores.hasOneUse())
    eitherOrder(mul, [&](Value product, Value factor) {
      std::optional<double> splat = getSplatFloat(factor);
      if (!splat || !product.getDefiningOp<EinsumOp>())
        return false;
      scale = *splat;
      scores = product;
      return true;
    });
  auto inner = scores.getDefiningOp<EinsumOp>();
  if (!inner || inner.getInputs().size() != 2 || !scores.hasOneUse())
    return fail("the softmax does not read q . k^T");
  EinsumExpr scoresExpr = EinsumExpr::parse(inner.getExpr());
  std::string queryBatch, keyBatch;
  char qm, qd, kn, kd;
  if (!splitSpec(scoresExpr.inputs[0], queryBatch, qm, qd) ||
      !splitSpec(scoresExpr.inputs[1], keyBatch, kn, kd) ||
      queryBatch != keyBatch || qd != kd || qm == kn ||
      scoresExpr.output != queryBatch + qm + kn ||
      scoresExpr.inputs[0].size() != rank)
    return fail("the scores are not q . k^T over the batch axes");
  if (mask) {
    Shape maskShape = getShape(mask), scoresShape = getShape(scores);
    if (maskShape.size() != rank)
      return fail("a mask of another rank than the scores");
    for (auto [dim, full] : llvm::zip(maskShape, scoresShape))
      if (dim != full && dim != TDim(1))
        return fail("a mask that does not broadcast to the scores");
  }
  Value q = inner.getInputs()[0];
  Value k = beforeRepetition(inner.getInputs()[1]);
  Value value = beforeRepetition(v);
  for (Value operand : {q, k, value})
    if (!isa<FloatType>(getElementTypeOrSelf(operand)))
      return fail("attention over non-float operands");
  if ((k == inner.getInputs()[1]) != (value == v)) {
    // One of keys and values repeated and not the other: keep both as the
    // products read them.
    k = inner.getInputs()[1];
    value = v;
  }
  if (rank == 4) {
    std::optional<int64_t> heads = getShape(q)[1].getConstant();
    std::optional<int64_t> keyHeads = getShape(k)[1].getConstant();
    if (getShape(q)[1] != getShape(k)[1] &&
        (!heads || !keyHeads || *heads % *keyHeads))
      return fail("query heads that are no multiple of the key heads");
  }

  // The attention's result is (batch of q, m of q, e of v), in q's type.
  Shape queryShape = getShape(q), valueShape = getShape(value),
        outputShape = getShape(op);
  for (auto [index, letter] : llvm::enumerate(product)) {
    const TDim &wanted =
        index + 1 < product.size() ? queryShape[index] : valueShape.back();
    if (outputShape[outer.output.find(letter)] != wanted)
      return fail("the attention's result would have another shape");
  }
  if (getElementTypeOrSelf(q) != getElementTypeOrSelf(op))
    return fail("the attention's result would have another type");

  // A causal mask made of positions is the causal flag, which the kernels
  // use to skip the keys after each query's.
  bool causal = false;
  if (mask) {
    Shape scoresShape = getShape(scores);
    causal = isCausalMask(mask, scoresShape[rank - 2], scoresShape[rank - 1]);
    if (causal)
      mask = nullptr;
  }

  Location loc = op.getLoc();
  Value result = SdpaOp::create(rewriter, loc, q, k, value, mask,
                                rewriter.getF64FloatAttr(scale),
                                rewriter.getBoolAttr(causal));
  // From batch, m, e to the einsum's order, one axis at a time.
  std::string order = product;
  for (size_t to = 0; to < order.size(); ++to) {
    size_t from = order.find(outer.output[to]);
    if (from == to)
      continue;
    result =
        MoveAxisOp::create(rewriter, loc, result, uint64_t(from), uint64_t(to));
    char letter = order[from];
    order.erase(from, 1);
    order.insert(to, 1, letter);
  }
  rewriter.replaceOp(op, result);
  return success();
}

} // namespace

void mlir::tract::populateDeclutterTransformerPatterns(
    RewritePatternSet &patterns) {
  patterns.add(recognizeApplyRope).add(recognizeSdpa);
}
