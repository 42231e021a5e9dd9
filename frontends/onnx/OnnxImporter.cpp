//===- OnnxImporter.cpp - ONNX protobuf to the tract dialect --------------===//

#include "frontends/onnx/OnnxImporter.h"
#include "frontends/onnx/TensorProtoData.h"

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractModule.h"
#include "dialects/tract/TractOps.h"
#include "frontends/onnx/GraphImporter.h"
#include "frontends/onnx/MappedWeights.h"
#include "frontends/onnx/QdqFusion.h"
#include "frontends/onnx/NodeContext.h"
#include "frontends/onnx/onnx.pb.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace mlir;
using namespace mlir::tract;
using namespace mlir::tract::onnx;

//===----------------------------------------------------------------------===//
// Types and symbols
//===----------------------------------------------------------------------===//

Type mlir::tract::onnx::convertDataType(MLIRContext *context, int dataType,
                                        std::string &name) {
  using TP = ::onnx::TensorProto;
  Builder b(context);
  auto unsignedType = [&](unsigned width) {
    return IntegerType::get(context, width, IntegerType::Unsigned);
  };
  switch (dataType) {
  case TP::FLOAT:
    return b.getF32Type();
  case TP::DOUBLE:
    return b.getF64Type();
  case TP::FLOAT16:
    return b.getF16Type();
  case TP::BFLOAT16:
    return b.getBF16Type();
  case TP::INT8:
    return b.getIntegerType(8);
  case TP::INT16:
    return b.getIntegerType(16);
  case TP::INT32:
    return b.getIntegerType(32);
  case TP::INT64:
    return b.getIntegerType(64);
  case TP::UINT8:
    return unsignedType(8);
  case TP::UINT16:
    return unsignedType(16);
  case TP::UINT32:
    return unsignedType(32);
  case TP::UINT64:
    return unsignedType(64);
  case TP::BOOL:
    return b.getI1Type();
  default:
    name = onnxDataTypeName(dataType);
    return {};
  }
}

std::string mlir::tract::onnx::sanitizeSymbol(StringRef name) {
  std::string symbol;
  for (char c : name)
    symbol.push_back(llvm::isAlnum(c) || c == '_' ? c : '_');
  if (symbol.empty() || llvm::isDigit(symbol.front()))
    symbol.insert(symbol.begin(), '_');
  return symbol;
}

TDim GraphImporter::freshSymbol(StringRef hint) {
  std::string name;
  do {
    name = (sanitizeSymbol(hint) + "__" + Twine(model.freshCounter++)).str();
  } while (model.symbols.count(name));
  model.symbols.insert(name);
  return TDim::symbol(name);
}

/// Records `relation` once, with the branch being imported if any.
static void assume(ModelState &model, std::string relation) {
  std::vector<std::string> &assertions =
      model.branchAssertions ? *model.branchAssertions : model.assertions;
  if (!llvm::is_contained(assertions, relation))
    assertions.push_back(std::move(relation));
}

void GraphImporter::assumeEqual(const TDim &actual, const TDim &expected) {
  assume(model, actual.toString() + " == " + expected.toString());
}

void GraphImporter::assumeAtMost(const TDim &lhs, const TDim &rhs) {
  assume(model, lhs.toString() + " <= " + rhs.toString());
}

Location GraphImporter::nodeLocation(StringRef name) {
  Location file = FileLineColLoc::get(model.context, model.fileName, 0, 0);
  return NameLoc::get(StringAttr::get(model.context, name), file);
}

const SmallVector<Value> *GraphImporter::lookupSequence(StringRef name) const {
  for (const GraphImporter *scope = this; scope; scope = scope->parent) {
    auto it = scope->sequences.find(name);
    if (it != scope->sequences.end())
      return &it->second;
  }
  return nullptr;
}

Value GraphImporter::lookup(StringRef name) const {
  for (const GraphImporter *scope = this; scope; scope = scope->parent) {
    auto it = scope->values.find(name);
    if (it != scope->values.end())
      return it->second;
  }
  return {};
}

FailureOr<RankedTensorType>
GraphImporter::convertType(const ::onnx::TypeProto &type, StringRef what,
                           std::string &error) {
  if (!type.has_tensor_type()) {
    error = (what + " is not a tensor (sequence, map and optional types are "
                    "unsupported)")
                .str();
    return failure();
  }
  const auto &tensor = type.tensor_type();
  std::string dtypeName;
  Type elementType =
      convertDataType(model.context, tensor.elem_type(), dtypeName);
  if (!elementType) {
    error = (what + " has unsupported element type " + dtypeName).str();
    return failure();
  }
  if (!tensor.has_shape()) {
    error = (what + " has no shape; give one with an input fact").str();
    return failure();
  }
  Shape shape;
  for (const auto &dim : tensor.shape().dim()) {
    // Kaldi and TensorFlow exporters write an unknown dim as -1: a fresh
    // symbol, as an absent dim, that the input facts may then set.
    if (dim.has_dim_value() && dim.dim_value() == -1) {
      shape.push_back(freshSymbol("unk"));
    } else if (dim.has_dim_value()) {
      if (dim.dim_value() < 0 || dim.dim_value() >= kDimCeiling) {
        error = (what + " has the dim " + Twine(dim.dim_value()) +
                 ", outside 0 to 2^31")
                    .str();
        return failure();
      }
      shape.push_back(TDim(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      std::string symbol = sanitizeSymbol(dim.dim_param());
      model.symbols.insert(symbol);
      shape.push_back(TDim::symbol(symbol));
    } else {
      shape.push_back(freshSymbol("unk"));
    }
  }
  return getTensorType(model.context, shape, elementType);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

namespace {

/// Where `tensor`'s external data is: a path under `baseDir` (refusing
/// paths that leave the model's folder), an offset, and a length that
/// fits in the file.
LogicalResult resolveExternal(const ::onnx::TensorProto &tensor,
                              StringRef baseDir, SmallString<256> &path,
                              int64_t &offset, int64_t &length,
                              std::string &error) {
  std::string location;
  offset = 0;
  length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t &field = entry.key() == "offset" ? offset : length;
      if (StringRef(entry.value()).getAsInteger(10, field) || field < 0) {
        error = "external data " + entry.key() + " '" + entry.value() +
                "' is not a non-negative integer";
        return failure();
      }
    }
  }
  if (location.empty()) {
    error = "external data without a location";
    return failure();
  }
  if (llvm::sys::path::is_absolute(location)) {
    error = "external data path '" + location + "' is absolute";
    return failure();
  }
  for (StringRef component : llvm::make_range(llvm::sys::path::begin(location),
                                              llvm::sys::path::end(location)))
    if (component == "..") {
      error = "external data path '" + location + "' leaves the model folder";
      return failure();
    }
  path = baseDir;
  llvm::sys::path::append(path, location);
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize)) {
    error = "cannot read external data '" + location + "': " + ec.message();
    return failure();
  }
  int64_t size = static_cast<int64_t>(fileSize);
  if (offset <= size && length < 0)
    length = size - offset;
  if (offset > size || length > size - offset) {
    error = "external data '" + location + "' is shorter than the tensor";
    return failure();
  }
  return success();
}

/// Maps `tensor`'s external data into `mapped`.
LogicalResult readExternal(const ::onnx::TensorProto &tensor, StringRef baseDir,
                           std::unique_ptr<llvm::MemoryBuffer> &mapped,
                           std::string &error) {
  SmallString<256> path;
  int64_t offset, length;
  if (failed(resolveExternal(tensor, baseDir, path, offset, length, error)))
    return failure();
  // Mapped, not read: the attribute's copy is the only one made.
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, length, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer) {
    error = "cannot read external data '" + path.str().str() +
            "': " + buffer.getError().message();
    return failure();
  }
  mapped = std::move(*buffer);
  return success();
}

} // namespace

FailureOr<RankedTensorType>
GraphImporter::typeOf(const ::onnx::TensorProto &tensor, int64_t &count,
                      std::string &error) {
  std::string dtypeName;
  Type elementType =
      convertDataType(model.context, tensor.data_type(), dtypeName);
  if (!elementType) {
    error = "tensor '" + tensor.name() + "' has unsupported element type " +
            dtypeName;
    return failure();
  }
  if (tensor.has_segment()) {
    error = "tensor '" + tensor.name() + "' is segmented (unsupported)";
    return failure();
  }
  SmallVector<int64_t> shape;
  count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) {
      error = "tensor '" + tensor.name() + "' has a negative dim";
      return failure();
    }
    // Within 2^31 per dim and 2^48 in all, so the byte count cannot
    // overflow either; the data present is checked against it below.
    if (dim >= kDimCeiling || (dim != 0 && count > (int64_t(1) << 48) / dim)) {
      error = "tensor '" + tensor.name() +
              "' has more elements than a tensor can (2^31 per dim, 2^48 "
              "in all)";
      return failure();
    }
    shape.push_back(dim);
    count *= dim;
  }
  return RankedTensorType::get(shape, elementType);
}

Value GraphImporter::importMappedWeight(const ::onnx::TensorProto &tensor,
                                        size_t index, OpBuilder &builder,
                                        Location loc) {
  using TP = ::onnx::TensorProto;
  std::string error;
  int64_t count;
  FailureOr<RankedTensorType> type = typeOf(tensor, count, error);
  // Floats, and the bytes of block-quantized weights.
  if (failed(type) || !(isa<FloatType>(type->getElementType()) ||
                        type->getElementType().isInteger(8)))
    return nullptr;
  int64_t bytes = count * (type->getElementTypeBitWidth() / 8);
  if (bytes < kMappedWeightBytes)
    return nullptr;
  DenseResourceElementsAttr value;
  if (tensor.data_location() == TP::EXTERNAL) {
    SmallString<256> path;
    int64_t offset, length;
    if (failed(resolveExternal(tensor, model.baseDir, path, offset, length,
                               error)) ||
        length != bytes)
      return nullptr;
    value = mapExternalWeight(path, offset, length, *type, tensor.name());
  } else if (model.modelFile && index < model.initializerData.size() &&
             model.initializerData[index].second == bytes) {
    auto [offset, length] = model.initializerData[index];
    value = mapWeight(model.modelFile, offset, length, *type, tensor.name());
  }
  if (!value)
    return nullptr;
  return ConstOp::create(builder, loc, *type, value).getResult();
}

FailureOr<DenseElementsAttr>
GraphImporter::readTensor(const ::onnx::TensorProto &tensor,
                          std::string &error) {
  using TP = ::onnx::TensorProto;
  int64_t count;
  FailureOr<RankedTensorType> tensorType = typeOf(tensor, count, error);
  if (failed(tensorType))
    return failure();
  RankedTensorType type = *tensorType;
  Type elementType = type.getElementType();
  // The element size in bytes as stored in raw data (bools are bytes).
  int64_t width =
      elementType.isInteger(1) ? 1 : elementType.getIntOrFloatBitWidth() / 8;
  std::string bytes;
  // Raw data is read where protobuf holds it, not copied first.
  std::unique_ptr<llvm::MemoryBuffer> mapped;
  StringRef data;
  if (tensor.data_location() == TP::EXTERNAL) {
    if (failed(readExternal(tensor, model.baseDir, mapped, error))) {
      error = "tensor '" + tensor.name() + "': " + error;
      return failure();
    }
    data = mapped->getBuffer();
  } else if (auto skipped = model.stripped.find(&tensor);
             skipped != model.stripped.end()) {
    // Left in the mapped file by the parse: copied from there once.
    data = toStringRef(model.modelFile->bytes().slice(skipped->second.first,
                                                       skipped->second.second));
  } else {
    data = onnxInlineBytes(tensor, bytes);
  }
  if (static_cast<int64_t>(data.size()) != count * width) {
    error = "tensor '" + tensor.name() + "' holds " +
            std::to_string(data.size()) + " bytes, expected " +
            std::to_string(count * width);
    return failure();
  }
  if (elementType.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : data)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  if (count == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>());
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(data.data(), data.size()));
}

FailureOr<Value> GraphImporter::importTensor(const ::onnx::TensorProto &tensor,
                                             OpBuilder &builder, Location loc,
                                             std::string &error) {
  FailureOr<DenseElementsAttr> value = readTensor(tensor, error);
  if (failed(value))
    return failure();
  return ConstOp::create(builder, loc, value->getType(), *value).getResult();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

/// Frees the data of `tensor`, which an attribute now holds.
static void releaseData(::onnx::TensorProto &tensor) {
  auto release = [](std::string *bytes) {
    bytes->clear();
    bytes->shrink_to_fit();
  };
  release(tensor.mutable_raw_data());
  auto drop = [](auto *values) {
    std::remove_pointer_t<decltype(values)>().Swap(values);
  };
  drop(tensor.mutable_float_data());
  drop(tensor.mutable_double_data());
  drop(tensor.mutable_int32_data());
  drop(tensor.mutable_int64_data());
}

LogicalResult GraphImporter::importNodes(const ::onnx::GraphProto &graph,
                                         OpBuilder &builder) {
  // Large weights that only products and gathers read are mapped from
  // the model's files, when the import owns the parsed model.
  std::set<std::string> mappable;
  if (&graph == model.ownedGraph)
    mappable = weightsOnlyProductsRead(graph);
  for (auto [index, initializer] : llvm::enumerate(graph.initializer())) {
    std::string error;
    Location loc = nodeLocation(initializer.name());
    if (mappable.count(initializer.name()))
      if (Value mapped = importMappedWeight(initializer, index, builder, loc)) {
        define(initializer.name(), mapped);
        releaseData(*model.ownedGraph->mutable_initializer(index));
        continue;
      }
    FailureOr<Value> value = importTensor(initializer, builder, loc, error);
    if (failed(value))
      return emitError(loc) << "initializer: " << error;
    define(initializer.name(), *value);
    if (&graph == model.ownedGraph)
      releaseData(*model.ownedGraph->mutable_initializer(index));
    // Copied from the mapped file: its pages can go.
    if (auto skipped = model.stripped.find(&initializer);
        skipped != model.stripped.end())
      dropPages(model.modelFile->bytes().slice(skipped->second.first,
                                               skipped->second.second));
  }
  const OpRegistry &registry = OpRegistry::get();
  for (const ::onnx::NodeProto &node : graph.node()) {
    // Unnamed nodes go by their first output, as in tract.
    std::string name = !node.name().empty() ? node.name()
                       : node.output_size() ? node.output(0)
                                            : node.op_type();
    Location loc = nodeLocation(name);
    bool ml = node.domain() == "ai.onnx.ml";
    bool ms = node.domain() == "com.microsoft";
    auto describe = [&]() {
      return "node '" + name + "' (" + node.op_type() +
             (ml   ? ", ai.onnx.ml opset " + std::to_string(model.mlOpset)
              : ms ? ", com.microsoft opset " + std::to_string(model.msOpset)
                   : ", opset " + std::to_string(model.opset)) +
             ")";
    };
    if (!node.domain().empty() && node.domain() != "ai.onnx" && !ml && !ms)
      return emitError(loc) << describe() << ": operators of domain '"
                            << node.domain() << "' are unsupported";
    for (const std::string &input : node.input())
      if (!input.empty() && !lookup(input) && !lookupSequence(input)) {
        InFlightDiagnostic diagnostic = emitError(loc)
                                        << describe() << ": input '" << input
                                        << "' is not defined";
        // ONNX lists nodes in topological order: a later producer means a
        // cycle or nodes out of order, which the message should say.
        for (const ::onnx::NodeProto &later : graph.node())
          if (llvm::is_contained(later.output(), input))
            return diagnostic << " before it (a later node produces it: the "
                                 "graph has a cycle or is not in topological "
                                 "order)";
        return diagnostic;
      }
    int64_t opset = ml ? model.mlOpset : ms ? model.msOpset : model.opset;
    const OpHandler *handler = registry.lookup(
        ml   ? "ai.onnx.ml." + node.op_type()
        : ms ? "com.microsoft." + node.op_type()
             : node.op_type(),
        opset);
    if (!handler)
      return emitError(loc) << describe() << ": unsupported operator";
    NodeContext context(*this, node, opset, builder, loc);
    SmallVector<Value> outputs;
    std::string diagnostic;
    LogicalResult result = success();
    {
      ScopedDiagnosticHandler capture(model.context, [&](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            diagnostic.empty())
          diagnostic = diag.str();
        return success();
      });
      result = (*handler)(context, outputs);
    }
    if (failed(result) || context.hasFailed()) {
      std::string reason = !context.getFailure().empty() ? context.getFailure()
                           : !diagnostic.empty()         ? diagnostic
                                                         : "translation failed";
      // A handler that finds no value for an input says no more than that:
      // name the empty input names, the likely cause.
      if (context.getFailure().empty() && diagnostic.empty())
        for (auto [i, input] : llvm::enumerate(node.input()))
          if (input.empty())
            reason += " (input " + std::to_string(i) + " is missing)";
      return emitError(loc) << describe() << ": " << reason;
    }
    for (auto [i, output] : llvm::enumerate(node.output())) {
      if (output.empty())
        continue;
      auto sequence = context.getSequenceOutputs().find(i);
      if (sequence != context.getSequenceOutputs().end()) {
        defineSequence(output, sequence->second);
        continue;
      }
      if (i >= outputs.size() || !outputs[i])
        return emitError(loc) << describe() << ": output " << i << " ('"
                              << output << "') is not produced";
      define(output, outputs[i]);
    }
  }
  return success();
}

FailureOr<SmallVector<Value>>
GraphImporter::importSubgraph(const ::onnx::GraphProto &graph,
                              ArrayRef<Value> inputs, OpBuilder &builder) {
  GraphImporter scope(model, this);
  if (static_cast<size_t>(graph.input_size()) != inputs.size()) {
    emitError(nodeLocation(graph.name()))
        << "subgraph '" << graph.name() << "' takes " << graph.input_size()
        << " inputs, got " << inputs.size();
    return failure();
  }
  for (auto [input, value] : llvm::zip(graph.input(), inputs))
    scope.define(input.name(), value);
  if (failed(scope.importNodes(graph, builder)))
    return failure();
  SmallVector<Value> outputs;
  for (const auto &output : graph.output()) {
    Value value = scope.lookup(output.name());
    if (!value) {
      emitError(nodeLocation(graph.name()))
          << "subgraph output '" << output.name() << "' is not defined";
      return failure();
    }
    outputs.push_back(value);
  }
  return outputs;
}

//===----------------------------------------------------------------------===//
// Models
//===----------------------------------------------------------------------===//

namespace {

/// Parses the values of a fact (`=1,2,3` after the type) into a constant of
/// `type`, which must be static.
FailureOr<DenseElementsAttr> parseFactValues(StringRef text,
                                             RankedTensorType type,
                                             std::string &error) {
  if (!type.hasStaticShape()) {
    error = "a fact with values needs a concrete shape";
    return failure();
  }
  SmallVector<StringRef> items;
  if (!text.trim().empty())
    text.split(items, ',');
  if (static_cast<int64_t>(items.size()) != type.getNumElements()) {
    error = std::to_string(items.size()) + " values given for " +
            std::to_string(type.getNumElements()) + " elements";
    return failure();
  }
  Type elementType = type.getElementType();
  SmallVector<Attribute> values;
  for (StringRef item : items) {
    item = item.trim();
    if (auto floatType = dyn_cast<FloatType>(elementType)) {
      double value;
      if (item.getAsDouble(value)) {
        error = "'" + item.str() + "' is not a number";
        return failure();
      }
      values.push_back(FloatAttr::get(floatType, value));
      continue;
    }
    auto intType = cast<IntegerType>(elementType);
    int64_t value;
    if (intType.getWidth() == 1 && (item == "true" || item == "false")) {
      value = item == "true";
    } else if (item.getAsInteger(10, value)) {
      error = "'" + item.str() + "' is not an integer";
      return failure();
    }
    values.push_back(IntegerAttr::get(
        intType, APInt(intType.getWidth(), value, /*isSigned=*/true,
                       /*implicitTrunc=*/true)));
  }
  return DenseElementsAttr::get(type, values);
}

/// Parses the shape and type of a tract input fact: `1,S,64,f32`, `1,S,64`,
/// `f32`; with values after `=` (`i64=16000`, `2,i64=3,4`) the input becomes
/// a constant.
LogicalResult parseInputFact(StringRef text, RankedTensorType declared,
                             MLIRContext *context, ModelState &model,
                             RankedTensorType &result,
                             DenseElementsAttr &value, std::string &error) {
  auto [spec, valuesText] = text.split('=');
  bool hasValues = spec.size() != text.size();
  SmallVector<StringRef> parts;
  if (!spec.trim().empty())
    spec.split(parts, ',');
  Type elementType = declared ? declared.getElementType() : Type();
  static const std::pair<const char *, int> dtypes[] = {
      {"f32", ::onnx::TensorProto::FLOAT},
      {"f64", ::onnx::TensorProto::DOUBLE},
      {"f16", ::onnx::TensorProto::FLOAT16},
      {"i8", ::onnx::TensorProto::INT8},
      {"i16", ::onnx::TensorProto::INT16},
      {"i32", ::onnx::TensorProto::INT32},
      {"i64", ::onnx::TensorProto::INT64},
      {"u8", ::onnx::TensorProto::UINT8},
      {"u16", ::onnx::TensorProto::UINT16},
      {"u32", ::onnx::TensorProto::UINT32},
      {"u64", ::onnx::TensorProto::UINT64},
      {"bool", ::onnx::TensorProto::BOOL}};
  bool typed = false;
  if (!parts.empty()) {
    StringRef last = parts.back().trim();
    for (auto [name, code] : dtypes)
      if (last.equals_insensitive(name)) {
        std::string unused;
        elementType = convertDataType(context, code, unused);
        parts.pop_back();
        typed = true;
        break;
      }
  }
  if (!elementType) {
    error = "input fact '" + text.str() + "' needs an element type";
    return failure();
  }
  Shape shape;
  // A bare type keeps the declared shape, unless values make it a scalar.
  if (parts.empty() && declared && !(hasValues && typed)) {
    shape = getShape(declared);
  } else {
    for (StringRef part : parts) {
      std::string parseError;
      std::optional<TDim> dim = TDim::parse(part.trim(), &parseError);
      if (!dim) {
        error = "input fact '" + text.str() + "': " + parseError;
        return failure();
      }
      std::set<std::string> names;
      dim->collectSymbols(names);
      model.symbols.insert(names.begin(), names.end());
      shape.push_back(*dim);
    }
  }
  result = getTensorType(context, shape, elementType);
  if (!hasValues)
    return success();
  FailureOr<DenseElementsAttr> parsed =
      parseFactValues(valuesText, result, error);
  if (failed(parsed)) {
    error = "input fact '" + text.str() + "': " + error;
    return failure();
  }
  value = *parsed;
  return success();
}

/// What the user says about one graph input.
struct InputFact {
  RankedTensorType type;
  /// Set when the input is given a value: it becomes a constant.
  DenseElementsAttr value;
};

/// Resolves the `-i` facts against the graph inputs (those that are not
/// initializers), in tract's forms: `[NAME:]SPEC` and `[NAME:]@FILE.pb`.
/// Unnamed facts apply by position among the unnamed ones; a tensor file's
/// own name selects its input when it has one.
LogicalResult resolveInputFacts(ArrayRef<std::string> texts,
                                ArrayRef<const ::onnx::ValueInfoProto *> inputs,
                                GraphImporter &importer,
                                SmallVectorImpl<std::optional<InputFact>> &facts,
                                std::string &error) {
  ModelState &model = importer.getModel();
  facts.assign(inputs.size(), std::nullopt);
  size_t position = 0;
  for (const std::string &fullText : texts) {
    StringRef text = fullText;
    if (text.empty()) {
      ++position;
      continue;
    }
    std::string name;
    // A name never contains ',' or '='; a shape never contains ':'.
    size_t colon = text.find(':');
    if (colon != StringRef::npos && !text.starts_with("@") &&
        text.find_first_of(",=") > colon) {
      name = text.take_front(colon).str();
      text = text.drop_front(colon + 1);
    }
    InputFact fact;
    if (text.starts_with("@")) {
      StringRef file = text.drop_front();
      auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
      if (!buffer) {
        error = "input fact '" + fullText + "': cannot read '" + file.str() +
                "': " + buffer.getError().message();
        return failure();
      }
      ::onnx::TensorProto tensor;
      if (!tensor.ParseFromArray(
              (*buffer)->getBufferStart(),
              static_cast<int>((*buffer)->getBufferSize()))) {
        error = "input fact '" + fullText + "': '" + file.str() +
                "' is not an ONNX tensor";
        return failure();
      }
      FailureOr<DenseElementsAttr> value = importer.readTensor(tensor, error);
      if (failed(value)) {
        error = "input fact '" + fullText + "': " + error;
        return failure();
      }
      fact.value = *value;
      fact.type = cast<RankedTensorType>(value->getType());
      if (name.empty())
        name = tensor.name();
    }
    size_t index = inputs.size();
    if (!name.empty()) {
      for (auto [i, input] : llvm::enumerate(inputs))
        if (input->name() == name)
          index = i;
      if (index == inputs.size()) {
        error = "input fact '" + fullText + "': the model has no input '" +
                name + "'";
        return failure();
      }
    } else {
      index = position++;
      if (index >= inputs.size()) {
        error = std::to_string(index + 1) + " input facts given, the model "
                "has " + std::to_string(inputs.size()) + " inputs";
        return failure();
      }
    }
    if (!fact.type) {
      std::string ignored;
      FailureOr<RankedTensorType> declared =
          importer.convertType(inputs[index]->type(), "input", ignored);
      if (failed(parseInputFact(text, succeeded(declared) ? *declared
                                                          : RankedTensorType(),
                                model.context, model, fact.type, fact.value,
                                error)))
        return failure();
    }
    facts[index] = fact;
  }
  return success();
}

/// Imports a parsed model; `path` names it and locates its external data.
/// `owned`: the same model, when the caller lets the import free its
/// weights' data as it goes.
OwningOpRef<ModuleOp> importModelProto(const ::onnx::ModelProto &proto,
                                       StringRef path, MLIRContext *context,
                                       const ImportOptions &options,
                                       ::onnx::ModelProto *owned = nullptr,
                                       std::shared_ptr<MappedFile> file = {}) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  if (!proto.has_graph()) {
    emitError(fileLoc) << "'" << path << "' is not an ONNX model: it has no "
                       << "graph";
    return {};
  }
  ModelState model;
  model.context = context;
  model.fileName = path.str();
  if (owned) {
    model.ownedGraph = owned->mutable_graph();
    // Quantized products in the QDQ form run as integer ops, not in float.
    fuseQdqProducts(*model.ownedGraph);
  }
  if (owned && file) {
    model.initializerData = findInitializerData(*file);
    if (model.initializerData.size() ==
        static_cast<size_t>(owned->graph().initializer_size())) {
      model.modelFile = std::move(file);
      for (auto [index, span] : llvm::enumerate(model.initializerData)) {
        const ::onnx::TensorProto &tensor = owned->graph().initializer(index);
        if (span.second >= kMappedWeightBytes && tensor.raw_data().empty() &&
            tensor.data_location() != ::onnx::TensorProto::EXTERNAL)
          model.stripped[&tensor] = span;
      }
    } else {
      model.initializerData.clear();
    }
  }
  model.baseDir = llvm::sys::path::parent_path(path).str();
  if (model.baseDir.empty())
    model.baseDir = ".";
  bool hasDefaultDomain = false;
  for (const auto &opset : proto.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      model.opset = opset.version();
      hasDefaultDomain = true;
    } else if (opset.domain() == "ai.onnx.ml") {
      model.mlOpset = opset.version();
    } else if (opset.domain() == "com.microsoft") {
      model.msOpset = opset.version();
    }
  if (!hasDefaultDomain)
    model.opset = 1;

  const ::onnx::GraphProto &graph = proto.graph();
  GraphImporter importer(model);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(module->getBody());

  // Graph inputs that are initializers too are constants, not arguments.
  std::set<std::string> initialized;
  for (const auto &initializer : graph.initializer())
    initialized.insert(initializer.name());
  SmallVector<const ::onnx::ValueInfoProto *> graphInputs;
  for (const auto &input : graph.input())
    if (!initialized.count(input.name()))
      graphInputs.push_back(&input);
  SmallVector<std::optional<InputFact>> facts;
  {
    std::string error;
    if (failed(resolveInputFacts(options.inputFacts, graphInputs, importer,
                                 facts, error))) {
      emitError(fileLoc) << error;
      return {};
    }
  }
  // Inputs given a value are constants of the model, not arguments.
  SmallVector<Type> inputTypes;
  SmallVector<std::string> inputNames;
  SmallVector<std::pair<std::string, DenseElementsAttr>> constantInputs;
  for (auto [input, fact] : llvm::zip(graphInputs, facts)) {
    if (fact && fact->value) {
      constantInputs.emplace_back(input->name(), fact->value);
      continue;
    }
    RankedTensorType type;
    if (fact) {
      type = fact->type;
    } else {
      std::string error;
      FailureOr<RankedTensorType> declared = importer.convertType(
          input->type(), "input '" + input->name() + "'", error);
      if (failed(declared)) {
        emitError(fileLoc) << error;
        return {};
      }
      type = *declared;
    }
    inputTypes.push_back(type);
    inputNames.push_back(input->name());
  }

  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType(inputTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [name, argument] : llvm::zip(inputNames, entry->getArguments()))
    importer.define(name, argument);
  for (auto [i, name] : llvm::enumerate(inputNames))
    func.setArgAttr(i, "tract.name", builder.getStringAttr(name));
  builder.setInsertionPointToEnd(entry);
  for (auto &[name, value] : constantInputs)
    importer.define(name, ConstOp::create(builder, importer.nodeLocation(name),
                                          value.getType(), value));
  if (failed(importer.importNodes(graph, builder)))
    return {};

  SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    Value value = importer.lookup(output.name());
    if (!value) {
      emitError(fileLoc) << "graph output '" << output.name()
                         << "' is not produced by any node";
      return {};
    }
    results.push_back(value);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(inputTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "tract.name", builder.getStringAttr(output.name()));

  if (!model.assertions.empty()) {
    SmallVector<Attribute> assertions;
    for (const std::string &text : model.assertions)
      assertions.push_back(builder.getStringAttr(text));
    (*module)->setAttr(kAssertionsAttrName, builder.getArrayAttr(assertions));
  }
  finishImport(*module, {});
  if (failed(verify(*module)))
    return {};
  return module;
}

} // namespace

OwningOpRef<ModuleOp>
mlir::tract::onnx::importOnnxFile(StringRef path, MLIRContext *context,
                                  const ImportOptions &options) {
  context->loadDialect<TractDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size)) {
    emitError(fileLoc) << "cannot read '" << path << "': " << ec.message();
    return {};
  }
  if (size >= (uint64_t(2) << 30)) {
    emitError(fileLoc) << "'" << path << "' is " << (size >> 20)
                       << " MiB; ONNX protobuf files over 2 GiB are refused "
                          "(store weights as external data)";
    return {};
  }
  // Mapped, and parsed without the large weights' raw data, which the
  // import then reads where the file holds it (MappedWeights.h); else read
  // through a small buffer, not mapped whole beside the proto's copy.
  std::shared_ptr<MappedFile> mapped = mapModelFile(path);
  std::optional<std::string> skeleton =
      mapped ? stripLargeData(*mapped) : std::nullopt;
  ::onnx::ModelProto proto;
  bool parsed;
  if (skeleton) {
    parsed = proto.ParseFromString(*skeleton);
    skeleton.reset();
  } else {
    int fd = -1;
    if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd)) {
      emitError(fileLoc) << "cannot read '" << path << "': " << ec.message();
      return {};
    }
    google::protobuf::io::FileInputStream stream(fd, 1 << 20);
    stream.SetCloseOnDelete(true);
    parsed = proto.ParseFromZeroCopyStream(&stream);
  }
  if (!parsed) {
    emitError(fileLoc) << "'" << path << "' is not a valid ONNX model";
    return {};
  }
  return importModelProto(proto, path, context, options, &proto,
                          std::move(mapped));
}

OwningOpRef<ModuleOp>
mlir::tract::onnx::importOnnxBytes(StringRef bytes, StringRef path,
                                   MLIRContext *context,
                                   const ImportOptions &options) {
  context->loadDialect<TractDialect, func::FuncDialect>();
  ::onnx::ModelProto proto;
  if (bytes.size() >= (uint64_t(2) << 30) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "'" << path << "' is not a valid ONNX model";
    return {};
  }
  return importModelProto(proto, path, context, options, &proto);
}

std::vector<std::pair<std::string, int>>
mlir::tract::onnx::listSupportedOnnxOps() {
  return OpRegistry::get().list();
}
