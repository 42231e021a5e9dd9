//===- BlockQuantKernels.cpp - products with Q4_0 or f16 weights ----------===//
//
// tract.block_quant_matmul becomes one loop nest that decodes the weights
// in its inner loop: they stay 4.5 bits (Q4_0) or 16 bits (f16) each in
// memory, which is what a token of a language model's decoding reads.
//
// At compile time the blocks are laid out for vectors along n: groups of
// `kLanes` columns, and tiles of up to `kMaxGroups` groups. Per tile and
// block of 32 k come the f32 scales of its columns, and per octet of k
// (8 values) and group four bytes per column: byte j holds the codes of k
// = 8 o + j (low nibble) and 8 o + 4 + j (high nibble). A tile's weights,
// and the tiles one after the other, are each one sequential stream: a
// decoding step reads the matrix from memory once, in order, as the
// hardware prefetchers like it.
//
// A decoding step (few rows) multiplies the codes as bytes where the
// target sums byte products (AVX-512 VNNI's vpdpbusd, AArch64's sdot) and
// the product allows it (`q8_inputs`): the rows are rounded to 8 bits per
// block of 32 first (Q8_0: a scale, the largest magnitude over 127), so
// that one instruction sums 4 codes by 4 inputs in each lane; per block,
// the i32 sums less 8 times the inputs' sum are scaled by both blocks'
// scales into f32 sums. Elsewhere a step reads an octet's 64 bytes as 16
// words, shifts and masks each code out, converts it and multiply-adds it
// with the row's input. Tiles of `kRows` rows by a tile's groups keep their
// sums in registers; the tiles are shared among threads (an scf.forall).
// From `kDecodedRows` rows on (a prompt), each tile's weights are decoded
// once into an f32 panel first, which the rows then read.
//
// f16 weights are laid out (tiles, k, groups of the tile, lanes): a step
// reads one vector of halves per group and widens it to f32 for the
// multiply-adds, for a prompt as for a decoding step.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cpu/KernelLowering.h"
#include "conversion/LoweringUtils.h"

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/RegionUtils.h"

#include <algorithm>
#include <cstring>

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
/// k values per octet, and octets per block; a lane's word holds the codes
/// of an octet (kQuad in its low nibbles, kQuad in its high ones).
constexpr int64_t kOctet = 8;
constexpr int64_t kQuad = 4;
constexpr int64_t kOctets = kQ4_0BlockValues / kOctet;
/// The sums kept in registers by a tile of byte products: as many i32 ones
/// for the block in progress.
constexpr int64_t kByteTileSums = 8;

/// The groups of a tile: the most, up to kMaxGroups, that divide `groups`.
int64_t groupsPerTile(int64_t groups) {
  int64_t perTile = kMaxGroups;
  while (groups % perTile)
    --perTile;
  return perTile;
}

/// The weights as the kernel reads them: codes (tiles, blocks, octets,
/// groups of the tile, lanes x kQuad bytes) and scales (tiles, blocks,
/// groups of the tile, lanes) as f32; a language model's are a gigabyte,
/// in memory of their own (makeWeights).
struct KernelWeights {
  ElementsAttr codes, scales;
};

KernelWeights layOut(MLIRContext *context, ArrayRef<char> raw, int64_t n,
                     int64_t blocks) {
  int64_t groups = n / kLanes, perTile = groupsPerTile(groups);
  int64_t tiles = groups / perTile;
  auto codeType = RankedTensorType::get(
      {tiles, blocks, kOctets, perTile, kLanes * kQuad},
      IntegerType::get(context, 8));
  auto scaleType = RankedTensorType::get({tiles, blocks, perTile, kLanes},
                                         Float32Type::get(context));
  // The scales, then the codes (makeWeights), for each column.
  const auto *data = reinterpret_cast<const uint8_t *>(raw.data());
  auto forEachBlock = [&](auto fn) {
    for (int64_t column = 0; column < n; ++column) {
      int64_t group = column / kLanes, lane = column % kLanes;
      int64_t tile = group / perTile, g = group % perTile;
      for (int64_t block = 0; block < blocks; ++block)
        fn(data + (column * blocks + block) * kQ4_0BlockBytes,
           tile * blocks + block, g, lane);
    }
  };
  ElementsAttr scales = tract::makeWeights(
      scaleType, "tract_q4_0_scales", [&](MutableArrayRef<char> bytes) {
        auto *out = reinterpret_cast<float *>(bytes.data());
        forEachBlock([&](const uint8_t *in, int64_t at, int64_t g,
                         int64_t lane) {
          out[(at * perTile + g) * kLanes + lane] = q4_0Scale(in);
        });
      });
  ElementsAttr codes = tract::makeWeights(
      codeType, "tract_q4_0_codes", [&](MutableArrayRef<char> bytes) {
        auto *out = reinterpret_cast<uint8_t *>(bytes.data());
        forEachBlock([&](const uint8_t *in, int64_t at, int64_t g,
                         int64_t lane) {
          for (int64_t octet = 0; octet < kOctets; ++octet)
            for (int64_t j = 0; j < kQuad; ++j) {
              int64_t k = octet * kOctet + j;
              out[(((at * kOctets + octet) * perTile + g) * kLanes + lane) *
                      kQuad +
                  j] = uint8_t(q4_0Code(in, k) | q4_0Code(in, k + kQuad) << 4);
            }
        });
      });
  return {codes, scales};
}

/// f16 weights n x k (`raw`, their bytes) as the kernel reads them:
/// (tiles, k, groups of the tile, lanes) (makeWeights).
ElementsAttr layOutHalves(RankedTensorType type, ArrayRef<char> raw) {
  int64_t n = type.getDimSize(0), k = type.getDimSize(1);
  int64_t groups = n / kLanes, perTile = groupsPerTile(groups);
  auto resultType = RankedTensorType::get({groups / perTile, k, perTile, kLanes},
                                          type.getElementType());
  return tract::makeWeights(
      resultType, "tract_f16_weights", [&](MutableArrayRef<char> halves) {
        // Each run of kLanes columns at one k moves as one piece, read
        // down the columns of a run in tiles of k.
        constexpr int64_t kSteps = 64;
        for (int64_t group = 0; group < groups; ++group)
          for (int64_t at0 = 0; at0 < k; at0 += kSteps)
            for (int64_t lane = 0; lane < kLanes; ++lane) {
              int64_t column = group * kLanes + lane;
              for (int64_t at = at0; at < std::min(k, at0 + kSteps); ++at)
                std::memcpy(halves.data() +
                                ((((group / perTile) * k + at) * perTile +
                                  group % perTile) *
                                     kLanes +
                                 lane) *
                                    2,
                            raw.data() + (column * k + at) * 2, 2);
            }
      });
}

class KernelEmitter {
public:
  /// `input` is (rows, k); the result has the input's original leading
  /// dims, `leading`, then n. The weights are Q4_0 `codes` and `scales`
  /// (layOut) or f16 `halves` (layOutHalves), the others null.
  /// `registerFile` is the f32 values the target's vector registers hold.
  /// `byteDots`: a decoding step rounds the rows to 8 bits and sums byte
  /// products, the codes widened as signed bytes (`signedCodes`, for
  /// sdot) or unsigned ones (vpdpbusd).
  KernelEmitter(OpBuilder &b, Location loc, Value input, Value codes,
                Value scales, Value halves, int64_t k, int64_t groups,
                ArrayRef<OpFoldResult> leading, int64_t registerFile,
                bool byteDots, bool signedCodes)
      : b(b), loc(loc), input(input), codes(codes), scales(scales),
        halves(halves), kValues(k), blocks(k / kQ4_0BlockValues),
        groups(groups), leading(leading),
        vectors(std::max<int64_t>(1, registerFile / kLanes)),
        byteDots(byteDots), signedCodes(signedCodes) {}

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
    auto overTiles = [&](function_ref<Value(Value, Value)> body) {
      return forallOverSlices(
          b, loc, {b.getIndexAttr(groups / perTile)}, init, where,
          [&](ValueRange ivs, Value slice) { return body(ivs[0], slice); });
    };
    if (halves)
      return overTiles([&](Value tile, Value slice) {
        auto widened = [&](Value k, int64_t g) -> Value {
          Value read = vector::TransferReadOp::create(
              b, loc, vectorOf(b.getF16Type()), halves,
              ValueRange{tile, k, index(g), index(0)},
              arith::ConstantOp::create(b, loc, b.getF16FloatAttr(0)),
              ArrayRef<bool>{true});
          return arith::ExtFOp::create(b, loc, vectorOf(b.getF32Type()), read);
        };
        return panelTiles(rows, slice, widened, perTile);
      });
    // Many rows (a prompt): each tile's columns decoded once, then
    // multiplied as f32; few (a decoding step): decoded on the way, or
    // multiplied as bytes by the rows rounded to bytes once, for all tiles
    // (none for a prompt).
    Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                       rows, index(kDecodedRows));
    QuantizedRows quantized;
    if (byteDots)
      quantized = quantizeRows(
          arith::SelectOp::create(b, loc, many, index(0), rows));
    return overTiles([&](Value tile, Value slice) {
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
                  return byteDots ? byteTileAt(quantized, r, height, tile,
                                               perTile, out)
                                  : tileAt(r, height, tile, perTile, out);
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
  bool byteDots, signedCodes;

  /// The rows rounded to bytes per block of 32 (Q8_0): `codes` (rows, k)
  /// i8, `scales` (rows, blocks) f32, and `sums` (rows, blocks) i32, 8
  /// times the sum of each block's codes (the codes' centering).
  struct QuantizedRows {
    Value codes, scales, sums;
  };

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

  /// The words of group `g` of `tile` for `octet` of `block`: one per
  /// column, its bytes the codes of the octet.
  Value codeWords(Value tile, Value block, Value octet, int64_t g) {
    Value bytes = vector::TransferReadOp::create(
        b, loc, VectorType::get({kLanes * kQuad}, b.getI8Type()), codes,
        ValueRange{tile, block, octet, index(g), index(0)},
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
        ArrayRef<bool>{true});
    return vector::BitCastOp::create(b, loc, vectorOf(b.getI32Type()), bytes);
  }

  /// The codes of k = 8 octet + j (+ 4 when `high`) in each lane, as i32.
  Value codeAt(Value words, int64_t j, bool high) {
    Type i32 = b.getI32Type();
    int64_t shift = 8 * j + (high ? 4 : 0);
    if (shift)
      words = arith::ShRUIOp::create(
          b, loc, words, vectorConstant(i32, b.getI32IntegerAttr(shift)));
    if (shift == 28)
      return words;
    return arith::AndIOp::create(b, loc, words,
                                 vectorConstant(i32, b.getI32IntegerAttr(0x0f)));
  }

  /// The index of k = 8 octet + `offset` within `block`.
  Value kAt(Value block, Value octet, int64_t offset) {
    return arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, block, index(kQ4_0BlockValues)),
            arith::MulIOp::create(b, loc, octet, index(kOctet))),
        index(offset));
  }

  /// The weights of the `count` groups of `tile`, decoded: a (k, count *
  /// kLanes) f32 tensor.
  Value decodePanel(Value tile, int64_t count) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    Value panel = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{kValues, count * kLanes}, f32);
    Value eight = vectorConstant(i32, b.getI32IntegerAttr(8));
    return loop(blocks, panel, [&](Value block, ValueRange carried) {
      return llvm::to_vector(
          loop(kOctets, carried, [&](Value octet, ValueRange carried) {
            Value out = carried.front();
            for (int64_t g = 0; g < count; ++g) {
              Value scale = vector::TransferReadOp::create(
                  b, loc, vectorOf(f32), scales,
                  ValueRange{tile, block, index(g), index(0)},
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
                  ArrayRef<bool>{true});
              Value words = codeWords(tile, block, octet, g);
              Value column = index(g * kLanes);
              for (int64_t j = 0; j < kOctet; ++j) {
                Value code = codeAt(words, j % kQuad, j >= kQuad);
                Value value = arith::SIToFPOp::create(
                    b, loc, vectorOf(f32),
                    arith::SubIOp::create(b, loc, code, eight));
                out = vector::TransferWriteOp::create(
                          b, loc, arith::MulFOp::create(b, loc, value, scale),
                          out, ValueRange{kAt(block, octet, j), column},
                          ArrayRef<bool>{true})
                          .getResult();
              }
            }
            return SmallVector<Value>{out};
          }));
    })[0];
  }

  /// The rows [0, rows) of the input rounded to bytes (QuantizedRows).
  QuantizedRows quantizeRows(Value rows) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    auto empty = [&](int64_t width, Type element) -> Value {
      return tensor::EmptyOp::create(
          b, loc, ArrayRef<int64_t>{ShapedType::kDynamic, width}, element,
          ValueRange{rows});
    };
    Value half = index(kQ4_0BlockValues / 2);
    auto rowLoop = scf::ForOp::create(
        b, loc, index(0), rows, index(1),
        ValueRange{empty(kValues, i8), empty(blocks, f32), empty(blocks, i32)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rowLoop.getBody());
      Value row = rowLoop.getInductionVar();
      ValueRange done = loop(
          blocks, rowLoop.getRegionIterArgs(),
          [&](Value block, ValueRange carried) {
            Value k = arith::MulIOp::create(b, loc, block,
                                            index(kQ4_0BlockValues));
            Value kHalf = arith::AddIOp::create(b, loc, k, half);
            auto read = [&](Value at) -> Value {
              return vector::TransferReadOp::create(
                  b, loc, vectorOf(f32), input, ValueRange{row, at},
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
                  ArrayRef<bool>{true});
            };
            Value first = read(k), second = read(kHalf);
            Value largest = vector::ReductionOp::create(
                b, loc, vector::CombiningKind::MAXNUMF,
                arith::MaximumFOp::create(b, loc,
                                          math::AbsFOp::create(b, loc, first),
                                          math::AbsFOp::create(b, loc, second)));
            auto scalar = [&](float value) -> Value {
              return arith::ConstantOp::create(b, loc,
                                               b.getF32FloatAttr(value));
            };
            Value scale = arith::DivFOp::create(b, loc, largest, scalar(127));
            Value positive = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OGT, largest, scalar(0));
            Value inverse = arith::SelectOp::create(
                b, loc, positive,
                arith::DivFOp::create(b, loc, scalar(127), largest),
                scalar(0));
            Value inverses = vector::BroadcastOp::create(b, loc, vectorOf(f32),
                                                         inverse);
            auto round = [&](Value values) -> Value {
              return arith::FPToSIOp::create(
                  b, loc, vectorOf(i32),
                  math::RoundEvenOp::create(
                      b, loc,
                      arith::MulFOp::create(b, loc, values, inverses)));
            };
            Value low = round(first), high = round(second);
            Value sum = vector::ReductionOp::create(
                b, loc, vector::CombiningKind::ADD,
                arith::AddIOp::create(b, loc, low, high));
            Value codes = carried[0];
            for (auto [values, at] : {std::pair{low, k}, {high, kHalf}})
              codes = vector::TransferWriteOp::create(
                          b, loc,
                          arith::TruncIOp::create(b, loc, vectorOf(i8), values),
                          codes, ValueRange{row, at}, ArrayRef<bool>{true})
                          .getResult();
            Value scales = tensor::InsertOp::create(b, loc, scale, carried[1],
                                                    ValueRange{row, block});
            Value sums = tensor::InsertOp::create(
                b, loc,
                arith::MulIOp::create(
                    b, loc, sum,
                    arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8))),
                carried[2], ValueRange{row, block});
            return SmallVector<Value>{codes, scales, sums};
          });
      scf::YieldOp::create(b, loc, done);
    }
    return {rowLoop.getResult(0), rowLoop.getResult(1), rowLoop.getResult(2)};
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
  /// slice `out`, decoding the codes to f32.
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
          loop(kOctets, blockInit, [&](Value octet, ValueRange sums) {
            return octetStep(r, rows, tile, count, block, octet, sums);
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

  /// One octet of k within `block`: the codes of each group times each
  /// row's eight inputs, added to `sums` (rows by groups, then each row's
  /// sum of its inputs); the block's scale and centering come after its
  /// last octet.
  SmallVector<Value> octetStep(Value r, int64_t rows, Value tile,
                               int64_t count, Value block, Value octet,
                               ValueRange sums) {
    Type f32 = b.getF32Type();
    SmallVector<Value> next(sums.begin(), sums.end());
    // inputs[i][j]: row i's input at k = 8 octet + j, in every lane.
    SmallVector<SmallVector<Value>> inputs(rows);
    for (int64_t i = 0; i < rows; ++i) {
      Value row = arith::AddIOp::create(b, loc, r, index(i));
      Value &total = next[rows * count + i];
      for (int64_t j = 0; j < kOctet; ++j) {
        Value x = tensor::ExtractOp::create(
            b, loc, input, ValueRange{row, kAt(block, octet, j)});
        inputs[i].push_back(
            vector::BroadcastOp::create(b, loc, vectorOf(f32), x));
        total = arith::AddFOp::create(b, loc, total, x);
      }
    }
    for (int64_t g = 0; g < count; ++g) {
      Value words = codeWords(tile, block, octet, g);
      for (int64_t j = 0; j < kOctet; ++j) {
        Value code = arith::UIToFPOp::create(
            b, loc, vectorOf(f32), codeAt(words, j % kQuad, j >= kQuad));
        for (int64_t i = 0; i < rows; ++i) {
          Value &sum = next[i * count + g];
          sum = vector::FMAOp::create(b, loc, inputs[i][j], code, sum);
        }
      }
    }
    return next;
  }

  /// Rows [r, r + rows) by the `count` groups of `tile`, into the tile's
  /// slice `out`, from the rows rounded to bytes: as many groups at a time
  /// as kByteTileSums sums allow.
  Value byteTileAt(const QuantizedRows &quantized, Value r, int64_t rows,
                   Value tile, int64_t count, Value out) {
    int64_t step = std::clamp<int64_t>(kByteTileSums / rows, 1, count);
    while (count % step)
      --step;
    for (int64_t first = 0; first < count; first += step)
      out = byteTileGroups(quantized, r, rows, tile, first, step, out);
    return out;
  }

  /// Rows [r, r + rows) by groups [first, first + count) of `tile`.
  Value byteTileGroups(const QuantizedRows &quantized, Value r, int64_t rows,
                       Value tile, int64_t first, int64_t count, Value out) {
    Type f32 = b.getF32Type(), i32 = b.getI32Type(), i8 = b.getI8Type();
    Value zeros = vectorConstant(f32, b.getF32FloatAttr(0));
    SmallVector<Value> init(rows * count, zeros);
    auto bytesType = VectorType::get({kLanes * kQuad}, i8);
    auto bytes = [&](int8_t value) -> Value {
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(value)));
    };
    Value nibble = bytes(0x0f), four = bytes(4);
    ValueRange sums = loop(blocks, init, [&](Value block, ValueRange carried) {
      SmallVector<Value> blockSums(rows * count,
                                   vectorConstant(i32, b.getI32IntegerAttr(0)));
      for (int64_t octet = 0; octet < kOctets; ++octet) {
        // Each row's inputs for the octet's low and high codes.
        SmallVector<Value> low, high;
        for (int64_t i = 0; i < rows; ++i) {
          Value row = arith::AddIOp::create(b, loc, r, index(i));
          low.push_back(inputQuad(quantized.codes, row,
                                  kAt(block, index(octet), 0)));
          high.push_back(inputQuad(quantized.codes, row,
                                   kAt(block, index(octet), kQuad)));
        }
        for (int64_t g = 0; g < count; ++g) {
          Value bytes = vector::BitCastOp::create(
              b, loc, bytesType,
              codeWords(tile, block, index(octet), first + g));
          Value lowCodes = arith::AndIOp::create(b, loc, bytes, nibble);
          Value highCodes = arith::ShRUIOp::create(b, loc, bytes, four);
          for (int64_t i = 0; i < rows; ++i) {
            Value &sum = blockSums[i * count + g];
            sum = dot(sum, lowCodes, low[i]);
            sum = dot(sum, highCodes, high[i]);
          }
        }
      }
      // sum of (q - 8) * d * (p * e) = d * e * (sum of q * p - 8 * sum of
      // p), with p and e the rows' codes and scale.
      SmallVector<Value> next(carried);
      for (int64_t g = 0; g < count; ++g) {
        Value scale = vector::TransferReadOp::create(
            b, loc, vectorOf(f32), scales,
            ValueRange{tile, block, index(first + g), index(0)},
            arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)),
            ArrayRef<bool>{true});
        for (int64_t i = 0; i < rows; ++i) {
          Value row = arith::AddIOp::create(b, loc, r, index(i));
          Value rowScale = tensor::ExtractOp::create(
              b, loc, quantized.scales, ValueRange{row, block});
          Value centering = tensor::ExtractOp::create(
              b, loc, quantized.sums, ValueRange{row, block});
          Value centered = arith::SubIOp::create(
              b, loc, blockSums[i * count + g],
              vector::BroadcastOp::create(b, loc, vectorOf(i32), centering));
          Value both = arith::MulFOp::create(
              b, loc, scale,
              vector::BroadcastOp::create(b, loc, vectorOf(f32), rowScale));
          next[i * count + g] = vector::FMAOp::create(
              b, loc,
              arith::SIToFPOp::create(b, loc, vectorOf(f32), centered), both,
              next[i * count + g]);
        }
      }
      return next;
    });
    return writeRows(r, rows, first, count, sums, out);
  }

  /// The four bytes of `source` at (row, k) in every lane.
  Value inputQuad(Value source, Value row, Value k) {
    Value quad = vector::TransferReadOp::create(
        b, loc, VectorType::get({kQuad}, b.getI8Type()), source,
        ValueRange{row, k},
        arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0)),
        ArrayRef<bool>{true});
    return repeatQuad(b, loc, quad, kLanes);
  }

  /// acc + the sums of the four products of `codes` by `inputs` (bytes) in
  /// each lane.
  Value dot(Value acc, Value codes, Value inputs) {
    return byteDot(b, loc, acc, codes, inputs, signedCodes);
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
};

struct BlockQuantMatmulLowering
    : public TractLoweringPattern<BlockQuantMatmulOp> {
  BlockQuantMatmulLowering(const TypeConverter &converter, MLIRContext *context,
                           int64_t registerFile, StringRef dotProduct)
      : TractLoweringPattern(converter, context), registerFile(registerFile),
        dotProduct(dotProduct.str()) {}

  int64_t registerFile;
  /// The target's byte dot product: "vnni", "sdot" or "none".
  std::string dotProduct;

  LogicalResult lower(BlockQuantMatmulOp op, OpAdaptor adaptor,
                      ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ElementsAttr weights;
    if (!matchPattern(op.getWeights(), m_Constant(&weights)))
      return rewriter.notifyMatchFailure(op, "weights are not a constant");
    // Their bytes, in place (a resource, or a dense attribute's data).
    std::vector<char> splat;
    ArrayRef<char> raw;
    if (std::optional<ArrayRef<char>> bytes = tract::constantBytes(weights))
      raw = *bytes;
    else if (auto dense = dyn_cast<DenseElementsAttr>(weights);
             dense && dense.isSplat()) {
      ArrayRef<char> element = dense.getRawData();
      for (int64_t i = 0; i < dense.getNumElements(); ++i)
        splat.insert(splat.end(), element.begin(), element.end());
      raw = splat;
    } else
      return rewriter.notifyMatchFailure(op, "weights without their bytes");
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
          arith::ConstantOp::create(rewriter, loc, layOutHalves(weightsType, raw));
    } else {
      KernelWeights laidOut =
          layOut(op.getContext(), raw, n, k / kQ4_0BlockValues);
      codes = arith::ConstantOp::create(rewriter, loc, laidOut.codes);
      scales = arith::ConstantOp::create(rewriter, loc, laidOut.scales);
    }
    // Weights read in place from the model file: the kernel's layout now
    // holds them.
    tract::dropMappedPages(weights);

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
    // Decoding steps on bytes where the product allows rounding its rows
    // and the target sums byte products.
    bool byteDots = !halves && op.getQ8Inputs() && dotProduct != "none";
    KernelEmitter emitter(rewriter, loc, input, codes, scales, halfWeights, k,
                          n / kLanes, leading, registerFile, byteDots,
                          dotProduct == "sdot");
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
    if (dotProduct != "vnni" && dotProduct != "sdot" && dotProduct != "none") {
      module.emitError("tract-cpu-block-quant-kernels: unknown dot-product '")
          << dotProduct << "' (vnni, sdot or none)";
      return signalPassFailure();
    }
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
                    converter, &getContext(), registerFile, dotProduct);
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
