//===- CompositeLowering.cpp - composite tract ops as simpler ones --------===//
//
// Ops that stand for a pattern of simpler ones (so that the model says what
// tract says, and round-trips through NNEF) are rewritten into those ops
// before the conversion to linalg.
//
// Scaled dot-product attention that no kernel has taken (a target's, such
// as tract-cpu-attention-kernels, runs before) is rewritten into the tract
// ops whose lowerings exist: an einsum of q and k, a scale, the mask (added
// when it is a float tensor, selected when it is boolean; a causal one is a
// constant of -inf above the diagonal), a softmax over the keys and an
// einsum with v.
// Grouped-query attention (more query heads than key/value heads) splits the
// query heads into groups of each key/value head, so that nothing is repeated
// in memory. f16 operands are accumulated in f32 and the result cast back.
//
// A transposed convolution whose kernel equals its stride is an einsum
// whose output a reshape interleaves (the general one stays a convolution
// over the zero-spread input, lowered with the other windows).
//
// A nearest upsampling by whole factors is a broadcast (each input element
// repeated) and reshapes.
//
// Rotary position embedding is its products with the cos and sin tables,
// the sin one over the input's halves swapped and the first negated.
//
// A GRU step's epilogue is its gates: slices of the products, sigmoids, a
// tanh and the state update, element-wise ops that fuse into one loop nest.
//
//===----------------------------------------------------------------------===//

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// `value` with `type` elements: itself, or its cast.
Value castElements(OpBuilder &b, Location loc, Value value, Type type) {
  if (getElementTypeOrSelf(value) == type)
    return value;
  return CastOp::create(b, loc, value, type);
}

/// The attention of `op` from tract ops, at `op`; failure when a shape rules
/// it out (reported on `op`).
FailureOr<Value> decompose(SdpaOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Shape q = getShape(op.getQ()), k = getShape(op.getK());
  size_t rank = q.size();
  Type elementType = getElementTypeOrSelf(op.getQ());
  Type f32 = b.getF32Type();
  auto toF32 = [&](Value value) { return castElements(b, loc, value, f32); };
  Value query = toF32(op.getQ()), key = toF32(op.getK()),
        value = toF32(op.getV());
  Value mask = op.getMask();

  // Grouped queries: (b, Hq, s, d) becomes (b, Hk, g, s, d).
  int64_t groups = 1;
  if (rank == 4 && q[1] != k[1]) {
    std::optional<int64_t> queryHeads = q[1].getConstant(),
                           keyHeads = k[1].getConstant();
    if (!queryHeads || !keyHeads)
      return op.emitError("grouped-query attention needs known head counts");
    groups = *queryHeads / *keyHeads;
    auto split = ShapeAttr::get(context, {TDim(*keyHeads), TDim(groups)});
    query = ReshapeOp::create(b, loc, query, uint64_t(1), uint64_t(1), split);
    if (mask) {
      Shape maskShape = getShape(mask);
      if (maskShape.size() != 4)
        return op.emitError("a grouped-query attention's mask has rank 4");
      if (maskShape[1] == TDim(1))
        mask = AddAxisOp::create(b, loc, mask, uint64_t(2));
      else
        mask = ReshapeOp::create(b, loc, mask, uint64_t(1), uint64_t(1),
                                 split);
    }
  }
  std::string batch = rank == 3 ? "b" : groups > 1 ? "bhg" : "bh";
  Value scores =
      EinsumOp::create(b, loc, ValueRange{query, key},
                       b.getStringAttr(batch + "qd," +
                                       (groups > 1 ? "bh" : batch) +
                                       "kd->" + batch + "qk"));
  int64_t scoresRank = getShape(scores).size();

  // The scale: given, else 1/sqrt(d).
  double scale;
  if (FloatAttr given = op.getScaleAttr()) {
    scale = given.getValueAsDouble();
  } else {
    std::optional<int64_t> depth = q.back().getConstant();
    if (!depth)
      return op.emitError("the default scale needs a known head size");
    scale = 1.0 / std::sqrt(double(*depth));
  }
  scores = MulOp::create(b, loc, scores, splat(b, loc, f32, scale, scoresRank));

  float lowest = -std::numeric_limits<float>::infinity();
  if (op.getCausal()) {
    // Key j is masked from query i when j > i + (keys - queries).
    Shape scoresShape = getShape(scores);
    std::optional<int64_t> queries = scoresShape[scoresRank - 2].getConstant(),
                           keys = scoresShape[scoresRank - 1].getConstant();
    if (!queries || !keys)
      return op.emitError("a causal attention needs known sequence lengths");
    SmallVector<float> values;
    for (int64_t i = 0; i < *queries; ++i)
      for (int64_t j = 0; j < *keys; ++j)
        values.push_back(j > i + (*keys - *queries) ? lowest : 0.0f);
    SmallVector<int64_t> shape(scoresRank - 2, 1);
    shape.append({*queries, *keys});
    auto type = RankedTensorType::get(shape, f32);
    scores = AddOp::create(
        b, loc, scores,
        ConstOp::create(b, loc, type,
                        DenseElementsAttr::get(type, ArrayRef(values))));
  } else if (mask) {
    if (int64_t(getShape(mask).size()) != scoresRank)
      return op.emitError("the mask has rank ")
             << getShape(mask).size() << ", the scores " << scoresRank;
    if (getElementTypeOrSelf(mask).isInteger(1))
      scores = SelectOp::create(b, loc, mask, scores,
                                splat(b, loc, f32, lowest, scoresRank));
    else
      scores = AddOp::create(b, loc, scores, toF32(mask));
  }
  Value weights = SoftmaxOp::create(
      b, loc, scores, b.getDenseI64ArrayAttr({int64_t(scoresRank - 1)}));
  Value output = EinsumOp::create(
      b, loc, ValueRange{weights, value},
      b.getStringAttr(batch + "qk," + (groups > 1 ? "bh" : batch) + "kd->" +
                      batch + "qd"));
  if (groups > 1) {
    auto joined = ShapeAttr::get(context, {q[1]});
    output = ReshapeOp::create(b, loc, output, uint64_t(1), uint64_t(2),
                               joined);
  }
  if (elementType != f32)
    output = CastOp::create(b, loc, output, elementType);
  return output;
}

/// x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[h:], x[:h]] on the
/// last axis: slices, a negation and a concatenation that fuse with the
/// products into one loop nest.
FailureOr<Value> decompose(ApplyRopeOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value x = op.getInput();
  Shape shape = getShape(x);
  uint64_t axis = shape.size() - 1;
  std::optional<int64_t> width = shape.back().getConstant();
  if (!width || *width % 2)
    return op.emitError("apply_rope needs an even, known last dim; it is ")
           << shape.back().toString();
  TDim half(*width / 2);
  Value first = SliceOp::create(b, loc, x, axis, DimAttr::get(context, TDim(0)),
                                DimAttr::get(context, half));
  Value second = SliceOp::create(b, loc, x, axis, DimAttr::get(context, half),
                                 DimAttr::get(context, TDim(*width)));
  Value rotated = ConcatOp::create(
      b, loc, ValueRange{NegOp::create(b, loc, second).getResult(), first},
      axis);
  Value cos = MulOp::create(b, loc, x, op.getCos());
  Value sin = MulOp::create(b, loc, rotated, op.getSin());
  return Value(AddOp::create(b, loc, cos, sin));
}

/// z = sigmoid(x_z + r_z), r = sigmoid(x_r + r_r), n = tanh(x_n + r * r_n),
/// then (1 - z) * n + z * h.
FailureOr<Value> decompose(GruEpilogueOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Shape state = getShape(op.getH());
  uint64_t axis = state.size() - 1;
  TDim hidden = state.back();
  auto gate = [&](Value products, int64_t index) -> Value {
    return SliceOp::create(b, loc, products, axis,
                           DimAttr::get(context, TDim(index) * hidden),
                           DimAttr::get(context, TDim(index + 1) * hidden));
  };
  Value x = op.getXH(), r = op.getRH(), h = op.getH();
  Value z = SigmoidOp::create(
      b, loc, AddOp::create(b, loc, gate(x, 0), gate(r, 0)).getResult());
  Value reset = SigmoidOp::create(
      b, loc, AddOp::create(b, loc, gate(x, 1), gate(r, 1)).getResult());
  Value n = TanhOp::create(
      b, loc,
      AddOp::create(b, loc, gate(x, 2),
                    MulOp::create(b, loc, reset, gate(r, 2)).getResult())
          .getResult());
  Value one = splat(b, loc, getElementTypeOrSelf(h), 1.0, state.size());
  Value keep = MulOp::create(b, loc, SubOp::create(b, loc, one, z), n);
  return Value(AddOp::create(b, loc, keep, MulOp::create(b, loc, z, h)));
}

/// A transposed convolution whose kernel tiles the output without overlap
/// (kernel = stride, no dilation, one group: the upsampling kind) writes
/// each input pixel's own block of outputs: an einsum of the input with the
/// kernel, its output axes interleaved as (x, kernel offset) pairs that a
/// reshape merges, then the crop of explicit padding and the bias. The
/// einsum does the k^d times fewer multiplications that the general
/// lowering, a convolution over the input spread with zeros, spends on
/// zeros. Other transposed convolutions are left to that lowering (a null
/// result).
FailureOr<Value> decompose(DeconvOp op, OpBuilder &b) {
  Shape input = getShape(op.getInput()), kernel = getShape(op.getKernel());
  size_t rank = input.size() - 2;
  Type element = getElementTypeOrSelf(op.getType());
  auto isAll = [&](ArrayRef<int64_t> values, int64_t value) {
    return llvm::all_of(values, [&](int64_t v) { return v == value; });
  };
  if (op.getGroup() != 1 || !isa<FloatType>(element) || rank == 0 ||
      rank > 3 || !isAll(op.getDilations(), 1) ||
      !isAll(op.getAdjustments(), 0) ||
      (op.getPadding() != Padding::Valid &&
       op.getPadding() != Padding::Explicit))
    return Value();
  SmallVector<int64_t> strides(op.getStrides());
  if (strides.empty())
    strides.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i)
    if (kernel[2 + i] != TDim(strides[i]))
      return Value();

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  // The product "nc<x…>,co<k…>->no<k…><x…>" in the layout of a matrix
  // product (an einsum whose output interleaves the operands' axes has no
  // fast kernel), then the moves that pair each x with its k.
  std::string xs = std::string("pqr").substr(0, rank),
              ks = std::string("uvw").substr(0, rank);
  Value blocks = EinsumOp::create(
      b, loc, ValueRange{op.getInput(), op.getKernel()},
      b.getStringAttr("nc" + xs + ",co" + ks + "->no" + ks + xs));
  std::string order = "no" + ks + xs;
  for (size_t i = 0; i < 2 * rank; ++i) {
    char wanted = i % 2 ? ks[i / 2] : xs[i / 2];
    size_t from = order.find(wanted), to = 2 + i;
    if (from == to)
      continue;
    blocks = MoveAxisOp::create(b, loc, blocks, uint64_t(from), uint64_t(to));
    order.erase(from, 1);
    order.insert(to, 1, wanted);
  }
  // One reshape per pair: each is a plain collapse, also of symbolic dims.
  Shape merged;
  Value result = blocks;
  for (size_t i = 0; i < rank; ++i) {
    merged.push_back(input[2 + i] * TDim(strides[i]));
    result = ReshapeOp::create(b, loc, result, uint64_t(2 + i), uint64_t(2),
                               ShapeAttr::get(context, {merged.back()}));
  }
  if (op.getPadding() == Padding::Explicit) {
    ArrayRef<int64_t> before = op.getPadsBefore(), after = op.getPadsAfter();
    for (size_t i = 0; i < rank; ++i) {
      int64_t cropBefore = before.empty() ? 0 : before[i],
              cropAfter = after.empty() ? 0 : after[i];
      if (cropBefore || cropAfter)
        result = SliceOp::create(
            b, loc, result, uint64_t(2 + i), DimAttr::get(context, cropBefore),
            DimAttr::get(context, merged[i] - TDim(cropAfter)));
    }
  }
  if (Value bias = op.getBias()) {
    Shape perChannel(rank + 2, TDim(1));
    perChannel[1] = getShape(bias).front();
    result = AddOp::create(
        b, loc, result,
        ReshapeOp::create(b, loc, bias, uint64_t(0), uint64_t(1),
                          ShapeAttr::get(context, perChannel)));
  }
  return result;
}

/// A nearest upsampling by whole factors (out = k * in on each axis, input
/// coordinate floor(x / k): asymmetric coordinates rounded down) repeats
/// each input element k times along the axis: a broadcast of the input with
/// a unit axis after each upsampled one, and reshapes that merge the pairs.
/// Its lowering is a vector copy instead of a gather that computes every
/// source index in floating point. Other resizes keep their lowering (a
/// null result).
FailureOr<Value> decompose(ResizeOp op, OpBuilder &b) {
  if (op.getInterpolator() != Interpolator::Nearest ||
      op.getNearestMode() != NearestMode::Floor ||
      op.getCoordTransform() != CoordTransform::Asymmetric)
    return Value();
  Shape input = getShape(op.getInput());
  ArrayRef<TDim> sizes = op.getSizes().getDims();
  ArrayRef<double> scales = op.getScales();
  SmallVector<int64_t> factors;
  for (auto [axis, in] : llvm::enumerate(input)) {
    std::optional<int64_t> factor;
    if (!scales.empty()) {
      if (scales[axis] >= 1 && scales[axis] == std::floor(scales[axis]))
        factor = static_cast<int64_t>(scales[axis]);
    } else if (sizes[axis] == in) {
      factor = 1;
    } else if (auto out = sizes[axis].getConstant(), known = in.getConstant();
               out && known && *known > 0 && *out % *known == 0) {
      factor = *out / *known;
    }
    if (!factor || sizes[axis] != in * TDim(*factor))
      return Value();
    factors.push_back(*factor);
  }
  if (llvm::all_of(factors, [](int64_t k) { return k == 1; }))
    return Value();

  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value result = op.getInput();
  Shape repeated;
  for (size_t axis = input.size(); axis-- > 0;)
    if (factors[axis] > 1)
      result = AddAxisOp::create(b, loc, result, uint64_t(axis + 1));
  for (auto [in, k] : llvm::zip(input, factors)) {
    repeated.push_back(in);
    if (k > 1)
      repeated.push_back(TDim(k));
  }
  result = BroadcastOp::create(b, loc, result, ShapeAttr::get(context, repeated));
  uint64_t at = 0;
  for (auto [axis, k] : llvm::enumerate(factors)) {
    if (k > 1)
      result = ReshapeOp::create(b, loc, result, at, uint64_t(2),
                                 ShapeAttr::get(context, {sizes[axis]}));
    ++at;
  }
  return result;
}

/// The gated delta rule as a scan over the sequence, in f32: q and k are
/// normalized (q scaled by 1/sqrt(w)) and grouped heads repeated for all
/// steps at once; each step decays the state, takes the key's product with
/// it, adds the rank-one update of the gated difference with the value, and
/// reads the query's product with the new state, all einsums over the
/// state's rows (r) and columns (c).
FailureOr<SmallVector<Value>> decomposeGdn(GdnRecurrentOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Type f32 = b.getF32Type();
  auto toF32 = [&](Value value) { return castElements(b, loc, value, f32); };
  auto scalar = [&](double number, size_t rank) {
    return splat(b, loc, f32, number, rank);
  };
  Shape query = getShape(op.getQuery()), value = getShape(op.getValue());
  std::optional<int64_t> width = query[3].getConstant();
  if (!width)
    return op.emitError("gdn_recurrent needs a known head width");
  auto normalize = [&](Value x, double scale) -> Value {
    Value sum = ReduceOp::create(b, loc, SquareOp::create(b, loc, x),
                                 Reducer::Sum, b.getDenseI64ArrayAttr({3}));
    Value inverse = DivOp::create(
        b, loc, scalar(scale, 4),
        SqrtOp::create(b, loc, AddOp::create(b, loc, sum, scalar(1e-6, 4))));
    return MulOp::create(b, loc, x, inverse);
  };
  Value q = normalize(toF32(op.getQuery()), 1.0 / std::sqrt(double(*width)));
  Value k = normalize(toF32(op.getKey()), 1.0);
  if (query[2] != value[2]) {
    std::optional<int64_t> keyHeads = query[2].getConstant(),
                           valueHeads = value[2].getConstant();
    if (!keyHeads || !valueHeads)
      return op.emitError("grouped heads need known head counts");
    // Value head h reads query and key head h / groups.
    auto repeat = [&](Value x) -> Value {
      Shape shape = getShape(x);
      Shape repeated{shape[0], shape[1], shape[2],
                     TDim(*valueHeads / *keyHeads), shape[3]};
      Value spread = BroadcastOp::create(
          b, loc, AddAxisOp::create(b, loc, x, uint64_t(3)),
          ShapeAttr::get(context, repeated));
      return ReshapeOp::create(b, loc, spread, uint64_t(2), uint64_t(2),
                               ShapeAttr::get(context, {value[2]}));
    };
    q = repeat(q);
    k = repeat(k);
  }
  Value v = toF32(op.getValue());
  // Per-head scalars with a unit axis for the columns.
  Value decay = AddAxisOp::create(
      b, loc, ExpOp::create(b, loc, toF32(op.getLogDecay())), uint64_t(3));
  Value beta =
      AddAxisOp::create(b, loc, toF32(op.getBeta()), uint64_t(3));
  Value initial = toF32(op.getInitialState());

  SmallVector<Value> inputs{initial, q, k, v, decay, beta};
  auto block = std::make_unique<Block>();
  block->addArgument(initial.getType(), loc);
  for (Value scanned : ArrayRef(inputs).drop_front()) {
    Shape chunk = getShape(scanned);
    chunk[1] = TDim(1);
    block->addArgument(getTensorTypeLike(scanned, chunk), loc);
  }
  SmallVector<Value> yielded;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block.get());
    Value state = block->getArgument(0), qs = block->getArgument(1),
          ks = block->getArgument(2), vs = block->getArgument(3),
          ds = block->getArgument(4), bs = block->getArgument(5);
    // b,1,h,1 -> b,h,1,1 against the state's b,h,r,c.
    Value decayed = MulOp::create(
        b, loc, state, MoveAxisOp::create(b, loc, ds, uint64_t(1), uint64_t(2)));
    Value remembered = EinsumOp::create(b, loc, ValueRange{ks, decayed},
                                        b.getStringAttr("bshr,bhrc->bshc"));
    Value delta = MulOp::create(
        b, loc, SubOp::create(b, loc, vs, remembered).getResult(), bs);
    Value next = AddOp::create(
        b, loc, decayed,
        EinsumOp::create(b, loc, ValueRange{ks, delta},
                         b.getStringAttr("bshr,bshc->bhrc")));
    Value out = EinsumOp::create(b, loc, ValueRange{qs, next},
                                 b.getStringAttr("bshr,bhrc->bshc"));
    yielded = {next, out};
    YieldOp::create(b, loc, yielded);
  }
  SmallVector<Type> types{initial.getType(), v.getType()};
  auto scan = ScanOp::create(b, loc, types, inputs, uint64_t(1),
                             SmallVector<int64_t>(5, 1),
                             SmallVector<int64_t>(5, 1),
                             SmallVector<int64_t>{1});
  scan.getBody().push_back(block.release());
  Value output = scan.getResult(1), finalState = scan.getResult(0);
  output = castElements(b, loc, output, getElementTypeOrSelf(op.getQuery()));
  finalState = castElements(b, loc, finalState,
                            getElementTypeOrSelf(op.getInitialState()));
  return SmallVector<Value>{output, finalState};
}

/// The causal convolution of a state and new frames, in f32: the frames
/// follow the state along time, tap j of frame t reads position t + 1 + j of
/// that sequence, SiLU follows the sum, and the next state is its last k
/// positions.
FailureOr<SmallVector<Value>> decomposeCausalConv(CausalConv1dUpdateOp op,
                                                  OpBuilder &b) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Type f32 = b.getF32Type();
  auto toF32 = [&](Value value) { return castElements(b, loc, value, f32); };
  Shape input = getShape(op.getInput());
  Shape weightShape = getShape(op.getWeight());
  std::optional<int64_t> width = weightShape.back().getConstant();
  if (!width)
    return op.emitError("causal_conv1d_update needs a known kernel width");
  TDim frames = input[2];
  auto slice = [&](Value x, uint64_t axis, TDim start, TDim end) -> Value {
    return SliceOp::create(b, loc, x, axis, DimAttr::get(context, start),
                           DimAttr::get(context, end));
  };
  Value full = ConcatOp::create(
      b, loc,
      ValueRange{toF32(op.getInitialState()), toF32(op.getInput())},
      uint64_t(2));
  // 1, C, k: one column of weights per tap, broadcast over batch and time.
  Value weight = ReshapeOp::create(
      b, loc, toF32(op.getWeight()), uint64_t(0), uint64_t(weightShape.size()),
      ShapeAttr::get(context, {TDim(1), input[1], TDim(*width)}));
  Value sum;
  for (int64_t tap = 0; tap < *width; ++tap) {
    Value frame = slice(full, 2, TDim(tap + 1), frames + TDim(tap + 1));
    Value term = MulOp::create(b, loc, frame,
                               slice(weight, 2, TDim(tap), TDim(tap + 1)));
    sum = sum ? Value(AddOp::create(b, loc, sum, term)) : term;
  }
  Value output = SiluOp::create(b, loc, sum);
  Value finalState = slice(full, 2, frames, frames + TDim(*width));
  output = castElements(b, loc, output, getElementTypeOrSelf(op.getInput()));
  finalState = castElements(b, loc, finalState,
                            getElementTypeOrSelf(op.getInitialState()));
  return SmallVector<Value>{output, finalState};
}

/// Replaces every op of several results of `module` by its decomposition.
template <typename OpTy>
LogicalResult decomposeAllResults(
    ModuleOp module,
    FailureOr<SmallVector<Value>> (*decomposition)(OpTy, OpBuilder &)) {
  SmallVector<OpTy> ops;
  module.walk([&](OpTy op) { ops.push_back(op); });
  for (OpTy op : ops) {
    OpBuilder b(op);
    FailureOr<SmallVector<Value>> results = decomposition(op, b);
    if (failed(results))
      return failure();
    op->replaceAllUsesWith(*results);
    op.erase();
  }
  return success();
}

/// Replaces every `OpTy` of `module` by its decomposition, where it has
/// one (a null value keeps the op).
template <typename OpTy>
LogicalResult decomposeAll(ModuleOp module) {
  SmallVector<OpTy> ops;
  module.walk([&](OpTy op) { ops.push_back(op); });
  for (OpTy op : ops) {
    OpBuilder b(op);
    FailureOr<Value> result = decompose(op, b);
    if (failed(result))
      return failure();
    if (!*result)
      continue;
    op.getResult().replaceAllUsesWith(*result);
    op.erase();
  }
  return success();
}

} // namespace

LogicalResult mlir::tract::decomposeCompositeOps(ModuleOp module) {
  if (failed(decomposeAllResults(module, decomposeGdn)) ||
      failed(decomposeAllResults(module, decomposeCausalConv)))
    return failure();
  return success(succeeded(decomposeAll<SdpaOp>(module)) &&
                 succeeded(decomposeAll<ApplyRopeOp>(module)) &&
                 succeeded(decomposeAll<GruEpilogueOp>(module)) &&
                 succeeded(decomposeAll<DeconvOp>(module)) &&
                 succeeded(decomposeAll<ResizeOp>(module)));
}
