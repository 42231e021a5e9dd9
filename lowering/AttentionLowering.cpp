//===- AttentionLowering.cpp - attention in one pass over the keys --------===//
//
// tract.sdpa on f32 (b, heads, s, d) tensors becomes one loop nest that
// never stores the scores (flash attention on the CPU): for each batch,
// query head and block of query rows, the keys come in blocks of one
// vector; each block's scores are scaled, masked, and folded into a running
// maximum, a running sum of exponentials and an accumulator of weighted
// values, which are rescaled whenever the maximum grows. The rows divide
// their accumulators by their sums at the end.
//
// * The scores of a block are outer products over d of the query rows (one
//   scalar each) and a vector of keys: the keys are transposed first,
//   (b, h, d, t), so that a vector of them is contiguous.
// * Grouped-query attention reads key/value head h / (query heads / key
//   heads) for query head h: nothing is repeated.
// * Causal attention stops each row block at the last key its last row sees
//   (key j is masked from query i when j > i + t - s): half the work of a
//   prompt is skipped, and masked lanes never reach the exponentials.
// * A float mask is added to the scores; its dims of 1 broadcast.
//
// Other attentions (other element types, a boolean mask, a head size known
// only at run time, rank 3) are decomposed into einsums and a softmax by
// CompositeLowering.
//
//===----------------------------------------------------------------------===//

#include "lowering/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Keys per block: one vector of scores per query row.
constexpr int64_t kKeys = 16;
/// Query rows per block: they share each vector of keys and each row of
/// values that the block loads.
constexpr int64_t kRows = 4;

/// The operands of one attention, lowered, and the loop values the blocks
/// read.
struct Attention {
  Value q, kt, v, mask; ///< mask: null, or f32 (b|1, h|1, s|1, t|1)
  Shape maskShape;
  int64_t depth, valueDepth; ///< d and d_v
  double scale;
  bool causal;
  Value queries, keys, offset, groups; ///< s, t, t - s, heads per key head
};

class KernelEmitter {
public:
  KernelEmitter(OpBuilder &b, Location loc, const Attention &a)
      : b(b), loc(loc), a(a) {}

  /// The result tensor (b, h, s, d_v), written into `init`: an scf.forall
  /// over batches and query heads (threads share the heads), each writing
  /// its (s, d_v) slice.
  Value emit(Value init, Value batch, Value heads) {
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      offsets.assign({ivs[0], ivs[1], b.getIndexAttr(0), b.getIndexAttr(0)});
      sizes.assign({b.getIndexAttr(1), b.getIndexAttr(1), a.queries,
                    b.getIndexAttr(a.valueDepth)});
    };
    return forallOverSlices(
        b, loc, {batch, heads}, init, where, [&](ValueRange ivs, Value slice) {
          Value n = ivs[0], h = ivs[1];
          Value keyHead = arith::DivUIOp::create(b, loc, h, a.groups);
          return forRowBlocks(b, loc, a.queries, kRows, slice,
                              [&](Value r, int64_t rows, Value out) {
                                return block(n, h, keyHead, r, rows, out);
                              });
        });
  }

private:
  OpBuilder &b;
  Location loc;
  const Attention &a;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  VectorType vectorOf(int64_t lanes) {
    return VectorType::get({lanes}, b.getF32Type());
  }
  Value splat(Value scalar, int64_t lanes) {
    return vector::BroadcastOp::create(b, loc, vectorOf(lanes), scalar);
  }
  Value zeros(int64_t lanes) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorOf(lanes), 0.0f));
  }

  /// Rows [r, r + rows) of query head h of batch n, written into `out`,
  /// the head's (1, 1, s, d_v) slice.
  Value block(Value n, Value h, Value keyHead, Value r, int64_t rows,
              Value out) {
    Value lowest = f32(std::numeric_limits<float>::lowest());
    SmallVector<Value> init;
    for (int64_t i = 0; i < rows; ++i)
      init.push_back(lowest); // running maxima
    for (int64_t i = 0; i < rows; ++i)
      init.push_back(f32(0)); // running sums
    for (int64_t i = 0; i < rows; ++i)
      init.push_back(zeros(a.valueDepth));

    // The keys the rows see: all of them, or up to the last row's last.
    Value end = a.keys;
    if (a.causal) {
      Value seen = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, r, index(rows)), a.offset);
      end = arith::MinSIOp::create(b, loc, end, seen);
    }
    auto keyLoop =
        scf::ForOp::create(b, loc, index(0), end, index(kKeys), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(keyLoop.getBody());
      Value c = keyLoop.getInductionVar();
      ValueRange carried = keyLoop.getRegionIterArgs();
      SmallVector<Value> next =
          keyBlock(n, h, keyHead, r, rows, c, carried.take_front(rows),
                   carried.slice(rows, rows), carried.take_back(rows));
      scf::YieldOp::create(b, loc, next);
    }
    ValueRange results = keyLoop.getResults();
    for (int64_t i = 0; i < rows; ++i) {
      // A row that saw no key (no keys at all) sums nothing: 0.
      Value sum = splat(results[rows + i], a.valueDepth);
      Value row = arith::DivFOp::create(b, loc, results[2 * rows + i], sum);
      Value some = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                         results[rows + i], f32(0));
      row = arith::SelectOp::create(b, loc, some, row, zeros(a.valueDepth));
      Value at = arith::AddIOp::create(b, loc, r, index(i));
      out = vector::TransferWriteOp::create(
                b, loc, row, out, ValueRange{index(0), index(0), at, index(0)},
                ArrayRef<bool>{true})
                .getResult();
    }
    return out;
  }

  /// One block of keys [c, c + kKeys) for the rows: the carried maxima,
  /// sums and accumulators, updated.
  SmallVector<Value> keyBlock(Value n, Value h, Value keyHead, Value r,
                              int64_t rows, Value c, ValueRange maxima,
                              ValueRange sums, ValueRange accumulators) {
    // Scores: sum over d of q[row, d] * k[d, c .. c + kKeys).
    SmallVector<Value> init(rows, zeros(kKeys));
    auto depthLoop =
        scf::ForOp::create(b, loc, index(0), index(a.depth), index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(depthLoop.getBody());
      Value d = depthLoop.getInductionVar();
      Value keys = vector::TransferReadOp::create(
          b, loc, vectorOf(kKeys), a.kt, ValueRange{n, keyHead, d, c}, f32(0),
          ArrayRef<bool>{false});
      SmallVector<Value> next;
      for (int64_t i = 0; i < rows; ++i) {
        Value at = arith::AddIOp::create(b, loc, r, index(i));
        Value query =
            tensor::ExtractOp::create(b, loc, a.q, ValueRange{n, h, at, d});
        next.push_back(vector::FMAOp::create(b, loc, splat(query, kKeys), keys,
                                             depthLoop.getRegionIterArgs()[i]));
      }
      scf::YieldOp::create(b, loc, next);
    }

    // Lanes past the keys, or after a row's last key, do not count.
    auto indexVector = VectorType::get({kKeys}, b.getIndexType());
    Value lanes = arith::AddIOp::create(
        b, loc, vector::StepOp::create(b, loc, indexVector),
        vector::BroadcastOp::create(b, loc, indexVector, c));
    Value inKeys = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, lanes,
        vector::BroadcastOp::create(b, loc, indexVector, a.keys));
    Value lowest = splat(f32(std::numeric_limits<float>::lowest()), kKeys);
    Value scale = splat(f32(a.scale), kKeys);

    SmallVector<Value> nextMaxima, nextSums, nextAccumulators, weights;
    for (int64_t i = 0; i < rows; ++i) {
      Value at = arith::AddIOp::create(b, loc, r, index(i));
      Value scores =
          arith::MulFOp::create(b, loc, depthLoop.getResult(i), scale);
      if (a.mask)
        scores = arith::AddFOp::create(b, loc, scores, maskLanes(n, h, at, c));
      Value valid = inKeys;
      if (a.causal) {
        Value last = arith::AddIOp::create(b, loc, at, a.offset);
        Value seen = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sle, lanes,
            vector::BroadcastOp::create(b, loc, indexVector, last));
        valid = arith::AndIOp::create(b, loc, valid, seen);
      }
      scores = arith::SelectOp::create(b, loc, valid, scores, lowest);
      Value blockMax = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::MAXIMUMF, scores);
      Value maximum = arith::MaximumFOp::create(b, loc, maxima[i], blockMax);
      // exp(old - new) for the rescale, as a vector: the vector exponential
      // is the fast one.
      Value rescale = vector::ExtractOp::create(
          b, loc,
          math::ExpOp::create(
              b, loc,
              splat(arith::SubFOp::create(b, loc, maxima[i], maximum), kKeys)),
          ArrayRef<int64_t>{0});
      Value weight = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, scores, splat(maximum, kKeys)));
      Value total = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, weight);
      nextMaxima.push_back(maximum);
      nextSums.push_back(arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, sums[i], rescale), total));
      nextAccumulators.push_back(arith::MulFOp::create(
          b, loc, accumulators[i], splat(rescale, a.valueDepth)));
      weights.push_back(weight);
    }

    // The values of the block's keys, weighted; a key past the end has a
    // weight of 0 and reads the last row instead.
    Value lastKey = arith::SubIOp::create(b, loc, a.keys, index(1));
    for (int64_t lane = 0; lane < kKeys; ++lane) {
      Value key = arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, c, index(lane)), lastKey);
      Value values = vector::TransferReadOp::create(
          b, loc, vectorOf(a.valueDepth), a.v,
          ValueRange{n, keyHead, key, index(0)}, f32(0), ArrayRef<bool>{true});
      for (int64_t i = 0; i < rows; ++i) {
        Value w = vector::ExtractOp::create(b, loc, weights[i],
                                            ArrayRef<int64_t>{lane});
        nextAccumulators[i] = vector::FMAOp::create(
            b, loc, splat(w, a.valueDepth), values, nextAccumulators[i]);
      }
    }
    SmallVector<Value> next = nextMaxima;
    llvm::append_range(next, nextSums);
    llvm::append_range(next, nextAccumulators);
    return next;
  }

  /// The mask's lanes for row `at` of head h of batch n, keys [c, c +
  /// kKeys): its dims of 1 broadcast.
  Value maskLanes(Value n, Value h, Value at, Value c) {
    const Shape &shape = a.maskShape;
    Value zero = index(0);
    SmallVector<Value> where = {
        shape[0] == TDim(1) ? zero : n, shape[1] == TDim(1) ? zero : h,
        shape[2] == TDim(1) ? zero : at, shape[3] == TDim(1) ? zero : c};
    if (shape[3] == TDim(1))
      return splat(tensor::ExtractOp::create(b, loc, a.mask, where), kKeys);
    return vector::TransferReadOp::create(b, loc, vectorOf(kKeys), a.mask,
                                          where, f32(0), ArrayRef<bool>{false});
  }
};

struct SdpaLowering : public TractLoweringPattern<SdpaOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(SdpaOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    if (!isFusedAttention(op))
      return rewriter.notifyMatchFailure(op, "decomposed instead");
    Location loc = op.getLoc();
    Shape q = getShape(op.getQ()), k = getShape(op.getK()),
          v = getShape(op.getV());
    Attention a;
    a.q = adaptor.getQ();
    a.v = adaptor.getV();
    a.mask = adaptor.getMask();
    if (a.mask)
      a.maskShape = getShape(op.getMask());
    a.depth = *q[3].getConstant();
    a.valueDepth = *v[3].getConstant();
    a.causal = op.getCausal();
    a.scale = op.getScaleAttr() ? op.getScaleAttr().getValueAsDouble()
                                : 1.0 / std::sqrt(double(a.depth));

    auto sizeOf = [&](const TDim &dim) -> FailureOr<Value> {
      FailureOr<OpFoldResult> folded = size(rewriter, loc, dim);
      if (failed(folded))
        return failure();
      return getValueOrCreateConstantIndexOp(rewriter, loc, *folded);
    };
    FailureOr<Value> batch = sizeOf(q[0]), heads = sizeOf(q[1]),
                     queries = sizeOf(q[2]), keys = sizeOf(k[2]),
                     groups = sizeOf(
                         q[1].getConstant() && k[1].getConstant()
                             ? TDim(*q[1].getConstant() / *k[1].getConstant())
                             : TDim(1));
    if (failed(batch) || failed(heads) || failed(queries) || failed(keys) ||
        failed(groups))
      return failure();
    a.queries = *queries;
    a.keys = *keys;
    a.groups = *groups;
    a.offset = arith::SubIOp::create(rewriter, loc, *keys, *queries);

    // The keys transposed, (b, h, d, t).
    Shape transposed = {k[0], k[1], k[3], k[2]};
    Value ktInit = emptyTensor(rewriter, loc,
                               getTensorType(op.getContext(), transposed,
                                             getElementTypeOrSelf(op.getK())));
    Value init = emptyTensor(rewriter, loc, op.getType());
    if (!ktInit || !init)
      return failure();
    a.kt = linalg::TransposeOp::create(rewriter, loc, adaptor.getK(), ktInit,
                                       ArrayRef<int64_t>{0, 1, 3, 2})
               ->getResult(0);
    KernelEmitter emitter(rewriter, loc, a);
    rewriter.replaceOp(op, emitter.emit(init, *batch, *heads));
    return success();
  }
};

} // namespace

bool mlir::tract::isFusedAttention(SdpaOp op) {
  Shape q = getShape(op.getQ()), k = getShape(op.getK()),
        v = getShape(op.getV());
  auto isF32 = [](Value value) { return getElementTypeOrSelf(value).isF32(); };
  if (q.size() != 4 || k.size() != 4 || v.size() != 4 || !isF32(op.getQ()) ||
      !isF32(op.getK()) || !isF32(op.getV()) || !q[3].getConstant() ||
      !v[3].getConstant() || *q[3].getConstant() <= 0 ||
      *v[3].getConstant() <= 0 || k[3] != q[3] || k[2] != v[2] ||
      k[0] != q[0] || v[0] != q[0] || k[1] != v[1])
    return false;
  // Query heads: those of the keys, or a known multiple of them.
  if (q[1] != k[1]) {
    std::optional<int64_t> heads = q[1].getConstant(),
                           keyHeads = k[1].getConstant();
    if (!heads || !keyHeads || *keyHeads <= 0 || *heads % *keyHeads)
      return false;
  }
  if (Value mask = op.getMask()) {
    Shape shape = getShape(mask);
    Shape full = {q[0], q[1], q[2], k[2]};
    if (!isF32(mask) || shape.size() != 4)
      return false;
    for (auto [dim, wanted] : llvm::zip(shape, full))
      if (dim != wanted && dim != TDim(1))
        return false;
  }
  return true;
}

void mlir::tract::populateAttentionLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<SdpaLowering>(converter, patterns.getContext());
}
