//===- TractQuant.h - tract's quantized datum types -------------*- C++ -*-===//
//
// tract's QU8, QI8 and QI32 are MLIR's uniform quantized types
// (`!quant.uniform<u8:f32, 0.5:128>`): an integer q stands for the real
// value scale * (q - zero_point). These helpers map them to the plain
// integers that hold them and name them as tract does.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTQUANT_H
#define DIALECTS_TRACT_TRACTQUANT_H

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/TypeRange.h"

#include <string>

namespace mlir::tract {

/// The quantized element type of `type` (an element or a tensor type), if
/// it has one.
quant::UniformQuantizedType getQuantizedElement(Type type);
inline bool isQuantized(Type type) {
  return static_cast<bool>(getQuantizedElement(type));
}

/// tract's quantized type of `bits` (8 or 32) signed or unsigned integers;
/// a null type, with a message in `why`, for parameters it cannot hold.
quant::UniformQuantizedType getQuantizedType(MLIRContext *context,
                                             unsigned bits, bool isSigned,
                                             double scale, int64_t zeroPoint,
                                             std::string &why);

/// The integer type holding a quantized element (`ui8` for QU8, `i8` for
/// QI8, `i32` for QI32, in tract-opl's spelling of signedness); other
/// types unchanged. On a tensor type, its element type is replaced.
Type getStorageType(Type type);

/// Whether each type of `inferred` equals the one of `actual`, or both are
/// tensors of one shape with quantized elements: an op computing on
/// quantized values may requantize its result to other parameters.
bool sameUpToQuantization(TypeRange inferred, TypeRange actual);

/// The type `inferred` for a result declared `declared`: when both are
/// tensors of quantized elements, the inferred shape with the declared
/// element type (an op's requantized result keeps its parameters through
/// shape inference); else `inferred`.
Type keepQuantization(Type inferred, Type declared);

/// Whether `op` is one of the binary operators that compute on quantized
/// operands of one type (add, sub, mul, div, min, max) and requantize to
/// their result's type; other ops take real values.
bool isQuantizedArithmetic(Operation *op);

/// tract's spelling: `QU8(Z:128 S:0.5)`.
std::string quantizedTypeName(quant::UniformQuantizedType type);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTQUANT_H
