//===- NnefExporter.cpp - the tract dialect to NNEF -----------------------===//
//
// Each tract op is written as the NNEF invocation the importer translates
// back into that op: the importer's op table read backwards. Constants
// become `variable`s with a `.dat` file each; the module's symbols,
// assertions, scenarios and properties become tract's extensions.
//
//===----------------------------------------------------------------------===//

#include "frontends/nnef/NnefExporter.h"

#include "dialects/tract/BlockQuant.h"
#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractFolding.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::nnef;

namespace {

bool isNnefKeyword(StringRef name) {
  return llvm::is_contained({"version", "extension", "fragment", "graph",
                             "tensor", "integer", "scalar", "logical", "string",
                             "true", "false", "for", "in", "if", "else",
                             "yield", "length_of", "shape_of", "range_of"},
                            name);
}

/// An NNEF identifier made of `text`: other characters become `_`.
std::string sanitize(StringRef text) {
  std::string out;
  for (char c : text)
    out.push_back(llvm::isAlnum(c) || c == '_' ? c : '_');
  if (out.empty() || llvm::isDigit(out[0]))
    out = "t_" + out;
  if (isNnefKeyword(out))
    out += "_";
  return out;
}

/// The shortest decimal digits that read back as `value` (as a float when
/// it is one exactly, else as a double) and the power of ten of the first.
std::pair<std::string, int> shortestDigits(double value) {
  bool single = double(float(value)) == value;
  char buffer[40];
  for (int precision = 0; precision < 17; ++precision) {
    snprintf(buffer, sizeof buffer, "%.*e", precision, value);
    if (single ? std::strtof(buffer, nullptr) == float(value)
               : std::strtod(buffer, nullptr) == value)
      break;
  }
  StringRef text(buffer);
  auto [mantissa, exponent] = text.split('e');
  std::string digits;
  for (char c : mantissa)
    if (llvm::isDigit(c))
      digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  int power = 0;
  exponent.consume_front("+");
  if (exponent.getAsInteger(10, power))
    power = 0;
  return {digits, power};
}

/// A number that the NNEF grammar reads as a scalar, written as tract
/// writes one (Rust's `{:?}`): the shortest digits that read back, in
/// positional notation with at least one decimal (`1.0`, `0.001`), or as
/// `1e-5`/`1.5e16` below 1e-4 and from 1e16.
std::string scalarText(double value) {
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0.0";
  std::string sign = value < 0 ? "-" : "";
  double magnitude = std::fabs(value);
  auto [digits, power] = shortestDigits(magnitude);
  if (magnitude < 1e-4 || magnitude >= 1e16)
    return sign + digits.substr(0, 1) +
           (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
           std::to_string(power);
  std::string text;
  if (power < 0)
    text = "0." + std::string(-power - 1, '0') + digits;
  else if (int64_t(digits.size()) <= power + 1)
    text = digits + std::string(power + 1 - digits.size(), '0') + ".0";
  else
    text = digits.substr(0, power + 1) + "." + digits.substr(power + 1);
  return sign + text;
}

/// A number attribute as an NNEF scalar; infinities as `1.0 / 0.0`.
std::optional<std::string> numberText(Attribute attr) {
  double value;
  if (auto f = dyn_cast<FloatAttr>(attr))
    value = f.getValueAsDouble();
  else if (auto i = dyn_cast<IntegerAttr>(attr))
    value = i.getType().isUnsignedInteger() ? double(i.getUInt())
                                            : double(i.getInt());
  else
    return std::nullopt;
  if (std::isnan(value))
    return std::nullopt;
  if (std::isinf(value))
    return std::string(value < 0 ? "-1.0 / 0.0" : "1.0 / 0.0");
  return scalarText(value);
}

std::string quoted(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

template <typename T> std::string listText(ArrayRef<T> items) {
  std::string out = "[";
  for (auto [i, item] : llvm::enumerate(items)) {
    if (i)
      out += ", ";
    if constexpr (std::is_same_v<T, TDim>)
      out += item.toString();
    else
      out += std::to_string(item);
  }
  return out + "]";
}

std::string pairsText(ArrayRef<int64_t> before, ArrayRef<int64_t> after) {
  std::string out = "[";
  for (size_t i = 0; i < before.size(); ++i)
    out += (i ? ", (" : "(") + std::to_string(before[i]) + ", " +
           std::to_string(after[i]) + ")";
  return out + "]";
}

/// tract's datum type name of an element type (the importer's
/// elementTypeFromName read backwards); empty if there is none.
std::string datumTypeName(Type type) {
  // A quantized type is named by its integers; graph.quant says the rest.
  type = getStorageType(type);
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isF64())
    return "f64";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(1))
    return "bool";
  if (auto i = dyn_cast<IntegerType>(type)) {
    unsigned w = i.getWidth();
    if (w != 8 && w != 16 && w != 32 && w != 64)
      return "";
    if (i.isUnsigned())
      return "u" + std::to_string(w);
    if (w == 64)
      return "i64";
    return "i" + std::to_string(w);
  }
  return "";
}

/// The NNEF generic type of an element type, for `variable<T>`.
StringRef nnefTypeName(Type type) {
  if (isa<FloatType>(type))
    return "scalar";
  if (type.isInteger(1))
    return "logical";
  return "integer";
}

/// The name a location gives a node: an ONNX node name, or nothing.
std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = locationName(inner); !name.empty())
        return name;
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationName(call.getCallee());
  return "";
}

/// The items of `dense` as NNEF literals, nested as its shape (a scalar for
/// rank 0): floats in tract's form, integers as they are.
std::string nestedLiterals(DenseElementsAttr dense) {
  auto type = cast<RankedTensorType>(dense.getType());
  SmallVector<std::string> items;
  if (isa<FloatType>(type.getElementType()))
    for (const APFloat &v : dense.getValues<APFloat>())
      items.push_back(scalarText(v.convertToDouble()));
  else if (type.getElementType().isInteger(1))
    for (bool v : dense.getValues<bool>())
      items.push_back(v ? "true" : "false");
  else
    for (const APInt &v : dense.getValues<APInt>())
      items.push_back(type.getElementType().isUnsignedInteger()
                          ? std::to_string(v.getZExtValue())
                          : std::to_string(v.getSExtValue()));
  // Group the flat items axis by axis, innermost first.
  ArrayRef<int64_t> shape = type.getShape();
  for (int64_t axis = shape.size() - 1; axis >= 0; --axis) {
    SmallVector<std::string> grouped;
    for (size_t i = 0; i < items.size(); i += shape[axis])
      grouped.push_back(
          "[" + llvm::join(ArrayRef(items).slice(i, shape[axis]), ", ") + "]");
    items = std::move(grouped);
  }
  return items.empty() ? "[]" : items.front();
}

/// A small constant written in the graph text, as tract writes constants of
/// at most 8 items: f32 as literals, and with tract_core, integers and f16
/// as a cast of literals. Otherwise nothing: the constant is a variable.
std::optional<std::string> inlineConstant(DenseElementsAttr dense,
                                          bool tractCore) {
  int64_t count = dense.getNumElements();
  if (count == 0 || count > 8)
    return std::nullopt;
  Type element = dense.getElementType();
  // Infinities and NaNs have no literal NNEF readers agree on.
  if (isa<FloatType>(element) &&
      llvm::any_of(dense.getValues<APFloat>(),
                   [](const APFloat &v) { return !v.isFinite(); }))
    return std::nullopt;
  if (element.isF32())
    return nestedLiterals(dense);
  if (!tractCore)
    return std::nullopt;
  if (element.isF16() || (isa<IntegerType>(element) && !element.isInteger(1))) {
    std::string dt = datumTypeName(element);
    if (dt.empty())
      return std::nullopt;
    return "tract_core_cast(" + nestedLiterals(dense) + ", to = " + quoted(dt) +
           ")";
  }
  return std::nullopt;
}

std::string propertyText(Attribute attr, bool tractCore) {
  if (isa<DenseStringElementsAttr>(attr))
    return "";
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (auto text = inlineConstant(dense, tractCore))
      return *text;
    // An integer property without tract_core: the plain numbers.
    if (isa<IntegerType>(dense.getElementType()) ||
        isa<FloatType>(dense.getElementType()))
      return nestedLiterals(dense);
    return "";
  }
  if (auto s = dyn_cast<StringAttr>(attr))
    return quoted(s.getValue());
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue() ? "true" : "false";
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return std::to_string(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return scalarText(f.getValueAsDouble());
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    std::string out = "[";
    for (auto [i, item] : llvm::enumerate(a)) {
      std::string text = propertyText(item, tractCore);
      if (text.empty())
        return "";
      out += (i ? ", " : "") + text;
    }
    return out + "]";
  }
  return "";
}

/// A fragment as tract writes one: its parameters one per line, its
/// results on the line of the arrow, then its body.
std::string fragmentText(StringRef name, ArrayRef<std::string> params,
                         ArrayRef<std::string> results, StringRef body) {
  std::string text = "fragment " + name.str() + "(";
  for (auto [i, param] : llvm::enumerate(params))
    text += "\n    " + param + (i + 1 < params.size() ? "," : "");
  return text + "\n) -> (" + llvm::join(results, ", ") + ")\n{\n" + body.str() +
         "}\n\n";
}

/// The extension registries of tract that `text` invokes operations of
/// (`tract_onnx_…(`), but tract_core.
std::set<std::string> invokedRegistries(StringRef text) {
  std::set<std::string> registries;
  for (StringRef registry :
       {"tract_onnx", "tract_pulse", "tract_transformers", "tract_extra"}) {
    std::string prefix = registry.str() + "_";
    for (size_t at = text.find(prefix); at != StringRef::npos;
         at = text.find(prefix, at + 1)) {
      if (at > 0 && (llvm::isAlnum(text[at - 1]) || text[at - 1] == '_' ||
                     text[at - 1] == '"'))
        continue;
      size_t end = at + prefix.size();
      while (end < text.size() &&
             (llvm::isAlnum(text[end]) || text[end] == '_'))
        ++end;
      if (end < text.size() && text[end] == '(') {
        registries.insert(registry.str());
        break;
      }
    }
  }
  return registries;
}

class GraphWriter {
public:
  GraphWriter(ModuleOp module, ModelFiles &files, const ExportOptions &options)
      : module(module), files(files), options(options) {}

  LogicalResult write();

private:
  ModuleOp module;
  ModelFiles &files;
  const ExportOptions &options;
  DenseMap<Value, std::string> names;
  std::set<std::string> taken;
  std::string body;

  std::string fresh(StringRef base) {
    std::string name = sanitize(base);
    if (taken.insert(name).second)
      return name;
    for (int i = 1;; ++i)
      if (std::string n = name + "_" + std::to_string(i);
          taken.insert(n).second)
        return n;
  }
  std::string nodeName(Operation *op) {
    std::string name = locationName(op->getLoc());
    return name.empty() ? op->getName().stripDialect().str() : name;
  }
  void assign(StringRef name, const Twine &expression) {
    body += "  " + name.str() + " = " + expression.str() + ";\n";
  }
  std::string ref(Value value) { return names.lookup(value); }
  std::string refs(ValueRange values) {
    std::string out = "[";
    for (auto [i, v] : llvm::enumerate(values))
      out += (i ? ", " : "") + ref(v);
    return out + "]";
  }
  InFlightDiagnostic unsupported(Operation *op) {
    return op->emitError() << "cannot export '" << op->getName() << "' (node '"
                           << nodeName(op) << "') to NNEF: ";
  }

  LogicalResult writeExternal(BlockArgument arg, StringRef name);
  LogicalResult writeConstant(ConstOp op, StringRef name);
  FailureOr<std::string> expression(Operation *op);
  FailureOr<std::string>
  windowArgs(Operation *op, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> dilations, Padding padding,
             ArrayRef<int64_t> before, ArrayRef<int64_t> after, bool allAxes,
             std::optional<ArrayRef<int64_t>> kernelShape = std::nullopt);
  /// graph.quant, one line per quantized tensor.
  std::string quant;
  /// A float of graph.quant as tract writes it, with 9 decimals, when
  /// that reads back as the same number; else its shortest exact form.
  static std::string quantFloatText(double value) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.9f", value);
    return std::strtod(text, nullptr) == value ? std::string(text)
                                               : scalarText(value);
  }
  /// A graph.quant parameter: floats of tract's own entries as tract writes
  /// them.
  static std::string quantParamText(Attribute attr, bool tractEntry) {
    if (auto f = dyn_cast<FloatAttr>(attr); f && tractEntry)
      return quantFloatText(f.getValueAsDouble());
    return propertyText(attr, /*tractCore=*/false);
  }
  LogicalResult writeQuant(Operation *op, StringRef name,
                           DictionaryAttr entry) {
    auto callee = entry.getAs<StringAttr>("op");
    if (!callee)
      return op->emitError() << "cannot export the quantization of '" << name
                             << "' to NNEF: no 'op' in " << entry;
    // tract's order for the entries it writes, then any other parameter.
    SmallVector<StringRef> order;
    if (callee.getValue() == "zero_point_linear_quantize")
      order = {"zero_point", "scale", "bits", "signed", "symmetric"};
    else if (callee.getValue() == "linear_quantize")
      order = {"max", "min", "bits"};
    bool tractEntry = !order.empty();
    for (NamedAttribute param : entry)
      if (param.getName() != "op" &&
          !llvm::is_contained(order, param.getName().getValue()))
        order.push_back(param.getName().getValue());
    std::string params;
    for (StringRef key : order) {
      Attribute value = entry.get(key);
      if (!value)
        continue;
      std::string text = quantParamText(value, tractEntry);
      if (text.empty())
        return op->emitError()
               << "cannot export the quantization of '" << name
               << "' to NNEF: parameter '" << key << "' has no NNEF form";
      params += (params.empty() ? "" : ", ") + key.str() + " = " + text;
    }
    quant += quoted(name) + ": " + callee.str() + "(" + params + ");\n";
    return success();
  }
  /// The graph.quant line of a tensor of tract's quantized type, if `value`
  /// has one, as tract writes it (symmetric when the zero point is 0).
  void writeQuantizedType(Value value, StringRef name) {
    auto type = getQuantizedElement(value.getType());
    if (!type)
      return;
    quant += quoted(name) + ": zero_point_linear_quantize(zero_point = " +
             std::to_string(type.getZeroPoint()) +
             ", scale = " + quantFloatText(type.getScale()) +
             ", bits = " + std::to_string(type.getStorageTypeIntegralWidth()) +
             ", signed = " + (type.isSigned() ? "true" : "false") +
             ", symmetric = " + (type.getZeroPoint() == 0 ? "true" : "false") +
             ");\n";
  }
  LogicalResult writeOps(Block &block,
                         DenseMap<Value, std::string> &outputNames);
  FailureOr<std::string> scanExpression(ScanOp scan);
  FailureOr<std::string> ifExpression(IfOp op);
  /// Graph inputs and outputs whose names NNEF cannot spell: (NNEF name,
  /// original name), kept as a property.
  SmallVector<std::pair<std::string, std::string>> renamed;
  /// Fragments written for scan and if bodies, by name: they come before
  /// the graph in name order, with tract_core_properties, as tract writes
  /// them.
  std::map<std::string, std::string> fragments;
  std::string header(ArrayRef<std::string> inputs,
                     ArrayRef<std::string> outputs, StringRef graphName);
};

LogicalResult GraphWriter::writeExternal(BlockArgument arg, StringRef name) {
  auto type = cast<RankedTensorType>(arg.getType());
  std::string shape = listText(ArrayRef<TDim>(getShape(type)));
  Type element = type.getElementType();
  // As tract writes inputs: `external` for f32 (and a quantized type, which
  // graph.quant gives) of a known shape, tract_core_external otherwise.
  bool known = type.hasStaticShape();
  if ((element.isF32() || isQuantized(element)) &&
      (known || !options.tractCore)) {
    assign(name, "external(shape = " + shape + ")");
    return success();
  }
  std::string dt = datumTypeName(element);
  if (!dt.empty() && options.tractCore) {
    assign(name, "tract_core_external(shape = " + shape +
                     ", datum_type = " + quoted(dt) + ")");
    return success();
  }
  if (element.isInteger(64) && !element.isUnsignedInteger())
    assign(name, "external<integer>(shape = " + shape + ")");
  else if (element.isInteger(1))
    assign(name, "external<logical>(shape = " + shape + ")");
  else
    return emitError(arg.getLoc())
           << "cannot export the graph input '" << name << "' of " << element
           << " to NNEF"
           << (dt.empty() ? ": no datum type for it"
                          : " without tract_core (--no-nnef-tract-core)");
  return success();
}

LogicalResult GraphWriter::writeConstant(ConstOp op, StringRef name) {
  // A weight mapped from its model file is written as a dense one.
  DenseElementsAttr dense = tract::denseOf(op.getValue());
  if (!dense)
    return unsupported(op) << "only dense constants are written";
  // Q4_0 blocks read from a file: the block_dequant that uses them writes
  // them (a variable of its shape).
  if (!op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *user) {
        return isa<BlockDequantOp>(user);
      }))
    return success();
  // The weights of block-quantized products: a Q4_0 variable of n x k (f16
  // ones are written as they are).
  if (dense.getElementType().isInteger(8) && !op->use_empty() &&
      llvm::all_of(op->getUses(), [](OpOperand &use) {
        return isa<BlockQuantMatmulOp>(use.getOwner()) &&
               use.getOperandNumber() == 1;
      })) {
    ArrayRef<int64_t> blocks = dense.getType().getShape();
    SmallVector<int64_t> shape = {blocks[0], blocks[1] * kQ4_0BlockValues};
    std::string bytes;
    writeQ4_0DatTensor(shape, blockBytes(dense), bytes);
    files.files[name.str() + ".dat"] = std::move(bytes);
    assign(name, "variable<scalar>(label = " + quoted(name) +
                     ", shape = " + listText(ArrayRef<int64_t>(shape)) + ")");
    return success();
  }
  if (!isQuantized(dense.getElementType()))
    if (auto literal = inlineConstant(dense, options.tractCore)) {
      assign(name, *literal);
      return success();
    }
  std::string bytes, error;
  if (!writeDatTensor(dense, bytes, error))
    return unsupported(op) << error;
  files.files[name.str() + ".dat"] = std::move(bytes);
  // tract declares every variable a scalar; its .dat file says the type.
  auto type = cast<RankedTensorType>(dense.getType());
  assign(name, "variable<scalar>(label = " + quoted(name) +
                   ", shape = " + listText(type.getShape()) + ")");
  return success();
}

/// padding/stride/dilation arguments of conv (spatial values) or of the
/// pools (`allAxes`: every axis, neutral on batch and channels).
FailureOr<std::string> GraphWriter::windowArgs(
    Operation *op, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
    Padding padding, ArrayRef<int64_t> before, ArrayRef<int64_t> after,
    bool allAxes, std::optional<ArrayRef<int64_t>> kernelShape) {
  int64_t spatial = getShape(op->getOperand(0)).size() - 2;
  auto full = [&](ArrayRef<int64_t> values, int64_t neutral) {
    SmallVector<int64_t> out;
    if (values.empty())
      return out;
    if (allAxes)
      out.append(2, neutral);
    out.append(values.begin(), values.end());
    return out;
  };
  std::string text;
  SmallVector<int64_t> b(before), a(after);
  switch (padding) {
  case Padding::SameUpper:
    text = "padding = []";
    break;
  case Padding::Valid:
    b.assign(spatial, 0);
    a.assign(spatial, 0);
    [[fallthrough]];
  case Padding::Explicit:
    if (b.empty()) {
      b.assign(spatial, 0);
      a.assign(spatial, 0);
    }
    if (allAxes) {
      b.insert(b.begin(), 2, 0);
      a.insert(a.begin(), 2, 0);
    }
    text = "padding = " + pairsText(b, a);
    break;
  case Padding::SameLower: {
    // NNEF's automatic padding is same-upper: with a static input, the
    // same-lower pads are written out.
    Shape input = getShape(op->getOperand(0));
    ArrayRef<int64_t> kernel =
        allAxes ? *kernelShape
                : cast<RankedTensorType>(op->getOperand(1).getType())
                      .getShape()
                      .drop_front(2);
    b.clear();
    a.clear();
    for (int64_t i = 0; i < spatial; ++i) {
      auto in = input[2 + i].getConstant();
      if (!in || ShapedType::isDynamic(kernel[i]))
        return unsupported(op)
               << "same-lower padding over a symbolic spatial axis";
      int64_t s = strides.empty() ? 1 : strides[i];
      int64_t d = dilations.empty() ? 1 : dilations[i];
      int64_t out = (*in + s - 1) / s;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * s + (kernel[i] - 1) * d + 1 - *in);
      b.push_back(total - total / 2);
      a.push_back(total / 2);
    }
    if (allAxes) {
      b.insert(b.begin(), 2, 0);
      a.insert(a.begin(), 2, 0);
    }
    text = "padding = " + pairsText(b, a);
    break;
  }
  }
  text += ", stride = " + listText(ArrayRef<int64_t>(full(strides, 1)));
  text += ", dilation = " + listText(ArrayRef<int64_t>(full(dilations, 1)));
  return text;
}

FailureOr<std::string> GraphWriter::expression(Operation *op) {
  StringRef opName = op->getName().stripDialect();
  // Element-wise ops of the same meaning.
  std::string unary =
      llvm::StringSwitch<std::string>(opName)
          .Cases({"abs",   "neg",   "sign",  "exp",     "sqrt",
                  "rsqrt", "sin",   "cos",   "tan",     "asin",
                  "acos",  "atan",  "sinh",  "cosh",    "tanh",
                  "asinh", "acosh", "atanh", "sigmoid", "erf",
                  "silu",  "floor", "ceil",  "round",   "not"},
                 opName.str())
          .Case("square", "sqr")
          .Case("ln", "log")
          .Case("recip", "rcp")
          .Cases({"round_even", "bitnot", "is_nan", "hard_swish"},
                 "tract_core_" + opName.str())
          .Default("");
  // Neither NNEF nor tract has mish: it is written as what it computes.
  if (auto mish = dyn_cast<MishOp>(op))
    return "mul(" + ref(mish.getInput()) + ", tanh(softplus(" +
           ref(mish.getInput()) + ")))";
  if (auto gelu = dyn_cast<GeluApproxOp>(op))
    return "tract_core_gelu_approx(" + ref(gelu.getInput()) +
           ", fast_impl = " + (gelu.getFastImpl() ? "true" : "false") + ")";
  if (!unary.empty() && op->getNumOperands() == 1)
    return unary + "(" + ref(op->getOperand(0)) + ")";
  std::string binary =
      llvm::StringSwitch<std::string>(opName)
          .Cases({"add", "sub", "mul", "div", "pow", "min", "max", "lt", "gt",
                  "le", "ge", "eq", "ne", "and", "or"},
                 opName.str())
          .Cases({"rem", "xor", "bitand", "bitor", "bitxor", "shl", "shr"},
                 "tract_core_" + opName.str())
          .Default("");
  if (!binary.empty() && op->getNumOperands() == 2)
    return binary + "(" + ref(op->getOperand(0)) + ", " +
           ref(op->getOperand(1)) + ")";
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return "tract_core_broadcast(" + ref(broadcast.getInput()) +
           ", shape = " + listText(broadcast.getShape().getDims()) + ")";
  if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
    return "tract_core_log_softmax(" + ref(softmax.getInput()) +
           ", axes = " + listText(softmax.getAxes()) + ")";

  if (auto select = dyn_cast<SelectOp>(op))
    return "select(" + ref(op->getOperand(0)) + ", " + ref(op->getOperand(1)) +
           ", " + ref(op->getOperand(2)) + ")";
  if (auto castOp = dyn_cast<CastOp>(op)) {
    std::string dt = datumTypeName(getElementTypeOrSelf(castOp.getType()));
    if (dt.empty())
      return unsupported(op) << "no datum type for the result";
    return "tract_core_cast(" + ref(castOp.getInput()) +
           ", to = " + quoted(dt) + ")";
  }
  if (auto add = dyn_cast<AddAxisOp>(op))
    return "unsqueeze(" + ref(add.getInput()) +
           ", axes = " + listText(ArrayRef<int64_t>{int64_t(add.getAxis())}) +
           ")";
  if (auto rm = dyn_cast<RmAxisOp>(op))
    return "squeeze(" + ref(rm.getInput()) +
           ", axes = " + listText(ArrayRef<int64_t>{int64_t(rm.getAxis())}) +
           ")";
  if (auto move = dyn_cast<MoveAxisOp>(op)) {
    SmallVector<int64_t> perm(getShape(move.getInput()).size());
    std::iota(perm.begin(), perm.end(), 0);
    int64_t from = move.getFrom(), to = move.getTo();
    perm.erase(perm.begin() + from);
    perm.insert(perm.begin() + to, from);
    return "transpose(" + ref(move.getInput()) +
           ", axes = " + listText(ArrayRef<int64_t>(perm)) + ")";
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    ArrayRef<TDim> to = reshape.getTo().getDims();
    // NNEF's reshape reads 0 as "copy the axis": an empty axis needs
    // tract-mlir's tract_core_reshape, which takes the dims as they are.
    bool empty = llvm::any_of(to, [](const TDim &d) { return d == TDim(0); });
    return std::string(empty ? "tract_core_reshape(" : "reshape(") +
           ref(reshape.getInput()) + ", shape = " + listText(to) +
           ", axis_start = " + std::to_string(reshape.getAt()) +
           ", axis_count = " + std::to_string(reshape.getCount()) + ")";
  }
  if (auto tile = dyn_cast<TileOp>(op))
    return "tile(" + ref(tile.getInput()) +
           ", repeats = " + listText(tile.getMultipliers().getDims()) + ")";
  if (auto concat = dyn_cast<ConcatOp>(op))
    return "concat(" + refs(concat.getInputs()) +
           ", axis = " + std::to_string(concat.getAxis()) + ")";
  if (auto slice = dyn_cast<SliceOp>(op)) {
    TDim start = slice.getStart().getValue(), end = slice.getEnd().getValue();
    if (auto c = end.getConstant(); c && *c <= 0)
      return unsupported(op) << "an empty slice";
    return "slice(" + ref(slice.getInput()) + ", axes = [" +
           std::to_string(slice.getAxis()) + "], begin = [" + start.toString() +
           "], end = [" + end.toString() + "])";
  }
  if (auto down = dyn_cast<DownsampleOp>(op)) {
    // NNEF's strided slice reads back as a slice then a downsample; tract's
    // extension keeps a modulo as it is.
    if (down.getModulo() != 0)
      return "tract_core_downsample(" + ref(down.getInput()) +
             ", axis = " + std::to_string(down.getAxis()) +
             ", stride = " + std::to_string(down.getStride()) +
             ", modulo = " + std::to_string(down.getModulo()) + ")";
    TDim dim = getShape(down.getInput())[down.getAxis()];
    return "slice(" + ref(down.getInput()) + ", axes = [" +
           std::to_string(down.getAxis()) + "], begin = [" +
           std::to_string(down.getModulo()) + "], end = [" + dim.toString() +
           "], stride = [" + std::to_string(down.getStride()) + "])";
  }
  if (auto pad = dyn_cast<PadOp>(op)) {
    StringRef border = pad.getMode() == PadMode::Constant  ? "constant"
                       : pad.getMode() == PadMode::Reflect ? "reflect"
                                                           : "replicate";
    double value = 0;
    if (auto attr = pad.getValueAttr()) {
      if (auto f = dyn_cast<FloatAttr>(attr))
        value = f.getValueAsDouble();
      else if (auto i = dyn_cast<IntegerAttr>(attr))
        value = i.getType().isUnsignedInteger() ? double(i.getUInt())
                                                : double(i.getInt());
    }
    if (!std::isfinite(value))
      return unsupported(op) << "a non-finite padding value";
    return "pad(" + ref(pad.getInput()) +
           ", padding = " + pairsText(pad.getBefore(), pad.getAfter()) +
           ", border = " + quoted(border) + ", value = " + scalarText(value) +
           ")";
  }
  if (auto gather = dyn_cast<GatherOp>(op))
    return "tract_core_gather(" + ref(gather.getInput()) + ", " +
           ref(gather.getIndices()) +
           ", axis = " + std::to_string(gather.getAxis()) + ")";
  if (auto gather = dyn_cast<GatherElementsOp>(op))
    return "tract_core_gather_elements(" + ref(gather.getInput()) + ", " +
           ref(gather.getIndices()) +
           ", axis = " + std::to_string(gather.getAxis()) + ")";
  if (auto gather = dyn_cast<GatherNdOp>(op))
    return "tract_core_gather_nd(" + ref(gather.getInput()) + ", " +
           ref(gather.getIndices()) +
           ", batch_dims = " + std::to_string(gather.getBatchDims()) + ")";
  if (auto scatter = dyn_cast<ScatterElementsOp>(op))
    return "tract_core_scatter_elements(" + ref(scatter.getData()) + ", " +
           ref(scatter.getIndices()) + ", " + ref(scatter.getUpdates()) +
           ", axis = " + std::to_string(scatter.getAxis()) + ", reduction = " +
           quoted(stringifyScatterReduction(scatter.getReduction())) + ")";
  if (auto scatter = dyn_cast<ScatterNdOp>(op))
    return "tract_core_scatter_nd(" + ref(scatter.getData()) + ", " +
           ref(scatter.getIndices()) + ", " + ref(scatter.getUpdates()) +
           ", reduction = " +
           quoted(stringifyScatterReduction(scatter.getReduction())) + ")";
  if (auto trilu = dyn_cast<TriluOp>(op))
    return "tract_core_trilu(" + ref(trilu.getInput()) + ", " +
           ref(trilu.getK()) +
           ", upper = " + (trilu.getUpper() ? "true" : "false") + ")";
  if (auto oneHot = dyn_cast<OneHotOp>(op)) {
    auto number = [](TypedAttr attr) -> std::optional<double> {
      if (auto f = dyn_cast<FloatAttr>(attr))
        return f.getValueAsDouble();
      if (auto i = dyn_cast<IntegerAttr>(attr))
        return i.getType().isUnsignedInteger() ? double(i.getUInt())
                                               : double(i.getInt());
      return std::nullopt;
    };
    auto off = number(oneHot.getOff()), on = number(oneHot.getOn());
    std::string dt = datumTypeName(oneHot.getOn().getType());
    if (!off || !on || dt.empty() || !std::isfinite(*off) ||
        !std::isfinite(*on))
      return unsupported(op) << "on/off values without an NNEF form";
    return "tract_core_one_hot(" + ref(oneHot.getIndices()) +
           ", axis = " + std::to_string(oneHot.getAxis()) +
           ", dim = " + std::to_string(oneHot.getDim()) +
           ", value_off = " + scalarText(*off) +
           ", value_on = " + scalarText(*on) + ", datum_type = " + quoted(dt) +
           ")";
  }
  if (auto isInf = dyn_cast<IsInfOp>(op))
    return "tract_core_is_inf(" + ref(isInf.getInput()) +
           ", detect_positive = " +
           (isInf.getDetectPositive() ? "true" : "false") +
           ", detect_negative = " +
           (isInf.getDetectNegative() ? "true" : "false") + ")";
  if (auto shapeOf = dyn_cast<ShapeOfOp>(op))
    return "tract_core_shape_of(" + ref(shapeOf.getInput()) + ")";
  if (auto einsum = dyn_cast<EinsumOp>(op))
    return "tract_core_einsum(" + refs(einsum.getInputs()) +
           ", expr = " + quoted(einsum.getExpr()) + ")";
  if (auto dims = dyn_cast<ShapeValueOp>(op))
    return "tract_core_cast(" + listText(dims.getDims().getDims()) +
           ", to = 'i64')";
  if (auto cache = dyn_cast<DynKvCacheOp>(op)) {
    Shape input = getShape(cache.getInput());
    Shape past = input;
    past[cache.getAxis()] = cache.getPast().getValue();
    return "tract_transformers_dyn_kv_cache(" + ref(cache.getInput()) +
           ", name = " + quoted(cache.getName()) +
           ", axis = " + std::to_string(cache.getAxis()) + ", datum_type = " +
           quoted(datumTypeName(getElementTypeOrSelf(cache.getInput()))) +
           ", past_sequence_shape = " + listText(ArrayRef<TDim>(past)) +
           ", input_sequence_shape = " + listText(ArrayRef<TDim>(input)) + ")";
  }
  if (auto product = dyn_cast<BlockQuantMatmulOp>(op)) {
    // Rows ...k by the n x k weights, which read back as f32 (that
    // -t block-quant quantizes to the same blocks); f16 weights are cast
    // to f32 (which -t f16-weights takes back as they are).
    std::string rows;
    for (size_t axis = 0; axis + 1 < getShape(product.getInput()).size();
         ++axis)
      rows.push_back(char('a' + axis));
    std::string weights = ref(product.getWeights());
    if (getElementTypeOrSelf(product.getWeights()).isF16()) {
      std::string widened = fresh(weights + "_f32");
      assign(widened, "tract_core_cast(" + weights + ", to = 'f32')");
      weights = widened;
    }
    return "tract_core_einsum([" + ref(product.getInput()) + ", " + weights +
           "], expr = " + quoted(rows + "k," + "nk->" + rows + "n") + ")";
  }
  if (auto softmax = dyn_cast<SoftmaxOp>(op))
    return "softmax(" + ref(softmax.getInput()) +
           ", axes = " + listText(softmax.getAxes()) + ")";
  if (auto attention = dyn_cast<SdpaOp>(op)) {
    std::string type =
        getElementTypeOrSelf(attention.getQ()).isF16() ? "'f16'" : "'f32'";
    std::string text = "tract_transformers_sdpa(" + ref(attention.getQ()) +
                       ", " + ref(attention.getK()) + ", " +
                       ref(attention.getV());
    if (Value mask = attention.getMask())
      text += ", mask = " + ref(mask);
    if (FloatAttr scale = attention.getScaleAttr())
      text += ", scale = " + scalarText(scale.getValueAsDouble());
    return text + ", is_causal = " +
           (attention.getCausal() ? "true" : "false") +
           ", datum_type = " + type + ", acc_datum_type = 'f32')";
  }
  if (auto gru = dyn_cast<GruEpilogueOp>(op))
    return "tract_core_gru_epilogue(" + ref(gru.getXH()) + ", " +
           ref(gru.getRH()) + ", " + ref(gru.getH()) + ", hidden = " + getShape(gru.getH()).back().toString() + ")";
  if (auto gdn = dyn_cast<GdnRecurrentOp>(op)) {
    std::string args;
    for (Value operand : gdn->getOperands())
      args += (args.empty() ? "" : ", ") + ref(operand);
    return "tract_transformers_gdn_recurrent(" + args + ")";
  }
  if (auto update = dyn_cast<CausalConv1dUpdateOp>(op))
    return "tract_transformers_causal_conv1d_update(" +
           ref(update.getInput()) + ", " + ref(update.getWeight()) + ", " +
           ref(update.getInitialState()) + ")";
  if (auto rope = dyn_cast<ApplyRopeOp>(op))
    return "tract_transformers_apply_rope(" + ref(rope.getInput()) + ", " +
           ref(rope.getCos()) + ", " + ref(rope.getSin()) + ")";
  if (auto rms = dyn_cast<RmsNormOp>(op))
    return "tract_core_rms_norm(" + ref(rms.getInput()) +
           ", axis = " + std::to_string(rms.getAxis()) +
           ", eps = " + scalarText(rms.getEps().convertToDouble()) + ")";
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    StringRef name;
    switch (reduce.getReducer()) {
    case Reducer::Sum:
      name = "sum_reduce";
      break;
    case Reducer::Min:
      name = "min_reduce";
      break;
    case Reducer::Max:
      name = "max_reduce";
      break;
    case Reducer::ArgMax:
      name = "argmax_reduce";
      break;
    case Reducer::ArgMin:
      name = "argmin_reduce";
      break;
    case Reducer::Any:
      name = "any_reduce";
      break;
    case Reducer::All:
      name = "all_reduce";
      break;
    case Reducer::Prod:
      name = "tract_core_product_reduce";
      break;
    case Reducer::MeanOfSquares:
      name = "tract_core_mean_of_squares_reduce";
      break;
    }
    std::string callee = name.str();
    if (reduce.getLast()) {
      if (reduce.getReducer() != Reducer::ArgMax &&
          reduce.getReducer() != Reducer::ArgMin)
        return unsupported(op) << "'last' on a reduction other than argmax "
                                  "or argmin";
      callee = "tract_core_" + callee + "_last";
    }
    return callee + "(" + ref(reduce.getInput()) +
           ", axes = " + listText(reduce.getAxes()) + ")";
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    if (conv.getChannelsLast())
      return unsupported(op) << "a channels-last convolution is the code "
                                "generator's form, not NNEF's";
    auto window = windowArgs(op, conv.getStrides(), conv.getDilations(),
                             conv.getPadding(), conv.getPadsBefore(),
                             conv.getPadsAfter(), false);
    if (failed(window))
      return failure();
    std::string bias =
        conv.getBias() ? ", bias = " + ref(conv.getBias()) : std::string();
    return "conv(" + ref(conv.getInput()) + ", " + ref(conv.getKernel()) +
           bias + ", border = \"constant\", " + *window +
           ", groups = " + std::to_string(conv.getGroup()) + ")";
  }
  if (auto deconv = dyn_cast<DeconvOp>(op)) {
    if (deconv.getPadding() == Padding::SameLower)
      return unsupported(op) << "same-lower padding has no NNEF form";
    auto window = windowArgs(op, deconv.getStrides(), deconv.getDilations(),
                             deconv.getPadding(), deconv.getPadsBefore(),
                             deconv.getPadsAfter(), false);
    if (failed(window))
      return failure();
    std::string bias =
        deconv.getBias() ? ", bias = " + ref(deconv.getBias()) : std::string();
    // NNEF gives the output shape where the sizes are ambiguous, tract's
    // adjustments.
    std::string outputShape;
    if (llvm::any_of(deconv.getAdjustments(), [](int64_t a) { return a != 0; }))
      outputShape = ", output_shape = " +
                    listText(ArrayRef<TDim>(getShape(deconv.getResult())));
    return "deconv(" + ref(deconv.getInput()) + ", " + ref(deconv.getKernel()) +
           bias + ", border = \"constant\", " + *window + outputShape +
           ", groups = " + std::to_string(deconv.getGroup()) + ")";
  }
  if (auto align = dyn_cast<RoiAlignOp>(op))
    return "tract_onnx_roi_align(" + ref(align.getInput()) + ", " +
           ref(align.getRois()) + ", " + ref(align.getBatchIndices()) +
           ", mode = " + quoted(align.getMax() ? "max" : "avg") +
           ", output_height = " + std::to_string(align.getOutputHeight()) +
           ", output_width = " + std::to_string(align.getOutputWidth()) +
           ", sampling_ratio = " + std::to_string(align.getSamplingRatio()) +
           ", spatial_scale = " +
           scalarText(align.getSpatialScale().convertToDouble()) +
           ", coordinate_transformation_mode = " +
           quoted(align.getHalfPixel() ? "half_pixel" : "output_half_pixel") +
           ")";
  if (auto sample = dyn_cast<GridSampleOp>(op)) {
    StringRef mode =
        sample.getInterpolator() == Interpolator::Nearest  ? "nearest"
        : sample.getInterpolator() == Interpolator::Linear ? "bilinear"
                                                           : "bicubic";
    return "tract_core_grid_sample(" + ref(sample.getInput()) + ", " +
           ref(sample.getGrid()) + ", mode = " + quoted(mode) +
           ", padding_mode = " +
           quoted(stringifyGridPadding(sample.getPadding())) +
           ", align_corners = " +
           (sample.getAlignCorners() ? "true" : "false") + ")";
  }
  if (auto resize = dyn_cast<ResizeOp>(op)) {
    auto doubles = [](ArrayRef<double> values) {
      std::string out = "[";
      for (auto [i, v] : llvm::enumerate(values))
        out += (i ? ", " : "") + scalarText(v);
      return out + "]";
    };
    if (!std::isfinite(resize.getExtrapolationValue().convertToDouble()))
      return unsupported(op) << "a non-finite extrapolation value";
    // Scales read when the model runs are the tensor holding them.
    std::string scales = resize.getScaleValues() ? ref(resize.getScaleValues())
                                                 : doubles(resize.getScales());
    return "tract_core_resize(" + ref(resize.getInput()) +
           ", scales = " + scales +
           ", sizes = " + listText(resize.getSizes().getDims()) +
           ", coord_transformer = " +
           quoted(stringifyCoordTransform(resize.getCoordTransform())) +
           ", interpolator = " +
           quoted(stringifyInterpolator(resize.getInterpolator())) +
           ", nearest_mode = " +
           quoted(stringifyNearestMode(resize.getNearestMode())) +
           ", cubic_coeff_a = " +
           scalarText(resize.getCubicCoeffA().convertToDouble()) +
           ", exclude_outside = " +
           (resize.getExcludeOutside() ? "true" : "false") + ", roi = " +
           (resize.getRoiValues() ? ref(resize.getRoiValues())
                                  : doubles(resize.getRoi())) +
           ", extrapolation_value = " +
           scalarText(resize.getExtrapolationValue().convertToDouble()) + ")";
  }
  if (auto range = dyn_cast<RangeOp>(op))
    return "tract_core_range(" + ref(range.getStart()) + ", " +
           ref(range.getEnd()) + ", " + ref(range.getStep()) +
           ", len = " + range.getLen().getValue().toString() + ")";
  if (auto topk = dyn_cast<TopKOp>(op))
    return "tract_core_topk(" + ref(topk.getInput()) + ", " + ref(topk.getK()) +
           ", axis = " + std::to_string(topk.getAxis()) +
           ", largest = " + (topk.getLargest() ? "true" : "false") +
           ", len = " + topk.getLen().getValue().toString() + ")";
  if (auto nonZero = dyn_cast<NonZeroOp>(op)) {
    std::optional<std::string> count =
        nonZero.getLen().getValue().getSymbolName();
    if (!count)
      return unsupported(op)
             << "its count is " << nonZero.getLen().getValue().toString()
             << ", not a symbol";
    return "tract_onnx_non_zero(" + ref(nonZero.getInput()) +
           ", count_symbol = " + quoted(*count) + ")";
  }
  if (auto random = dyn_cast<RandomOp>(op)) {
    Type element = getElementTypeOrSelf(random.getType());
    return "tract_onnx_random(" + ref(random.getLike()) + ", distribution = " +
           quoted(stringifyRandomDistribution(random.getDistribution())) +
           ", a = " + scalarText(random.getA().convertToDouble()) +
           ", b = " + scalarText(random.getB().convertToDouble()) +
           ", seed = " + std::to_string(random.getSeed()) +
           ", datum_type = " + quoted(element.isF64() ? "f64" : "f32") + ")";
  }
  if (auto unique = dyn_cast<UniqueOp>(op)) {
    std::optional<std::string> count =
        unique.getLen().getValue().getSymbolName();
    if (!count)
      return unsupported(op)
             << "its count is " << unique.getLen().getValue().toString()
             << ", not a symbol";
    return "tract_onnx_unique(" + ref(unique.getInput()) +
           ", sorted = " + (unique.getSorted() ? "true" : "false") +
           ", count_symbol = " + quoted(*count) + ")";
  }
  if (auto nms = dyn_cast<NonMaxSuppressionOp>(op)) {
    if (!nms.getLen().getValue().getSymbolName())
      return unsupported(op)
             << "its count is " << nms.getLen().getValue().toString()
             << ", not a symbol";
    return "tract_onnx_non_max_suppression(" + ref(nms.getBoxes()) + ", " +
           ref(nms.getScores()) + ", " + ref(nms.getMaxOutput()) + ", " +
           ref(nms.getIouThreshold()) + ", " + ref(nms.getScoreThreshold()) +
           ", center_point_box = " + (nms.getCenterPointBox() ? "1" : "0") +
           ")";
  }
  if (auto slice = dyn_cast<DynSliceOp>(op))
    return "tract_core_dyn_slice(" + ref(slice.getInput()) + ", " +
           ref(slice.getStart()) + ", " + ref(slice.getEnd()) +
           ", axis = " + std::to_string(slice.getAxis()) +
           ", len = " + slice.getLen().getValue().toString() + ")";
  if (auto scan = dyn_cast<ScanOp>(op))
    return scanExpression(scan);
  if (auto branch = dyn_cast<IfOp>(op))
    return ifExpression(branch);
  // tract's pulse extensions.
  if (auto delay = dyn_cast<DelayOp>(op))
    return "tract_pulse_delay(" + ref(delay.getInput()) +
           ", axis = " + std::to_string(delay.getAxis()) +
           ", delay = " + std::to_string(delay.getDelay()) +
           ", overlap = " + std::to_string(delay.getOverlap()) + ")";
  if (auto pad = dyn_cast<PulsePadOp>(op)) {
    StringRef border = pad.getMode() == PadMode::Constant  ? "constant"
                       : pad.getMode() == PadMode::Reflect ? "reflect"
                                                           : "replicate";
    std::string value;
    if (auto attr = pad.getValueAttr()) {
      auto text = numberText(attr);
      if (!text)
        return unsupported(op) << "a padding value without an NNEF form";
      value = ", value = " + *text;
    }
    return "tract_pulse_pulse_pad(" + ref(pad.getInput()) +
           ", axis = " + std::to_string(pad.getAxis()) +
           ", before = " + std::to_string(pad.getBefore()) +
           ", after = " + pad.getAfter().getValue().toString() +
           ", begin_input = " + std::to_string(pad.getBeginInput()) +
           ", end_input = " + pad.getEndInput().getValue().toString() +
           ", border = " + quoted(border) + value +
           ", overlap = " + std::to_string(pad.getOverlap()) + ")";
  }
  if (auto mask = dyn_cast<PulseMaskOp>(op)) {
    auto value = numberText(mask.getValue());
    if (!value)
      return unsupported(op) << "a mask value without an NNEF form";
    return "tract_pulse_mask(" + ref(mask.getInput()) +
           ", axis = " + std::to_string(mask.getAxis()) +
           ", begin = " + std::to_string(mask.getBegin()) +
           ", end = " + mask.getEnd().getValue().toString() +
           ", value = " + *value + ")";
  }
  if (auto pool = dyn_cast<MaxPoolOp>(op)) {
    if (pool.getChannelsLast())
      return unsupported(op) << "a channels-last pool is the code "
                                "generator's form, not NNEF's";
    auto window = windowArgs(op, pool.getStrides(), pool.getDilations(),
                             pool.getPadding(), pool.getPadsBefore(),
                             pool.getPadsAfter(), true, pool.getKernelShape());
    if (failed(window))
      return failure();
    SmallVector<int64_t> size{1, 1};
    llvm::append_range(size, pool.getKernelShape());
    // Ceil mode and indices: tract-mlir's extension.
    if (pool.getCeilMode() || pool.getWithIndex())
      return "tract_core_max_pool(" + ref(pool.getInput()) +
             ", size = " + listText(ArrayRef<int64_t>(size)) +
             ", border = \"ignore\", " + *window +
             ", ceil_mode = " + (pool.getCeilMode() ? "true" : "false") +
             ", with_index = " + (pool.getWithIndex() ? "true" : "false") + ")";
    return "max_pool(" + ref(pool.getInput()) +
           ", size = " + listText(ArrayRef<int64_t>(size)) +
           ", border = \"ignore\", " + *window + ")";
  }
  if (auto pool = dyn_cast<SumPoolOp>(op)) {
    if (pool.getChannelsLast())
      return unsupported(op) << "a channels-last pool is the code "
                                "generator's form, not NNEF's";
    auto window = windowArgs(op, pool.getStrides(), pool.getDilations(),
                             pool.getPadding(), pool.getPadsBefore(),
                             pool.getPadsAfter(), true, pool.getKernelShape());
    if (failed(window))
      return failure();
    SmallVector<int64_t> size{1, 1};
    llvm::append_range(size, pool.getKernelShape());
    std::string border = pool.getCountIncludePad() ? "constant" : "ignore";
    if (pool.getCeilMode())
      return "tract_core_sum_pool(" + ref(pool.getInput()) +
             ", size = " + listText(ArrayRef<int64_t>(size)) +
             ", border = " + quoted(border) + ", " + *window +
             ", normalize = " + (pool.getNormalize() ? "true" : "false") +
             ", ceil_mode = true)";
    return std::string(pool.getNormalize() ? "avg_pool(" : "box(") +
           ref(pool.getInput()) +
           ", size = " + listText(ArrayRef<int64_t>(size)) +
           ", border = " + quoted(border) + ", " + *window +
           (pool.getNormalize() ? "" : ", normalize = false") + ")";
  }
  return unsupported(op) << "no NNEF operation or tract extension for it";
}

/// A scan is tract's `tract_core_scan`, its body a fragment. Values the
/// body uses from outside become full inputs; the op's results are its
/// final states (`last`) then its scanned outputs (`full`).
FailureOr<std::string> GraphWriter::scanExpression(ScanOp scan) {
  Block &block = scan.getBody().front();
  int64_t numStates = scan.getNumStates();
  int64_t numScans = scan.getScanAxes().size();
  std::string name = fresh("scan_body");

  // Captured values, in the order of their first use.
  SmallVector<Value> captured;
  scan.getBody().walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!scan.getBody().isAncestor(v.getParentRegion()) &&
          !llvm::is_contained(captured, v))
        captured.push_back(v);
  });

  auto typeText = [](Value v) {
    return "tensor<" + nnefTypeName(getElementTypeOrSelf(v.getType())).str() +
           ">";
  };
  SmallVector<std::string> params, results;
  std::string stateList, scanList, fullList, outputList;
  auto item = [](std::string &list, const std::string &text) {
    list += (list.empty() ? "" : ", ") + text;
  };
  DenseMap<Value, std::string> saved;
  for (BlockArgument arg : block.getArguments()) {
    std::string param = fresh(name + "_in");
    params.push_back(param + ": " + typeText(arg));
    names[arg] = param;
  }
  for (Value v : captured) {
    std::string param = fresh(name + "_in");
    params.push_back(param + ": " + typeText(v));
    saved[v] = names.lookup(v);
    item(fullList, "(" + quoted(param) + ", " + ref(v) + ")");
    names[v] = param;
  }
  auto yield = cast<YieldOp>(block.getTerminator());
  for (size_t i = 0, e = yield.getValues().size(); i < e; ++i)
    results.push_back(fresh(name + "_out"));

  std::string outer = std::move(body);
  body.clear();
  DenseMap<Value, std::string> none;
  LogicalResult written = writeOps(block, none);
  for (auto [result, v] : llvm::zip(results, yield.getValues()))
    assign(result, "copy(" + ref(v) + ")");
  std::string inner = std::move(body);
  body = std::move(outer);
  for (auto &[v, outerName] : saved)
    names[v] = outerName;
  if (failed(written))
    return failure();

  SmallVector<std::string> typedResults;
  for (auto [result, v] : llvm::zip(results, yield.getValues()))
    typedResults.push_back(result + ": " + typeText(v));
  fragments[name] = fragmentText(name, params, typedResults, inner);

  ValueRange inputs = scan.getInputs();
  for (int64_t i = 0; i < numStates; ++i) {
    item(stateList, "(" + quoted(names[block.getArgument(i)]) + ", " +
                        ref(inputs[i]) + ", " + quoted(results[i]) + ")");
    item(outputList, "(" + quoted(results[i]) + ", \"last\", 0, 1)");
  }
  for (int64_t i = 0; i < numScans; ++i)
    item(scanList, "(" + quoted(names[block.getArgument(numStates + i)]) +
                       ", " + ref(inputs[numStates + i]) + ", " +
                       std::to_string(scan.getScanAxes()[i]) + ", " +
                       std::to_string(scan.getScanChunks()[i]) + ")");
  std::string fulls;
  for (int64_t i = numStates + numScans; i < int64_t(inputs.size()); ++i)
    item(fulls, "(" + quoted(names[block.getArgument(i)]) + ", " +
                    ref(inputs[i]) + ")");
  if (!fullList.empty())
    item(fulls, fullList);
  for (auto [i, axis] : llvm::enumerate(scan.getOutputAxes()))
    item(outputList, "(" + quoted(results[numStates + i]) + ", \"full\", " +
                         std::to_string(axis) + ", 1)");
  // A scan of a streaming model goes on from one call to the next, past
  // the first `skip` frames (tract's own semantics), and so does a batch
  // model's stateful scan; any other starts again each call, which NNEF
  // must say (its default is to go on).
  std::string turns;
  if (auto skip = scan->getAttrOfType<IntegerAttr>("pulse.skip"))
    turns = ", skip = " + std::to_string(skip.getInt());
  else if (scan->hasAttr(kStatefulScanAttrName))
    turns = ", skip = 0, reset_every_turn = false, external_state = false";
  else
    turns = ", skip = 0, reset_every_turn = true";
  return "tract_core_scan(body = " + quoted(name) + ", scan = [" + scanList +
         "], full = [" + fulls + "], state = [" + stateList + "], output = [" +
         outputList + "]" + turns + ")";
}

/// An if is tract-mlir's `tract_core_if`, each region a fragment taking
/// the values the regions use from outside (`inputs`) and returning what the
/// region yields.
FailureOr<std::string> GraphWriter::ifExpression(IfOp op) {
  if (op.getThenAssertions() || op.getElseAssertions())
    return unsupported(op)
           << "its branches rely on assertions that NNEF cannot tie to them";
  SmallVector<Value> captured;
  for (Region *region : {&op.getThenRegion(), &op.getElseRegion()})
    region->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (!region->isAncestor(v.getParentRegion()) &&
            !llvm::is_contained(captured, v))
          captured.push_back(v);
    });
  std::string inputs = refs(captured);
  auto typeText = [](Value v) {
    return "tensor<" + nnefTypeName(getElementTypeOrSelf(v.getType())).str() +
           ">";
  };
  SmallVector<std::string> branches;
  for (auto [region, base] : {std::pair(&op.getThenRegion(), "if_then"),
                              std::pair(&op.getElseRegion(), "if_else")}) {
    std::string name = fresh(base);
    Block &block = region->front();
    SmallVector<std::string> params, results;
    DenseMap<Value, std::string> saved;
    for (Value v : captured) {
      std::string param = fresh(name + "_in");
      params.push_back(param + ": " + typeText(v));
      saved[v] = names.lookup(v);
      names[v] = param;
    }
    auto yield = cast<YieldOp>(block.getTerminator());
    for (Value v : yield.getValues())
      results.push_back(fresh(name + "_out") + ": " + typeText(v));
    std::string outer = std::move(body);
    body.clear();
    DenseMap<Value, std::string> none;
    LogicalResult written = writeOps(block, none);
    for (auto [result, v] : llvm::zip(results, yield.getValues()))
      assign(StringRef(result).split(':').first, "copy(" + ref(v) + ")");
    std::string inner = std::move(body);
    body = std::move(outer);
    for (auto &[v, outerName] : saved)
      names[v] = outerName;
    if (failed(written))
      return failure();
    fragments[name] = fragmentText(name, params, results, inner);
    branches.push_back(name);
  }
  return "tract_core_if(" + ref(op.getCond()) +
         ", then_branch = " + quoted(branches[0]) +
         ", else_branch = " + quoted(branches[1]) + ", inputs = " + inputs +
         ")";
}

std::string GraphWriter::header(ArrayRef<std::string> inputs,
                                ArrayRef<std::string> outputs,
                                StringRef graphName) {
  // tract's extensions as (kind, argument), written in sorted order.
  std::vector<std::pair<std::string, std::string>> extensions;
  // tract names tract_core whenever it may use it: its properties' casts.
  if (options.tractCore)
    extensions.push_back({"tract_registry", "tract_core"});
  std::string text = body;
  for (auto &[name, fragment] : fragments)
    text += fragment;
  for (const std::string &registry : invokedRegistries(text))
    extensions.push_back({"tract_registry", registry});
  std::set<std::string> symbols;
  if (auto declared = module->getAttrOfType<ArrayAttr>(kSymbolsAttrName))
    for (Attribute s : declared)
      if (auto str = dyn_cast<StringAttr>(s))
        symbols.insert(str.str());
  module.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (isa<RankedTensorType>(v.getType()))
        for (const TDim &d : getShape(v))
          d.collectSymbols(symbols);
    // Dims in attributes (a pulse op's stream end, a range's length).
    for (NamedAttribute attr : op->getAttrs()) {
      if (auto dim = dyn_cast<DimAttr>(attr.getValue()))
        dim.getValue().collectSymbols(symbols);
      else if (auto shape = dyn_cast<ShapeAttr>(attr.getValue()))
        for (const TDim &d : shape.getDims())
          d.collectSymbols(symbols);
    }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isa<RankedTensorType>(arg.getType()))
            for (const TDim &d : getShape(arg))
              d.collectSymbols(symbols);
  });
  for (const std::string &s : symbols)
    extensions.push_back({"tract_symbol", s});
  if (auto assertions = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    for (Attribute a : assertions)
      if (auto str = dyn_cast<StringAttr>(a))
        extensions.push_back({"tract_assert", str.str()});
  if (auto scenarios =
          module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : scenarios)
      if (auto rules = dyn_cast<ArrayAttr>(scenario.getValue()))
        for (Attribute rule : rules)
          if (auto str = dyn_cast<StringAttr>(rule))
            extensions.push_back(
                {"tract_assert", scenario.getName().str() + ": " + str.str()});
  llvm::sort(extensions);

  std::string out = "version 1.0;\n\n";
  for (auto &[kind, argument] : extensions)
    out += "extension " + kind + " " + argument + ";\n";
  if (!extensions.empty())
    out += "\n";

  // The model's properties by name, then tract's two of the writer.
  SmallVector<std::pair<std::string, std::string>> properties;
  if (!renamed.empty()) {
    std::string pairs;
    for (auto [i, pair] : llvm::enumerate(renamed))
      pairs += std::string(i ? ", " : "") + "[" + quoted(pair.first) + ", " +
               quoted(pair.second) + "]";
    properties.push_back({kIoNamesProperty.str(), "[" + pairs + "]"});
  }
  if (auto props = module->getAttrOfType<DictionaryAttr>(kPropertiesAttrName))
    for (NamedAttribute prop : props) {
      StringRef key = prop.getName().getValue();
      if (key == "tract_nnef_ser_version" ||
          key == "tract_nnef_format_version" || key == kIoNamesProperty)
        continue;
      std::string value = propertyText(prop.getValue(), options.tractCore);
      if (!value.empty())
        properties.push_back({key.str(), value});
    }
  llvm::sort(properties);
  properties.push_back({"tract_nnef_ser_version", quoted(serializerVersion())});
  properties.push_back({"tract_nnef_format_version", quoted("beta1")});
  std::string items;
  for (auto [i, prop] : llvm::enumerate(properties))
    items += std::string(i ? ", " : "") + "(" + quoted(prop.first) + ", " +
             prop.second + ")";
  std::map<std::string, std::string> all = fragments;
  all["tract_core_properties"] = fragmentText(
      "tract_core_properties", {}, {"properties: (string, tensor<scalar>)[]"},
      "  properties = [" + items + "];\n");
  for (auto &[name, fragment] : all)
    out += fragment;
  out += "graph " + graphName.str() + "(" + llvm::join(inputs, ", ") +
         ") -> (" + llvm::join(outputs, ", ") + ") {\n";
  return out;
}

/// Writes the ops of `block` (but its terminator) into `body`; a result
/// in `outputNames` takes that name.
/// A cast from one of tract's quantized types to a float: what the
/// importer inserts before an op that computes on real values.
static bool isDequantize(Operation *op) {
  auto cast = dyn_cast_or_null<CastOp>(op);
  return cast && isQuantized(cast.getInput().getType()) &&
         !isQuantized(cast.getType());
}

/// The reverse of isDequantize: the cast the importer puts after such an op
/// when graph.quant types its result.
static bool isRequantize(Operation *op) {
  auto cast = dyn_cast_or_null<CastOp>(op);
  return cast && !isQuantized(cast.getInput().getType()) &&
         isQuantized(cast.getType());
}

LogicalResult GraphWriter::writeOps(Block &block,
                                    DenseMap<Value, std::string> &outputNames) {
  // An op on dequantized operands is written on the quantized tensors, and
  // a requantizing cast of its result is written as its quantized result,
  // as tract writes them: the importer inserts those casts again.
  DenseSet<Operation *> onQuantized, folded;
  for (Operation &op : block.without_terminator())
    if (!isa<CastOp, ConstOp>(op) && op.getNumResults() == 1 &&
        !op.getNumRegions() && llvm::any_of(op.getOperands(), [](Value v) {
          return isDequantize(v.getDefiningOp());
        }))
      onQuantized.insert(&op);
  for (Operation &op : block.without_terminator()) {
    if (isDequantize(&op) && llvm::all_of(op.getUsers(), [&](Operation *user) {
          return onQuantized.count(user);
        }))
      folded.insert(&op);
    if (isRequantize(&op) && op.getOperand(0).hasOneUse() &&
        onQuantized.count(op.getOperand(0).getDefiningOp()))
      folded.insert(&op);
  }
  for (Operation &op : block.without_terminator()) {
    if (folded.count(&op)) {
      // Its value goes by the name of what it casts.
      if (isDequantize(&op))
        names[op.getResult(0)] = ref(op.getOperand(0));
      continue;
    }
    if (!isa_and_present<TractDialect>(op.getDialect()))
      return op.emitError() << "cannot export '" << op.getName()
                            << "' to NNEF: not a tract op";
    if (auto bind = dyn_cast<BindDimsOp>(op)) {
      // NNEF statements assign: the values pass through under a new name.
      assign(fresh(nodeName(&op)),
             "tract_onnx_bind_dims(" + ref(bind.getValues()) +
                 ", dims = " + listText(bind.getDims().getDims()) + ")");
      continue;
    }
    if (op.getNumResults() == 0)
      return unsupported(&op) << "ops without results have no NNEF form";
    if (op.getNumRegions() && !isa<ScanOp, IfOp>(op))
      return unsupported(&op) << "ops with regions have no NNEF form";
    // A requantized result is written under the cast's name and type.
    Operation *requantize = nullptr;
    if (onQuantized.count(&op) && op.getResult(0).hasOneUse() &&
        folded.count(*op.getUsers().begin()))
      requantize = *op.getUsers().begin();
    SmallVector<std::string> resultNames;
    for (Value result : op.getResults()) {
      Value named = requantize ? requantize->getResult(0) : result;
      std::string name = outputNames.count(named) ? outputNames[named]
                         : requantize             ? fresh(nodeName(requantize))
                                                  : fresh(nodeName(&op));
      names[result] = name;
      if (requantize)
        names[named] = name;
      resultNames.push_back(name);
    }
    if (requantize)
      writeQuantizedType(requantize->getResult(0), resultNames[0]);
    if (auto quant = op.getAttrOfType<DictionaryAttr>(kQuantAttrName))
      if (failed(writeQuant(&op, resultNames[0], quant)))
        return failure();
    for (auto [result, name] : llvm::zip(op.getResults(), resultNames))
      writeQuantizedType(result, name);
    if (auto konst = dyn_cast<ConstOp>(op)) {
      if (failed(writeConstant(konst, resultNames[0])))
        return failure();
      continue;
    }
    if (auto dequant = dyn_cast<BlockDequantOp>(op)) {
      // The Q4_0 file it was read from, written again.
      ElementsAttr constant;
      DenseElementsAttr blocks;
      if (matchPattern(dequant.getBlocks(), mlir::m_Constant(&constant)))
        blocks = tract::denseOf(constant);
      if (!blocks)
        return unsupported(&op) << "its blocks are not a constant";
      ArrayRef<int64_t> shape = dequant.getType().getShape();
      std::string bytes;
      writeQ4_0DatTensor(shape, blockBytes(blocks), bytes);
      files.files[resultNames[0] + ".dat"] = std::move(bytes);
      assign(resultNames[0], "variable<scalar>(label = " +
                                 quoted(resultNames[0]) + ", shape = " +
                                 listText(shape) + ")");
      continue;
    }
    FailureOr<std::string> text = expression(&op);
    if (failed(text))
      return failure();
    if (!options.tractCore && StringRef(*text).contains("tract_core_"))
      return unsupported(&op)
             << "its NNEF form is tract's " << StringRef(*text).split('(').first
             << ", and tract_core is off (--no-nnef-tract-core)";
    if (resultNames.size() == 1)
      assign(resultNames[0], *text);
    else
      assign("( " + llvm::join(resultNames, ", ") + " )", *text);
  }
  return success();
}

LogicalResult GraphWriter::write() {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  func::FuncOp func;
  for (func::FuncOp f : funcs)
    if (f.getName() == "main" || funcs.size() == 1)
      func = f;
  if (!func)
    return module.emitError()
           << "cannot export to NNEF: the module has no function 'main'";
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "cannot export to NNEF: the graph has control flow";
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());

  // Symbols are identifiers of the graph too.
  module.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (isa<RankedTensorType>(v.getType()))
        for (const TDim &d : getShape(v)) {
          std::set<std::string> s;
          d.collectSymbols(s);
          taken.insert(s.begin(), s.end());
        }
  });
  for (BlockArgument arg : entry.getArguments())
    for (const TDim &d : getShape(arg)) {
      std::set<std::string> s;
      d.collectSymbols(s);
      taken.insert(s.begin(), s.end());
    }

  SmallVector<std::string> inputs, outputs;
  for (BlockArgument arg : entry.getArguments()) {
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tract.name");
    inputs.push_back(
        fresh(name ? name.getValue()
                   : "input_" + std::to_string(arg.getArgNumber())));
    names[arg] = inputs.back();
    if (name && name.getValue() != inputs.back())
      renamed.push_back({inputs.back(), name.str()});
    if (failed(writeExternal(arg, inputs.back())))
      return failure();
    writeQuantizedType(arg, inputs.back());
    if (auto quant = func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(),
                                                           kQuantAttrName))
      if (failed(writeQuant(func, inputs.back(), quant)))
        return failure();
  }
  DenseMap<Value, std::string> outputNames;
  SmallVector<std::pair<std::string, Value>> aliases;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "tract.name");
    // An input returned under its own name is listed as both.
    if (auto arg = dyn_cast<BlockArgument>(v); arg && name) {
      auto argName =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tract.name");
      if (argName == name && names.lookup(v) == name.getValue()) {
        outputs.push_back(name.str());
        continue;
      }
    }
    std::string out =
        fresh(name ? name.getValue() : "output_" + std::to_string(i));
    outputs.push_back(out);
    if (name && name.getValue() != out)
      renamed.push_back({out, name.str()});
    // As tract writes outputs: an op keeps its node's name, and an output
    // of another name is assigned from it.
    Operation *def = v.getDefiningOp();
    if (def && v == def->getResult(0) && !outputNames.count(v) &&
        sanitize(nodeName(def)) == out)
      outputNames[v] = out;
    else
      aliases.push_back({out, v});
  }

  if (failed(writeOps(entry, outputNames)))
    return failure();
  for (auto &[out, v] : aliases)
    assign(out, ref(v));

  files.files["graph.nnef"] = header(inputs, outputs, "network") + body + "}\n";
  if (!quant.empty())
    files.files["graph.quant"] = quant;
  return success();
}

} // namespace

StringRef mlir::tract::nnef::serializerVersion() {
  return "tract-mlir-" TRACT_VERSION;
}

LogicalResult mlir::tract::nnef::exportNnef(ModuleOp module, ModelFiles &files,
                                            const ExportOptions &options) {
  GraphWriter writer(module, files, options);
  return writer.write();
}

bool mlir::tract::nnef::isNnefArchivePath(StringRef path) {
  return path.ends_with(".tgz") || path.ends_with(".tar.gz") ||
         path.ends_with(".tar");
}

LogicalResult mlir::tract::nnef::exportNnefTo(ModuleOp module, StringRef path,
                                              const ExportOptions &options) {
  ModelFiles files;
  if (failed(exportNnef(module, files, options)))
    return failure();
  std::string error;
  bool ok = isNnefArchivePath(path) ? writeModelArchive(files, path, error)
                                    : writeModelFolder(files, path, error);
  if (!ok)
    return module.emitError() << error;
  return success();
}
