//===- NnefExporter.cpp - the tract dialect to NNEF -----------------------===//
//
// Each tract op is written as the NNEF invocation the importer translates
// back into that op: the importer's op table read backwards. Constants
// become `variable`s with a `.dat` file each; the module's symbols,
// assertions, scenarios and properties become tract's extensions.
//
//===----------------------------------------------------------------------===//

#include "frontends/nnef/NnefExporter.h"

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"

#include <cstdio>
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

/// A number that the NNEF grammar reads as a scalar (never an integer).
std::string scalarText(double value) {
  char buffer[32];
  snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  if (StringRef(text).find_first_of(".en") == StringRef::npos)
    text += ".0";
  return text;
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

std::string propertyText(Attribute attr) {
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
      std::string text = propertyText(item);
      if (text.empty())
        return "";
      out += (i ? ", " : "") + text;
    }
    return out + "]";
  }
  return "";
}

class GraphWriter {
public:
  GraphWriter(ModuleOp module, ModelFiles &files)
      : module(module), files(files) {}

  LogicalResult write();

private:
  ModuleOp module;
  ModelFiles &files;
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
  LogicalResult writeQuant(Operation *op, StringRef name,
                           DictionaryAttr entry) {
    auto callee = entry.getAs<StringAttr>("op");
    if (!callee)
      return op->emitError() << "cannot export the quantization of '" << name
                             << "' to NNEF: no 'op' in " << entry;
    std::string params;
    for (NamedAttribute param : entry) {
      if (param.getName() == "op")
        continue;
      std::string value = propertyText(param.getValue());
      if (value.empty())
        return op->emitError() << "cannot export the quantization of '" << name
                               << "' to NNEF: parameter '" << param.getName()
                               << "' has no NNEF form";
      params +=
          (params.empty() ? "" : ", ") + param.getName().str() + " = " + value;
    }
    quant += quoted(name) + ": " + callee.str() + "(" + params + ");\n";
    return success();
  }
  /// The graph.quant line of a tensor of tract's quantized type, if `value`
  /// has one.
  void writeQuantizedType(Value value, StringRef name) {
    auto type = getQuantizedElement(value.getType());
    if (!type)
      return;
    char scale[32];
    std::snprintf(scale, sizeof(scale), "%.17g", type.getScale());
    quant += quoted(name) + ": zero_point_linear_quantize(zero_point = " +
             std::to_string(type.getZeroPoint()) + ", scale = " + scale +
             ", bits = " + std::to_string(type.getStorageTypeIntegralWidth()) +
             ", signed = " + (type.isSigned() ? "true" : "false") +
             ", symmetric = false);\n";
  }
  LogicalResult writeOps(Block &block,
                         DenseMap<Value, std::string> &outputNames);
  FailureOr<std::string> scanExpression(ScanOp scan);
  FailureOr<std::string> ifExpression(IfOp op);
  /// Graph inputs and outputs whose names NNEF cannot spell: (NNEF name,
  /// original name), kept as a property.
  SmallVector<std::pair<std::string, std::string>> renamed;
  /// Fragments written for scan bodies, before the graph.
  std::string fragments;
  std::string header(ArrayRef<std::string> inputs,
                     ArrayRef<std::string> outputs, StringRef graphName);
};

LogicalResult GraphWriter::writeExternal(BlockArgument arg, StringRef name) {
  auto type = cast<RankedTensorType>(arg.getType());
  std::string shape = listText(ArrayRef<TDim>(getShape(type)));
  Type element = type.getElementType();
  // A quantized input is declared as tract writes it, a scalar whose
  // graph.quant entry gives the type.
  if (element.isF32() || isQuantized(element))
    assign(name, "external<scalar>(shape = " + shape + ")");
  else if (element.isInteger(64) && !element.isUnsignedInteger())
    assign(name, "external<integer>(shape = " + shape + ")");
  else if (element.isInteger(1))
    assign(name, "external<logical>(shape = " + shape + ")");
  else if (std::string dt = datumTypeName(element); !dt.empty())
    assign(name, "tract_core_external(shape = " + shape +
                     ", datum_type = " + quoted(dt) + ")");
  else
    return emitError(arg.getLoc())
           << "cannot export the graph input '" << name
           << "' to NNEF: no datum type for " << element;
  return success();
}

LogicalResult GraphWriter::writeConstant(ConstOp op, StringRef name) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return unsupported(op) << "only dense constants are written";
  std::string bytes, error;
  if (!writeDatTensor(dense, bytes, error))
    return unsupported(op) << error;
  files.files[name.str() + ".dat"] = std::move(bytes);
  auto type = cast<RankedTensorType>(dense.getType());
  assign(name, "variable<" + nnefTypeName(type.getElementType()) +
                   ">(label = " + quoted(name) +
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
  if (auto gelu = dyn_cast<GeluApproxOp>(op); gelu && !gelu.getFastImpl())
    unary = "tract_core_gelu_approx";
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

  std::string text =
      "\nfragment " + name + "(" +
      (params.empty() ? std::string()
                      : "\n    " + llvm::join(params, ",\n    ") + "\n") +
      ") -> (\n    ";
  SmallVector<std::string> typedResults;
  for (auto [result, v] : llvm::zip(results, yield.getValues()))
    typedResults.push_back(result + ": " + typeText(v));
  text += llvm::join(typedResults, ",\n    ") + "\n)\n{\n" + inner + "}\n";
  fragments += text;

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
    turns = ", skip = 0";
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
    fragments +=
        "\nfragment " + name + "(" +
        (params.empty() ? std::string()
                        : "\n    " + llvm::join(params, ",\n    ") + "\n") +
        ") -> (\n    " + llvm::join(results, ",\n    ") + "\n)\n{\n" + inner +
        "}\n";
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
  std::string text = "version 1.0;\n\nextension tract_registry tract_core;\n";
  // tract reads its transformer ops once their registry is named.
  if (module
          .walk([](Operation *op) {
            return isa<SdpaOp, GdnRecurrentOp>(op) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
          })
          .wasInterrupted())
    text += "extension tract_registry tract_transformers;\n";
  if (module
          .walk([](Operation *op) {
            return isa<NonZeroOp, NonMaxSuppressionOp, UniqueOp, RoiAlignOp>(op)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted())
    text += "extension tract_registry tract_onnx;\n";
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
    text += "extension tract_symbol " + s + ";\n";
  if (auto assertions = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    for (Attribute a : assertions)
      if (auto str = dyn_cast<StringAttr>(a))
        text += "extension tract_assert " + str.str() + ";\n";
  if (auto scenarios =
          module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : scenarios)
      if (auto rules = dyn_cast<ArrayAttr>(scenario.getValue()))
        for (Attribute rule : rules)
          if (auto str = dyn_cast<StringAttr>(rule))
            text += "extension tract_assert " + scenario.getName().str() +
                    ": " + str.str() + ";\n";
  auto props = module->getAttrOfType<DictionaryAttr>(kPropertiesAttrName);
  if (props || !renamed.empty()) {
    text += "\nfragment tract_core_properties(\n) -> (properties: (string, "
            "tensor<scalar>)[])\n{\n  properties = [\n";
    bool first = true;
    if (!renamed.empty()) {
      text += "    (" + quoted(kIoNamesProperty) + ", [";
      for (auto [i, pair] : llvm::enumerate(renamed))
        text += std::string(i ? ", " : "") + "[" + quoted(pair.first) + ", " +
                quoted(pair.second) + "]";
      text += "])";
      first = false;
    }
    for (NamedAttribute prop :
         props ? props : DictionaryAttr::get(module.getContext())) {
      std::string value = propertyText(prop.getValue());
      if (value.empty())
        continue;
      text += std::string(first ? "" : ",\n") + "    (" +
              quoted(prop.getName().getValue()) + ", " + value + ")";
      first = false;
    }
    text += "\n  ];\n}\n";
  }
  text += fragments;
  text += "\ngraph " + graphName.str() + "(";
  text += llvm::join(inputs, ", ") + ") -> (" + llvm::join(outputs, ", ") +
          ")\n{\n";
  return text;
}

/// Writes the ops of `block` (but its terminator) into `body`; a result
/// in `outputNames` takes that name.
LogicalResult GraphWriter::writeOps(Block &block,
                                    DenseMap<Value, std::string> &outputNames) {
  for (Operation &op : block.without_terminator()) {
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
    SmallVector<std::string> resultNames;
    for (Value result : op.getResults()) {
      std::string name = outputNames.count(result) ? outputNames[result]
                                                   : fresh(nodeName(&op));
      names[result] = name;
      resultNames.push_back(name);
    }
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
    FailureOr<std::string> text = expression(&op);
    if (failed(text))
      return failure();
    if (resultNames.size() == 1)
      assign(resultNames[0], *text);
    else
      assign("(" + llvm::join(resultNames, ", ") + ")", *text);
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
  // A result computed by an op takes the output's name; inputs and values
  // returned twice are copied.
  DenseMap<Value, std::string> outputNames;
  SmallVector<std::pair<std::string, Value>> copies;
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
    if (isa<BlockArgument>(v) || outputNames.count(v))
      copies.push_back({out, v});
    else
      outputNames[v] = out;
  }

  if (failed(writeOps(entry, outputNames)))
    return failure();
  for (auto &[out, v] : copies)
    assign(out, "copy(" + ref(v) + ")");

  files.files["graph.nnef"] = header(inputs, outputs, "network") + body + "}\n";
  if (!quant.empty())
    files.files["graph.quant"] = quant;
  return success();
}

} // namespace

LogicalResult mlir::tract::nnef::exportNnef(ModuleOp module,
                                            ModelFiles &files) {
  GraphWriter writer(module, files);
  return writer.write();
}

bool mlir::tract::nnef::isNnefArchivePath(StringRef path) {
  return path.ends_with(".tgz") || path.ends_with(".tar.gz") ||
         path.ends_with(".tar");
}

LogicalResult mlir::tract::nnef::exportNnefTo(ModuleOp module, StringRef path) {
  ModelFiles files;
  if (failed(exportNnef(module, files)))
    return failure();
  std::string error;
  bool ok = isNnefArchivePath(path) ? writeModelArchive(files, path, error)
                                    : writeModelFolder(files, path, error);
  if (!ok)
    return module.emitError() << error;
  return success();
}
