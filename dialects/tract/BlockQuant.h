//===- BlockQuant.h - tract's Q4_0 block quantization -----------*- C++ -*-===//
//
// Q4_0 as tract stores it: each run of 32 values is a block of 18 bytes, an
// f16 scale d (little-endian) then 16 bytes of 4-bit codes q, two per byte
// in order with the low nibble first; each value is (q - 8) * d. Blocks run
// over a tensor in row-major order.
//
//===----------------------------------------------------------------------===//

#ifndef TRACT_DIALECTS_TRACT_BLOCKQUANT_H
#define TRACT_DIALECTS_TRACT_BLOCKQUANT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::tract {

constexpr int64_t kQ4_0BlockValues = 32;
constexpr int64_t kQ4_0BlockBytes = 18;

float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

/// The scale of `block` (kQ4_0BlockBytes bytes).
inline float q4_0Scale(const uint8_t *block) {
  return halfToFloat(uint16_t(block[0] | (block[1] << 8)));
}

/// The 4-bit code of value `i` (0 to 31) of `block`, 0 to 15.
inline uint8_t q4_0Code(const uint8_t *block, int64_t i) {
  uint8_t pair = block[2 + i / 2];
  return i % 2 ? pair >> 4 : pair & 0x0f;
}

/// `values.size()` (a multiple of kQ4_0BlockValues) values as Q4_0 blocks.
/// A block whose values are already those of a Q4_0 block (weights read
/// from a Q4_0 file) is encoded exactly. Otherwise the value of largest
/// magnitude maps to code 0, so that the scale is that value / -8 (rounded
/// to f16), and the others round to the nearest code.
std::vector<uint8_t> quantizeQ4_0(llvm::ArrayRef<float> values);
/// The same, written to `bytes` (values.size() / kQ4_0BlockValues blocks).
void quantizeQ4_0(llvm::ArrayRef<float> values, uint8_t *bytes);

/// The bytes of a block-quantized constant (i8), a splat one repeated.
std::vector<char> blockBytes(mlir::DenseElementsAttr weights);

/// The values of `blocks`, kQ4_0BlockValues per block.
std::vector<float> dequantizeQ4_0(llvm::ArrayRef<uint8_t> blocks);

} // namespace mlir::tract

#endif // TRACT_DIALECTS_TRACT_BLOCKQUANT_H
