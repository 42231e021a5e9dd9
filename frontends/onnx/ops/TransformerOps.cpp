//===- TransformerOps.cpp - ONNX rotary embeddings and attention ----------===//
//
// The ops that carry attention in onnxruntime's language-model exports:
// com.microsoft's RotaryEmbedding and GroupQueryAttention, and the ONNX
// domain's RotaryEmbedding (opset 23), and the encoders' packed Attention.
// They become the ops tract's
// transformer declutter recognizes in a decoder spelled out in elementary
// ops: apply_rope (the interleaved rotation in element-wise ops), a concat
// of the new keys and values onto the past ones, and a causal sdpa.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/NodeContext.h"

#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/ops/Attention.h"
#include "frontends/onnx/ops/ValueShapes.h"

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

namespace {

using Outputs = SmallVectorImpl<Value>;

DimAttr dimAttr(NodeContext &ctx, const TDim &dim) {
  return DimAttr::get(ctx.getContext(), dim);
}

Value sliceOf(NodeContext &ctx, Value x, int64_t axis, const TDim &start,
              const TDim &end) {
  if (start == TDim(0) && end == getShape(x)[axis])
    return x;
  return ctx.create<SliceOp>(x, axis, dimAttr(ctx, start), dimAttr(ctx, end));
}

Value reshapeAxes(NodeContext &ctx, Value x, int64_t at, int64_t count,
                  ArrayRef<TDim> to) {
  return ctx.create<ReshapeOp>(x, uint64_t(at), uint64_t(count),
                               ShapeAttr::get(ctx.getContext(), to));
}

Value addAxes(NodeContext &ctx, Value x, ArrayRef<int64_t> axes) {
  for (int64_t axis : axes)
    x = ctx.create<AddAxisOp>(x, uint64_t(axis));
  return x;
}

/// `x` with the first 2h lanes of its last axis rotated by the angles whose
/// cosines and sines are `cos` and `sin` (x's rank, last dim h, broadcast to
/// x): lanes i and i + h (`interleaved`: 2k and 2k + 1) are the two
/// coordinates of a point turned by angle i (k). The other lanes pass.
Value rotate(NodeContext &ctx, Value x, Value cos, Value sin,
             bool interleaved) {
  Shape shape = getShape(x);
  int64_t last = shape.size() - 1;
  int64_t half = *getShape(cos).back().getConstant();
  int64_t width = *shape.back().getConstant();
  Type type = NodeContext::elementType(x);
  cos = ctx.castTo(cos, type);
  sin = ctx.castTo(sin, type);
  Value head = sliceOf(ctx, x, last, TDim(0), TDim(2 * half));
  Value rotated;
  if (!interleaved) {
    rotated = ctx.create<ApplyRopeOp>(
        head, ctx.create<ConcatOp>(ValueRange{cos, cos}, last),
        ctx.create<ConcatOp>(ValueRange{sin, sin}, last));
  } else {
    // (..., h, 2): the pairs.
    Value pairs = reshapeAxes(ctx, head, last, 1, {TDim(half), TDim(2)});
    Value even = sliceOf(ctx, pairs, last + 1, TDim(0), TDim(1));
    Value odd = sliceOf(ctx, pairs, last + 1, TDim(1), TDim(2));
    Value c = addAxes(ctx, cos, {last + 1}), s = addAxes(ctx, sin, {last + 1});
    Value first = ctx.binary<SubOp>(ctx.binary<MulOp>(even, c),
                                    ctx.binary<MulOp>(odd, s));
    Value second = ctx.binary<AddOp>(ctx.binary<MulOp>(odd, c),
                                     ctx.binary<MulOp>(even, s));
    rotated = reshapeAxes(
        ctx, ctx.create<ConcatOp>(ValueRange{first, second}, last + 1), last,
        2, {TDim(2 * half)});
  }
  if (2 * half == width)
    return rotated;
  return ctx.create<ConcatOp>(
      ValueRange{rotated, sliceOf(ctx, x, last, TDim(2 * half), TDim(width))},
      last);
}

/// The rows of `table` (positions, h) for the tokens of a sequence of
/// `length` whose positions are `positions`: (B, S) indices, or one (a
/// scalar or a 1-element tensor) that the first token takes, the next ones
/// following. Returns (B|1, S, h).
Value rowsAt(NodeContext &ctx, Value table, Value positions,
             const TDim &length) {
  Shape shape = getShape(positions);
  if (shape.size() == 2)
    return ctx.create<GatherOp>(table, positions, uint64_t(0));
  std::optional<SmallVector<TDim>> first = ctx.getDims(positions);
  if (first && first->size() == 1 && (*first)[0].getConstant()) {
    TDim start = (*first)[0];
    ctx.getGraph().assumeAtMost(start + length, getShape(table)[0]);
    return addAxes(ctx, sliceOf(ctx, table, 0, start, start + length), {0});
  }
  // A run-time first position: the rows start + 0 .. start + length - 1,
  // gathered (an index past the table reads its last row, as gathers do).
  Value start = shape.empty() ? positions
                              : ctx.create<RmAxisOp>(positions, uint64_t(0));
  Type type = NodeContext::elementType(start);
  Value count = ctx.create<ShapeValueOp>(
      ShapeAttr::get(ctx.getContext(), {length}));
  Value end = ctx.binary<AddOp>(
      start, ctx.castTo(ctx.create<RmAxisOp>(count, uint64_t(0)), type));
  Value indices = ctx.create<RangeOp>(start, end, ctx.intScalar(type, 1),
                                      dimAttr(ctx, length));
  return addAxes(ctx, ctx.create<GatherOp>(table, indices, uint64_t(0)), {0});
}

LogicalResult requireFloatInput(NodeContext &ctx, Value x, StringRef what,
                                int64_t minRank, int64_t maxRank) {
  if (!x)
    return ctx.error("missing input '" + what + "'");
  int64_t rank = NodeContext::rank(x);
  if (rank < minRank || rank > maxRank)
    return ctx.error("'" + what + "' has rank " + Twine(rank) + ", expected " +
                     Twine(minRank) +
                     (minRank == maxRank ? "" : " to " + Twine(maxRank)));
  if (!isa<FloatType>(NodeContext::elementType(x)))
    return ctx.error("'" + what + "' must be a float tensor");
  return success();
}

/// RotaryEmbedding: com.microsoft's (input, position_ids, cos_cache,
/// sin_cache) and the ONNX domain's (X, cos_cache, sin_cache,
/// position_ids). The input is (B, N, S, H), or (B, S, N * H) with N from
/// `num_heads` or H from the cache's width. With position ids, the caches
/// are tables (positions, R/2) read at each token's position (com.microsoft
/// also takes a single first position); without (ONNX), they are the
/// tokens' own rows (B, S, R/2). The first R = `rotary_embedding_dim` (H
/// when 0) lanes of each head turn, as halves or as interleaved pairs.
OpHandler rotaryEmbeddingHandler(bool microsoft) {
  return [microsoft](NodeContext &ctx, Outputs &outputs) -> LogicalResult {
    Value x = ctx.input(0);
    Value positions = ctx.input(microsoft ? 1 : 3);
    Value cos = ctx.input(microsoft ? 2 : 1), sin = ctx.input(microsoft ? 3 : 2);
    if (failed(requireFloatInput(ctx, x, "input", 3, 4)) ||
        failed(requireFloatInput(ctx, cos, "cos_cache", 2, 3)) ||
        failed(requireFloatInput(ctx, sin, "sin_cache", 2, 3)))
      return failure();
    if (microsoft && !positions)
      return ctx.error("missing input 'position_ids'");
    if (microsoft && ctx.getFloat("scale", 1.0f) != 1.0f)
      return ctx.unsupported("a scale other than 1 (onnxruntime's CPU "
                             "kernel ignores it)");
    if (ctx.getInt("is_packed_batching", 0))
      return ctx.unsupported("packed batching");
    bool interleaved = ctx.getInt("interleaved", 0) != 0;
    int64_t numHeads = ctx.getInt("num_heads", 0);
    int64_t rotaryDim = ctx.getInt("rotary_embedding_dim", 0);
    Shape shape = getShape(x), cosShape = getShape(cos);
    if (getShape(sin) != cosShape)
      return ctx.error("cos_cache and sin_cache have different shapes");
    std::optional<int64_t> half = cosShape.back().getConstant();
    std::optional<int64_t> width = shape.back().getConstant();
    if (!half || !width)
      return ctx.unsupported("a symbolic head or cache width");
    if (positions ? cosShape.size() != 2 : cosShape.size() != 3)
      return ctx.error(positions ? "with position ids, the caches are tables "
                                   "of rank 2"
                                 : "without position ids, the caches are "
                                   "(batch, sequence, rotary dim / 2)");
    bool flat = shape.size() == 3;
    int64_t headSize = *width;
    if (flat) {
      if (rotaryDim || numHeads)
        headSize = numHeads ? *width / numHeads : 0;
      else
        headSize = 2 * *half;
      if (!headSize || *width % headSize)
        return ctx.error("hidden size " + Twine(*width) +
                         " is not a whole number of heads (num_heads " +
                         Twine(numHeads) + ")");
    }
    int64_t rotated = rotaryDim ? rotaryDim : headSize;
    if (rotated > headSize || 2 * *half != rotated)
      return ctx.error("the caches' width " + Twine(*half) +
                       " must be half the rotary dim " + Twine(rotated) +
                       " (at most the head size " + Twine(headSize) + ")");
    // Heads on their own axis: (B, S, N, H) when flat.
    Value heads = flat ? reshapeAxes(ctx, x, 2, 1,
                                     {TDim(*width / headSize), TDim(headSize)})
                       : x;
    int64_t seqAxis = flat ? 1 : 2;
    Value c = cos, s = sin;
    if (positions) {
      c = rowsAt(ctx, cos, positions, shape[seqAxis]);
      s = rowsAt(ctx, sin, positions, shape[seqAxis]);
    }
    // (B|1, S, h) to broadcast against the heads.
    c = addAxes(ctx, c, {flat ? 2 : 1});
    s = addAxes(ctx, s, {flat ? 2 : 1});
    Value y = rotate(ctx, heads, c, s, interleaved);
    if (flat)
      y = reshapeAxes(ctx, y, 2, 2, {TDim(*width)});
    outputs.push_back(y);
    return success();
  };
}

/// com.microsoft's GroupQueryAttention: query (B, S, N * H) and key and
/// value (B, S, KV * H) (or the three packed on the query's last axis), the
/// past keys and values (B, KV, P, H), optionally turned by rotary
/// embeddings at positions P ..., appended to the past (the present
/// outputs) and attended causally, each key/value head serving N / KV
/// query heads. The past is the whole of past_key: every sequence of the
/// batch is P + S long, as seqlens_k (total - 1 per sequence) and
/// total_sequence_length must then say; the model checks it when it runs.
/// Right-padded batches, shared past/present buffers, position ids, an
/// attention bias, local windows, soft caps and sinks are refused.
LogicalResult groupQueryAttentionHandler(NodeContext &ctx, Outputs &outputs) {
  std::optional<int64_t> numHeads = ctx.getOptInt("num_heads"),
                         kvHeads = ctx.getOptInt("kv_num_heads");
  if (!numHeads || !kvHeads || *numHeads < 1 || *kvHeads < 1 ||
      *numHeads % *kvHeads)
    return ctx.error("num_heads and kv_num_heads must be positive, the "
                     "first a multiple of the second");
  if (ctx.getInt("local_window_size", -1) >= 0)
    return ctx.unsupported("a local attention window");
  if (ctx.getFloat("softcap", 0.0f) != 0.0f)
    return ctx.unsupported("a soft cap on the scores");
  if (ctx.getInt("smooth_softmax", 0))
    return ctx.unsupported("the smooth softmax");
  if (ctx.hasInput(9))
    return ctx.unsupported("position_ids (positions follow the past)");
  if (ctx.hasInput(10))
    return ctx.unsupported("an attention bias");
  if (ctx.hasInput(11))
    return ctx.unsupported("attention sinks (head_sink)");
  for (unsigned i = 12; i < ctx.getNumInputs(); ++i)
    if (ctx.hasInput(i))
      return ctx.unsupported("input " + Twine(i));
  if (ctx.hasOutput(3))
    return ctx.unsupported("the output_qk output");

  Value query = ctx.input(0);
  if (failed(requireFloatInput(ctx, query, "query", 3, 3)))
    return failure();
  Shape shape = getShape(query);
  std::optional<int64_t> width = shape[2].getConstant();
  if (!width)
    return ctx.unsupported("a symbolic hidden size");
  bool packed = !ctx.hasInput(1);
  int64_t slots = packed ? *numHeads + 2 * *kvHeads : *numHeads;
  if (*width % slots)
    return ctx.error("the query's width " + Twine(*width) +
                     " is not a whole number of heads (" + Twine(slots) + ")");
  int64_t headSize = *width / slots;
  Value key = ctx.input(1), value = ctx.input(2);
  if (packed) {
    TDim q(*numHeads * headSize), kv(*kvHeads * headSize);
    key = sliceOf(ctx, query, 2, q, q + kv);
    value = sliceOf(ctx, query, 2, q + kv, q + kv + kv);
    query = sliceOf(ctx, query, 2, TDim(0), q);
  } else if (!value) {
    return ctx.error("key without value");
  }
  // (B, S, heads * H) -> (B, heads, S, H).
  auto split = [&](Value x, int64_t heads, StringRef what) -> Value {
    if (!x || getShape(x).size() != 3 ||
        getShape(x)[2] != TDim(heads * headSize)) {
      (void)ctx.error("'" + what + "' must be (batch, sequence, " +
                      Twine(heads * headSize) + ")");
      return {};
    }
    Value split = reshapeAxes(ctx, x, 2, 1, {TDim(heads), TDim(headSize)});
    return ctx.create<MoveAxisOp>(split, int64_t(2), int64_t(1));
  };
  Value q = split(query, *numHeads, "query");
  Value k = split(key, *kvHeads, "key");
  Value v = split(value, *kvHeads, "value");
  if (!q || !k || !v)
    return failure();

  Value pastKey = ctx.input(3), pastValue = ctx.input(4);
  if (bool(pastKey) != bool(pastValue))
    return ctx.error("past_key and past_value go together");
  TDim length = shape[1], past(0);
  if (pastKey) {
    Shape pastShape = getShape(pastKey);
    if (pastShape.size() != 4 || getShape(pastValue) != pastShape ||
        pastShape[1] != TDim(*kvHeads) || pastShape[3] != TDim(headSize))
      return ctx.error("past_key and past_value must be (batch, " +
                       Twine(*kvHeads) + ", past, " + Twine(headSize) + ")");
    past = pastShape[2];
  }
  TDim total = past + length;

  if (ctx.getInt("do_rotary", 0)) {
    Value cos = ctx.input(7), sin = ctx.input(8);
    if (failed(requireFloatInput(ctx, cos, "cos_cache", 2, 2)) ||
        failed(requireFloatInput(ctx, sin, "sin_cache", 2, 2)))
      return failure();
    std::optional<int64_t> half = getShape(cos).back().getConstant();
    if (!half || getShape(sin) != getShape(cos) || 2 * *half > headSize)
      return ctx.error("cos_cache and sin_cache must be (positions, at most " +
                       Twine(headSize / 2) + ")");
    // Positions past .. past + S - 1.
    ctx.getGraph().assumeAtMost(total, getShape(cos)[0]);
    auto rows = [&](Value table) {
      return addAxes(ctx, sliceOf(ctx, table, 0, past, total), {0, 0});
    };
    bool interleaved = ctx.getInt("rotary_interleaved", 0) != 0;
    Value c = rows(cos), s = rows(sin);
    q = rotate(ctx, q, c, s, interleaved);
    k = rotate(ctx, k, c, s, interleaved);
  }

  // Every sequence is past + S long: seqlens_k + 1 and the total length.
  Value seqlens = ctx.input(5), totalLength = ctx.input(6);
  if (!seqlens || !totalLength ||
      !isa<IntegerType>(NodeContext::elementType(seqlens)) ||
      NodeContext::elementType(seqlens) !=
          NodeContext::elementType(totalLength) ||
      NodeContext::rank(seqlens) != 1 || NodeContext::rank(totalLength) > 1)
    return ctx.error("seqlens_k (batch) and total_sequence_length (a scalar) "
                     "must be integers");
  Type lengthType = NodeContext::elementType(seqlens);
  Value one = ctx.intScalar(lengthType, 1, 1);
  Value lengths = ctx.create<ConcatOp>(
      ValueRange{addAxes(ctx, totalLength,
                         NodeContext::rank(totalLength) ? ArrayRef<int64_t>{}
                                                        : ArrayRef<int64_t>{0}),
                 ctx.binary<AddOp>(
                     ctx.create<ReduceOp>(seqlens, Reducer::Min,
                                          ArrayRef<int64_t>{0}),
                     one),
                 ctx.binary<AddOp>(
                     ctx.create<ReduceOp>(seqlens, Reducer::Max,
                                          ArrayRef<int64_t>{0}),
                     one)},
      int64_t(0));
  if (!lengths)
    return failure();
  BindDimsOp::create(ctx.getBuilder(), ctx.getLoc(), lengths,
                     ShapeAttr::get(ctx.getContext(), {total, total, total}));

  Value presentKey =
      pastKey ? ctx.create<ConcatOp>(ValueRange{pastKey, k}, int64_t(2)) : k;
  Value presentValue =
      pastKey ? ctx.create<ConcatOp>(ValueRange{pastValue, v}, int64_t(2)) : v;
  float scale = ctx.getFloat("scale", 0.0f);
  FloatAttr scaleAttr =
      scale != 0.0f ? ctx.getBuilder().getF64FloatAttr(scale) : FloatAttr();
  Value attended =
      ctx.create<SdpaOp>(q, presentKey, presentValue, Value(), scaleAttr,
                         ctx.getBuilder().getBoolAttr(true));
  Value output =
      attended ? reshapeAxes(ctx,
                             ctx.create<MoveAxisOp>(attended, int64_t(1),
                                                    int64_t(2)),
                             2, 2, {TDim(*numHeads * headSize)})
               : Value();
  outputs.push_back(output);
  outputs.push_back(presentKey);
  outputs.push_back(presentValue);
  return success();
}

/// com.microsoft's Attention: the input (B, S, D) by the weights (D, Dq +
/// Dk + Dv) plus the bias, then attendPacked.
LogicalResult attentionHandler(NodeContext &ctx, Outputs &outputs) {
  if (ctx.hasInput(4) || ctx.hasOutput(1))
    return ctx.unsupported("a past or present key-value cache");
  if (ctx.hasInput(6))
    return ctx.unsupported("past_sequence_length");
  Value input = ctx.input(0), weights = ctx.input(1), bias = ctx.input(2);
  if (failed(requireFloatInput(ctx, input, "input", 3, 3)) ||
      failed(requireFloatInput(ctx, weights, "weights", 2, 2)))
    return failure();
  Value qkv = ctx.create<EinsumOp>(ValueRange{input, weights},
                                   std::string("bsi,io->bso"));
  if (qkv && bias)
    qkv = ctx.binary<AddOp>(qkv, bias);
  if (!qkv)
    return failure();
  return attendPacked(ctx, qkv, ctx.input(3), ctx.input(5), outputs);
}

} // namespace

LogicalResult mlir::tract::onnx::attendPacked(NodeContext &ctx, Value qkv,
                                              Value maskIndex,
                                              Value attentionBias,
                                              Outputs &outputs) {
  if (ctx.getInt("do_rotary", 0))
    return ctx.unsupported("rotary embeddings inside the attention");
  std::optional<int64_t> numHeads = ctx.getOptInt("num_heads");
  if (!numHeads || *numHeads < 1)
    return ctx.error("num_heads must be positive");
  Shape shape = getShape(qkv);
  std::optional<int64_t> width = shape[2].getConstant();
  if (!width)
    return ctx.unsupported("a symbolic hidden size");
  SmallVector<int64_t> sizes(3, *width / 3);
  if (std::optional<SmallVector<int64_t>> given =
          ctx.getInts("qkv_hidden_sizes")) {
    if (given->size() != 3)
      return ctx.error("qkv_hidden_sizes needs three sizes");
    sizes = *given;
  }
  if (sizes[0] + sizes[1] + sizes[2] != *width || sizes[0] != sizes[1] ||
      llvm::any_of(sizes, [&](int64_t n) { return n <= 0 || n % *numHeads; }))
    return ctx.error("the projection's width " + Twine(*width) +
                     " is not queries, keys and values of whole heads (" +
                     Twine(*numHeads) + ")");
  // (B, S, N * h) -> (B, N, S, h).
  auto heads = [&](int64_t begin, int64_t size) -> Value {
    Value x = sliceOf(ctx, qkv, 2, TDim(begin), TDim(begin + size));
    Value split =
        reshapeAxes(ctx, x, 2, 1, {TDim(*numHeads), TDim(size / *numHeads)});
    return ctx.create<MoveAxisOp>(split, int64_t(2), int64_t(1));
  };
  Value q = heads(0, sizes[0]), k = heads(sizes[0], sizes[1]),
        v = heads(sizes[0] + sizes[1], sizes[2]);
  if (!q || !k || !v)
    return failure();

  // The mask, additive, as (B, 1, S|1, S).
  Type f32 = Float32Type::get(ctx.getContext());
  float filter = ctx.getFloat("mask_filter_value", -10000.0f);
  Value mask;
  if (maskIndex) {
    Shape maskShape = getShape(maskIndex);
    if (!isa<IntegerType>(NodeContext::elementType(maskIndex)))
      return ctx.error("mask_index must hold integers");
    if (maskShape.size() == 1 && maskShape[0] == shape[0]) {
      // Right padding: key j is attended when j < end[b].
      Value keys = axisPositions(ctx, qkv, 1, 1, 2); // (1, S)
      Value ends = ctx.create<AddAxisOp>(
          ctx.castTo(maskIndex, ctx.getBuilder().getI64Type()), uint64_t(1));
      Value valid = ctx.binary<LtOp>(keys, ends);
      if (!valid)
        return failure();
      mask = ctx.create<SelectOp>(
          valid, ctx.scalar(f32, 0.0, 2),
          ctx.scalar(f32, filter, 2)); // (B, S)
      mask = addAxes(ctx, mask, {1, 1});
    } else if ((maskShape.size() == 2 || maskShape.size() == 3) &&
               maskShape[0] == shape[0] && maskShape.back() == shape[1]) {
      // A raw mask: ones attend, zeros get the filter value.
      Value m = ctx.castTo(maskIndex, f32);
      mask = ctx.binary<MulOp>(
          ctx.binary<SubOp>(ctx.scalar(f32, 1.0, maskShape.size()), m),
          ctx.scalar(f32, filter, maskShape.size()));
      mask = addAxes(ctx, mask, maskShape.size() == 2
                                    ? ArrayRef<int64_t>{1, 1}
                                    : ArrayRef<int64_t>{1});
    } else {
      return ctx.unsupported("this form of mask_index (rank " +
                             Twine(maskShape.size()) +
                             "; ends and starts, or 4-D)");
    }
    if (!mask)
      return failure();
  }
  if (attentionBias) {
    if (NodeContext::rank(attentionBias) != 4)
      return ctx.error("attention_bias must be (batch, heads, S, S)");
    Value bias = ctx.castTo(attentionBias, f32);
    mask = mask ? ctx.binary<AddOp>(mask, bias) : bias;
  }
  bool causal = ctx.getInt("unidirectional", 0) != 0;
  if (causal && mask) {
    // tract.sdpa's causal flag takes no mask: the causal part is added.
    std::optional<int64_t> length = shape[1].getConstant();
    if (!length)
      return ctx.unsupported("a causal attention with a mask over a "
                             "symbolic sequence length");
    SmallVector<float> values;
    for (int64_t i = 0; i < *length; ++i)
      for (int64_t j = 0; j < *length; ++j)
        values.push_back(j > i ? filter : 0.0f);
    auto type = RankedTensorType::get({1, 1, *length, *length}, f32);
    mask = ctx.binary<AddOp>(
        mask, ctx.constant(DenseElementsAttr::get(type, ArrayRef(values))));
    causal = false;
  }
  float scale = ctx.getFloat("scale", 0.0f);
  FloatAttr scaleAttr =
      scale != 0.0f ? ctx.getBuilder().getF64FloatAttr(scale) : FloatAttr();
  Value attended = ctx.create<SdpaOp>(q, k, v, mask, scaleAttr,
                                      ctx.getBuilder().getBoolAttr(causal));
  if (!attended)
    return failure();
  return pushOutput(
      outputs,
      reshapeAxes(ctx, ctx.create<MoveAxisOp>(attended, int64_t(1), int64_t(2)),
                  2, 2, {TDim(sizes[2])}));
}

void mlir::tract::onnx::registerTransformerOps(OpRegistry &registry) {
  registry.add("RotaryEmbedding", 23, rotaryEmbeddingHandler(false));
  registry.add("com.microsoft.RotaryEmbedding", 1,
               rotaryEmbeddingHandler(true));
  registry.add("com.microsoft.GroupQueryAttention", 1,
               groupQueryAttentionHandler);
  registry.add("com.microsoft.Attention", 1, attentionHandler);
}
