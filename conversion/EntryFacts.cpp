//===- EntryFacts.cpp - what lowering leaves for the entry checks ---------===//

#include "conversion/EntryFacts.h"

#include "conversion/LoweringUtils.h"

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractQuant.h"

#include "mlir/IR/BuiltinOps.h"

#include <set>

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Bytes per element of a tract element type as the lowering stores it
/// (booleans as bytes; 16 for what has no bit width, an upper bound).
int64_t elementBytes(Type element) {
  element = getStorageType(element);
  if (!element.isIntOrFloat())
    return 16;
  return std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
}

BodyGuards findBodyGuards(func::FuncOp func) {
  BodyGuards guards;
  FailureOr<SymbolScope> scope =
      getSymbolScope(func->getParentOfType<ModuleOp>());
  if (failed(scope))
    return guards;
  auto bytesOf = [](Type type) -> std::optional<TDim> {
    if (!isa<RankedTensorType>(type) || !isTractTensorType(type))
      return std::nullopt;
    TDim bytes(elementBytes(cast<RankedTensorType>(type).getElementType()));
    for (const TDim &dim : getShape(type))
      bytes = bytes * dim;
    return bytes;
  };
  // A result no larger than an input fits in memory: the input does.
  std::vector<TDim> inputBytes;
  for (Type type : func.getArgumentTypes())
    if (std::optional<TDim> bytes = bytesOf(type);
        bytes && !bytes->isConstant())
      inputBytes.push_back(*bytes);
  std::set<TDim> seen, sized;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      std::optional<TDim> bytes = bytesOf(type);
      if (!bytes)
        continue;
      Shape shape = getShape(type);
      for (const TDim &dim : shape)
        if (!dim.isConstant() && seen.insert(dim).second &&
            !scope->proveNonNegative(dim))
          guards.dims.push_back({dim, nodeName(op)});
      if (bytes->isConstant() || !sized.insert(*bytes).second ||
          llvm::any_of(inputBytes, [&](const TDim &input) {
            return scope->proveGreaterOrEqual(input, *bytes);
          }))
        continue;
      std::string element;
      llvm::raw_string_ostream os(element);
      os << cast<RankedTensorType>(type).getElementType();
      guards.sizes.push_back(
          {*bytes, nodeName(op), shapeToString(shape) + " of " + element});
    }
  });
  return guards;
}

} // namespace

EntryFacts mlir::tract::findEntryFacts(func::FuncOp func) {
  EntryFacts facts;
  for (Type type : func.getArgumentTypes())
    facts.inputShapes.push_back(
        isa<RankedTensorType>(type) && isTractTensorType(type) ? getShape(type)
                                                               : Shape());
  facts.guards = findBodyGuards(func);
  return facts;
}

void mlir::tract::recordEntryFacts(func::FuncOp func, const EntryFacts &facts) {
  MLIRContext *context = func.getContext();
  Builder builder(context);
  SmallVector<Attribute> shapes;
  for (const Shape &shape : facts.inputShapes)
    shapes.push_back(ShapeAttr::get(context, shape));
  func->setAttr(kInputShapesAttrName, builder.getArrayAttr(shapes));
  auto dimAttr = [&](const TDim &dim) { return DimAttr::get(context, dim); };
  SmallVector<Attribute> dims, sizes;
  for (const GuardedDim &guard : facts.guards.dims)
    dims.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("dim", dimAttr(guard.dim)),
         builder.getNamedAttr("node", builder.getStringAttr(guard.node))}));
  for (const GuardedSize &guard : facts.guards.sizes)
    sizes.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("bytes", dimAttr(guard.bytes)),
         builder.getNamedAttr("node", builder.getStringAttr(guard.node)),
         builder.getNamedAttr("type", builder.getStringAttr(guard.type))}));
  if (!dims.empty())
    func->setAttr(kGuardedDimsAttrName, builder.getArrayAttr(dims));
  if (!sizes.empty())
    func->setAttr(kGuardedSizesAttrName, builder.getArrayAttr(sizes));
}

FailureOr<EntryFacts> mlir::tract::takeEntryFacts(func::FuncOp func) {
  auto shapes = func->getAttrOfType<ArrayAttr>(kInputShapesAttrName);
  if (!shapes)
    return func.emitError() << "has no '" << kInputShapesAttrName
                            << "': tract-lower-to-linalg records them";
  auto invalid = [&](StringRef name) {
    return func.emitError() << "has an invalid '" << name << "'";
  };
  EntryFacts facts;
  for (Attribute attr : shapes) {
    auto shape = dyn_cast<ShapeAttr>(attr);
    if (!shape)
      return invalid(kInputShapesAttrName);
    facts.inputShapes.emplace_back(shape.getDims());
  }
  // Each entry's `key` as `AttrTy`, or null.
  auto field = [](Attribute entry, StringRef key, auto typed) {
    using AttrTy = decltype(typed);
    auto dict = dyn_cast<DictionaryAttr>(entry);
    return dict ? dict.getAs<AttrTy>(key) : AttrTy();
  };
  if (auto dims = func->getAttrOfType<ArrayAttr>(kGuardedDimsAttrName))
    for (Attribute entry : dims) {
      auto dim = field(entry, "dim", DimAttr());
      auto node = field(entry, "node", StringAttr());
      if (!dim || !node)
        return invalid(kGuardedDimsAttrName);
      facts.guards.dims.push_back({dim.getValue(), node.str()});
    }
  if (auto sizes = func->getAttrOfType<ArrayAttr>(kGuardedSizesAttrName))
    for (Attribute entry : sizes) {
      auto bytes = field(entry, "bytes", DimAttr());
      auto node = field(entry, "node", StringAttr());
      auto type = field(entry, "type", StringAttr());
      if (!bytes || !node || !type)
        return invalid(kGuardedSizesAttrName);
      facts.guards.sizes.push_back({bytes.getValue(), node.str(), type.str()});
    }
  for (StringRef name :
       {kInputShapesAttrName, kGuardedDimsAttrName, kGuardedSizesAttrName})
    func->removeAttr(name);
  return facts;
}
