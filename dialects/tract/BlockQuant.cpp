//===- BlockQuant.cpp - tract's Q4_0 block quantization -------------------===//

#include "dialects/tract/BlockQuant.h"

#include "llvm/ADT/APFloat.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir::tract;

float mlir::tract::halfToFloat(uint16_t bits) {
  llvm::APFloat value(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToFloat();
}

uint16_t mlir::tract::floatToHalf(float number) {
  llvm::APFloat value(number);
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return uint16_t(value.bitcastToAPInt().getZExtValue());
}

namespace {

void setCode(uint8_t *block, int64_t i, uint8_t code) {
  block[2 + i / 2] |= i % 2 ? uint8_t(code << 4) : code;
}

void setScale(uint8_t *block, uint16_t half) {
  block[0] = uint8_t(half & 0xff);
  block[1] = uint8_t(half >> 8);
}

/// Writes `in` into `out` (zeroed) when its values are exactly those of
/// some Q4_0 block: (q - 8) * d with q in 0..15 and d an f16. The value of
/// largest magnitude is then c * d for some c in -8..7: each c is tried.
bool encodeExactly(llvm::ArrayRef<float> in, uint8_t *out) {
  float extreme = 0;
  for (float value : in)
    if (std::fabs(value) > std::fabs(extreme))
      extreme = value;
  if (extreme == 0 || !std::isfinite(extreme))
    return false;
  for (int c : {-8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7}) {
    uint16_t half = floatToHalf(extreme / float(c));
    float scale = halfToFloat(half);
    if (scale == 0 || !std::isfinite(scale))
      continue;
    bool exact = true;
    for (float value : in) {
      float ratio = value / scale;
      if (ratio != std::nearbyint(ratio) || ratio < -8 || ratio > 7 ||
          ratio * scale != value) {
        exact = false;
        break;
      }
    }
    if (!exact)
      continue;
    setScale(out, half);
    for (auto [i, value] : llvm::enumerate(in))
      setCode(out, i, uint8_t(int(value / scale) + 8));
    return true;
  }
  return false;
}

} // namespace

void mlir::tract::quantizeQ4_0(llvm::ArrayRef<float> values, uint8_t *bytes) {
  size_t blocks = values.size() / kQ4_0BlockValues;
  std::memset(bytes, 0, blocks * kQ4_0BlockBytes);
  for (size_t block = 0; block < blocks; ++block) {
    llvm::ArrayRef<float> in =
        values.slice(block * kQ4_0BlockValues, kQ4_0BlockValues);
    uint8_t *out = bytes + block * kQ4_0BlockBytes;
    if (encodeExactly(in, out))
      continue;
    float extreme = 0;
    for (float value : in)
      if (std::fabs(value) > std::fabs(extreme))
        extreme = value;
    uint16_t half = floatToHalf(extreme / -8.0f);
    float scale = halfToFloat(half);
    float inverse = scale != 0 ? 1.0f / scale : 0.0f;
    setScale(out, half);
    for (int64_t i = 0; i < kQ4_0BlockValues; ++i) {
      // Two statements: no fused multiply-add, as in the reference.
      float scaled = in[i] * inverse;
      float code = std::floor(scaled + 8.5f);
      if (!std::isfinite(code)) // callers keep non-finite weights in f32
        code = 8;
      setCode(out, i, uint8_t(std::clamp(code, 0.0f, 15.0f)));
    }
  }
}

std::vector<uint8_t> mlir::tract::quantizeQ4_0(llvm::ArrayRef<float> values) {
  std::vector<uint8_t> bytes(values.size() / kQ4_0BlockValues *
                             kQ4_0BlockBytes);
  quantizeQ4_0(values, bytes.data());
  return bytes;
}

std::vector<char> mlir::tract::blockBytes(mlir::DenseElementsAttr weights) {
  llvm::ArrayRef<char> raw = weights.getRawData();
  if (!weights.isSplat())
    return std::vector<char>(raw.begin(), raw.end());
  return std::vector<char>(weights.getNumElements(), raw.front());
}

std::vector<float> mlir::tract::dequantizeQ4_0(llvm::ArrayRef<uint8_t> blocks) {
  size_t count = blocks.size() / kQ4_0BlockBytes;
  std::vector<float> values(count * kQ4_0BlockValues);
  for (size_t block = 0; block < count; ++block) {
    const uint8_t *in = blocks.data() + block * kQ4_0BlockBytes;
    float scale = q4_0Scale(in);
    for (int64_t i = 0; i < kQ4_0BlockValues; ++i)
      values[block * kQ4_0BlockValues + i] =
          float(int(q4_0Code(in, i)) - 8) * scale;
  }
  return values;
}
