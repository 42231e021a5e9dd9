#include "dialects/tract/TractFolding.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::tract;

namespace {

/// A constant operand worth folding: dense, with a static shape, and small
/// enough (or a splat).
DenseElementsAttr foldable(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || !dense.getType().hasStaticShape())
    return {};
  if (!dense.isSplat() && dense.getNumElements() > kFoldElementBudget)
    return {};
  return dense;
}

RankedTensorType staticResult(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getEncoding())
    return {};
  return tensor;
}

bool isBool(Type type) { return type.isInteger(1); }

/// Calls `fn(i, j)` with the flat indices in `lhs` and `rhs` of each element
/// of their broadcast `out`, in row-major order.
void forEachBroadcastPair(ArrayRef<int64_t> out, ArrayRef<int64_t> lhs,
                          ArrayRef<int64_t> rhs,
                          function_ref<void(int64_t, int64_t)> fn) {
  size_t rank = out.size();
  SmallVector<int64_t> lhsStrides(rank, 0), rhsStrides(rank, 0);
  int64_t lhsStride = 1, rhsStride = 1;
  for (size_t i = rank; i-- > 0;) {
    lhsStrides[i] = lhs[i] == 1 ? 0 : lhsStride;
    rhsStrides[i] = rhs[i] == 1 ? 0 : rhsStride;
    lhsStride *= lhs[i];
    rhsStride *= rhs[i];
  }
  int64_t total = 1;
  for (int64_t d : out)
    total *= d;
  SmallVector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t i = 0, j = 0;
    for (size_t a = 0; a < rank; ++a) {
      i += index[a] * lhsStrides[a];
      j += index[a] * rhsStrides[a];
    }
    fn(i, j);
    for (size_t a = rank; a-- > 0;) {
      if (++index[a] < out[a])
        break;
      index[a] = 0;
    }
  }
}

template <typename In, typename Out>
Attribute
broadcastFold(DenseElementsAttr lhs, DenseElementsAttr rhs,
              RankedTensorType resultType,
              function_ref<std::optional<Out>(const In &, const In &)> fn) {
  if (lhs.getType().getRank() != resultType.getRank() ||
      rhs.getType().getRank() != resultType.getRank())
    return {};
  if (lhs.isSplat() && rhs.isSplat()) {
    std::optional<Out> value =
        fn(lhs.getSplatValue<In>(), rhs.getSplatValue<In>());
    if (!value)
      return {};
    return DenseElementsAttr::get(resultType, ArrayRef<Out>(*value));
  }
  if (resultType.getNumElements() > kFoldElementBudget)
    return {};
  SmallVector<In> l(lhs.getValues<In>()), r(rhs.getValues<In>());
  SmallVector<Out> out;
  bool ok = true;
  forEachBroadcastPair(resultType.getShape(), lhs.getType().getShape(),
                       rhs.getType().getShape(), [&](int64_t i, int64_t j) {
                         if (!ok)
                           return;
                         std::optional<Out> value = fn(l[i], r[j]);
                         if (value)
                           out.push_back(*value);
                         else
                           ok = false;
                       });
  if (!ok)
    return {};
  return DenseElementsAttr::get(resultType, ArrayRef<Out>(out));
}

template <typename T>
Attribute mapElements(DenseElementsAttr input, RankedTensorType resultType,
                      function_ref<std::optional<T>(const T &)> fn) {
  if (input.isSplat()) {
    std::optional<T> value = fn(input.getSplatValue<T>());
    if (!value)
      return {};
    return DenseElementsAttr::get(resultType, ArrayRef<T>(*value));
  }
  SmallVector<T> out;
  for (T value : input.getValues<T>()) {
    std::optional<T> mapped = fn(value);
    if (!mapped)
      return {};
    out.push_back(*mapped);
  }
  return DenseElementsAttr::get(resultType, ArrayRef<T>(out));
}

} // namespace

Attribute mlir::tract::foldUnary(Attribute input, Type resultType,
                                 FloatUnaryFn floatFn, IntUnaryFn intFn) {
  DenseElementsAttr dense = foldable(input);
  RankedTensorType type = staticResult(resultType);
  if (!dense || !type)
    return {};
  Type elementType = type.getElementType();
  if (isa<FloatType>(elementType) && floatFn)
    return mapElements<APFloat>(
        dense, type,
        [&](const APFloat &v) -> std::optional<APFloat> { return floatFn(v); });
  if (isa<IntegerType>(elementType) && !isBool(elementType) && intFn) {
    bool isUnsigned = elementType.isUnsignedInteger();
    return mapElements<APInt>(
        dense, type, [&](const APInt &v) { return intFn(v, isUnsigned); });
  }
  return {};
}

Attribute mlir::tract::foldUnaryViaDouble(Attribute input, Type resultType,
                                          double (*fn)(double)) {
  return foldUnary(input, resultType, [&](const APFloat &v) {
    APFloat result(fn(v.convertToDouble()));
    bool lost;
    result.convert(v.getSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return result;
  });
}

Attribute mlir::tract::foldFloatTest(Attribute input, Type resultType,
                                     function_ref<bool(const APFloat &)> test) {
  DenseElementsAttr dense = foldable(input);
  RankedTensorType type = staticResult(resultType);
  if (!dense || !type || !isa<FloatType>(dense.getElementType()))
    return {};
  if (dense.isSplat())
    return DenseElementsAttr::get(type, test(dense.getSplatValue<APFloat>()));
  SmallVector<bool> out;
  for (const APFloat &v : dense.getValues<APFloat>())
    out.push_back(test(v));
  return DenseElementsAttr::get(type, ArrayRef<bool>(out));
}

Attribute mlir::tract::foldBinary(Attribute lhs, Attribute rhs, Type resultType,
                                  FloatBinaryFn floatFn, IntBinaryFn intFn) {
  DenseElementsAttr l = foldable(lhs), r = foldable(rhs);
  RankedTensorType type = staticResult(resultType);
  if (!l || !r || !type)
    return {};
  Type elementType = type.getElementType();
  if (isa<FloatType>(elementType) && floatFn)
    return broadcastFold<APFloat, APFloat>(l, r, type, floatFn);
  if (isa<IntegerType>(elementType) && intFn) {
    bool isUnsigned = elementType.isUnsignedInteger();
    return broadcastFold<APInt, APInt>(l, r, type,
                                       [&](const APInt &a, const APInt &b) {
                                         return intFn(a, b, isUnsigned);
                                       });
  }
  return {};
}

Attribute mlir::tract::foldPredicate(Attribute lhs, Attribute rhs,
                                     Type resultType, FloatPredicateFn floatFn,
                                     IntPredicateFn intFn) {
  DenseElementsAttr l = foldable(lhs), r = foldable(rhs);
  RankedTensorType type = staticResult(resultType);
  if (!l || !r || !type)
    return {};
  Type elementType = l.getElementType();
  if (isa<FloatType>(elementType))
    return broadcastFold<APFloat, bool>(
        l, r, type, [&](const APFloat &a, const APFloat &b) {
          return std::optional<bool>(floatFn(a, b));
        });
  if (isa<IntegerType>(elementType)) {
    bool isUnsigned = elementType.isUnsignedInteger();
    return broadcastFold<APInt, bool>(
        l, r, type, [&](const APInt &a, const APInt &b) {
          return std::optional<bool>(intFn(a, b, isUnsigned));
        });
  }
  return {};
}

bool mlir::tract::isSplatOf(Attribute attr, int64_t value) {
  auto splat = dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type elementType = splat.getElementType();
  if (isa<FloatType>(elementType))
    return splat.getSplatValue<APFloat>().isExactlyValue(value);
  if (isBool(elementType))
    return false; // booleans have no arithmetic neutral elements
  if (isa<IntegerType>(elementType))
    return splat.getSplatValue<APInt>() == value;
  return false;
}

Attribute mlir::tract::foldCast(Attribute input, Type resultType) {
  DenseElementsAttr dense = foldable(input);
  RankedTensorType type = staticResult(resultType);
  if (!dense || !type)
    return {};
  Type from = dense.getElementType(), to = type.getElementType();
  auto convertOne = [&](Attribute element) -> Attribute {
    if (auto f = dyn_cast<FloatAttr>(element)) {
      APFloat value = f.getValue();
      if (auto toFloat = dyn_cast<FloatType>(to)) {
        bool lost;
        value.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                      &lost);
        return FloatAttr::get(to, value);
      }
      if (isBool(to))
        return IntegerAttr::get(to, APInt(1, !value.isZero()));
      if (value.isNaN() || value.isInfinity())
        return {}; // undefined for integers: leave it to run time
      APSInt result(to.getIntOrFloatBitWidth(), to.isUnsignedInteger());
      bool exact;
      if (value.convertToInteger(result, APFloat::rmTowardZero, &exact) &
          APFloat::opInvalidOp)
        return {};
      return IntegerAttr::get(to, result);
    }
    APInt value = cast<IntegerAttr>(element).getValue();
    bool fromUnsigned = from.isUnsignedInteger() || isBool(from);
    if (auto toFloat = dyn_cast<FloatType>(to)) {
      APFloat result(toFloat.getFloatSemantics());
      result.convertFromAPInt(value, !fromUnsigned,
                              APFloat::rmNearestTiesToEven);
      return FloatAttr::get(to, result);
    }
    if (isBool(to))
      return IntegerAttr::get(to, APInt(1, !value.isZero()));
    unsigned width = to.getIntOrFloatBitWidth();
    return IntegerAttr::get(to, fromUnsigned ? value.zextOrTrunc(width)
                                             : value.sextOrTrunc(width));
  };
  if (dense.isSplat()) {
    Attribute value = convertOne(dense.getSplatValue<Attribute>());
    return value ? DenseElementsAttr::get(type, value) : Attribute();
  }
  SmallVector<Attribute> out;
  for (Attribute element : dense.getValues<Attribute>()) {
    Attribute value = convertOne(element);
    if (!value)
      return {};
    out.push_back(value);
  }
  return DenseElementsAttr::get(type, out);
}
