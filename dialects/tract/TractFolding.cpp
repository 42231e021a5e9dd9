#include "dialects/tract/TractFolding.h"

#include "dialects/tract/EinsumExpr.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APSInt.h"

#include "llvm/Support/Process.h"

#include <cstring>
#include <map>
#include <sys/mman.h>
#include <vector>

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
  // Folding may run before the op is verified (importers fold as they
  // build): operands of another type than the op reads are not folded.
  if (lhs.getType().getRank() != resultType.getRank() ||
      rhs.getType().getRank() != resultType.getRank() ||
      lhs.getElementType() != rhs.getElementType())
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
  if (!dense || !type || dense.getElementType() != type.getElementType())
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
  if (!l || !r || !type || l.getElementType() != type.getElementType())
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

//===----------------------------------------------------------------------===//
// Data movement, reductions and contractions
//===----------------------------------------------------------------------===//

namespace {

/// Calls `fn` with each multi-index of `shape` in row-major order, until it
/// returns false; returns false if it did.
bool forEachIndex(ArrayRef<int64_t> shape,
                  function_ref<bool(ArrayRef<int64_t>)> fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    if (!fn(index))
      return false;
    for (size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a])
        break;
      index[a] = 0;
    }
  }
  return true;
}

/// The elements of a dense constant as bytes, for element types stored a
/// whole number of bytes each (not i1, index or complex).
struct RawElements {
  ArrayRef<char> data;
  size_t size; ///< bytes per element
  bool splat;  ///< one element stands for all
  const char *at(int64_t i) const {
    return data.data() + (splat ? 0 : i * size);
  }
};

std::optional<RawElements> getRawElements(DenseElementsAttr dense) {
  Type type = dense.getElementType();
  if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return RawElements{dense.getRawData(), type.getIntOrFloatBitWidth() / 8,
                     dense.isSplat()};
}

/// An operand and a result with the same element type, small enough to fold.
bool sameElementType(DenseElementsAttr input, RankedTensorType type) {
  return input && type && input.getElementType() == type.getElementType();
}

} // namespace

SmallVector<int64_t> mlir::tract::getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

Attribute mlir::tract::foldIndexMap(Attribute input, Type resultType,
                                    IndexMapFn source, Attribute fill) {
  DenseElementsAttr dense = foldable(input);
  RankedTensorType type = staticResult(resultType);
  if (!sameElementType(dense, type) ||
      type.getNumElements() > kFoldElementBudget)
    return {};
  int64_t count = dense.getNumElements();
  // Bytes moved as bytes: a constant of a million floats (a model's STFT
  // basis) is sliced in milliseconds, not as a million attributes.
  if (std::optional<RawElements> raw = getRawElements(dense)) {
    std::optional<RawElements> filler;
    if (fill)
      filler = getRawElements(DenseElementsAttr::get(
          RankedTensorType::get({1}, type.getElementType()), fill));
    std::vector<char> out;
    out.reserve(type.getNumElements() * raw->size);
    bool ok = forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
      std::optional<int64_t> i = source(index);
      if (!i || *i >= count || *i < -1 || (*i == -1 && !filler))
        return false;
      const char *from = *i == -1 ? filler->at(0) : raw->at(*i);
      out.insert(out.end(), from, from + raw->size);
      return true;
    });
    if (!ok)
      return {};
    return DenseElementsAttr::getFromRawBuffer(type, out);
  }
  SmallVector<Attribute> values(dense.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(type.getNumElements());
  bool ok = forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    std::optional<int64_t> i = source(index);
    if (!i || *i >= count || *i < -1 || (*i == -1 && !fill))
      return false;
    out.push_back(*i == -1 ? fill : values[*i]);
    return true;
  });
  if (!ok)
    return {};
  return DenseElementsAttr::get(type, out);
}

Attribute mlir::tract::foldConcat(ArrayRef<Attribute> inputs, Type resultType,
                                  int64_t axis) {
  RankedTensorType type = staticResult(resultType);
  if (!type || type.getNumElements() > kFoldElementBudget)
    return {};
  SmallVector<DenseElementsAttr> denses;
  SmallVector<int64_t> chunks;
  for (Attribute input : inputs) {
    DenseElementsAttr dense = foldable(input);
    if (!sameElementType(dense, type))
      return {};
    ArrayRef<int64_t> shape = dense.getType().getShape();
    chunks.push_back(getStrides(shape)[axis] * shape[axis]);
    denses.push_back(dense);
  }
  int64_t outer = 1;
  for (int64_t d : type.getShape().take_front(axis))
    outer *= d;
  SmallVector<std::optional<RawElements>> raws;
  for (DenseElementsAttr dense : denses)
    raws.push_back(getRawElements(dense));
  if (llvm::all_of(raws, [](const auto &raw) { return raw.has_value(); })) {
    size_t size = type.getElementTypeBitWidth() / 8;
    std::vector<char> out;
    out.reserve(type.getNumElements() * size);
    for (int64_t o = 0; o < outer; ++o)
      for (auto [chunk, raw] : llvm::zip(chunks, raws)) {
        if (raw->splat) {
          for (int64_t e = 0; e < chunk; ++e)
            out.insert(out.end(), raw->at(0), raw->at(0) + size);
        } else {
          const char *from = raw->at(o * chunk);
          out.insert(out.end(), from, from + chunk * size);
        }
      }
    return DenseElementsAttr::getFromRawBuffer(type, out);
  }
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr dense : denses)
    values.emplace_back(dense.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(type.getNumElements());
  for (int64_t o = 0; o < outer; ++o)
    for (auto [chunk, elements] : llvm::zip(chunks, values))
      llvm::append_range(out,
                         ArrayRef<Attribute>(elements).slice(o * chunk, chunk));
  return DenseElementsAttr::get(type, out);
}

SmallVector<int64_t> mlir::tract::readIntValues(DenseElementsAttr dense) {
  bool isUnsigned = dense.getElementType().isUnsignedInteger() ||
                    isBool(dense.getElementType());
  SmallVector<int64_t> values;
  values.reserve(dense.getNumElements());
  for (const APInt &value : dense.getValues<APInt>())
    values.push_back(isUnsigned ? value.getZExtValue() : value.getSExtValue());
  return values;
}

std::optional<SmallVector<int64_t>> mlir::tract::getIntValues(Attribute attr) {
  DenseElementsAttr dense = foldable(attr);
  if (!dense || !isa<IntegerType>(dense.getElementType()))
    return std::nullopt;
  return readIntValues(dense);
}

namespace {

/// Calls `fn(position, flatIndex)` for each input element reduced into the
/// result element at `outIndex`.
void forEachReduced(ArrayRef<int64_t> outIndex, ArrayRef<int64_t> strides,
                    ArrayRef<int64_t> axes, ArrayRef<int64_t> window,
                    function_ref<void(int64_t, int64_t)> fn) {
  int64_t base = 0;
  for (auto [i, stride] : llvm::zip(outIndex, strides))
    base += i * stride;
  int64_t position = 0;
  forEachIndex(window, [&](ArrayRef<int64_t> offsets) {
    int64_t flat = base;
    for (auto [offset, axis] : llvm::zip(offsets, axes))
      flat += offset * strides[axis];
    fn(position++, flat);
    return true;
  });
}

template <typename T>
Attribute reduceWith(ArrayRef<T> values, RankedTensorType inputType,
                     RankedTensorType type, ArrayRef<int64_t> axes,
                     function_ref<Attribute(ArrayRef<T>)> combine) {
  SmallVector<int64_t> strides = getStrides(inputType.getShape());
  SmallVector<int64_t> window;
  for (int64_t axis : axes)
    window.push_back(inputType.getDimSize(axis));
  SmallVector<Attribute> out;
  SmallVector<T> group;
  bool ok = forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index) {
    group.clear();
    forEachReduced(index, strides, axes, window, [&](int64_t, int64_t flat) {
      group.push_back(values[flat]);
    });
    Attribute value = combine(group);
    out.push_back(value);
    return static_cast<bool>(value);
  });
  if (!ok)
    return {};
  return DenseElementsAttr::get(type, out);
}

/// The position of the extremum of `values`: the first one, or the last with
/// `last`. `better(a, b)` tells whether a strictly beats b.
template <typename T, typename Better>
int64_t argExtremum(ArrayRef<T> values, bool last, Better better) {
  int64_t best = 0;
  for (int64_t i = 1, e = values.size(); i < e; ++i)
    if (better(values[i], values[best]) ||
        (last && !better(values[best], values[i])))
      best = i;
  return best;
}

} // namespace

Attribute mlir::tract::foldReduce(Attribute input, Type resultType,
                                  ArrayRef<int64_t> axes, Reducer reducer,
                                  bool last) {
  DenseElementsAttr dense = foldable(input);
  RankedTensorType type = staticResult(resultType);
  if (!dense || !type)
    return {};
  auto inputType = cast<RankedTensorType>(dense.getType());
  // An empty group has no first value to start from: left to the run.
  for (int64_t axis : axes)
    if (axis < 0 || axis >= inputType.getRank() ||
        inputType.getDimSize(axis) == 0)
      return {};
  Type elementType = inputType.getElementType();
  Type outType = type.getElementType();
  // argmax and argmin give an index whatever the element type.
  auto argReduction = [&](auto group, auto greater,
                          auto less) -> std::optional<Attribute> {
    if (reducer != Reducer::ArgMax && reducer != Reducer::ArgMin)
      return std::nullopt;
    int64_t at = reducer == Reducer::ArgMax ? argExtremum(group, last, greater)
                                            : argExtremum(group, last, less);
    return IntegerAttr::get(outType, at);
  };
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values(dense.getValues<APFloat>());
    return reduceWith<APFloat>(
        values, inputType, type, axes,
        [&](ArrayRef<APFloat> group) -> Attribute {
          const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
          auto greater = [](const APFloat &a, const APFloat &b) {
            return a.compare(b) == APFloat::cmpGreaterThan;
          };
          auto less = [](const APFloat &a, const APFloat &b) {
            return a.compare(b) == APFloat::cmpLessThan;
          };
          if (std::optional<Attribute> arg = argReduction(group, greater, less))
            return *arg;
          APFloat acc(semantics);
          switch (reducer) {
          case Reducer::Sum:
          case Reducer::MeanOfSquares:
            acc = APFloat::getZero(semantics);
            for (const APFloat &v : group)
              acc = acc + (reducer == Reducer::Sum ? v : v * v);
            if (reducer == Reducer::MeanOfSquares) {
              APFloat count(semantics);
              count.convertFromAPInt(APInt(64, group.size()), false,
                                     APFloat::rmNearestTiesToEven);
              acc = acc / count;
            }
            break;
          case Reducer::Prod:
            acc = APFloat::getOne(semantics);
            for (const APFloat &v : group)
              acc = acc * v;
            break;
          case Reducer::Min:
          case Reducer::Max:
            acc = group.front();
            for (const APFloat &v : group.drop_front())
              acc = reducer == Reducer::Min ? minimum(acc, v) : maximum(acc, v);
            break;
          default:
            return {};
          }
          return FloatAttr::get(floatType, acc);
        });
  }
  auto intType = dyn_cast<IntegerType>(elementType);
  if (!intType)
    return {};
  bool isUnsigned = intType.isUnsigned();
  SmallVector<APInt> values(dense.getValues<APInt>());
  return reduceWith<APInt>(
      values, inputType, type, axes, [&](ArrayRef<APInt> group) -> Attribute {
        auto greater = [&](const APInt &a, const APInt &b) {
          return isUnsigned ? a.ugt(b) : a.sgt(b);
        };
        auto less = [&](const APInt &a, const APInt &b) {
          return isUnsigned ? a.ult(b) : a.slt(b);
        };
        if (std::optional<Attribute> arg = argReduction(group, greater, less))
          return *arg;
        APInt acc = group.front();
        switch (reducer) {
        case Reducer::Sum:
          for (const APInt &v : group.drop_front())
            acc += v;
          break;
        case Reducer::Prod:
          for (const APInt &v : group.drop_front())
            acc *= v;
          break;
        case Reducer::Min:
        case Reducer::Max:
        case Reducer::All:
        case Reducer::Any:
          for (const APInt &v : group.drop_front()) {
            bool takeMin = reducer == Reducer::Min || reducer == Reducer::All;
            // On booleans, all is a minimum and any a maximum (unsigned).
            if (takeMin ? (isBool(intType) ? v.ult(acc) : less(v, acc))
                        : (isBool(intType) ? v.ugt(acc) : greater(v, acc)))
              acc = v;
          }
          break;
        default:
          return {};
        }
        return IntegerAttr::get(intType, acc);
      });
}

Attribute mlir::tract::foldEinsum(ArrayRef<Attribute> inputs, Type resultType,
                                  StringRef expr) {
  RankedTensorType type = staticResult(resultType);
  if (!type)
    return {};
  Type elementType = type.getElementType();
  if (!isa<FloatType>(elementType) &&
      !(isa<IntegerType>(elementType) && !isBool(elementType)))
    return {};
  EinsumExpr parsed = EinsumExpr::parse(expr);
  const SmallVector<std::string> &specs = parsed.inputs;
  if (specs.size() != inputs.size())
    return {};
  SmallVector<DenseElementsAttr> operands;
  SmallVector<ArrayRef<int64_t>> shapes;
  for (auto [spec, input] : llvm::zip(specs, inputs)) {
    DenseElementsAttr dense = foldable(input);
    if (!sameElementType(dense, type) ||
        dense.getType().getRank() != static_cast<int64_t>(spec.size()))
      return {};
    operands.push_back(dense);
    shapes.push_back(dense.getType().getShape());
  }
  std::map<char, int64_t> sizes;
  parsed.letterSizes(
      shapes,
      [](int64_t &size, int64_t dim) {
        size = std::max(size, dim);
        return true;
      },
      sizes);
  const std::string &output = parsed.output;
  // Result letters first, then the summed ones.
  std::string letters = parsed.loopLetters();
  SmallVector<int64_t> summedShape;
  int64_t cost = type.getNumElements() * inputs.size();
  for (char letter : StringRef(letters).drop_front(output.size())) {
    summedShape.push_back(sizes[letter]);
    cost *= sizes[letter];
  }
  if (cost > 16 * kFoldElementBudget)
    return {};
  // For each operand and letter position, the stride of that letter (zero
  // where the operand broadcasts it).
  SmallVector<SmallVector<int64_t>> letterStrides;
  for (auto [spec, dense] : llvm::zip(specs, operands)) {
    ArrayRef<int64_t> shape = dense.getType().getShape();
    SmallVector<int64_t> strides = getStrides(shape);
    SmallVector<int64_t> perLetter(letters.size(), 0);
    for (auto [axis, letter] : llvm::enumerate(spec))
      if (shape[axis] != 1)
        perLetter[StringRef(letters).find(letter)] += strides[axis];
    letterStrides.push_back(perLetter);
  }
  auto flatIndex = [&](size_t operand, ArrayRef<int64_t> outIndex,
                       ArrayRef<int64_t> summedIndex) {
    int64_t flat = 0;
    ArrayRef<int64_t> strides = letterStrides[operand];
    for (auto [i, v] : llvm::enumerate(outIndex))
      flat += v * strides[i];
    for (auto [i, v] : llvm::enumerate(summedIndex))
      flat += v * strides[outIndex.size() + i];
    return flat;
  };
  auto contract = [&](auto zero, auto one, auto valuesOf, auto makeAttr) {
    using T = decltype(zero);
    SmallVector<SmallVector<T>> values;
    for (DenseElementsAttr dense : operands)
      values.push_back(valuesOf(dense));
    SmallVector<Attribute> out;
    forEachIndex(type.getShape(), [&](ArrayRef<int64_t> outIndex) {
      T acc = zero;
      forEachIndex(summedShape, [&](ArrayRef<int64_t> summedIndex) {
        T term = one;
        for (size_t k = 0; k < values.size(); ++k)
          term = term * values[k][flatIndex(k, outIndex, summedIndex)];
        acc = acc + term;
        return true;
      });
      out.push_back(makeAttr(acc));
      return true;
    });
    return DenseElementsAttr::get(type, out);
  };
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    return contract(
        APFloat::getZero(semantics), APFloat::getOne(semantics),
        [](DenseElementsAttr d) {
          return SmallVector<APFloat>(d.getValues<APFloat>());
        },
        [&](const APFloat &v) -> Attribute {
          return FloatAttr::get(floatType, v);
        });
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  return contract(
      APInt(width, 0), APInt(width, 1),
      [](DenseElementsAttr d) {
        return SmallVector<APInt>(d.getValues<APInt>());
      },
      [&](const APInt &v) -> Attribute {
        return IntegerAttr::get(elementType, v);
      });
}

std::optional<ArrayRef<char>> mlir::tract::constantBytes(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat() || !dense.getElementType().isIntOrFloat() ||
        dense.getElementType().getIntOrFloatBitWidth() % 8 != 0)
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return std::nullopt;
}

DenseElementsAttr mlir::tract::denseOf(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense;
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  std::optional<ArrayRef<char>> bytes = constantBytes(value);
  if (!resource || !bytes)
    return nullptr;
  auto type = cast<ShapedType>(resource.getType());
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, *bytes, splat) || splat)
    return nullptr;
  return DenseElementsAttr::getFromRawBuffer(type, *bytes);
}

void mlir::tract::dropMappedPages(Attribute value) {
  auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value);
  if (!resource || !resource.getRawHandle().getKey().starts_with(
                       kMappedWeightsPrefix))
    return;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return;
  // The whole pages inside the data.
  uintptr_t page = llvm::sys::Process::getPageSizeEstimate();
  uintptr_t begin = reinterpret_cast<uintptr_t>(blob->getData().data());
  uintptr_t end = begin + blob->getData().size();
  begin = llvm::alignTo(begin, page);
  end = end / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

AsmResourceBlob mlir::tract::allocateWeights(size_t size) {
  void *memory = size ? mmap(nullptr, size, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                      : MAP_FAILED;
  if (memory == MAP_FAILED) {
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(size, 64);
    std::memset(blob.getMutableData().data(), 0, size);
    return blob;
  }
#ifdef MADV_HUGEPAGE
  madvise(memory, size, MADV_HUGEPAGE);
#endif
  return AsmResourceBlob(
      ArrayRef<char>(static_cast<char *>(memory), size), 64,
      [](void *data, size_t size, size_t) { munmap(data, size); },
      /*dataIsMutable=*/true);
}

ElementsAttr
mlir::tract::makeWeights(ShapedType type, StringRef name,
                         function_ref<void(MutableArrayRef<char>)> fill) {
  size_t bytes = type.getNumElements() * (type.getElementTypeBitWidth() / 8);
  if (static_cast<int64_t>(bytes) < kOwnMemoryWeightBytes) {
    std::vector<char> data(bytes, 0);
    fill(data);
    return DenseElementsAttr::getFromRawBuffer(type, data);
  }
  AsmResourceBlob blob = allocateWeights(bytes);
  fill(blob.getMutableData());
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

DenseElementsAttr mlir::tract::transposeDense(DenseElementsAttr value,
                                              ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return nullptr;
  SmallVector<int64_t> shape;
  for (int64_t axis : permutation)
    shape.push_back(type.getDimSize(axis));
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (value.isSplat())
    return value.resizeSplat(resultType);
  // The axes that stay last, in order, move as runs of bytes; an identity
  // is the value itself (no copy of a weight that is already in place).
  int64_t rank = type.getRank();
  int64_t kept = 0;
  while (kept < rank && permutation[rank - 1 - kept] == rank - 1 - kept)
    ++kept;
  if (kept == rank)
    return value;
  size_t run = type.getElementTypeBitWidth() / 8;
  for (int64_t axis = rank - kept; axis < rank; ++axis)
    run *= type.getDimSize(axis);
  int64_t outer = rank - kept;
  ArrayRef<char> source = value.getRawData();
  SmallVector<int64_t> sourceStrides(rank, 1);
  for (int64_t axis = rank - 2; axis >= 0; --axis)
    sourceStrides[axis] = sourceStrides[axis + 1] * type.getDimSize(axis + 1);
  size_t element = type.getElementTypeBitWidth() / 8;
  std::vector<char> result(source.size());
  int64_t count = source.size() / run;
  SmallVector<int64_t> index(outer, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t from = 0;
    for (auto [axis, at] : llvm::enumerate(index))
      from += at * sourceStrides[permutation[axis]];
    std::memcpy(result.data() + i * run, source.data() + from * element, run);
    for (int64_t axis = outer - 1; axis >= 0; --axis) {
      if (++index[axis] < shape[axis])
        break;
      index[axis] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, result);
}

DenseElementsAttr mlir::tract::sliceDense(DenseElementsAttr value,
                                          int64_t axis, int64_t begin,
                                          int64_t end) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return nullptr;
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = end - begin;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (value.isSplat())
    return value.resizeSplat(resultType);
  // Rows of `inner` bytes: `end - begin` of each `type.getDimSize(axis)`.
  size_t inner = type.getElementTypeBitWidth() / 8;
  for (int64_t dim : type.getShape().drop_front(axis + 1))
    inner *= dim;
  int64_t outer = 1;
  for (int64_t dim : type.getShape().take_front(axis))
    outer *= dim;
  ArrayRef<char> source = value.getRawData();
  std::vector<char> result;
  result.reserve(outer * (end - begin) * inner);
  for (int64_t o = 0; o < outer; ++o) {
    const char *row =
        source.data() + (o * type.getDimSize(axis) + begin) * inner;
    result.insert(result.end(), row, row + (end - begin) * inner);
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, result);
}
