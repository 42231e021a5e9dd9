//===- QuantKernels.cpp - 8-bit integer products on dot-product lanes -----===//
//
// tract.quant_matmul becomes one loop nest whose inner step sums four byte
// products per i32 lane, spelled out in vector ops (widen, multiply, sum
// each lane's four), which tract-convert-vector-to-llvm turns into
// `vpdpbusd` on AVX-512 VNNI (unsigned bytes times signed bytes, added to
// 16 i32 sums).
//
// Both operands are brought to that instruction's signedness with their
// zero points moved to match: a signed input byte x becomes x + 128
// (x ^ 0x80) with its zero point + 128, an unsigned weight w becomes
// w - 128 with its zero points - 128. For AArch64's sdot (signed by
// signed bytes, `signed-products`), the input bytes are made signed
// instead: an unsigned x becomes x - 128, its zero point - 128. The product of the shifted values
// with the shifted zero points is the same. With x' and w' those values,
//
//   sum_k (x' - xz')(w' - wz'[c]) = sum_k x' w'  - xz' sum_k w'[k, c]
//                                  - wz'[c] sum_k x' + K xz' wz'[c],
//
// the second and fourth terms, and the bias, are one i32 per channel
// computed at compile time; the third is there only when a weight zero
// point is not zero, and its sums of inputs come from the same instruction
// against a vector of ones.
//
// The lanes run along the output's columns:
//   * weights on the right (a product by a constant matrix, K x C): the
//     weights are laid out at compile time as (groups of 16 channels, k / 4,
//     16, 4), so that one 64-byte vector holds four k of 16 channels; each
//     input row's four bytes are broadcast;
//   * weights on the left (a convolution's C x K kernel by its K x N
//     patches): each tile of 64 columns of the input is packed at run time
//     into the same (k / 4, 16, 4) quads, and each channel's four bytes of
//     weights are broadcast.
// The requantization (scale, rounding half to even, zero point, saturation)
// is the tile's epilogue: the i32 sums never reach memory.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/KernelLowering.h"
#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <algorithm>
#include <cmath>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUQUANTKERNELS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// i32 sums per vector.
constexpr int64_t kLanes = 16;
/// Bytes summed into each lane by one step.
constexpr int64_t kQuad = 4;
/// Rows of a register tile, and its most groups of kLanes columns.
constexpr int64_t kRows = 6;
constexpr int64_t kMaxGroups = 4;

/// The groups of a tile: the most, up to kMaxGroups, that divide `groups`.
int64_t groupsPerTile(int64_t groups) {
  int64_t perTile = std::min(kMaxGroups, std::max<int64_t>(groups, 1));
  while (groups % perTile)
    --perTile;
  return perTile;
}

/// The weights and what the kernels add to their sums, per channel, all
/// with the shifts of the header applied.
struct Prepared {
  /// Right: (groups, k / 4, 64); left: (channels, k rounded up to 4).
  DenseElementsAttr weights;
  /// bias - xz' * sum_k w' + K * xz' * wz', per channel.
  std::vector<int32_t> correction;
  /// wz' per channel; empty when all are zero.
  std::vector<int32_t> weightZero;
  /// Per channel; empty without requantization.
  std::vector<float> multiplier;
};

/// The values of a constant operand (dense, or a mapped weight copied),
/// or null.
DenseElementsAttr constantOperand(Value value) {
  Attribute attr;
  return matchPattern(value, m_Constant(&attr)) ? denseOf(attr)
                                                : DenseElementsAttr();
}

/// The constant bias of `op` (a quant_matmul or quant_depthwise), one i32
/// per channel; zeros without one.
template <typename OpTy>
FailureOr<std::vector<int32_t>> readBias(OpTy op, int64_t channels) {
  std::vector<int32_t> bias(channels, 0);
  Value value = op.getBias();
  if (!value)
    return bias;
  DenseElementsAttr dense = constantOperand(value);
  if (!dense)
    return op.emitOpError("needs a constant bias");
  int64_t c = 0;
  for (const APInt &entry : dense.getValues<APInt>())
    bias[c++] = int32_t(entry.getSExtValue());
  return bias;
}

/// The weights' values as signed bytes w' (k x channels, row-major, or
/// channels x k with `left`), from a constant of ui8 or i8.
std::vector<int8_t> shiftedWeights(DenseElementsAttr weights) {
  bool isUnsigned = weights.getElementType().isUnsignedInteger();
  std::vector<int8_t> values;
  values.reserve(weights.getNumElements());
  ArrayRef<char> raw = weights.getRawData();
  for (int64_t i = 0, e = weights.getNumElements(); i < e; ++i) {
    uint8_t byte = uint8_t(raw[weights.isSplat() ? 0 : i]);
    values.push_back(int8_t(isUnsigned ? uint8_t(byte ^ 0x80) : byte));
  }
  return values;
}

/// The weights laid out for the kernels with their corrections. `at(kk,
/// c)` is w' at row kk of the `k` rows laid out (zero for rows that only
/// pad the quads); `sums` of them over the `realK` values each output sums.
template <typename OpTy>
FailureOr<Prepared> prepare(OpTy op, bool left, int64_t k, int64_t realK,
                            int64_t channels, bool weightsUnsigned,
                            function_ref<int32_t(int64_t, int64_t)> at,
                            int64_t inputZeroShifted) {
  int64_t k4 = llvm::divideCeil(k, kQuad) * kQuad;

  Prepared prepared;
  ArrayRef<int64_t> zeros = op.getWeightZero();
  std::vector<int32_t> weightZero(channels, 0);
  for (int64_t c = 0; c < channels; ++c) {
    int64_t zero = zeros.empty() ? 0 : zeros[zeros.size() == 1 ? 0 : c];
    weightZero[c] = int32_t(zero - (weightsUnsigned ? 128 : 0));
  }
  if (llvm::any_of(weightZero, [](int32_t z) { return z != 0; }))
    prepared.weightZero = weightZero;

  FailureOr<std::vector<int32_t>> biasValues = readBias(op, channels);
  if (failed(biasValues))
    return failure();
  const std::vector<int32_t> &bias = *biasValues;
  for (int64_t c = 0; c < channels; ++c) {
    int64_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      sum += at(kk, c);
    prepared.correction.push_back(
        int32_t(bias[c] - inputZeroShifted * sum +
                realK * inputZeroShifted * weightZero[c]));
  }
  if (std::optional<ArrayRef<float>> multiplier = op.getMultiplier())
    for (int64_t c = 0; c < channels; ++c)
      prepared.multiplier.push_back(
          (*multiplier)[multiplier->size() == 1 ? 0 : c]);

  MLIRContext *context = op.getContext();
  Type i8 = IntegerType::get(context, 8);
  std::vector<int8_t> laidOut;
  RankedTensorType laidOutType;
  if (left) {
    laidOut.assign(channels * k4, 0);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t kk = 0; kk < k; ++kk)
        laidOut[c * k4 + kk] = int8_t(at(kk, c));
    laidOutType = RankedTensorType::get({channels, k4}, i8);
  } else {
    int64_t groups = llvm::divideCeil(channels, kLanes);
    int64_t quads = k4 / kQuad;
    laidOut.assign(groups * quads * kLanes * kQuad, 0);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t kk = 0; kk < k; ++kk)
        laidOut[((c / kLanes * quads + kk / kQuad) * kLanes + c % kLanes) *
                    kQuad +
                kk % kQuad] = int8_t(at(kk, c));
    laidOutType =
        RankedTensorType::get({groups, quads, kLanes * kQuad}, i8);
    // The per-channel vectors are read a group at a time: padded.
    prepared.correction.resize(groups * kLanes, 0);
    if (!prepared.weightZero.empty())
      prepared.weightZero.resize(groups * kLanes, 0);
    if (!prepared.multiplier.empty())
      prepared.multiplier.resize(groups * kLanes, 0.0f);
  }
  prepared.weights = DenseElementsAttr::getFromRawBuffer(
      laidOutType, ArrayRef<char>(reinterpret_cast<const char *>(laidOut.data()),
                                  laidOut.size()));
  return prepared;
}

/// The geometry of a channels-last tract.quant_conv.
struct ConvShape {
  int64_t channels, kh, kw, outH, outW;
  int64_t strides[2], dilations[2];
};

class KernelEmitter {
public:
  /// `flipInput`: the input's bytes are xor-ed with 0x80 on their way to
  /// the products (to unsigned for vpdpbusd from signed inputs, to signed
  /// for sdot from unsigned ones); `signedProducts`: the products take
  /// them as signed.
  KernelEmitter(OpBuilder &b, Location loc, bool flipInput,
                bool signedProducts, const Prepared &prepared, int64_t k,
                int64_t outputZero, bool outputSigned, bool requantized)
      : b(b), loc(loc), flipInput(flipInput),
        signedProducts(signedProducts), k(k),
        quads(llvm::divideCeil(k, kQuad)), outputZero(outputZero),
        outputSigned(outputSigned), requantized(requantized) {
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    weights = arith::ConstantOp::create(b, loc, prepared.weights);
    int64_t count = prepared.correction.size();
    auto table = [&](Type element, auto values) -> Value {
      return arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(RankedTensorType::get({count}, element),
                                 ArrayRef(values)));
    };
    correction = table(i32, prepared.correction);
    if (!prepared.weightZero.empty())
      weightZero = table(i32, prepared.weightZero);
    if (!prepared.multiplier.empty())
      multiplier = table(f32, prepared.multiplier);
    // Padding reads as a zero once flipped.
    inputPadding = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(i8, flipInput ? -128 : 0));
  }

  /// Weights on the right: `input` is (rows, k), the result `init` has the
  /// input's leading dims `leading` then `channels`.
  Value emitRight(Value init, Value input, Value rows,
                  ArrayRef<OpFoldResult> leading, int64_t channels) {
    int64_t groups = llvm::divideCeil(channels, kLanes);
    int64_t perTile = groupsPerTile(groups);
    int64_t width = perTile * kLanes;
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      offsets.assign(leading.size(), b.getIndexAttr(0));
      Value first = mul(ivs[0], width);
      offsets.push_back(first);
      sizes.assign(leading.begin(), leading.end());
      sizes.push_back(channels % width == 0
                          ? OpFoldResult(b.getIndexAttr(width))
                          : OpFoldResult(arith::MinSIOp::create(
                                b, loc, index(width),
                                arith::SubIOp::create(b, loc, index(channels),
                                                      first))
                                             .getResult()));
    };
    return forallOverSlices(
        b, loc, {b.getIndexAttr(groups / perTile)}, init, where,
        [&](ValueRange ivs, Value slice) {
          Value firstGroup = mul(ivs[0], perTile);
          return forRowBlocks(
              b, loc, rows, kRows, slice,
              [&](Value r, int64_t height, Value out) {
                return rightTile(input, r, height, firstGroup, perTile,
                                 leading, channels % width != 0, out);
              });
        });
  }

  /// Weights on the left: `input` is (batch, k, n), the result `init`
  /// (batch, channels, n).
  Value emitLeft(Value init, Value input, OpFoldResult batch, Value n,
                 int64_t channels) {
    int64_t width = kMaxGroups * kLanes;
    Value tiles = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, n, index(width - 1)),
        index(width));
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      Value first = mul(ivs[1], width);
      offsets.assign({OpFoldResult(ivs[0]), b.getIndexAttr(0),
                      OpFoldResult(first)});
      Value columns = arith::MinSIOp::create(
          b, loc, index(width), arith::SubIOp::create(b, loc, n, first));
      sizes.assign({OpFoldResult(b.getIndexAttr(1)),
                    OpFoldResult(b.getIndexAttr(channels)),
                    OpFoldResult(columns)});
    };
    return forallOverSlices(
        b, loc, {batch, OpFoldResult(tiles)}, init, where,
        [&](ValueRange ivs, Value slice) {
          Value first = mul(ivs[1], width);
          SmallVector<Value> columnSums;
          Value panel = packPanel(input, ivs[0], first, columnSums);
          return forRowBlocks(
              b, loc, index(channels), kRows, slice,
              [&](Value c, int64_t height, Value out) {
                return leftTile(panel, columnSums, c, height, out);
              });
        });
  }

  /// A channels-last convolution: `input` (B, H, W * C), padded, C a
  /// multiple of 4, by the weights laid out on the right with k = (tap, C); the
  /// result `init` is (rows = B * OH * OW, channels), a row per output
  /// pixel. Each step broadcasts four channels of one tap of a pixel, read
  /// where the tap falls in the input: no patches are copied.
  Value emitConv(Value init, Value input, int64_t rows, const ConvShape &conv,
                 int64_t channels) {
    int64_t groups = llvm::divideCeil(channels, kLanes);
    int64_t perTile = groupsPerTile(groups);
    int64_t width = perTile * kLanes;
    // Blocks of rows for the threads, each a few register tiles tall and
    // as even as they can be. The column tiles are the outer loop: the
    // threads split them first (the iterations are split in order), and a
    // thread's blocks of rows read one tile's weights in turn.
    int64_t chunk = llvm::divideCeil(rows, llvm::divideCeil(rows, kRows * 8));
    chunk = llvm::divideCeil(chunk, kRows) * kRows;
    int64_t chunks = llvm::divideCeil(rows, chunk);
    bool ragged = channels % width != 0;
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      Value firstRow = mul(ivs[1], chunk);
      Value firstColumn = mul(ivs[0], width);
      offsets.assign({OpFoldResult(firstRow), OpFoldResult(firstColumn)});
      sizes.assign(
          {OpFoldResult(arith::MinSIOp::create(
                            b, loc, index(chunk),
                            arith::SubIOp::create(b, loc, index(rows), firstRow))
                            .getResult()),
           ragged ? OpFoldResult(arith::MinSIOp::create(
                                     b, loc, index(width),
                                     arith::SubIOp::create(b, loc,
                                                           index(channels),
                                                           firstColumn))
                                     .getResult())
                  : OpFoldResult(b.getIndexAttr(width))});
    };
    return forallOverSlices(
        b, loc, {b.getIndexAttr(groups / perTile), b.getIndexAttr(chunks)},
        init, where, [&](ValueRange ivs, Value slice) {
          Value firstRow = mul(ivs[1], chunk);
          Value firstGroup = mul(ivs[0], perTile);
          Value count = arith::MinSIOp::create(
              b, loc, index(chunk),
              arith::SubIOp::create(b, loc, index(rows), firstRow));
          return forRowBlocks(
              b, loc, count, kRows, slice,
              [&](Value r, int64_t height, Value out) {
                return convTile(input, conv, firstRow, r, height, firstGroup,
                                perTile, ragged, out);
              });
        });
  }

private:
  OpBuilder &b;
  Location loc;
  /// Whether the input's bytes are flipped (see the constructor).
  bool flipInput;
  bool signedProducts;
  int64_t k, quads, outputZero;
  bool outputSigned, requantized;
  Value weights, correction, weightZero, multiplier, inputPadding;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value mul(Value value, int64_t factor) {
    return arith::MulIOp::create(b, loc, value, index(factor));
  }
  Value add(Value value, int64_t offset) {
    return arith::AddIOp::create(b, loc, value, index(offset));
  }
  VectorType lanes(Type element) { return VectorType::get({kLanes}, element); }
  VectorType bytes(int64_t count) {
    return VectorType::get({count}, b.getI8Type());
  }
  Value splatVector(VectorType type, Attribute value) {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(type, value));
  }
  Value zeros() { return splatVector(lanes(b.getI32Type()), b.getI32IntegerAttr(0)); }

  /// acc + the sums of the four products of unsigned `u` by signed `s`
  /// bytes in each lane, in the form tract-convert-vector-to-llvm selects
  /// a dot-product instruction for.
  Value dot(Value acc, Value u, Value s) {
    return byteDot(b, loc, acc, u, s, signedProducts);
  }

  /// Four bytes at `indices` of `source` (the last index the first byte),
  /// shifted as inputs when `isInput`, repeated in every lane.
  /// `inBounds`: the four bytes are known to be within the source (an
  /// input's are not, by default: past its last k they read as padding).
  Value broadcastQuad(Value source, ValueRange indices, bool isInput,
                      bool inBounds = false) {
    Value quad = vector::TransferReadOp::create(
        b, loc, bytes(kQuad), source, indices,
        isInput ? inputPadding
                : arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
        ArrayRef<bool>{!isInput || inBounds});
    if (isInput && flipInput)
      quad = flipSign(quad, kQuad);
    return repeatQuad(b, loc, quad, kLanes);
  }

  Value flipSign(Value value, int64_t count) {
    return arith::XOrIOp::create(
        b, loc, value, splatVector(bytes(count), b.getI8IntegerAttr(-128)));
  }

  Value ones() {
    return splatVector(bytes(kLanes * kQuad), b.getI8IntegerAttr(1));
  }

  /// An scf.for over quads [0, count) carrying `inits`.
  ValueRange loop(Value lower, Value upper, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(b, loc, lower, upper, index(1), inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    scf::YieldOp::create(
        b, loc, body(forOp.getInductionVar(), forOp.getRegionIterArgs()));
    return forOp.getResults();
  }

  /// The sums `acc` corrected (`corr`, and `zero` times `inputSums` when
  /// weight zero points are present) and written as the result's elements.
  Value finish(Value acc, Value corr, Value zero, Value inputSums,
               Value scale) {
    Value sums = arith::AddIOp::create(b, loc, acc, corr);
    if (zero)
      sums = arith::SubIOp::create(
          b, loc, sums, arith::MulIOp::create(b, loc, zero, inputSums));
    if (!requantized)
      return sums;
    Type f32 = b.getF32Type();
    Value x = arith::SIToFPOp::create(b, loc, lanes(f32), sums);
    x = math::RoundEvenOp::create(b, loc, arith::MulFOp::create(b, loc, x, scale));
    x = arith::AddFOp::create(
        b, loc, x, splatVector(lanes(f32), b.getF32FloatAttr(outputZero)));
    double lo = outputSigned ? -128 : 0, hi = outputSigned ? 127 : 255;
    x = arith::MaximumFOp::create(
        b, loc, x, splatVector(lanes(f32), b.getF32FloatAttr(lo)));
    x = arith::MinimumFOp::create(
        b, loc, x, splatVector(lanes(f32), b.getF32FloatAttr(hi)));
    Value integers =
        arith::FPToSIOp::create(b, loc, lanes(b.getI32Type()), x);
    return arith::TruncIOp::create(b, loc, lanes(b.getI8Type()), integers);
  }

  Value readTable(Value table, Value at, Type element) {
    Value padding = element.isF32()
                        ? Value(arith::ConstantOp::create(
                              b, loc, b.getF32FloatAttr(0)))
                        : Value(arith::ConstantOp::create(
                              b, loc, b.getI32IntegerAttr(0)));
    return vector::TransferReadOp::create(b, loc, lanes(element), table,
                                          ValueRange{at}, padding,
                                          ArrayRef<bool>{true});
  }

  Value broadcastEntry(Value table, Value at, Type element) {
    return vector::BroadcastOp::create(
        b, loc, lanes(element),
        tensor::ExtractOp::create(b, loc, table, ValueRange{at}));
  }

  /// Rows [r, r + height) of `input` by the tile's `count` groups from
  /// `firstGroup`, into the tile's slice `out`.
  Value rightTile(Value input, Value r, int64_t height, Value firstGroup,
                  int64_t count, ArrayRef<OpFoldResult> leading, bool ragged,
                  Value out) {
    SmallVector<Value> init(height * count + (weightZero ? height : 0),
                            zeros());
    ValueRange sums = loop(
        index(0), index(quads), init, [&](Value q, ValueRange carried) {
          SmallVector<Value> packed;
          for (int64_t g = 0; g < count; ++g)
            packed.push_back(vector::TransferReadOp::create(
                b, loc, bytes(kLanes * kQuad), weights,
                ValueRange{arith::AddIOp::create(b, loc, firstGroup, index(g)),
                           q, index(0)},
                arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
                ArrayRef<bool>{true}));
          SmallVector<Value> next(carried);
          Value kk = mul(q, kQuad);
          for (int64_t i = 0; i < height; ++i) {
            // Rows of k in fours are read whole: no masked loads.
            Value x = broadcastQuad(input, ValueRange{add(r, i), kk},
                                    /*isInput=*/true,
                                    /*inBounds=*/k % kQuad == 0);
            for (int64_t g = 0; g < count; ++g)
              next[i * count + g] = dot(next[i * count + g], x, packed[g]);
            if (weightZero)
              next[height * count + i] =
                  dot(next[height * count + i], x, ones());
          }
          return next;
        });
    for (int64_t i = 0; i < height; ++i) {
      SmallVector<Value> at = leadingIndices(add(r, i), leading);
      at.push_back(nullptr);
      for (int64_t g = 0; g < count; ++g) {
        Value channel =
            mul(arith::AddIOp::create(b, loc, firstGroup, index(g)), kLanes);
        Value value = finish(
            sums[i * count + g], readTable(correction, channel, b.getI32Type()),
            weightZero ? readTable(weightZero, channel, b.getI32Type())
                       : Value(),
            weightZero ? sums[height * count + i] : Value(),
            multiplier ? readTable(multiplier, channel, b.getF32Type())
                       : Value());
        at.back() = index(g * kLanes);
        out = vector::TransferWriteOp::create(b, loc, value, out, at,
                                              ArrayRef<bool>{!ragged})
                  .getResult();
      }
    }
    return out;
  }

  /// Output pixels [first + r, first + r + height) by the tile's `count`
  /// groups from `firstGroup`, into rows [r, r + height) of `out`.
  Value convTile(Value input, const ConvShape &conv, Value first, Value r,
                 int64_t height, Value firstGroup, int64_t count, bool ragged,
                 Value out) {
    // Where each pixel's window starts in the input.
    SmallVector<Value> image, top, left;
    Value pixels = index(conv.outH * conv.outW);
    for (int64_t i = 0; i < height; ++i) {
      Value pixel = arith::AddIOp::create(b, loc, first, add(r, i));
      image.push_back(arith::DivUIOp::create(b, loc, pixel, pixels));
      Value within = arith::RemUIOp::create(b, loc, pixel, pixels);
      top.push_back(mul(arith::DivUIOp::create(b, loc, within,
                                               index(conv.outW)),
                        conv.strides[0]));
      left.push_back(mul(arith::RemUIOp::create(b, loc, within,
                                                index(conv.outW)),
                         conv.strides[1] * conv.channels));
    }
    // The sums run over segments of k contiguous in the input (H, W * C
    // viewed as one axis): a kernel row (kw * C bytes) without dilation
    // across the columns, else one tap (C bytes).
    bool rowSegments = conv.dilations[1] == 1;
    int64_t segments = rowSegments ? conv.kh : conv.kh * conv.kw;
    int64_t segmentQuads =
        (rowSegments ? conv.kw * conv.channels : conv.channels) / kQuad;
    SmallVector<Value> init(height * count + (weightZero ? height : 0),
                            zeros());
    ValueRange sums = loop(
        index(0), index(segments), init,
        [&](Value segment, ValueRange carried) {
          Value ky = rowSegments ? segment
                                 : arith::DivUIOp::create(b, loc, segment,
                                                          index(conv.kw))
                                       .getResult();
          Value dy = mul(ky, conv.dilations[0]);
          Value dx = rowSegments
                         ? index(0)
                         : mul(arith::RemUIOp::create(b, loc, segment,
                                                      index(conv.kw)),
                               conv.dilations[1] * conv.channels);
          SmallVector<Value> ys, xs;
          for (int64_t i = 0; i < height; ++i) {
            ys.push_back(arith::AddIOp::create(b, loc, top[i], dy));
            xs.push_back(arith::AddIOp::create(b, loc, left[i], dx));
          }
          Value firstQuad = mul(segment, segmentQuads);
          ValueRange inner = loop(
              index(0), index(segmentQuads), carried,
              [&](Value q, ValueRange carried) {
                SmallVector<Value> packed;
                Value quad = arith::AddIOp::create(b, loc, firstQuad, q);
                for (int64_t g = 0; g < count; ++g)
                  packed.push_back(vector::TransferReadOp::create(
                      b, loc, bytes(kLanes * kQuad), weights,
                      ValueRange{arith::AddIOp::create(b, loc, firstGroup,
                                                       index(g)),
                                 quad, index(0)},
                      arith::ConstantOp::create(b, loc,
                                                b.getI8IntegerAttr(0)),
                      ArrayRef<bool>{true}));
                SmallVector<Value> next(carried);
                Value c = mul(q, kQuad);
                for (int64_t i = 0; i < height; ++i) {
                  Value x = broadcastQuad(
                      input,
                      ValueRange{image[i], ys[i],
                                 arith::AddIOp::create(b, loc, xs[i], c)},
                      /*isInput=*/true, /*inBounds=*/true);
                  for (int64_t g = 0; g < count; ++g)
                    next[i * count + g] =
                        dot(next[i * count + g], x, packed[g]);
                  if (weightZero)
                    next[height * count + i] =
                        dot(next[height * count + i], x, ones());
                }
                return next;
              });
          return SmallVector<Value>(inner);
        });
    for (int64_t i = 0; i < height; ++i)
      for (int64_t g = 0; g < count; ++g) {
        Value channel =
            mul(arith::AddIOp::create(b, loc, firstGroup, index(g)), kLanes);
        Value value = finish(
            sums[i * count + g], readTable(correction, channel, b.getI32Type()),
            weightZero ? readTable(weightZero, channel, b.getI32Type())
                       : Value(),
            weightZero ? sums[height * count + i] : Value(),
            multiplier ? readTable(multiplier, channel, b.getF32Type())
                       : Value());
        out = vector::TransferWriteOp::create(
                  b, loc, value, out, ValueRange{add(r, i), index(g * kLanes)},
                  ArrayRef<bool>{!ragged})
                  .getResult();
      }
    return out;
  }

  /// The indices along the leading dims of row `row` (row-major).
  SmallVector<Value> leadingIndices(Value row, ArrayRef<OpFoldResult> leading) {
    SmallVector<Value> indices(leading.size());
    for (int64_t axis = leading.size() - 1; axis >= 0; --axis) {
      if (axis == 0) {
        indices[axis] = row;
        break;
      }
      Value dim = getValueOrCreateConstantIndexOp(b, loc, leading[axis]);
      indices[axis] = arith::RemUIOp::create(b, loc, row, dim);
      row = arith::DivUIOp::create(b, loc, row, dim);
    }
    return indices;
  }

  /// Columns [first, first + 64) of image `image` of `input` (batch, k, n)
  /// as (quads, kMaxGroups, 64) bytes x': in each lane, four k of one
  /// column. With weight zero points, `columnSums` gets each group's sums
  /// of x' over k.
  Value packPanel(Value input, Value image, Value first,
                  SmallVectorImpl<Value> &columnSums) {
    Type i8 = b.getI8Type();
    Value panel = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{quads, kMaxGroups, kLanes * kQuad}, i8);
    SmallVector<Value> init{panel};
    if (weightZero)
      init.append(kMaxGroups, zeros());
    int64_t full = k / kQuad;
    auto step = [&](Value q, ValueRange carried, int64_t valid) {
      SmallVector<Value> next(carried);
      Value kk = mul(q, kQuad);
      for (int64_t g = 0; g < kMaxGroups; ++g) {
        Value column = add(first, g * kLanes);
        SmallVector<Value> rows;
        for (int64_t i = 0; i < kQuad; ++i) {
          if (i >= valid) {
            rows.push_back(splatVector(bytes(kLanes), b.getI8IntegerAttr(0)));
            continue;
          }
          Value row = vector::TransferReadOp::create(
              b, loc, bytes(kLanes), input, ValueRange{image, add(kk, i), column},
              inputPadding, ArrayRef<bool>{false});
          rows.push_back(flipInput ? flipSign(row, kLanes) : row);
        }
        Value quad = interleave(rows);
        next[0] = vector::TransferWriteOp::create(
                      b, loc, quad, next[0], ValueRange{q, index(g), index(0)},
                      ArrayRef<bool>{true})
                      .getResult();
        if (weightZero)
          next[1 + g] = dot(next[1 + g], quad, ones());
      }
      return next;
    };
    ValueRange packed = loop(index(0), index(full), init,
                             [&](Value q, ValueRange carried) {
                               return step(q, carried, kQuad);
                             });
    SmallVector<Value> result(packed);
    if (k % kQuad)
      result = step(index(full), result, k % kQuad);
    if (weightZero)
      columnSums.assign(result.begin() + 1, result.end());
    return result[0];
  }

  /// Four vectors of 16 bytes as 64: lane j holds byte j of each in order.
  Value interleave(ArrayRef<Value> rows) {
    SmallVector<int64_t> byteMask, wordMask;
    for (int64_t j = 0; j < kLanes; ++j) {
      byteMask.append({j, j + kLanes});
      wordMask.append({j, j + kLanes});
    }
    Value low = vector::ShuffleOp::create(b, loc, rows[0], rows[1], byteMask);
    Value high = vector::ShuffleOp::create(b, loc, rows[2], rows[3], byteMask);
    auto halves = VectorType::get({kLanes}, b.getI16Type());
    Value words = vector::ShuffleOp::create(
        b, loc, vector::BitCastOp::create(b, loc, halves, low),
        vector::BitCastOp::create(b, loc, halves, high), wordMask);
    return vector::BitCastOp::create(b, loc, bytes(kLanes * kQuad), words);
  }

  /// Channels [c, c + height) by the panel's columns, into `out` (1,
  /// channels, up to 64 columns).
  Value leftTile(Value panel, ArrayRef<Value> columnSums, Value c,
                 int64_t height, Value out) {
    SmallVector<Value> init(height * kMaxGroups, zeros());
    ValueRange sums = loop(
        index(0), index(quads), init, [&](Value q, ValueRange carried) {
          SmallVector<Value> columns;
          for (int64_t g = 0; g < kMaxGroups; ++g)
            columns.push_back(vector::TransferReadOp::create(
                b, loc, bytes(kLanes * kQuad), panel,
                ValueRange{q, index(g), index(0)},
                arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
                ArrayRef<bool>{true}));
          SmallVector<Value> next(carried);
          Value kk = mul(q, kQuad);
          for (int64_t i = 0; i < height; ++i) {
            Value w = broadcastQuad(weights, ValueRange{add(c, i), kk},
                                    /*isInput=*/false);
            for (int64_t g = 0; g < kMaxGroups; ++g)
              next[i * kMaxGroups + g] =
                  dot(next[i * kMaxGroups + g], columns[g], w);
          }
          return next;
        });
    for (int64_t i = 0; i < height; ++i) {
      Value channel = add(c, i);
      Value corr = broadcastEntry(correction, channel, b.getI32Type());
      Value zero = weightZero
                       ? broadcastEntry(weightZero, channel, b.getI32Type())
                       : Value();
      Value scale = multiplier
                        ? broadcastEntry(multiplier, channel, b.getF32Type())
                        : Value();
      for (int64_t g = 0; g < kMaxGroups; ++g) {
        Value value = finish(sums[i * kMaxGroups + g], corr, zero,
                             zero ? columnSums[g] : Value(), scale);
        out = vector::TransferWriteOp::create(
                  b, loc, value, out,
                  ValueRange{index(0), channel, index(g * kLanes)},
                  ArrayRef<bool>{false})
                  .getResult();
      }
    }
    return out;
  }
};

struct QuantMatmulLowering : public TractLoweringPattern<QuantMatmulOp> {
  QuantMatmulLowering(const TypeConverter &converter, MLIRContext *context,
                      bool signedProducts)
      : TractLoweringPattern(converter, context),
        signedProducts(signedProducts) {}

  bool signedProducts;

  LogicalResult lower(QuantMatmulOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DenseElementsAttr weights = constantOperand(op.getWeights());
    if (!weights)
      return op.emitOpError("needs constant weights");
    bool left = op.getWeightsLeft();
    auto weightsType = cast<RankedTensorType>(weights.getType());
    int64_t channels = weightsType.getDimSize(left ? 0 : 1);
    int64_t k = weightsType.getDimSize(left ? 1 : 0);
    bool inputSigned = !getElementTypeOrSelf(op.getInput()).isUnsignedInteger();
    // The products take unsigned input bytes (vpdpbusd) or signed ones
    // (sdot): the others are flipped (xor 0x80), their zero point moved
    // by 128 with them.
    bool flip = signedProducts ? !inputSigned : inputSigned;
    int64_t inputZero = int64_t(op.getInputZero()) +
                        (flip ? (inputSigned ? 128 : -128) : 0);
    std::vector<int8_t> w = shiftedWeights(weights);
    FailureOr<Prepared> prepared = prepare(
        op, left, k, k, channels, weights.getElementType().isUnsignedInteger(),
        [&](int64_t kk, int64_t c) -> int32_t {
          return left ? w[c * k + kk] : w[kk * channels + c];
        },
        inputZero);
    if (failed(prepared))
      return failure();
    Value init = emptyTensor(rewriter, loc, op.getType());
    if (!init)
      return failure();
    KernelEmitter emitter(rewriter, loc, flip, signedProducts, *prepared, k,
                          int64_t(op.getOutputZero()), op.getOutputSigned(),
                          op.getMultiplier().has_value());
    Value input = left ? adaptor.getRhs() : adaptor.getLhs();
    Shape inputShape = getShape(op.getInput());
    int64_t rank = inputShape.size();

    if (left) {
      if (rank == 2) {
        input = tensor::ExpandShapeOp::create(
            rewriter, loc,
            RankedTensorType::get(
                {1, cast<RankedTensorType>(input.getType()).getDimSize(0),
                 cast<RankedTensorType>(input.getType()).getDimSize(1)},
                rewriter.getI8Type()),
            input, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
        auto outType = cast<RankedTensorType>(init.getType());
        init = tensor::ExpandShapeOp::create(
            rewriter, loc,
            RankedTensorType::get(
                {1, outType.getDimSize(0), outType.getDimSize(1)},
                outType.getElementType()),
            init, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      }
      FailureOr<OpFoldResult> batch =
          size(rewriter, loc, rank == 3 ? inputShape[0] : TDim(1));
      FailureOr<OpFoldResult> n = size(rewriter, loc, inputShape.back());
      if (failed(batch) || failed(n))
        return failure();
      Value result = emitter.emitLeft(
          init, input, *batch, getValueOrCreateConstantIndexOp(rewriter, loc, *n),
          channels);
      if (rank == 2)
        result = tensor::CollapseShapeOp::create(
            rewriter, loc, result, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      rewriter.replaceOp(op, result);
      return success();
    }

    // The rows: every axis of the input but the last, as one.
    TDim rowCount(1);
    SmallVector<OpFoldResult> leading;
    for (const TDim &dim : ArrayRef<TDim>(inputShape).drop_back()) {
      rowCount = rowCount * dim;
      FailureOr<OpFoldResult> value = size(rewriter, loc, dim);
      if (failed(value))
        return failure();
      leading.push_back(*value);
    }
    FailureOr<OpFoldResult> rows = size(rewriter, loc, rowCount);
    if (failed(rows))
      return failure();
    if (rank == 1) {
      input = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({1, k}, rewriter.getI8Type()),
          input, ArrayRef<ReassociationIndices>{{0, 1}});
    } else if (rank > 2) {
      ReassociationIndices first;
      for (int64_t axis = 0; axis + 1 < rank; ++axis)
        first.push_back(axis);
      input = tensor::CollapseShapeOp::create(
          rewriter, loc, input,
          ArrayRef<ReassociationIndices>{first, {rank - 1}});
    }
    rewriter.replaceOp(
        op, emitter.emitRight(
                init, input,
                getValueOrCreateConstantIndexOp(rewriter, loc, *rows), leading,
                channels));
    return success();
  }
};

/// A channels-last tract.quant_conv: the weights on the right (kh, kw, C,
/// O laid out with k = (tap, C rounded up to 4)), the input's pixels read
/// in place at each tap (KernelEmitter::emitConv).
struct QuantConvLowering : public TractLoweringPattern<QuantConvOp> {
  QuantConvLowering(const TypeConverter &converter, MLIRContext *context,
                    bool signedProducts)
      : TractLoweringPattern(converter, context),
        signedProducts(signedProducts) {}

  bool signedProducts;

  LogicalResult lower(QuantConvOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!op.getChannelsLast())
      return op.emitOpError("channels first should have become patches");
    DenseElementsAttr weights = constantOperand(op.getWeights());
    if (!weights)
      return op.emitOpError("needs constant weights");
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto outputType = cast<RankedTensorType>(op.getType());
    if (!inputType.hasStaticShape() || !outputType.hasStaticShape())
      return op.emitOpError("needs static shapes");
    ArrayRef<int64_t> kernel =
        cast<RankedTensorType>(weights.getType()).getShape();
    ConvShape conv{kernel[2], kernel[0], kernel[1], outputType.getDimSize(1),
                   outputType.getDimSize(2), {op.getStrides()[0],
                   op.getStrides()[1]}, {op.getDilations()[0],
                   op.getDilations()[1]}};
    int64_t channels = kernel[3];
    if (conv.channels % kQuad)
      return op.emitOpError("needs input channels in fours "
                            "(tract-channels-last pads them)");
    int64_t c4 = conv.channels;
    int64_t taps = conv.kh * conv.kw;
    bool inputSigned = !inputType.getElementType().isUnsignedInteger();
    bool flip = signedProducts ? !inputSigned : inputSigned;
    int64_t inputZero = int64_t(op.getInputZero()) +
                        (flip ? (inputSigned ? 128 : -128) : 0);
    std::vector<int8_t> w = shiftedWeights(weights);
    FailureOr<Prepared> prepared = prepare(
        op, /*left=*/false, taps * c4, taps * conv.channels, channels,
        weights.getElementType().isUnsignedInteger(),
        [&](int64_t kk, int64_t o) -> int32_t {
          int64_t tap = kk / c4, c = kk % c4;
          return c < conv.channels ? w[(tap * conv.channels + c) * channels + o]
                                   : 0;
        },
        inputZero);
    if (failed(prepared))
      return failure();
    KernelEmitter emitter(rewriter, loc, flip, signedProducts, *prepared,
                          taps * c4, int64_t(op.getOutputZero()),
                          op.getOutputSigned(), op.getMultiplier().has_value());
    Value init = emptyTensor(rewriter, loc, op.getType());
    if (!init)
      return failure();
    SmallVector<ReassociationIndices> pixels{{0, 1, 2}, {3}};
    init = tensor::CollapseShapeOp::create(rewriter, loc, init, pixels);
    int64_t rows = outputType.getDimSize(0) * conv.outH * conv.outW;
    // Each image as rows of W * C bytes.
    Value input = tensor::CollapseShapeOp::create(
        rewriter, loc, adaptor.getInput(),
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    Value result = emitter.emitConv(init, input, rows, conv, channels);
    rewriter.replaceOp(op, tensor::ExpandShapeOp::create(
                               rewriter, loc,
                               getTypeConverter()->convertType(op.getType()),
                               result, pixels));
    return success();
  }
};

/// A channels-first tract.quant_conv (tract-channels-last left it so, or
/// did not run) as tract.quant_matmul with the kernel on the left of the
/// input's patches, (C * kh * kw, OH * OW) per image: one slice of the
/// padded input per tap, concatenated.
LogicalResult expandToPatches(QuantConvOp op) {
  DenseElementsAttr kernel = constantOperand(op.getWeights());
  if (!kernel)
    return op.emitOpError("needs constant weights");
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  ArrayRef<int64_t> kernelShape =
      cast<RankedTensorType>(kernel.getType()).getShape();
  int64_t out = kernelShape[0], c = kernelShape[1], kh = kernelShape[2],
          kw = kernelShape[3];
  Shape result = getShape(op.getType());
  std::optional<int64_t> outSizes[2] = {result[2].getConstant(),
                                        result[3].getConstant()};
  if (!outSizes[0] || !outSizes[1])
    return op.emitOpError("needs known spatial dims");
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  SmallVector<Value> taps;
  for (int64_t ky = 0; ky < kh; ++ky)
    for (int64_t kx = 0; kx < kw; ++kx) {
      Value tap = op.getInput();
      int64_t offsets[2] = {ky * dilations[0], kx * dilations[1]};
      for (int64_t i = 0; i < 2; ++i) {
        int64_t start = offsets[i];
        int64_t end = start + (*outSizes[i] - 1) * strides[i] + 1;
        if (start != 0 || TDim(end) != getShape(tap)[2 + i])
          tap = SliceOp::create(b, loc, tap, uint64_t(2 + i),
                                DimAttr::get(context, TDim(start)),
                                DimAttr::get(context, TDim(end)));
        if (strides[i] != 1)
          tap = DownsampleOp::create(b, loc, tap, uint64_t(2 + i), strides[i],
                                     uint64_t(0));
      }
      taps.push_back(kh * kw == 1 ? tap
                                  : AddAxisOp::create(b, loc, tap, uint64_t(2))
                                        .getResult());
    }
  Value patches = taps.size() == 1
                      ? taps.front()
                      : ConcatOp::create(b, loc, taps, uint64_t(2)).getResult();
  // (B, C, taps, OH, OW) -> (B, C * taps, OH * OW).
  int64_t spatialAt = taps.size() == 1 ? 2 : 3;
  patches = ReshapeOp::create(
      b, loc, patches, uint64_t(spatialAt), uint64_t(2),
      ShapeAttr::get(context, {TDim(*outSizes[0] * *outSizes[1])}));
  if (taps.size() > 1)
    patches = ReshapeOp::create(b, loc, patches, uint64_t(1), uint64_t(2),
                                ShapeAttr::get(context, {TDim(c * kh * kw)}));
  DenseElementsAttr matrix = kernel.reshape(
      RankedTensorType::get({out, c * kh * kw}, kernel.getElementType()));
  Value weights = ConstOp::create(b, loc, matrix.getType(), matrix);
  Value product = QuantMatmulOp::create(
      b, loc, weights, patches, op.getBias(), b.getUnitAttr(),
      op.getInputZeroAttr(), op.getWeightZeroAttr(), op.getMultiplierAttr(),
      op.getOutputZeroAttr(), op.getOutputSignedAttr());
  Value y = ReshapeOp::create(
      b, loc, product, uint64_t(2), uint64_t(1),
      ShapeAttr::get(context, {TDim(*outSizes[0]), TDim(*outSizes[1])}));
  op.getResult().replaceAllUsesWith(y);
  op->erase();
  return success();
}

/// tract.quant_depthwise as f32 lanes along the output's columns, one
/// channel per iteration of an scf.forall: blocks of kDepthwiseRows output
/// rows share each input row they read, loaded and widened once per tap
/// column. The sums of byte products (and the constant correction) are
/// integers below 2^24 (the import checks it), so f32 holds them exactly.
constexpr int64_t kDepthwiseRows = 4;

struct QuantDepthwiseLowering : public TractLoweringPattern<QuantDepthwiseOp> {
  using TractLoweringPattern::TractLoweringPattern;

  LogicalResult lower(QuantDepthwiseOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DenseElementsAttr weights = constantOperand(op.getWeights());
    if (!weights)
      return op.emitOpError("needs constant weights");
    auto weightsType = cast<RankedTensorType>(weights.getType());
    int64_t channels = weightsType.getDimSize(0);
    int64_t kh = weightsType.getDimSize(1), kw = weightsType.getDimSize(2);
    int64_t taps = kh * kw;
    bool weightsUnsigned = weights.getElementType().isUnsignedInteger();
    ArrayRef<char> raw = weights.getRawData();
    ArrayRef<int64_t> zeros = op.getWeightZero();
    FailureOr<std::vector<int32_t>> biasValues = readBias(op, channels);
    if (failed(biasValues))
      return failure();
    const std::vector<int32_t> &bias = *biasValues;
    // (w - weight_zero) per channel and tap, and bias - x_zero * their sum.
    std::vector<float> taps32(channels * taps), correction(channels),
        scales(channels, 1.0f);
    for (int64_t c = 0; c < channels; ++c) {
      int64_t zero = zeros.empty() ? 0 : zeros[zeros.size() == 1 ? 0 : c];
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        uint8_t byte = uint8_t(raw[weights.isSplat() ? 0 : c * taps + t]);
        int64_t value = weightsUnsigned ? int64_t(byte) : int64_t(int8_t(byte));
        taps32[c * taps + t] = float(value - zero);
        sum += value - zero;
      }
      correction[c] = float(bias[c] - int64_t(op.getInputZero()) * sum);
      if (std::optional<ArrayRef<float>> multiplier = op.getMultiplier())
        scales[c] = (*multiplier)[multiplier->size() == 1 ? 0 : c];
    }
    Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type(),
         i8 = rewriter.getI8Type();
    auto table = [&](ArrayRef<int64_t> shape, ArrayRef<float> values) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(RankedTensorType::get(shape, f32), values));
    };
    Value tapTable = table({channels, taps}, taps32);
    Value correctionTable = table({channels}, correction);
    Value scaleTable = table({channels}, scales);

    Value init = emptyTensor(rewriter, loc, op.getType());
    if (!init)
      return failure();
    auto outType = cast<RankedTensorType>(init.getType());
    bool last = op.getChannelsLast();
    int64_t outH = outType.getDimSize(last ? 1 : 2),
            outW = outType.getDimSize(last ? 2 : 3);
    FailureOr<OpFoldResult> batch = size(rewriter, loc, getShape(op.getInput())[0]);
    if (failed(batch))
      return failure();
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    bool inputSigned = !getElementTypeOrSelf(op.getInput()).isUnsignedInteger();
    bool requantized = op.getMultiplier().has_value();
    bool outputSigned = op.getOutputSigned();
    double outputZero = double(int64_t(op.getOutputZero()));
    Value input = adaptor.getInput();
    OpBuilder &b = rewriter;
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto lanes = [&](Type element) {
      return VectorType::get({kLanes}, element);
    };
    auto splat = [&](Type element, Attribute value) -> Value {
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(lanes(element), value));
    };
    auto finish = [&](Value acc, Value scale) -> Value {
      if (!requantized)
        return arith::FPToSIOp::create(b, loc, lanes(i32), acc);
      Value x = arith::MulFOp::create(b, loc, acc, scale);
      x = math::RoundEvenOp::create(b, loc, x);
      x = arith::AddFOp::create(b, loc, x,
                                splat(f32, b.getF32FloatAttr(outputZero)));
      double lo = outputSigned ? -128 : 0, hi = outputSigned ? 127 : 255;
      x = arith::MaximumFOp::create(b, loc, x,
                                    splat(f32, b.getF32FloatAttr(lo)));
      x = arith::MinimumFOp::create(b, loc, x,
                                    splat(f32, b.getF32FloatAttr(hi)));
      return arith::TruncIOp::create(
          b, loc, lanes(i8),
          arith::FPToSIOp::create(b, loc, lanes(i32), x));
    };
    if (last) {
      // The taps as (taps, channels): one vector of channels per tap.
      std::vector<float> byTap(taps * channels);
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t t = 0; t < taps; ++t)
          byTap[t * channels + c] = taps32[c * taps + t];
      rewriter.replaceOp(
          op, lowerLast(b, loc, input, init, table({taps, channels}, byTap),
                        correctionTable, scaleTable, *batch, outH, outW,
                        channels, kh, kw, strides, dilations, inputSigned,
                        finish));
      return success();
    }
    int64_t columnVectors = llvm::divideCeil(outW, kLanes);

    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      offsets.assign({OpFoldResult(ivs[0]), OpFoldResult(ivs[1]),
                      b.getIndexAttr(0), b.getIndexAttr(0)});
      sizes.assign({b.getIndexAttr(1), b.getIndexAttr(1),
                    b.getIndexAttr(outH), b.getIndexAttr(outW)});
    };
    Value result = forallOverSlices(
        b, loc, {*batch, b.getIndexAttr(channels)}, init, where,
        [&](ValueRange ivs, Value slice) {
          Value image = ivs[0], channel = ivs[1];
          SmallVector<Value> tapVectors;
          for (int64_t t = 0; t < taps; ++t)
            tapVectors.push_back(vector::BroadcastOp::create(
                b, loc, lanes(f32),
                tensor::ExtractOp::create(b, loc, tapTable,
                                          ValueRange{channel, index(t)})));
          Value corr = vector::BroadcastOp::create(
              b, loc, lanes(f32),
              tensor::ExtractOp::create(b, loc, correctionTable,
                                        ValueRange{channel}));
          Value scale = vector::BroadcastOp::create(
              b, loc, lanes(f32),
              tensor::ExtractOp::create(b, loc, scaleTable,
                                        ValueRange{channel}));
          // A row of the input from column `x` on, every stride-th byte,
          // widened to f32.
          auto load = [&](Value row, Value x) -> Value {
            int64_t width = kLanes * strides[1];
            Value bytes = vector::TransferReadOp::create(
                b, loc, VectorType::get({width}, i8), input,
                ValueRange{image, channel, row, x},
                arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
                ArrayRef<bool>{false});
            if (strides[1] != 1) {
              SmallVector<int64_t> mask;
              for (int64_t i = 0; i < kLanes; ++i)
                mask.push_back(i * strides[1]);
              bytes = vector::ShuffleOp::create(b, loc, bytes, bytes, mask);
            }
            Value wide =
                inputSigned
                    ? Value(arith::ExtSIOp::create(b, loc, lanes(i32), bytes))
                    : Value(arith::ExtUIOp::create(b, loc, lanes(i32), bytes));
            return arith::SIToFPOp::create(b, loc, lanes(f32), wide);
          };
          auto rows = [&](Value oy, int64_t height, Value out) -> Value {
            auto columns = scf::ForOp::create(b, loc, index(0),
                                              index(columnVectors), index(1),
                                              ValueRange{out});
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(columns.getBody());
            Value column = columns.getInductionVar();
            Value x0 = arith::MulIOp::create(b, loc, column,
                                             index(kLanes * strides[1]));
            Value y0 = arith::MulIOp::create(b, loc, oy, index(strides[0]));
            SmallVector<Value> acc(height, corr);
            int64_t span = (height - 1) * strides[0] + (kh - 1) * dilations[0];
            for (int64_t r = 0; r <= span; ++r) {
              // The output rows this input row feeds, and through which tap row.
              SmallVector<std::pair<int64_t, int64_t>> uses;
              for (int64_t j = 0; j < height; ++j) {
                int64_t offset = r - j * strides[0];
                if (offset >= 0 && offset % dilations[0] == 0 &&
                    offset / dilations[0] < kh)
                  uses.push_back({j, offset / dilations[0]});
              }
              if (uses.empty())
                continue;
              Value row = arith::AddIOp::create(b, loc, y0, index(r));
              for (int64_t kx = 0; kx < kw; ++kx) {
                Value x = arith::AddIOp::create(b, loc, x0,
                                                index(kx * dilations[1]));
                Value values = load(row, x);
                for (auto [j, ky] : uses)
                  acc[j] = vector::FMAOp::create(
                      b, loc, values, tapVectors[ky * kw + kx], acc[j]);
              }
            }
            Value written = columns.getRegionIterArgs().front();
            Value xOut = arith::MulIOp::create(b, loc, column, index(kLanes));
            for (int64_t j = 0; j < height; ++j)
              written = vector::TransferWriteOp::create(
                            b, loc, finish(acc[j], scale), written,
                            ValueRange{index(0), index(0),
                                       arith::AddIOp::create(b, loc, oy,
                                                             index(j)),
                                       xOut},
                            ArrayRef<bool>{outW % kLanes == 0})
                            .getResult();
            scf::YieldOp::create(b, loc, written);
            return columns.getResult(0);
          };
          return forRowBlocks(b, loc, index(outH), kDepthwiseRows, slice,
                              rows);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Channels last: the lanes along the channels. Each iteration of an
  /// scf.forall computes one output row of one image for 16 channels, in
  /// blocks of kLastPixels output pixels whose taps read each input pixel
  /// once (a 3x3 kernel of stride 1: 10 loads for 8 pixels, not 24).
  static Value lowerLast(OpBuilder &b, Location loc, Value input, Value init,
                         Value tapTable, Value correctionTable,
                         Value scaleTable, OpFoldResult batch, int64_t outH,
                         int64_t outW, int64_t channels, int64_t kh,
                         int64_t kw, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dilations, bool inputSigned,
                         function_ref<Value(Value, Value)> finish) {
    constexpr int64_t kLastPixels = 8;
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto lanes = [&](Type element) {
      return VectorType::get({kLanes}, element);
    };
    int64_t groups = llvm::divideCeil(channels, kLanes);
    bool exact = channels % kLanes == 0;
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      Value first = arith::MulIOp::create(b, loc, ivs[2], index(kLanes));
      offsets.assign({OpFoldResult(ivs[0]), OpFoldResult(ivs[1]),
                      b.getIndexAttr(0), OpFoldResult(first)});
      sizes.assign({b.getIndexAttr(1), b.getIndexAttr(1),
                    b.getIndexAttr(outW),
                    exact ? OpFoldResult(b.getIndexAttr(kLanes))
                          : OpFoldResult(arith::MinSIOp::create(
                                             b, loc, index(kLanes),
                                             arith::SubIOp::create(
                                                 b, loc, index(channels),
                                                 first))
                                             .getResult())});
    };
    return forallOverSlices(
        b, loc, {batch, b.getIndexAttr(outH), b.getIndexAttr(groups)}, init,
        where, [&](ValueRange ivs, Value slice) {
          Value image = ivs[0], oy = ivs[1];
          Value c0 = arith::MulIOp::create(b, loc, ivs[2], index(kLanes));
          auto readTable = [&](Value table, ValueRange at) -> Value {
            return vector::TransferReadOp::create(
                b, loc, lanes(f32), table, at,
                arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
                ArrayRef<bool>{exact});
          };
          SmallVector<Value> tapVectors;
          for (int64_t t = 0; t < kh * kw; ++t)
            tapVectors.push_back(readTable(tapTable, {index(t), c0}));
          Value corr = readTable(correctionTable, {c0});
          Value scale = readTable(scaleTable, {c0});
          Value y0 = arith::MulIOp::create(b, loc, oy, index(strides[0]));
          return forRowBlocks(
              b, loc, index(outW), kLastPixels, slice,
              [&](Value ox, int64_t count, Value out) -> Value {
                Value x0 = arith::MulIOp::create(b, loc, ox, index(strides[1]));
                SmallVector<Value> acc(count, corr);
                for (int64_t ky = 0; ky < kh; ++ky) {
                  Value row =
                      arith::AddIOp::create(b, loc, y0, index(ky * dilations[0]));
                  // The input pixels of this kernel row, by their offset
                  // from x0, each loaded and widened once.
                  DenseMap<int64_t, Value> pixels;
                  auto pixel = [&](int64_t offset) -> Value {
                    Value &value = pixels[offset];
                    if (value)
                      return value;
                    Value bytes = vector::TransferReadOp::create(
                        b, loc, lanes(i8), input,
                        ValueRange{image, row,
                                   arith::AddIOp::create(b, loc, x0,
                                                         index(offset)),
                                   c0},
                        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
                        ArrayRef<bool>{exact});
                    Value wide =
                        inputSigned
                            ? Value(arith::ExtSIOp::create(b, loc, lanes(i32),
                                                           bytes))
                            : Value(arith::ExtUIOp::create(b, loc, lanes(i32),
                                                           bytes));
                    return value =
                               arith::SIToFPOp::create(b, loc, lanes(f32), wide);
                  };
                  for (int64_t p = 0; p < count; ++p)
                    for (int64_t kx = 0; kx < kw; ++kx)
                      acc[p] = vector::FMAOp::create(
                          b, loc,
                          pixel(p * strides[1] + kx * dilations[1]),
                          tapVectors[ky * kw + kx], acc[p]);
                }
                for (int64_t p = 0; p < count; ++p)
                  out = vector::TransferWriteOp::create(
                            b, loc, finish(acc[p], scale), out,
                            ValueRange{index(0), index(0),
                                       arith::AddIOp::create(b, loc, ox,
                                                             index(p)),
                                       index(0)},
                            ArrayRef<bool>{exact})
                            .getResult();
                return out;
              });
        });
  }
};

struct TractCpuQuantKernelsPass
    : public tract::impl::TractCpuQuantKernelsBase<TractCpuQuantKernelsPass> {
  using TractCpuQuantKernelsBase::TractCpuQuantKernelsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() ||
        !func.walk([](Operation *op) {
              return isa<QuantMatmulOp, QuantConvOp, QuantDepthwiseOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            }).wasInterrupted())
      return;
    SmallVector<QuantConvOp> channelsFirst;
    func.walk([&](QuantConvOp op) {
      if (!op.getChannelsLast())
        channelsFirst.push_back(op);
    });
    for (QuantConvOp op : channelsFirst)
      if (failed(expandToPatches(op)))
        return signalPassFailure();
    // No other lowering: a product left is an error.
    if (failed(lowerToKernels(
            func,
            [&](const TypeConverter &converter, RewritePatternSet &patterns) {
              patterns.add<QuantMatmulLowering>(converter, &getContext(),
                                                signedProducts);
              patterns.add<QuantConvLowering>(converter, &getContext(),
                                              signedProducts);
              patterns.add<QuantDepthwiseLowering>(converter, &getContext());
            },
            [](ConversionTarget &target) {
              target.addIllegalOp<QuantMatmulOp, QuantConvOp,
                                  QuantDepthwiseOp>();
            })))
      return signalPassFailure();
  }
};

} // namespace
