#include "dialects/tract/TractDialect.h"

#include "dialects/tract/TractOps.h"
#include "mlir/Dialect/Quant/IR/Quant.h"

#include <set>

using namespace mlir;
using namespace mlir::tract;

#include "dialects/tract/TractDialect.cpp.inc"

void TractDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/tract/TractOps.cpp.inc"
      >();
}

Operation *TractDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Module attributes: symbols, assertions, scenarios, properties
//===----------------------------------------------------------------------===//

namespace {

/// Adds the symbols a type's #tract.dims encoding uses to `names`.
void collectTypeSymbols(Type type, std::set<std::string> &names) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return;
  if (auto dims = dyn_cast_if_present<DimsAttr>(tensor.getEncoding()))
    for (const TDim &dim : dims.getDims())
      dim.collectSymbols(names);
}

/// Every element of `attr` is a string; calls `check` on each.
LogicalResult verifyStringArray(Operation *op, NamedAttribute attribute,
                                function_ref<LogicalResult(StringRef)> check) {
  auto array = dyn_cast<ArrayAttr>(attribute.getValue());
  if (!array)
    return op->emitError() << attribute.getName()
                           << " must be an array of strings";
  for (Attribute element : array) {
    auto text = dyn_cast<StringAttr>(element);
    if (!text)
      return op->emitError()
             << attribute.getName() << " must be an array of strings";
    if (failed(check(text.getValue())))
      return failure();
  }
  return success();
}

} // namespace

LogicalResult TractDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  // Names of a lowered function's inputs and outputs, which LLVM cannot
  // keep on parameters.
  if (name == "tract.input_names" || name == "tract.output_names")
    return verifyStringArray(op, attribute,
                             [](StringRef) { return success(); });
  if (name == kInputShapesAttrName || name == kGuardedDimsAttrName ||
      name == kGuardedSizesAttrName) {
    auto array = dyn_cast<ArrayAttr>(attribute.getValue());
    bool shapes = name == kInputShapesAttrName;
    if (!array || !llvm::all_of(array, [&](Attribute entry) {
          return shapes ? isa<ShapeAttr>(entry) : isa<DictionaryAttr>(entry);
        }))
      return op->emitError() << name << " is an array of "
                             << (shapes ? "#tract.shape" : "dictionaries");
    return success();
  }
  if (name == kStatefulScanAttrName) {
    if (!isa<ScanOp>(op) || !isa<UnitAttr>(attribute.getValue()))
      return op->emitError() << name << " is a unit attribute of tract.scan";
    return success();
  }
  if (name == kKernelFunctionAttrName) {
    if (!isa<UnitAttr>(attribute.getValue()) || isa<ModuleOp>(op))
      return op->emitError() << name << " is a unit attribute of a kernel's "
                             << "function, region or call";
    return success();
  }
  if (name != kPropertiesAttrName && !isa<ModuleOp>(op))
    return op->emitError() << name << " belongs on the module";
  if (name == kSymbolsAttrName) {
    std::set<std::string> declared;
    if (failed(verifyStringArray(
            op, attribute, [&](StringRef symbol) -> LogicalResult {
              std::optional<TDim> parsed = TDim::parse(symbol);
              if (!parsed || parsed->getSymbolName() != symbol.str())
                return op->emitError()
                       << "'" << symbol << "' is not a valid symbol name";
              declared.insert(symbol.str());
              return success();
            })))
      return failure();
    // Every symbol of every shape in the module must be declared.
    std::set<std::string> used;
    op->walk([&](Operation *inner) {
      for (Type type : inner->getResultTypes())
        collectTypeSymbols(type, used);
      for (Region &region : inner->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            collectTypeSymbols(argument.getType(), used);
    });
    for (const std::string &symbol : used)
      if (!declared.count(symbol))
        return op->emitError() << "symbol '" << symbol
                               << "' is used in a shape but not declared in "
                               << kSymbolsAttrName;
    return success();
  }
  if (name == kAssertionsAttrName) {
    SymbolScope scope;
    return verifyStringArray(
        op, attribute, [&](StringRef text) -> LogicalResult {
          std::string error;
          if (!scope.addAssertion(text, &error))
            return op->emitError() << "invalid assertion: " << error;
          return success();
        });
  }
  if (name == kScenariosAttrName) {
    auto scenarios = dyn_cast<DictionaryAttr>(attribute.getValue());
    if (!scenarios)
      return op->emitError()
             << name << " must map scenario names to assertions";
    SymbolScope scope;
    for (NamedAttribute scenario : scenarios)
      if (failed(verifyStringArray(
              op, scenario, [&](StringRef text) -> LogicalResult {
                std::string error;
                if (!scope.addScenarioAssertion(
                        (scenario.getName().getValue() + ": " + text).str(),
                        &error))
                  return op->emitError()
                         << "invalid scenario assertion: " << error;
                return success();
              })))
        return failure();
    return success();
  }
  if (name == kPropertiesAttrName) {
    if (!isa<ModuleOp>(op) || !isa<DictionaryAttr>(attribute.getValue()))
      return op->emitError() << name << " must be a dictionary on the module";
    return success();
  }
  return op->emitError() << "unknown tract attribute " << name;
}

FailureOr<SymbolScope> mlir::tract::getSymbolScope(ModuleOp module) {
  SymbolScope scope;
  if (auto assertions = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    for (auto text : assertions.getAsValueRange<StringAttr>()) {
      std::string error;
      if (!scope.addAssertion(text, &error))
        return module.emitError() << "invalid assertion: " << error;
    }
  if (auto scenarios =
          module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : scenarios)
      for (auto text :
           cast<ArrayAttr>(scenario.getValue()).getAsValueRange<StringAttr>()) {
        std::string error;
        if (!scope.addScenarioAssertion(
                (scenario.getName().getValue() + ": " + text).str(), &error))
          return module.emitError() << "invalid scenario assertion: " << error;
      }
  return scope;
}

//===----------------------------------------------------------------------===//
// Pulse properties
//===----------------------------------------------------------------------===//

namespace {

std::optional<SmallVector<int64_t>> getIntArray(Attribute attr) {
  if (auto dense = dyn_cast_if_present<DenseI64ArrayAttr>(attr))
    return SmallVector<int64_t>(dense.asArrayRef());
  auto array = dyn_cast_if_present<ArrayAttr>(attr);
  if (!array)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (Attribute item : array) {
    auto integer = dyn_cast<IntegerAttr>(item);
    if (!integer)
      return std::nullopt;
    values.push_back(integer.getInt());
  }
  return values;
}

} // namespace

std::optional<PulseProperties>
mlir::tract::getPulseProperties(ModuleOp module) {
  auto properties = module->getAttrOfType<DictionaryAttr>(kPropertiesAttrName);
  if (!properties)
    return std::nullopt;
  auto symbol = properties.getAs<StringAttr>("pulse.symbol");
  auto pulse = properties.getAs<IntegerAttr>("pulse.pulse");
  auto inputAxes = getIntArray(properties.get("pulse.input_axes"));
  auto outputAxes = getIntArray(properties.get("pulse.output_axes"));
  auto delays = getIntArray(properties.get("pulse.delay"));
  auto lengths = properties.getAs<ArrayAttr>("pulse.output_lengths");
  if (!symbol || !pulse || !inputAxes || !outputAxes || !delays || !lengths ||
      delays->size() != outputAxes->size() ||
      lengths.size() != outputAxes->size())
    return std::nullopt;
  PulseProperties result{symbol.str(), pulse.getInt(), *inputAxes,
                         *outputAxes,  *delays,        {}};
  for (Attribute length : lengths) {
    auto text = dyn_cast<StringAttr>(length);
    std::optional<TDim> dim =
        text ? TDim::parse(text.getValue()) : std::nullopt;
    if (!dim)
      return std::nullopt;
    result.outputLengths.push_back(*dim);
  }
  return result;
}

void mlir::tract::setPulseProperties(ModuleOp module,
                                     const PulseProperties &pulsed) {
  Builder builder(module.getContext());
  NamedAttrList properties;
  if (auto existing =
          module->getAttrOfType<DictionaryAttr>(kPropertiesAttrName))
    properties.append(existing.getValue());
  SmallVector<Attribute> lengths;
  for (const TDim &length : pulsed.outputLengths)
    lengths.push_back(builder.getStringAttr(length.toString()));
  properties.set("pulse.symbol", builder.getStringAttr(pulsed.symbol));
  properties.set("pulse.pulse", builder.getI64IntegerAttr(pulsed.pulse));
  properties.set("pulse.input_axes", builder.getI64ArrayAttr(pulsed.inputAxes));
  properties.set("pulse.output_axes",
                 builder.getI64ArrayAttr(pulsed.outputAxes));
  properties.set("pulse.delay", builder.getI64ArrayAttr(pulsed.delays));
  properties.set("pulse.output_lengths", builder.getArrayAttr(lengths));
  module->setAttr(kPropertiesAttrName,
                  properties.getDictionary(module.getContext()));
}
