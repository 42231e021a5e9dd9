//===- BlockQuant.cpp - constant weights of products as Q4_0 blocks -------===//
//
// tract's `block-quant` transform: the weights of a product of rows by a
// constant matrix are stored as Q4_0 blocks along the summed axis, and the
// product becomes tract.block_quant_matmul, whose lowering decodes the
// blocks in its inner loop. A quarter of a byte and a bit per weight
// instead of four: decoding a token reads about 7 times fewer bytes.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/EinsumExpr.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

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
  auto name = dyn_cast<NameLoc>(op->getLoc());
  if (!name)
    return false;
  StringRef text = name.getName().strref();
  for (StringRef word : {"embed", "Embed", "norm", "Norm", "pooler",
                         "classifier", "lm_head", "logits"})
    if (text.contains(word))
      return true;
  return false;
}

/// Lanes of the kernels' column groups: n must fill them.
constexpr int64_t kColumnGroup = 16;
/// Smaller weights are not worth it (tract's threshold).
constexpr int64_t kMinimumWeights = 1 << 14;

/// `einsum` as a block-quantized product, when it is one of rows by a
/// constant matrix that may be quantized.
void quantize(OpBuilder &b, EinsumOp einsum) {
  if (einsum.getInputs().size() != 2 ||
      !getElementTypeOrSelf(einsum.getType()).isF32())
    return;
  EinsumExpr expr = EinsumExpr::parse(einsum.getExpr());
  for (unsigned slot = 0; slot < 2; ++slot) {
    auto constant = einsum.getInputs()[slot].getDefiningOp<ConstOp>();
    Value rows = einsum.getInputs()[1 - slot];
    if (!constant || isProtected(constant) || isProtected(einsum))
      continue;
    auto weights = dyn_cast<DenseElementsAttr>(constant.getValue());
    const std::string &spec = expr.inputs[slot];
    const std::string &rowSpec = expr.inputs[1 - slot];
    if (!weights || !weights.getElementType().isF32() || rowSpec.empty())
      continue;
    // rows ...k, weights with k and n (and axes of 1 that broadcast),
    // output ...n.
    char k = rowSpec.back();
    std::string prefix = rowSpec.substr(0, rowSpec.size() - 1);
    auto type = cast<RankedTensorType>(weights.getType());
    size_t kAxis = spec.find(k), nAxis = std::string::npos;
    bool otherAxesOfOne = true;
    for (auto [axis, letter] : llvm::enumerate(spec)) {
      if (axis == kAxis || type.getDimSize(axis) == 1)
        continue;
      if (nAxis != std::string::npos)
        otherAxesOfOne = false;
      nAxis = axis;
    }
    if (kAxis == std::string::npos || nAxis == std::string::npos ||
        !otherAxesOfOne || spec.find(k, kAxis + 1) != std::string::npos)
      continue;
    char n = spec[nAxis];
    if (expr.output != prefix + n || prefix.find(k) != std::string::npos ||
        prefix.find(n) != std::string::npos ||
        spec.find(n, nAxis + 1) != std::string::npos)
      continue;
    int64_t kSize = type.getDimSize(kAxis), nSize = type.getDimSize(nAxis);
    Shape rowShape = getShape(rows);
    if (rowShape.back() != TDim(kSize) || kSize % kQ4_0BlockValues != 0 ||
        nSize % kColumnGroup != 0 || kSize * nSize < kMinimumWeights)
      continue;

    // The matrix n x k, quantized row by row (the other axes are 1).
    SmallVector<float> values(weights.getValues<float>());
    if (!llvm::all_of(values, [](float value) { return std::isfinite(value); }))
      continue;
    int64_t kStride = 1, nStride = 1;
    for (int64_t axis = type.getRank() - 1; axis >= 0; --axis) {
      if (axis > int64_t(kAxis))
        kStride *= type.getDimSize(axis);
      if (axis > int64_t(nAxis))
        nStride *= type.getDimSize(axis);
    }
    std::vector<float> nk(values.size());
    for (int64_t i = 0; i < nSize; ++i)
      for (int64_t j = 0; j < kSize; ++j)
        nk[i * kSize + j] = values[i * nStride + j * kStride];
    std::vector<uint8_t> blocks = quantizeQ4_0(nk);
    auto blockType = RankedTensorType::get(
        {nSize, kSize / kQ4_0BlockValues, kQ4_0BlockBytes}, b.getI8Type());
    auto blockValues = DenseElementsAttr::getFromRawBuffer(
        blockType, ArrayRef<char>(reinterpret_cast<const char *>(blocks.data()),
                                  blocks.size()));
    b.setInsertionPoint(einsum);
    Location weightsLoc = constant.getLoc();
    if (auto name = dyn_cast<NameLoc>(weightsLoc))
      weightsLoc =
          NameLoc::get(b.getStringAttr(name.getName().strref() + ".q4_0"),
                       name.getChildLoc());
    Value packed = ConstOp::create(b, weightsLoc, blockType, blockValues);
    auto product = BlockQuantMatmulOp::create(b, einsum.getLoc(),
                                              einsum.getType(), rows, packed);
    einsum.replaceAllUsesWith(product.getOutput());
    einsum.erase();
    if (constant->use_empty())
      constant.erase();
    return;
  }
}

struct TractBlockQuant
    : public tract::impl::TractBlockQuantBase<TractBlockQuant> {
  void runOnOperation() override {
    SmallVector<EinsumOp> einsums;
    getOperation().walk([&](EinsumOp op) { einsums.push_back(op); });
    OpBuilder b(&getContext());
    for (EinsumOp einsum : einsums)
      quantize(b, einsum);
  }
};

} // namespace
