//===- BlockQuantKernels.cpp - products with Q4_0 or f16 weights ----------===//
//
// tract.block_quant_matmul becomes one loop nest that decodes the weights
// in its inner loop: they stay 4.5 bits (Q4_0) or 16 bits (f16) each in
// memory, which is what a token of a language model's decoding reads.
//
// At compile time the blocks are laid out for vectors along n: groups of
// `kLanes` columns, and tiles of up to `kMaxGroups` groups. Per tile and
// block of 32 k come the f32 scales of its columns, and per pair of k and
// group one byte per column holding both codes (k in the low nibble, k + 1
// in the high one; they are one byte of tract's block already), so that a
// tile's weights, and the tiles one after the other, are each one
// sequential stream: a decoding step reads the matrix from memory once, in
// order, as the hardware prefetchers like it. A step of the inner loop
// reads a group's bytes as one vector, widens them, splits the nibbles,
// and multiply-adds the two decoded vectors with each row's two inputs.
// Tiles of `kRows` rows by a tile's groups keep their sums in registers;
// the tiles are shared among threads (an scf.forall).
//
// f16 weights are laid out the same way, (tiles, k, groups of the tile,
// lanes): a step reads one vector of halves per group and widens it to f32
// for the multiply-adds, for a prompt as for a decoding step.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/KernelLowering.h"
#include "conversion/LoweringUtils.h"

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/RegionUtils.h"

#include <algorithm>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUBLOCKQUANTKERNELS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Columns per group: one vector.
constexpr int64_t kLanes = 16;
/// Rows of a tile (the rows left over go one by one).
constexpr int64_t kRows = 4;
/// Most groups per tile: kRows x kGroups sums in registers.
constexpr int64_t kMaxGroups = 4;
/// From this many rows on (a prompt), a tile's weights are decoded once
/// into an f32 panel, which tiles of kPanelRows rows then read.
constexpr int64_t kDecodedRows = 16;
constexpr int64_t kPanelRows = 6;
constexpr int64_t kPairs = kQ4_0BlockValues / 2;


/// The groups of a tile: the most, up to kMaxGroups, that divide `groups`.
int64_t groupsPerTile(int64_t groups) {
  int64_t perTile = kMaxGroups;
  while (groups % perTile)
    --perTile;
  return perTile;
}

/// The weights as the kernel reads them: codes (tiles, blocks, pairs,
/// groups of the tile, lanes) as bytes and scales (tiles, blocks, groups
/// of the tile, lanes) as f32.
struct KernelWeights {
  DenseElementsAttr codes, scales;
};

KernelWeights layOut(MLIRContext *context, ArrayRef<char> raw, int64_t n,
                     int64_t blocks) {
  int64_t groups = n / kLanes, perTile = groupsPerTile(groups);
  int64_t tiles = groups / perTile;
  std::vector<uint8_t> codes(groups * blocks * kPairs * kLanes);
  std::vector<float> scales(groups * blocks * kLanes);
  const auto *data = reinterpret_cast<const uint8_t *>(raw.data());
  for (int64_t column = 0; column < n; ++column) {
    int64_t group = column / kLanes, lane = column % kLanes;
    int64_t tile = group / perTile, g = group % perTile;
    for (int64_t block = 0; block < blocks; ++block) {
      const uint8_t *in = data + (column * blocks + block) * kQ4_0BlockBytes;
      int64_t at = tile * blocks + block;
      scales[(at * perTile + g) * kLanes + lane] = q4_0Scale(in);
      for (int64_t pair = 0; pair < kPairs; ++pair)
        codes[((at * kPairs + pair) * perTile + g) * kLanes + lane] =
            in[2 + pair];
    }
  }
  auto codeType =
      RankedTensorType::get({tiles, blocks, kPairs, perTile, kLanes},
                            IntegerType::get(context, 8));
  auto scaleType = RankedTensorType::get({tiles, blocks, perTile, kLanes},
                                         Float32Type::get(context));
  return {
      DenseElementsAttr::getFromRawBuffer(
          codeType, ArrayRef<char>(reinterpret_cast<const char *>(codes.data()),
                                   codes.size())),
      DenseElementsAttr::get(scaleType, ArrayRef<float>(scales))};
}

/// f16 weights n x k as the kernel reads them: (tiles, k, groups of the
/// tile, lanes).
DenseElementsAttr layOutHalves(DenseElementsAttr weights) {
  auto type = cast<RankedTensorType>(weights.getType());
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  int64_t groups = n / kLanes, perTile = groupsPerTile(groups);
  std::vector<uint16_t> halves(n * k);
  int64_t column = 0, at = 0;
  for (const APFloat &value : weights.getValues<APFloat>()) {
    uint16_t bits = uint16_t(value.bitcastToAPInt().getZExtValue());
    int64_t group = column / kLanes;
    halves[(((group / perTile) * k + at) * perTile + group % perTile) *
               kLanes +
           column % kLanes] = bits;
    if (++at == k) {
      at = 0;
      ++column;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get({groups / perTile, k, perTile, kLanes},
                            type.getElementType()),
      ArrayRef<char>(reinterpret_cast<const char *>(halves.data()),
                     halves.size() * sizeof(uint16_t)));
}

class KernelEmitter {
public:
  /// `input` is (rows, k); the result has the input's original leading
  /// dims, `leading`, then n. The weights are Q4_0 `codes` and `scales`
  /// (layOut) or f16 `halves` (layOutHalves), the others null.
  /// `registerFile` is the f32 values the target's vector registers hold.
  KernelEmitter(OpBuilder &b, Location loc, Value input, Value codes,
                Value scales, Value halves, int64_t k, int64_t groups,
                ArrayRef<OpFoldResult> leading, int64_t registerFile)
      : b(b), loc(loc), input(input), codes(codes), scales(scales),
        halves(halves), kValues(k), blocks(k / kQ4_0BlockValues),
        groups(groups), leading(leading),
        vectors(std::max<int64_t>(1, registerFile / kLanes)) {}

  /// The product written into `init`: an scf.forall over tiles of groups,
  /// each walking all rows. (It is written with the input's leading dims
  /// rather than as rows then reshaped: expanding a dynamic dim into
  /// several dynamic ones breaks expand-strided-metadata in MLIR 22.)
  Value emit(Value init, Value rows) {
    int64_t perTile = groupsPerTile(groups);
    int64_t width = perTile * kLanes;
    auto where = [&](ValueRange ivs, SmallVectorImpl<OpFoldResult> &offsets,
                     SmallVectorImpl<OpFoldResult> &sizes) {
      offsets.assign(leading.size(), b.getIndexAttr(0));
      offsets.push_back(
          arith::MulIOp::create(b, loc, ivs[0], index(width)).getResult());
      sizes.assign(leading.begin(), leading.end());
      sizes.push_back(b.getIndexAttr(width));
    };
    return forallOverSlices(
        b, loc, {b.getIndexAttr(groups / perTile)}, init, where,
        [&](ValueRange ivs, Value slice) {
          Value tile = ivs[0];
          if (halves) {
            auto widened = [&](Value k, int64_t g) -> Value {
              Value read = vector::TransferReadOp::create(
                  b, loc, vectorOf(b.getF16Type()), halves,
                  ValueRange{tile, k, index(g), index(0)},
                  arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0)),
                  ArrayRef<bool>{true});
              return arith::ExtFOp::create(b, loc, vectorOf(b.getF32Type()),
                                           read);
            };
            return panelTiles(rows, slice, widened, perTile);
          }
          // Many rows (a prompt): the tile's columns decoded once, then
          // multiplied as f32; few (a decoding step): decoded on the way.
          Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                             rows, index(kDecodedRows));
          auto choice = scf::IfOp::create(
              b, loc, many,
              [&](OpBuilder &, Location) {
                Value panel = decodePanel(tile, perTile);
                auto decoded = [&](Value k, int64_t g) -> Value {
                  return vector::TransferReadOp::create(
                      b, loc, vectorOf(b.getF32Type()), panel,
                      ValueRange{k, index(g * kLanes)},
                      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
                      ArrayRef<bool>{true});
                };
                scf::YieldOp::create(b, loc,
                                     panelTiles(rows, slice, decoded, perTile));
              },
              [&](OpBuilder &, Location) {
                Value result = forRowBlocks(
                    b, loc, rows, kRows, slice,
                    [&](Value r, int64_t height, Value out) {
                      return tileAt(r, height, tile, perTile, out);
                    });
                scf::YieldOp::create(b, loc, result);
              });
          return choice.getResult(0);
        });
  }

private:
  OpBuilder &b;
  Location loc;
  Value input, codes, scales, halves;
  int64_t kValues, blocks, groups;
  SmallVector<OpFoldResult> leading;
  /// The vectors of kLanes f32 the registers hold.
  int64_t vectors;

  /// All rows of the tile's slice by its `count` groups, from weights
  /// already in f32 (`weightsAt(k, g)`): blocks of kPanelRows rows (then
  /// rows one by one), each by as many groups at a time as the registers
  /// hold the sums of.
  Value panelTiles(Value rows, Value slice,
                   function_ref<Value(Value, int64_t)> weightsAt,
                   int64_t count) {
    return forRowBlocks(
        b, loc, rows, kPanelRows, slice,
        [&](Value r, int64_t height, Value tile) {
          // height sums per group, plus a weight and an input in flight.
          int64_t step = std::clamp<int64_t>((vectors - 2) / height, 1, count);
          while (count % step)
            --step;
          for (int64_t first = 0; first < count; first += step) {
            auto shifted = [&](Value k, int64_t g) {
              return weightsAt(k, first + g);
            };
            tile = panelTileAt(r, height, shifted, first, step, tile);
          }
          return tile;
        });
  }

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  VectorType vectorOf(Type element) {
    return VectorType::get({kLanes}, element);
  }
  Value vectorConstant(Type element, Attribute value) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorOf(element), value));
  }

  /// The weights of the `count` groups of `tile`, decoded: a (k, count *
  /// kLanes) f32 tensor.
  Value decodePanel(Value tile, int64_t count) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    Value panel = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{kValues, count * kLanes}, f32);
    Value mask = vectorConstant(i32, b.getI32IntegerAttr(0x0f));
    Value four = vectorConstant(i32, b.getI32IntegerAttr(4));
    Value eight = vectorConstant(i32, b.getI32IntegerAttr(8));
    return loop(blocks, panel, [&](Value block, ValueRange carried) {
      return llvm::to_vector(
          loop(kPairs, carried, [&](Value pair, ValueRange carried) {
            Value out = carried.front();
            Value k = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, block, index(kQ4_0BlockValues)),
                arith::MulIOp::create(b, loc, pair, index(2)));
            Value kNext = arith::AddIOp::create(b, loc, k, index(1));
            for (int64_t g = 0; g < count; ++g) {
              Value scale = vector::TransferReadOp::create(
                  b, loc, vectorOf(f32), scales,
                  ValueRange{tile, block, index(g), index(0)},
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
                  ArrayRef<bool>{true});
              Value bytes = vector::TransferReadOp::create(
                  b, loc, vectorOf(i8), codes,
                  ValueRange{tile, block, pair, index(g), index(0)},
                  arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
                  ArrayRef<bool>{true});
              Value wide = arith::ExtUIOp::create(b, loc, vectorOf(i32), bytes);
              auto decode = [&](Value code) -> Value {
                Value centered = arith::SubIOp::create(b, loc, code, eight);
                Value value =
                    arith::SIToFPOp::create(b, loc, vectorOf(f32), centered);
                return arith::MulFOp::create(b, loc, value, scale);
              };
              Value column = index(g * kLanes);
              out =
                  vector::TransferWriteOp::create(
                      b, loc, decode(arith::AndIOp::create(b, loc, wide, mask)),
                      out, ValueRange{k, column}, ArrayRef<bool>{true})
                      .getResult();
              out = vector::TransferWriteOp::create(
                        b, loc,
                        decode(arith::ShRUIOp::create(b, loc, wide, four)), out,
                        ValueRange{kNext, column}, ArrayRef<bool>{true})
                        .getResult();
            }
            return SmallVector<Value>{out};
          }));
    })[0];
  }

  /// An scf.for over [0, count) carrying `inits`: `body(iv, carried)`
  /// builds an iteration and returns what it yields.
  ValueRange loop(int64_t count, ValueRange inits,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp =
        scf::ForOp::create(b, loc, index(0), index(count), index(1), inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forOp.getBody());
    scf::YieldOp::create(
        b, loc, body(forOp.getInductionVar(), forOp.getRegionIterArgs()));
    return forOp.getResults();
  }

  /// Rows [r, r + rows) of the tile's slice `out` from weights already
  /// in f32, `weightsAt(k, g)` the vector of group g at k (of `count`):
  /// per k, those vectors times each row's input.
  Value panelTileAt(Value r, int64_t rows,
                    function_ref<Value(Value, int64_t)> weightsAt,
                    int64_t first, int64_t count, Value out) {
    Type f32 = b.getF32Type();
    SmallVector<Value> init(rows * count,
                            vectorConstant(f32, b.getF32FloatAttr(0)));
    ValueRange sums = loop(kValues, init, [&](Value k, ValueRange carried) {
      SmallVector<Value> weights;
      for (int64_t g = 0; g < count; ++g)
        weights.push_back(weightsAt(k, g));
      SmallVector<Value> next(carried);
      for (int64_t i = 0; i < rows; ++i) {
        Value row = arith::AddIOp::create(b, loc, r, index(i));
        Value x = vector::BroadcastOp::create(
            b, loc, vectorOf(f32),
            tensor::ExtractOp::create(b, loc, input, ValueRange{row, k}));
        for (int64_t g = 0; g < count; ++g)
          next[i * count + g] =
              vector::FMAOp::create(b, loc, x, weights[g], next[i * count + g]);
      }
      return next;
    });
    return writeRows(r, rows, first, count, sums, out);
  }

  /// The sums of rows [r, r + rows) by groups [first, first + count) of
  /// the slice into `out`.
  Value writeRows(Value r, int64_t rows, int64_t first, int64_t count,
                  ValueRange sums, Value out) {
    for (int64_t i = 0; i < rows; ++i) {
      SmallVector<Value> at =
          leadingIndices(arith::AddIOp::create(b, loc, r, index(i)));
      at.push_back(nullptr);
      for (int64_t g = 0; g < count; ++g) {
        at.back() = index((first + g) * kLanes);
        out = vector::TransferWriteOp::create(b, loc, sums[i * count + g], out,
                                              at, ArrayRef<bool>{true})
                  .getResult();
      }
    }
    return out;
  }

  /// Rows [r, r + rows) by the `count` groups of `tile`, into the tile's
  /// slice `out`.
  Value tileAt(Value r, int64_t rows, Value tile, int64_t count, Value out) {
    Type f32 = b.getF32Type();
    Value zeros = vectorConstant(f32, b.getF32FloatAttr(0));
    SmallVector<Value> init(rows * count, zeros);
    ValueRange sums = loop(blocks, init, [&](Value block, ValueRange carried) {
      // The block's codes times the inputs (rows x groups vectors), then
      // each row's sum of its inputs (scalars).
      SmallVector<Value> blockInit(rows * count, zeros);
      blockInit.append(rows,
                       arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)));
      ValueRange blockSums =
          loop(kPairs, blockInit, [&](Value pair, ValueRange sums) {
            return pairStep(r, rows, tile, count, block, pair, sums);
          });
      // sum of (q - 8) * d * x = d * (sum of q * x - 8 * sum of x).
      SmallVector<Value> next(carried);
      Value eight = vectorConstant(f32, b.getF32FloatAttr(8));
      for (int64_t g = 0; g < count; ++g) {
        Value scale = vector::TransferReadOp::create(
            b, loc, vectorOf(f32), scales,
            ValueRange{tile, block, index(g), index(0)},
            arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
            ArrayRef<bool>{true});
        for (int64_t i = 0; i < rows; ++i) {
          Value inputs = vector::BroadcastOp::create(
              b, loc, vectorOf(f32), blockSums[rows * count + i]);
          Value centered = arith::SubFOp::create(
              b, loc, blockSums[i * count + g],
              arith::MulFOp::create(b, loc, eight, inputs));
          next[i * count + g] = vector::FMAOp::create(b, loc, scale, centered,
                                                      next[i * count + g]);
        }
      }
      return next;
    });
    return writeRows(r, rows, 0, count, sums, out);
  }

  /// The indices along the leading dims of row `row` (row-major).
  SmallVector<Value> leadingIndices(Value row) {
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

  /// One pair of k (2 * pair within `block`): the codes of each group
  /// times each row's two inputs, added to `sums` (rows by groups, then
  /// each row's sum of its inputs); the block's scale and centering come
  /// after its last pair.
  SmallVector<Value> pairStep(Value r, int64_t rows, Value tile,
                              int64_t count, Value block, Value pair,
                              ValueRange sums) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    Value k = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, index(kQ4_0BlockValues)),
        arith::MulIOp::create(b, loc, pair, index(2)));
    Value kNext = arith::AddIOp::create(b, loc, k, index(1));
    SmallVector<Value> next(sums.begin(), sums.end());
    SmallVector<Value> low, high;
    for (int64_t i = 0; i < rows; ++i) {
      Value row = arith::AddIOp::create(b, loc, r, index(i));
      Value first =
          tensor::ExtractOp::create(b, loc, input, ValueRange{row, k});
      Value second =
          tensor::ExtractOp::create(b, loc, input, ValueRange{row, kNext});
      low.push_back(vector::BroadcastOp::create(b, loc, vectorOf(f32), first));
      high.push_back(
          vector::BroadcastOp::create(b, loc, vectorOf(f32), second));
      Value &inputs = next[rows * count + i];
      inputs = arith::AddFOp::create(
          b, loc, inputs, arith::AddFOp::create(b, loc, first, second));
    }
    Value mask = vectorConstant(i32, b.getI32IntegerAttr(0x0f));
    Value four = vectorConstant(i32, b.getI32IntegerAttr(4));
    for (int64_t g = 0; g < count; ++g) {
      Value bytes = vector::TransferReadOp::create(
          b, loc, vectorOf(i8), codes,
          ValueRange{tile, block, pair, index(g), index(0)},
          arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
          ArrayRef<bool>{true});
      Value wide = arith::ExtUIOp::create(b, loc, vectorOf(i32), bytes);
      Value first = arith::UIToFPOp::create(
          b, loc, vectorOf(f32), arith::AndIOp::create(b, loc, wide, mask));
      Value second = arith::UIToFPOp::create(
          b, loc, vectorOf(f32), arith::ShRUIOp::create(b, loc, wide, four));
      for (int64_t i = 0; i < rows; ++i) {
        Value &sum = next[i * count + g];
        sum = vector::FMAOp::create(b, loc, low[i], first, sum);
        sum = vector::FMAOp::create(b, loc, high[i], second, sum);
      }
    }
    return next;
  }
};

struct BlockQuantMatmulLowering
    : public TractLoweringPattern<BlockQuantMatmulOp> {
  BlockQuantMatmulLowering(const TypeConverter &converter, MLIRContext *context,
                           int64_t registerFile)
      : TractLoweringPattern(converter, context), registerFile(registerFile) {}

  int64_t registerFile;

  LogicalResult lower(BlockQuantMatmulOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    DenseElementsAttr weights;
    if (!matchPattern(op.getWeights(), m_Constant(&weights)))
      return rewriter.notifyMatchFailure(op, "weights are not a constant");
    auto weightsType = cast<RankedTensorType>(weights.getType());
    bool halves = weightsType.getElementType().isF16();
    int64_t n = weightsType.getDimSize(0);
    int64_t k = halves ? weightsType.getDimSize(1)
                       : weightsType.getDimSize(1) * kQ4_0BlockValues;
    if (n % kLanes)
      return op.emitOpError("has ")
             << n << " columns, not a multiple of " << kLanes;
    if (!getElementTypeOrSelf(op.getInput()).isF32())
      return op.emitOpError("is lowered for f32 inputs only, not ")
             << getElementTypeOrSelf(op.getInput());
    Value codes, scales, halfWeights;
    if (halves) {
      halfWeights =
          arith::ConstantOp::create(rewriter, loc, layOutHalves(weights));
    } else {
      KernelWeights laidOut =
          layOut(op.getContext(), blockBytes(weights), n, k / kQ4_0BlockValues);
      codes = arith::ConstantOp::create(rewriter, loc, laidOut.codes);
      scales = arith::ConstantOp::create(rewriter, loc, laidOut.scales);
    }

    // The rows: every axis of the input but the last, as one.
    Shape inputShape = getShape(op.getInput());
    int64_t rank = inputShape.size();
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
    Value input = adaptor.getInput();
    if (rank == 1) {
      input = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({1, k}, rewriter.getF32Type()),
          input, ArrayRef<ReassociationIndices>{{0, 1}});
    } else if (rank > 2) {
      ReassociationIndices first;
      for (int64_t axis = 0; axis + 1 < rank; ++axis)
        first.push_back(axis);
      input = tensor::CollapseShapeOp::create(
          rewriter, loc, input,
          ArrayRef<ReassociationIndices>{first, {rank - 1}});
    }
    Value rowCountValue = getValueOrCreateConstantIndexOp(rewriter, loc, *rows);
    // The kernel in a region of its own, which the pass then makes a
    // function (outlineKernels).
    auto outType = cast<RankedTensorType>(op.getType());
    auto resultType = RankedTensorType::get(
        outType.getShape(), convertElementType(outType.getElementType()));
    // The output is made outside, so that the kernel writes into its
    // caller's buffer (tract-kernel-results-in-place).
    Value init = emptyTensor(rewriter, loc, op.getType());
    if (!init)
      return failure();
    auto region =
        scf::ExecuteRegionOp::create(rewriter, loc, TypeRange{resultType});
    region->setAttr(kKernelFunctionAttrName, rewriter.getUnitAttr());
    rewriter.createBlock(&region.getRegion());
    KernelEmitter emitter(rewriter, loc, input, codes, scales, halfWeights, k,
                          n / kLanes, leading, registerFile);
    scf::YieldOp::create(rewriter, loc, emitter.emit(init, rowCountValue));
    rewriter.replaceOp(op, region.getResults());
    return success();
  }
};

/// Whether `value` is cloned into a kernel's function rather than passed:
/// a scalar or vector constant. (The weights are passed: the layers'
/// products of one shape then share one function.)
bool clonedIntoKernel(Value value) {
  Operation *op = value.getDefiningOp();
  return op && op->hasTrait<OpTrait::ConstantLike>() &&
         op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         !isa<TensorType>(value.getType());
}

/// Makes each kernel region of `func` a call of a private function that
/// takes what the region uses from outside (the input, the weights, the
/// sizes) and returns its result: one function per distinct kernel. Kept
/// inline, the 210 kernels of a 135M-parameter decoder made One-Shot
/// Bufferize's analysis of the one large body take 8.6 s, and empty tensor
/// elimination's as long again.
void outlineKernels(func::FuncOp func, SymbolTable &symbols,
                    llvm::StringMap<func::FuncOp> &kernels) {
  SmallVector<scf::ExecuteRegionOp> regions;
  func.walk([&](scf::ExecuteRegionOp region) {
    if (region->hasAttr(kKernelFunctionAttrName))
      regions.push_back(region);
  });
  for (scf::ExecuteRegionOp region : regions) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(region.getRegion(), used);
    SmallVector<Value> arguments;
    for (Value value : used)
      if (!clonedIntoKernel(value))
        arguments.push_back(value);
    OpBuilder builder(func);
    Location loc = region.getLoc();
    auto type = builder.getFunctionType(ValueRange(arguments).getTypes(),
                                        region.getResultTypes());
    auto kernel =
        func::FuncOp::create(builder, loc, "tract_block_quant_kernel", type);
    kernel.setPrivate();
    kernel->setAttr(kKernelFunctionAttrName, builder.getUnitAttr());
    Block *entry = kernel.addEntryBlock();
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(arguments, entry->getArguments()))
      mapping.map(value, argument);
    builder.setInsertionPointToStart(entry);
    for (Value value : used)
      if (clonedIntoKernel(value))
        mapping.map(value, builder.clone(*value.getDefiningOp())->getResult(
                               cast<OpResult>(value).getResultNumber()));
    for (Operation &op : region.getRegion().front().without_terminator())
      builder.clone(op, mapping);
    auto yield = cast<scf::YieldOp>(region.getRegion().front().getTerminator());
    SmallVector<Value> results;
    for (Value value : yield.getOperands())
      results.push_back(mapping.lookupOrDefault(value));
    func::ReturnOp::create(builder, loc, results);
    // One function per kernel as printed without locations.
    std::string key;
    {
      llvm::raw_string_ostream os(key);
      kernel.print(os, OpPrintingFlags().useLocalScope());
    }
    func::FuncOp callee;
    auto [existing, fresh] = kernels.try_emplace(key, kernel);
    if (fresh) {
      symbols.insert(kernel);
      callee = kernel;
    } else {
      kernel.erase();
      callee = existing->second;
    }
    builder.setInsertionPoint(region);
    auto call = func::CallOp::create(builder, loc, callee, arguments);
    call->setAttr(kKernelFunctionAttrName, builder.getUnitAttr());
    region.replaceAllUsesWith(call.getResults());
    region.erase();
  }
}

struct TractCpuBlockQuantKernelsPass
    : public tract::impl::TractCpuBlockQuantKernelsBase<
          TractCpuBlockQuantKernelsPass> {
  using TractCpuBlockQuantKernelsBase::TractCpuBlockQuantKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          func.walk([](BlockQuantMatmulOp) { return WalkResult::interrupt(); })
              .wasInterrupted())
        functions.push_back(func);
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> kernels;
    for (func::FuncOp func : functions) {
      // No other lowering: a product left is an error.
      if (failed(lowerToKernels(
              func,
              [&](const TypeConverter &converter, RewritePatternSet &patterns) {
                patterns.add<BlockQuantMatmulLowering>(
                    converter, &getContext(), registerFile);
              },
              [](ConversionTarget &target) {
                target.addIllegalOp<BlockQuantMatmulOp>();
              })))
        return signalPassFailure();
      outlineKernels(func, symbols, kernels);
    }
  }
};

} // namespace
