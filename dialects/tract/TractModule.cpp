//===- TractModule.cpp - what a tract module declares ---------------------===//

#include "dialects/tract/TractModule.h"

#include "dialects/tdim/TDim.h"
#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tract;

std::set<std::string> mlir::tract::collectUsedSymbols(ModuleOp module) {
  std::set<std::string> used;
  AttrTypeWalker walker;
  walker.addWalk([&](DimsAttr dims) {
    for (const TDim &dim : dims.getDims())
      dim.collectSymbols(used);
  });
  walker.addWalk([&](DimAttr dim) { dim.getValue().collectSymbols(used); });
  walker.addWalk([&](ShapeAttr shape) {
    for (const TDim &dim : shape.getDims())
      dim.collectSymbols(used);
  });
  auto collectRelations = [&](ArrayAttr relations) {
    for (auto text : relations.getAsValueRange<StringAttr>())
      if (std::optional<DimRelation> relation = DimRelation::parse(text)) {
        relation->lhs.collectSymbols(used);
        relation->rhs.collectSymbols(used);
      }
  };
  if (auto assertions = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName))
    collectRelations(assertions);
  if (auto scenarios =
          module->getAttrOfType<DictionaryAttr>(kScenariosAttrName))
    for (NamedAttribute scenario : scenarios)
      if (auto relations = dyn_cast<ArrayAttr>(scenario.getValue()))
        collectRelations(relations);
  module->walk([&](Operation *op) {
    for (NamedAttribute attribute : op->getAttrs())
      if (attribute.getName() != kAssertionsAttrName &&
          attribute.getName() != kScenariosAttrName)
        walker.walk(attribute.getValue());
    for (Type type : op->getResultTypes())
      walker.walk(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          walker.walk(type);
  });
  return used;
}

std::set<std::string> mlir::tract::collectModuleSymbols(ModuleOp module) {
  auto symbols = module->getAttrOfType<ArrayAttr>(kSymbolsAttrName);
  if (!symbols)
    return collectUsedSymbols(module);
  std::set<std::string> declared;
  for (auto name : symbols.getAsValueRange<StringAttr>())
    declared.insert(name.str());
  return declared;
}

void mlir::tract::finishImport(ModuleOp module,
                               const std::set<std::string> &declared) {
  SmallVector<Operation *> dead;
  do {
    dead.clear();
    module->walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (isa_and_present<TractDialect>(op->getDialect()) &&
          isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  } while (!dead.empty());

  std::set<std::string> symbols = collectUsedSymbols(module);
  symbols.insert(declared.begin(), declared.end());
  Builder builder(module.getContext());
  SmallVector<Attribute> names;
  for (const std::string &symbol : symbols)
    names.push_back(builder.getStringAttr(symbol));
  if (!names.empty())
    module->setAttr(kSymbolsAttrName, builder.getArrayAttr(names));
}
