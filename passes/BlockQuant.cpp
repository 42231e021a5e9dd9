//===- BlockQuant.cpp - constant weights of products as Q4_0 or f16 -------===//
//
// tract's `block-quant` transform: the weights of a product of rows by a
// constant matrix are stored as Q4_0 blocks along the summed axis, and the
// product becomes tract.block_quant_matmul, whose lowering decodes the
// blocks in its inner loop. A quarter of a byte and a bit per weight
// instead of four: decoding a token reads about 7 times fewer bytes.
// With format=f16 (`-t f16-weights`) the weights are stored as halves
// instead, summed in f32: half the bytes, 11 bits of precision.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <cstring>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTBLOCKQUANT
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// tract's rule: these stay f32, their precision matters more than their
/// size.
bool isProtected(Operation *op) {
  // Every name the location holds: a constant folded from a named weight
  // keeps it among others.
  bool found = false;
  op->getLoc()->walk([&](Location loc) {
    auto name = dyn_cast<NameLoc>(loc);
    if (!name)
      return WalkResult::advance();
    StringRef text = name.getName().strref();
    for (StringRef word : {"embed", "Embed", "norm", "Norm", "pooler",
                           "classifier", "lm_head", "logits"})
      if (text.contains(word)) {
        found = true;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return found;
}

/// Whether `op` computes a language model's output head (its name says
/// so). Under Q4_0 its weights are stored as f16 (ours): tract keeps them
/// f32 for their precision, which 11 bits keep, while a decoding step of
/// a 1B model would read a gigabyte of f32 logit weights per token.
bool isOutputHead(Operation *op) {
  bool found = false;
  op->getLoc()->walk([&](Location loc) {
    auto name = dyn_cast<NameLoc>(loc);
    if (name && (name.getName().strref().contains("lm_head") ||
                 name.getName().strref().contains("logits"))) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Lanes of the kernels' column groups: n must fill them.
constexpr int64_t kColumnGroup = 16;
/// Smaller weights are not worth it (tract's threshold).
constexpr int64_t kMinimumWeights = 1 << 14;

/// The largest finite f16.
constexpr float kMaxHalf = 65504.0f;

/// The n x k matrix `nk` as Q4_0 blocks along k (makeWeights).
ElementsAttr toQ4_0(OpBuilder &b, ArrayRef<float> nk, int64_t n, int64_t k) {
  auto type = RankedTensorType::get({n, k / kQ4_0BlockValues, kQ4_0BlockBytes},
                                    b.getI8Type());
  return tract::makeWeights(type, "tract_q4_0_weights",
                            [&](MutableArrayRef<char> out) {
                              quantizeQ4_0(nk, reinterpret_cast<uint8_t *>(
                                                   out.data()));
                            });
}

/// Calls `fn(i, j)` for every (i, j) of an n x k matrix, in tiles, so that
/// a transposed walk of a large matrix reads and writes in cache lines.
template <typename Fn>
bool forEachInTiles(int64_t n, int64_t k, Fn fn) {
  constexpr int64_t kTile = 64;
  for (int64_t i0 = 0; i0 < n; i0 += kTile)
    for (int64_t j0 = 0; j0 < k; j0 += kTile)
      for (int64_t i = i0; i < std::min(n, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(k, j0 + kTile); ++j)
          if (!fn(i, j))
            return false;
  return true;
}

/// The n x k matrix that `weights` (f32 or f16) holds at element strides
/// `nStride` and `kStride`, stored for a block_quant_matmul: as f16
/// (`halves`) or as Q4_0 blocks along k (makeWeights; or the weights
/// themselves, when they are that matrix in f16 already). Null
/// when a value is not finite or, for f16, beyond its range: such weights
/// stay f32. Read from the bytes, not value by value: a language model's
/// output head has hundreds of millions.
ElementsAttr storeWeights(OpBuilder &b, ElementsAttr weights, int64_t n,
                          int64_t k, int64_t nStride, int64_t kStride,
                          bool halves) {
  bool fromHalves = weights.getElementType().isF16();
  std::vector<float> splat;
  const char *bytes;
  if (std::optional<ArrayRef<char>> raw = tract::constantBytes(weights)) {
    bytes = raw->data();
  } else {
    // A splat: its values, as f32.
    for (const APFloat &value : weights.getValues<APFloat>())
      splat.push_back(value.convertToFloat());
    bytes = reinterpret_cast<const char *>(splat.data());
    fromHalves = false;
  }
  auto halfAt = [&](int64_t index) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * index, 2);
    return bits;
  };
  auto valueAt = [&](int64_t index) {
    if (fromHalves)
      return halfToFloat(halfAt(index));
    float value;
    std::memcpy(&value, bytes + 4 * index, 4);
    return value;
  };
  auto isFiniteHalf = [](uint16_t bits) { return (bits & 0x7c00) != 0x7c00; };
  auto stored = RankedTensorType::get({n, k}, b.getF16Type());
  if (halves && fromHalves && kStride == 1 && nStride == k) {
    for (int64_t index = 0; index < n * k; ++index)
      if (!isFiniteHalf(halfAt(index)))
        return nullptr;
    if (auto dense = dyn_cast<DenseElementsAttr>(weights))
      return dense.reshape(stored);
    return DenseResourceElementsAttr::get(
        stored, cast<DenseResourceElementsAttr>(weights).getRawHandle());
  }
  if (halves) {
    bool finite = true;
    ElementsAttr values = tract::makeWeights(
        stored, "tract_f16_weights", [&](MutableArrayRef<char> bytes) {
          auto *out = reinterpret_cast<uint16_t *>(bytes.data());
          finite = forEachInTiles(n, k, [&](int64_t i, int64_t j) {
            int64_t index = i * nStride + j * kStride;
            uint16_t bits;
            if (fromHalves) {
              bits = halfAt(index);
            } else {
              float value = valueAt(index);
              if (!std::isfinite(value) || std::abs(value) > kMaxHalf)
                return false;
              bits = floatToHalf(value);
            }
            out[i * k + j] = bits;
            return isFiniteHalf(bits);
          });
        });
    return finite ? values : nullptr;
  }
  std::vector<float> nk(n * k);
  bool finite = forEachInTiles(n, k, [&](int64_t i, int64_t j) {
    nk[i * k + j] = valueAt(i * nStride + j * kStride);
    return std::isfinite(nk[i * k + j]);
  });
  return finite ? toQ4_0(b, nk, n, k) : nullptr;
}

/// The axes of the weights (operand `slot` of `einsum`, of `shape`) in a
/// product of rows by them: rows `...k`, weights with k and n (and axes of
/// 1 that broadcast), output `...n`.
struct WeightsAxes {
  size_t k, n;
};
std::optional<WeightsAxes> matchRowsByWeights(const EinsumExpr &expr,
                                              unsigned slot,
                                              ArrayRef<int64_t> shape) {
  const std::string &spec = expr.inputs[slot];
  const std::string &rowSpec = expr.inputs[1 - slot];
  if (rowSpec.empty() || spec.size() != shape.size())
    return std::nullopt;
  char k = rowSpec.back();
  std::string prefix = rowSpec.substr(0, rowSpec.size() - 1);
  size_t kAxis = spec.find(k), nAxis = std::string::npos;
  bool otherAxesOfOne = true;
  for (auto [axis, letter] : llvm::enumerate(spec)) {
    if (axis == kAxis || shape[axis] == 1)
      continue;
    if (nAxis != std::string::npos)
      otherAxesOfOne = false;
    nAxis = axis;
  }
  if (kAxis == std::string::npos || nAxis == std::string::npos ||
      !otherAxesOfOne || spec.find(k, kAxis + 1) != std::string::npos)
    return std::nullopt;
  char n = spec[nAxis];
  if (expr.output != prefix + n || prefix.find(k) != std::string::npos ||
      prefix.find(n) != std::string::npos ||
      spec.find(n, nAxis + 1) != std::string::npos)
    return std::nullopt;
  return WeightsAxes{kAxis, nAxis};
}

/// `einsum` as a product with compactly stored weights (`halves`: f16,
/// else Q4_0), when it is one of rows by a constant matrix that may be
/// stored so. With `storedHalvesOnly`, only weights the model stores as
/// f16 (cast to f32) are taken, as f16 whatever their name: their values
/// do not change.
void quantize(OpBuilder &b, EinsumOp einsum, bool halvesAsked,
              bool storedHalvesOnly = false) {
  if (einsum.getInputs().size() != 2 ||
      !getElementTypeOrSelf(einsum.getType()).isF32())
    return;
  halvesAsked |= storedHalvesOnly;
  bool halves = halvesAsked;
  EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
  for (unsigned slot = 0; slot < 2; ++slot) {
    // f32 weights, or f16 ones cast to f32 (a model stored with f16
    // weights, too large for the cast to have been folded).
    Value operand = einsum.getInputs()[slot];
    auto widening = operand.getDefiningOp<CastOp>();
    bool storedHalves =
        widening && getElementTypeOrSelf(widening.getInput()).isF16();
    if (storedHalves)
      operand = widening.getInput();
    else if (storedHalvesOnly)
      continue;
    auto constant = operand.getDefiningOp<ConstOp>();
    Value rows = einsum.getInputs()[1 - slot];
    // The output head as f16 under Q4_0 (isOutputHead), named so by the
    // product or by its weights (which may be named for the embedding
    // table they are tied to).
    bool head = constant && !halvesAsked &&
                (isOutputHead(einsum) || isOutputHead(constant));
    halves = halvesAsked || head;
    if (!constant ||
        (!head && !storedHalvesOnly &&
         (isProtected(constant) || isProtected(einsum))))
      continue;
    // Dense, or a resource (a large weight mapped from the model file).
    auto weights = dyn_cast<ElementsAttr>(constant.getValue());
    if (weights && !isa<DenseElementsAttr>(weights) &&
        !tract::constantBytes(weights))
      weights = nullptr;
    if (!weights || !isa<Float32Type, Float16Type>(weights.getElementType()))
      continue;
    auto type = cast<RankedTensorType>(weights.getType());
    std::optional<WeightsAxes> axes =
        matchRowsByWeights(expr, slot, type.getShape());
    if (!axes)
      continue;
    size_t kAxis = axes->k, nAxis = axes->n;
    int64_t kSize = type.getDimSize(kAxis), nSize = type.getDimSize(nAxis);
    Shape rowShape = getShape(rows);
    if (rowShape.back() != TDim(kSize) ||
        (!halves && kSize % kQ4_0BlockValues != 0) ||
        nSize % kColumnGroup != 0 || kSize * nSize < kMinimumWeights)
      continue;

    // The matrix n x k (the other axes are 1).
    int64_t kStride = 1, nStride = 1;
    for (int64_t axis = type.getRank() - 1; axis >= 0; --axis) {
      if (axis > int64_t(kAxis))
        kStride *= type.getDimSize(axis);
      if (axis > int64_t(nAxis))
        nStride *= type.getDimSize(axis);
    }
    ElementsAttr stored =
        storeWeights(b, weights, nSize, kSize, nStride, kStride, halves);
    if (!stored)
      continue;
    b.setInsertionPoint(einsum);
    Location weightsLoc = constant.getLoc();
    if (auto name = dyn_cast<NameLoc>(weightsLoc))
      weightsLoc = NameLoc::get(b.getStringAttr(name.getName().strref() +
                                                (halves ? ".f16" : ".q4_0")),
                                name.getChildLoc());
    Value packed = ConstOp::create(b, weightsLoc, stored.getType(), stored);
    // Q4_0 products may round their rows to bytes (tract-cpu-block-quant-
    // kernels); f16 ones keep them exact.
    auto product = BlockQuantMatmulOp::create(b, einsum.getLoc(),
                                              einsum.getType(), rows, packed,
                                              /*q8_inputs=*/!halves);
    einsum.replaceAllUsesWith(product.getOutput());
    einsum.erase();
    if (widening && widening->use_empty())
      widening.erase();
    if (constant->use_empty()) {
      // A mapped source's pages can go: the stored form replaces it.
      tract::dropMappedPages(constant.getValue());
      constant.erase();
    }
    return;
  }
}

/// A product by weights the model stores as f16 (declutter took them as
/// they are: absorbStoredHalves), under Q4_0: Q4_0 blocks of those values,
/// but for the output head, which stays f16, and a k not in blocks of 32.
void requantizeHalves(OpBuilder &b, BlockQuantMatmulOp product) {
  auto constant = product.getWeights().getDefiningOp<ConstOp>();
  if (!constant || isOutputHead(product) || isOutputHead(constant))
    return;
  auto halves = dyn_cast<ElementsAttr>(constant.getValue());
  auto type = dyn_cast<RankedTensorType>(product.getWeights().getType());
  if (!halves || !type || !type.getElementType().isF16() ||
      type.getRank() != 2 || type.getDimSize(1) % kQ4_0BlockValues != 0)
    return;
  ElementsAttr blocks =
      storeWeights(b, halves, type.getDimSize(0), type.getDimSize(1),
                   type.getDimSize(1), 1, /*halves=*/false);
  if (!blocks)
    return;
  b.setInsertionPoint(product);
  Value stored =
      ConstOp::create(b, constant.getLoc(), blocks.getType(), blocks);
  auto quantized = BlockQuantMatmulOp::create(
      b, product.getLoc(), product.getType(), product.getInput(), stored,
      /*q8_inputs=*/true);
  product.getOutput().replaceAllUsesWith(quantized.getOutput());
  product.erase();
  if (constant->use_empty())
    constant.erase();
}

/// A product of rows by Q4_0 blocks read from a file (block_dequant of a
/// constant) whose blocks run along the summed axis: block_quant_matmul on
/// the stored bytes, which are never decoded into a copy.
LogicalResult absorbBlockDequant(EinsumOp einsum, PatternRewriter &rewriter) {
  if (einsum.getInputs().size() != 2 ||
      !getElementTypeOrSelf(einsum.getType()).isF32())
    return failure();
  EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
  for (unsigned slot = 0; slot < 2; ++slot) {
    auto dequant = einsum.getInputs()[slot].getDefiningOp<BlockDequantOp>();
    if (!dequant)
      continue;
    // Dense, or a resource (blocks read in place from the model's file).
    auto source = dequant.getBlocks().getDefiningOp<ConstOp>();
    auto blocks = source ? dyn_cast<ElementsAttr>(source.getValue())
                         : ElementsAttr();
    ArrayRef<int64_t> shape = dequant.getType().getShape();
    std::optional<WeightsAxes> axes = matchRowsByWeights(expr, slot, shape);
    // The blocks follow the values' row-major order: they run along k when
    // k is the last axis and whole blocks fill it.
    if (!blocks || !axes || axes->k + 1 != shape.size() ||
        axes->n > axes->k || shape[axes->k] % kQ4_0BlockValues != 0 ||
        shape[axes->n] % kColumnGroup != 0)
      continue;
    int64_t n = shape[axes->n], k = shape[axes->k];
    auto type = RankedTensorType::get(
        {n, k / kQ4_0BlockValues, kQ4_0BlockBytes}, rewriter.getI8Type());
    ElementsAttr reshaped;
    if (auto dense = dyn_cast<DenseElementsAttr>(blocks))
      reshaped = dense.reshape(type);
    else if (auto resource = dyn_cast<DenseResourceElementsAttr>(blocks))
      reshaped = DenseResourceElementsAttr::get(type, resource.getRawHandle());
    else
      continue;
    Value stored =
        ConstOp::create(rewriter, dequant.getBlocks().getLoc(), type, reshaped);
    rewriter.replaceOpWithNewOp<BlockQuantMatmulOp>(
        einsum, einsum.getType(), einsum.getInputs()[1 - slot], stored,
        /*q8_inputs=*/true);
    return success();
  }
  return failure();
}

struct TractBlockQuant
    : public tract::impl::TractBlockQuantBase<TractBlockQuant> {
  using TractBlockQuantBase::TractBlockQuantBase;

  void runOnOperation() override {
    if (format != "q4_0" && format != "f16") {
      getOperation().emitError("tract-block-quant: unknown format '")
          << format << "' (q4_0 or f16)";
      return signalPassFailure();
    }
    SmallVector<EinsumOp> einsums;
    getOperation().walk([&](EinsumOp op) { einsums.push_back(op); });
    OpBuilder b(&getContext());
    for (EinsumOp einsum : einsums)
      quantize(b, einsum, format == "f16");
    if (format == "q4_0") {
      SmallVector<BlockQuantMatmulOp> products;
      getOperation().walk(
          [&](BlockQuantMatmulOp op) { products.push_back(op); });
      for (BlockQuantMatmulOp product : products)
        requantizeHalves(b, product);
    }
  }
};

} // namespace

/// A unit axis added or removed, or a reshape, of Q4_0 values: the same
/// values in the same order, so the same blocks of another shape (the
/// weight of a batched product, `matmul` of rank-3 rows by a matrix).
template <typename OpTy>
LogicalResult reshapeBlockDequant(OpTy op, PatternRewriter &rewriter) {
  auto dequant = op.getInput().template getDefiningOp<BlockDequantOp>();
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!dequant || !type || !type.hasStaticShape() || type.getEncoding())
    return failure();
  rewriter.replaceOpWithNewOp<BlockDequantOp>(op, type, dequant.getBlocks());
  return success();
}

void mlir::tract::populateBlockDequantPatterns(RewritePatternSet &patterns) {
  patterns.add(absorbBlockDequant)
      .add(reshapeBlockDequant<AddAxisOp>)
      .add(reshapeBlockDequant<RmAxisOp>)
      .add(reshapeBlockDequant<ReshapeOp>);
}

void mlir::tract::absorbStoredHalves(Operation *root) {
  SmallVector<EinsumOp> einsums;
  root->walk([&](EinsumOp op) { einsums.push_back(op); });
  OpBuilder b(root->getContext());
  for (EinsumOp einsum : einsums)
    quantize(b, einsum, /*halvesAsked=*/true, /*storedHalvesOnly=*/true);
}

void mlir::tract::foldBlockDequant(Operation *root) {
  SmallVector<BlockDequantOp> ops;
  root->walk([&](BlockDequantOp op) { ops.push_back(op); });
  for (BlockDequantOp op : ops) {
    // Dense, or a resource (blocks read in place from the model's file).
    auto source = op.getBlocks().getDefiningOp<ConstOp>();
    auto blocks =
        source ? dyn_cast<ElementsAttr>(source.getValue()) : ElementsAttr();
    std::vector<char> splat;
    std::optional<ArrayRef<char>> raw =
        blocks ? tract::constantBytes(blocks) : std::nullopt;
    if (!raw) {
      auto dense = blocks ? dyn_cast<DenseElementsAttr>(blocks) : nullptr;
      if (!dense)
        continue;
      splat = blockBytes(dense);
      raw = ArrayRef<char>(splat);
    }
    std::vector<float> values = dequantizeQ4_0(ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(raw->data()), raw->size()));
    OpBuilder b(op);
    auto folded = ConstOp::create(
        b, op.getLoc(), op.getType(),
        cast<ElementsAttr>(
            DenseElementsAttr::get(op.getType(), ArrayRef<float>(values))));
    op.getOutput().replaceAllUsesWith(folded.getOutput());
    op.erase();
    if (source && source->use_empty())
      source->erase();
  }
}
