//===- AttentionKernels.cpp - attention in one pass over the keys ---------===//
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
//   (b, h, d, t), so that a vector of them is contiguous, and padded with
//   zeros to whole blocks, so that no read of them is masked.
// * The rows of a block are as many as the registers hold: a vector of
//   scores each, plus the vector of keys and a broadcast query.
// * The running sums are kept lane by lane and added up at the end; the
//   running maxima ignore NaNs (a NaN score makes NaN weights anyway), so
//   that neither takes more than plain vector instructions.
// * The accumulators live in the result's rows, and a block of keys updates
//   them one chunk of d_v at a time: a chunk of every row in registers
//   across the block's keys, each key's values read once per chunk, its
//   weights broadcast from a small tensor rather than from registers.
// * Grouped-query attention reads key/value head h / (query heads / key
//   heads) for query head h: nothing is repeated.
// * Causal attention stops each row block at the last key its last row sees
//   (key j is masked from query i when j > i + t - s): half the work of a
//   prompt is skipped, and masked lanes never reach the exponentials.
// * A float mask is added to the scores; its dims of 1 broadcast.
//
// Other attentions (other element types, a boolean mask, a head size known
// only at run time, rank 3) are decomposed into einsums and a softmax by
// tract-lower-to-linalg (CompositeLowering), which runs after this pass.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/KernelLowering.h"
#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUATTENTIONKERNELS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Keys per block: one vector of scores per query row.
constexpr int64_t kKeys = 16;
/// Most query rows per block: they share each vector of keys and each
/// chunk of values that the block loads.
constexpr int64_t kMaxRows = 6;
/// Lanes of the chunks of the rows' accumulators that a block of keys
/// updates at a time: a chunk of each row in registers, not the whole row.
constexpr int64_t kChunk = 16;

/// The operands of one attention, lowered, and the loop values the blocks
/// read.
struct Attention {
  Value q, kt, v, mask; ///< mask: null, or f32 (b|1, h|1, s|1, t|1)
  Shape maskShape;
  int64_t depth, valueDepth; ///< d and d_v
  double scale;
  bool causal;
  Value queries, keys, offset, groups; ///< s, t, t - s, heads per key head
  int64_t rows;                        ///< query rows per block
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
          weightRows = tensor::EmptyOp::create(
              b, loc, ArrayRef<int64_t>{a.rows, kKeys}, b.getF32Type());
          return forRowBlocks(b, loc, a.queries, a.rows, slice,
                              [&](Value r, int64_t rows, Value out) {
                                return block(n, h, keyHead, r, rows, out);
                              });
        });
  }

private:
  OpBuilder &b;
  Location loc;
  const Attention &a;
  /// A (rows, kKeys) tensor for the weights of a block: the products with
  /// the values broadcast them from memory, which is cheaper than from
  /// registers.
  Value weightRows;

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
  /// the head's (1, 1, s, d_v) slice, which holds their accumulators
  /// meanwhile.
  Value block(Value n, Value h, Value keyHead, Value r, int64_t rows,
              Value out) {
    SmallVector<Value> at;
    for (int64_t i = 0; i < rows; ++i)
      at.push_back(arith::AddIOp::create(b, loc, r, index(i)));
    out = forChunks(out, [&](Value start, int64_t width, Value out) {
      for (Value row : at)
        out = write(zeros(width), out, row, start);
      return out;
    });
    SmallVector<Value> init(rows, f32(std::numeric_limits<float>::lowest()));
    // The running maxima, then the running sums, lane by lane: they are
    // added up once, at the end.
    init.append(rows, zeros(kKeys));
    init.push_back(weightRows);
    init.push_back(out);

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
      ValueRange carried = keyLoop.getRegionIterArgs();
      SmallVector<Value> next =
          keyBlock(n, h, keyHead, at, keyLoop.getInductionVar(),
                   carried.take_front(rows), carried.slice(rows, rows),
                   carried[2 * rows], carried.back());
      scf::YieldOp::create(b, loc, next);
    }
    SmallVector<Value> sums;
    for (Value lanes : keyLoop.getResults().slice(rows, rows))
      sums.push_back(vector::ReductionOp::create(
          b, loc, vector::CombiningKind::ADD, lanes));
    // Each row divided by its sum; a row that saw no key (no keys at all)
    // sums nothing: 0.
    return forChunks(keyLoop.getResults().back(), [&](Value start,
                                                      int64_t width,
                                                      Value out) {
      for (auto [row, sum] : llvm::zip(at, sums)) {
        Value some = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           sum, f32(0));
        Value chunk = arith::DivFOp::create(
            b, loc, read(out, row, start, width), splat(sum, width));
        chunk = arith::SelectOp::create(b, loc, some, chunk, zeros(width));
        out = write(chunk, out, row, start);
      }
      return out;
    });
  }

  /// `body(start, width, out)` over the chunks [start, start + width) of
  /// the d_v values of a row, carrying `out`: a loop over the chunks of
  /// kChunk values, then the rest.
  Value forChunks(Value out, function_ref<Value(Value, int64_t, Value)> body) {
    int64_t whole = a.valueDepth / kChunk * kChunk;
    if (whole) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(whole),
                                     index(kChunk), ValueRange{out});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      scf::YieldOp::create(b, loc,
                           body(loop.getInductionVar(), kChunk,
                                loop.getRegionIterArgs().front()));
      b.setInsertionPointAfter(loop);
      out = loop.getResult(0);
    }
    if (a.valueDepth > whole)
      out = body(index(whole), a.valueDepth - whole, out);
    return out;
  }

  /// Values [start, start + width) of row `at` of the (1, 1, s, d_v) `out`.
  Value read(Value out, Value at, Value start, int64_t width) {
    return vector::TransferReadOp::create(
        b, loc, vectorOf(width), out, ValueRange{index(0), index(0), at, start},
        f32(0), ArrayRef<bool>{true});
  }
  Value write(Value chunk, Value out, Value at, Value start) {
    return vector::TransferWriteOp::create(
               b, loc, chunk, out, ValueRange{index(0), index(0), at, start},
               ArrayRef<bool>{true})
        .getResult();
  }

  /// One block of keys [c, c + kKeys) for the rows `at`: the carried
  /// maxima and sums, updated, then `out` with the rows' accumulators
  /// updated.
  SmallVector<Value> keyBlock(Value n, Value h, Value keyHead,
                              ArrayRef<Value> at, Value c, ValueRange maxima,
                              ValueRange sums, Value scratch, Value out) {
    int64_t rows = at.size();
    // Scores: sum over d of q[row, d] * k[d, c .. c + kKeys).
    SmallVector<Value> init(rows, zeros(kKeys));
    auto depthLoop =
        scf::ForOp::create(b, loc, index(0), index(a.depth), index(1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(depthLoop.getBody());
      Value d = depthLoop.getInductionVar();
      Value keys = vector::TransferReadOp::create(b, loc, vectorOf(kKeys), a.kt,
                                                  ValueRange{n, keyHead, d, c},
                                                  f32(0), ArrayRef<bool>{true});
      SmallVector<Value> next;
      for (int64_t i = 0; i < rows; ++i) {
        Value query =
            tensor::ExtractOp::create(b, loc, a.q, ValueRange{n, h, at[i], d});
        next.push_back(vector::FMAOp::create(b, loc, splat(query, kKeys), keys,
                                             depthLoop.getRegionIterArgs()[i]));
      }
      scf::YieldOp::create(b, loc, next);
    }

    // Lanes past the keys, or after a row's last key, do not count: a row
    // sees the lanes below min(t, at + t - s + 1) - c, compared as i32.
    auto laneVector = VectorType::get({kKeys}, b.getI32Type());
    SmallVector<int32_t> laneNumbers(kKeys);
    std::iota(laneNumbers.begin(), laneNumbers.end(), 0);
    Value steps = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(laneVector, ArrayRef(laneNumbers)));
    auto seenLanes = [&](Value end) -> Value {
      Value count = arith::IndexCastOp::create(
          b, loc, b.getI32Type(), arith::SubIOp::create(b, loc, end, c));
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt, steps,
          vector::BroadcastOp::create(b, loc, laneVector, count));
    };
    // Without causality every row sees the same lanes.
    Value inKeys = a.causal ? Value() : seenLanes(a.keys);
    Value lowest = splat(f32(std::numeric_limits<float>::lowest()), kKeys);
    Value scale = splat(f32(a.scale), kKeys);

    SmallVector<Value> next, weights, drops;
    for (int64_t i = 0; i < rows; ++i) {
      Value scores =
          arith::MulFOp::create(b, loc, depthLoop.getResult(i), scale);
      if (a.mask)
        scores =
            arith::AddFOp::create(b, loc, scores, maskLanes(n, h, at[i], c));
      Value valid = inKeys;
      if (a.causal) {
        Value end = arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, at[i], a.offset), index(1));
        valid = seenLanes(arith::MinSIOp::create(b, loc, a.keys, end));
      }
      scores = arith::SelectOp::create(b, loc, valid, scores, lowest);
      // Maxima that ignore NaNs (a NaN score makes NaN weights anyway): the
      // plain instructions, not the NaN-propagating sequences.
      auto noNaNs = arith::FastMathFlags::nnan;
      Value blockMax = vector::ReductionOp::create(
          b, loc, vector::CombiningKind::MAXNUMF, scores, noNaNs);
      Value maximum =
          arith::MaxNumFOp::create(b, loc, maxima[i], blockMax, noNaNs);
      weights.push_back(math::ExpOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, scores, splat(maximum, kKeys))));
      drops.push_back(arith::SubFOp::create(b, loc, maxima[i], maximum));
      next.push_back(maximum);
    }
    // exp(old - new) of all the rows in one vector exponential: the rescale
    // of their sums and accumulators.
    Value rescales = math::ExpOp::create(
        b, loc, vector::FromElementsOp::create(b, loc, vectorOf(rows), drops));
    SmallVector<Value> rescale;
    for (int64_t i = 0; i < rows; ++i) {
      rescale.push_back(
          vector::ExtractOp::create(b, loc, rescales, ArrayRef<int64_t>{i}));
      next.push_back(vector::FMAOp::create(
          b, loc, sums[i], splat(rescale[i], kKeys), weights[i]));
    }

    // The values of the block's keys, weighted, added to the rows'
    // accumulators a chunk at a time: the chunk of each row stays in a
    // register across the keys. A key past the end has a weight of 0 and
    // reads the last row instead.
    for (int64_t i = 0; i < rows; ++i)
      scratch = vector::TransferWriteOp::create(b, loc, weights[i], scratch,
                                                ValueRange{index(i), index(0)},
                                                ArrayRef<bool>{true})
                    .getResult();
    next.push_back(scratch);
    Value lastKey = arith::SubIOp::create(b, loc, a.keys, index(1));
    SmallVector<Value> keys;
    for (int64_t lane = 0; lane < kKeys; ++lane)
      keys.push_back(arith::MinSIOp::create(
          b, loc, arith::AddIOp::create(b, loc, c, index(lane)), lastKey));
    next.push_back(forChunks(out, [&](Value start, int64_t width, Value out) {
      SmallVector<Value> chunks;
      for (int64_t i = 0; i < rows; ++i)
        chunks.push_back(arith::MulFOp::create(
            b, loc, read(out, at[i], start, width), splat(rescale[i], width)));
      for (int64_t lane = 0; lane < kKeys; ++lane) {
        Value values = vector::TransferReadOp::create(
            b, loc, vectorOf(width), a.v,
            ValueRange{n, keyHead, keys[lane], start}, f32(0),
            ArrayRef<bool>{true});
        for (int64_t i = 0; i < rows; ++i) {
          Value w = tensor::ExtractOp::create(
              b, loc, scratch, ValueRange{index(i), index(lane)});
          chunks[i] =
              vector::FMAOp::create(b, loc, splat(w, width), values, chunks[i]);
        }
      }
      for (int64_t i = 0; i < rows; ++i)
        out = write(chunks[i], out, at[i], start);
      return out;
    }));
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

/// Attention on f32 rank-4 tensors with a known head size (and at most an
/// f32 mask): the kernel's; others are decomposed by tract-lower-to-linalg.
bool isFusedAttention(SdpaOp op) {
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

struct SdpaLowering : public TractLoweringPattern<SdpaOp> {
  SdpaLowering(const TypeConverter &converter, MLIRContext *context,
               int64_t registerFile)
      : TractLoweringPattern(converter, context), registerFile(registerFile) {}

  /// The f32 values the target's vector registers hold.
  int64_t registerFile;

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
    // Each row takes a vector of scores, then a chunk of accumulator; the
    // vector of keys (of values) and a broadcast query (weight) take two.
    a.rows = std::clamp<int64_t>(registerFile / kKeys - 2, 1, kMaxRows);
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

    // The keys transposed, (b, h, d, t), their last dim padded with zeros
    // to whole blocks: the blocks read whole vectors, not masked ones.
    Value paddedKeys = arith::MulIOp::create(
        rewriter, loc,
        arith::CeilDivUIOp::create(
            rewriter, loc, a.keys,
            arith::ConstantIndexOp::create(rewriter, loc, kKeys)),
        arith::ConstantIndexOp::create(rewriter, loc, kKeys));
    FailureOr<OpFoldResult> keyBatch = size(rewriter, loc, k[0]),
                            keyHeads = size(rewriter, loc, k[1]);
    Value init = emptyTensor(rewriter, loc, op.getType());
    if (failed(keyBatch) || failed(keyHeads) || !init)
      return failure();
    Type f32 = rewriter.getF32Type();
    SmallVector<OpFoldResult> ktSizes = {*keyBatch, *keyHeads,
                                         rewriter.getIndexAttr(a.depth),
                                         getAsOpFoldResult(paddedKeys)};
    Value kt =
        linalg::FillOp::create(
            rewriter, loc,
            ValueRange{arith::ConstantOp::create(rewriter, loc,
                                                 rewriter.getF32FloatAttr(0))},
            ValueRange{tensor::EmptyOp::create(rewriter, loc, ktSizes, f32)})
            .getResult(0);
    SmallVector<OpFoldResult> zeros(4, rewriter.getIndexAttr(0)),
        ones(4, rewriter.getIndexAttr(1)), keySizes = ktSizes;
    keySizes[3] = getAsOpFoldResult(a.keys);
    Value transposed = linalg::TransposeOp::create(
                           rewriter, loc, adaptor.getK(),
                           tensor::ExtractSliceOp::create(
                               rewriter, loc, kt, zeros, keySizes, ones),
                           ArrayRef<int64_t>{0, 1, 3, 2})
                           ->getResult(0);
    a.kt = tensor::InsertSliceOp::create(rewriter, loc, transposed, kt, zeros,
                                         keySizes, ones);
    KernelEmitter emitter(rewriter, loc, a);
    rewriter.replaceOp(op, emitter.emit(init, *batch, *heads));
    return success();
  }
};

struct TractCpuAttentionKernelsPass
    : public tract::impl::TractCpuAttentionKernelsBase<
          TractCpuAttentionKernelsPass> {
  using TractCpuAttentionKernelsBase::TractCpuAttentionKernelsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto findFused = [](SdpaOp op) {
      return isFusedAttention(op) ? WalkResult::interrupt()
                                  : WalkResult::advance();
    };
    if (func.isExternal() || !func.walk(findFused).wasInterrupted())
      return;
    // An attention whose sizes an op computes at run time (bound only as
    // that op is lowered) stays for the decomposition.
    if (failed(lowerToKernels(func, [&](const TypeConverter &converter,
                                        RewritePatternSet &patterns) {
          patterns.add<SdpaLowering>(converter, &getContext(), registerFile);
        })))
      return signalPassFailure();
  }
};

} // namespace
