#include "dialects/tract/TractQuant.h"

#include "dialects/tract/TractOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tract;

quant::UniformQuantizedType mlir::tract::getQuantizedElement(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  return dyn_cast<quant::UniformQuantizedType>(type);
}

quant::UniformQuantizedType
mlir::tract::getQuantizedType(MLIRContext *context, unsigned bits,
                              bool isSigned, double scale, int64_t zeroPoint,
                              std::string &why) {
  if (bits != 8 && bits != 32) {
    why = std::to_string(bits) + "-bit quantized integers are not supported "
                                 "(tract has 8 and 32)";
    return {};
  }
  if (bits == 32 && !isSigned) {
    why = "32-bit quantized integers are signed";
    return {};
  }
  if (!(scale > 0) || !std::isfinite(scale)) {
    why = "a quantization scale must be positive and finite";
    return {};
  }
  int64_t lo = isSigned ? -(int64_t(1) << (bits - 1)) : 0;
  int64_t hi =
      isSigned ? (int64_t(1) << (bits - 1)) - 1 : (int64_t(1) << bits) - 1;
  // tract shifts by the zero point in i32: it need not be representable in
  // the storage type (copy-requant's QI8 with zero point -128 is), but it
  // must be within i32.
  if (zeroPoint < INT32_MIN || zeroPoint > INT32_MAX) {
    why = "zero point " + std::to_string(zeroPoint) + " is out of range";
    return {};
  }
  auto storage = IntegerType::get(context, bits);
  auto expressed = Float32Type::get(context);
  return quant::UniformQuantizedType::getChecked(
      [&] { return emitError(UnknownLoc::get(context)); },
      isSigned ? quant::QuantizationFlags::Signed : 0, storage, expressed,
      scale, zeroPoint, lo, hi);
}

Type mlir::tract::getStorageType(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    Type element = getStorageType(shaped.getElementType());
    return element == shaped.getElementType() ? type : shaped.clone(element);
  }
  auto quantized = dyn_cast<quant::UniformQuantizedType>(type);
  if (!quantized)
    return type;
  return IntegerType::get(
      type.getContext(), quantized.getStorageTypeIntegralWidth(),
      quantized.isSigned() ? IntegerType::Signless : IntegerType::Unsigned);
}

bool mlir::tract::sameUpToQuantization(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual)) {
    if (a == b)
      continue;
    auto at = dyn_cast<RankedTensorType>(a), bt = dyn_cast<RankedTensorType>(b);
    if (!at || !bt || !isQuantized(at) || !isQuantized(bt) ||
        at.getShape() != bt.getShape() || at.getEncoding() != bt.getEncoding())
      return false;
  }
  return true;
}

Type mlir::tract::keepQuantization(Type inferred, Type declared) {
  auto tensor = dyn_cast<RankedTensorType>(inferred);
  auto element = getQuantizedElement(declared);
  if (!tensor || !element || !isQuantized(tensor) || !isa<ShapedType>(declared))
    return inferred;
  return tensor.clone(element);
}

std::string mlir::tract::quantizedTypeName(quant::UniformQuantizedType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << (type.isSigned() ? "QI" : "QU") << type.getStorageTypeIntegralWidth()
     << "(Z:" << type.getZeroPoint() << " S:" << type.getScale() << ")";
  return text;
}

bool mlir::tract::isQuantizedArithmetic(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, MinOp, MaxOp>(op);
}
