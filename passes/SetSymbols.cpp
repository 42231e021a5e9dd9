//===- SetSymbols.cpp - substitute symbols by values or expressions -------===//
//
// `tract-set{S=3 P=2*T+1}` concretizes a model: the symbols are replaced
// everywhere at once (types, dim and shape attributes, assertions,
// scenarios), shapes are re-inferred and the shape arithmetic folds.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractAttrs.h"
#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractModule.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTSET
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Splits `S=3 P=min(T,4)` (or `S=3,P=min(T,4)`) at the spaces and commas
/// outside parentheses.
std::vector<std::string> splitAssignments(StringRef text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (depth == 0 && (c == ',' || llvm::isSpace(c))) {
      if (!current.empty())
        items.push_back(std::move(current));
      current.clear();
      continue;
    }
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    current.push_back(c);
  }
  if (!current.empty())
    items.push_back(std::move(current));
  return items;
}

/// What a relation becomes once substituted: decided by its constants and
/// the non-negativity of the symbols left (`2*T+1 >= 1` holds).
enum class Outcome { Holds, Fails, Open };
Outcome decide(const DimRelation &relation) {
  if (std::optional<bool> holds = relation.evaluate())
    return *holds ? Outcome::Holds : Outcome::Fails;
  SymbolScope dimensionsOnly;
  bool holds = true;
  for (const TDim &constraint : relation.constraints()) {
    if (dimensionsOnly.proveNonNegative(-constraint - TDim(1)))
      return Outcome::Fails;
    holds = holds && dimensionsOnly.proveNonNegative(constraint);
  }
  return holds ? Outcome::Holds : Outcome::Open;
}

/// The relation `text` with `dims` substituted, and what it then decides;
/// nullopt when the text is not a relation.
std::optional<std::pair<DimRelation, Outcome>>
substituteRelation(StringRef text, const SymbolDims &dims) {
  std::optional<DimRelation> relation = DimRelation::parse(text);
  if (!relation)
    return std::nullopt;
  DimRelation substituted = relation->substitute(dims);
  Outcome outcome = decide(substituted);
  return std::make_pair(std::move(substituted), outcome);
}

/// Sets the attribute `name` of `op` to the list (or dictionary) `items`,
/// or removes it when nothing is left.
template <typename Item>
void setOrRemoveList(Operation *op, StringRef name, ArrayRef<Item> items) {
  if (items.empty()) {
    op->removeAttr(name);
    return;
  }
  Builder builder(op->getContext());
  if constexpr (std::is_same_v<Item, NamedAttribute>)
    op->setAttr(name, builder.getDictionaryAttr(items));
  else
    op->setAttr(name, builder.getArrayAttr(items));
}

struct SetPass : mlir::tract::impl::TractSetBase<SetPass> {
  using TractSetBase::TractSetBase;

  /// Accepts the assignments themselves as options (`S=3 P=4`), besides
  /// the generated `values=S=3,P=4`.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (options.trim().starts_with("values="))
      return TractSetBase::initializeOptions(options, errorHandler);
    values.clear();
    for (std::string &item : splitAssignments(options))
      values.push_back(std::move(item));
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(concretize(module)))
      return signalPassFailure();
  }

  LogicalResult parseAssignments(ModuleOp module, SymbolDims &dims,
                                 std::string &description) {
    std::set<std::string> declared = collectModuleSymbols(module);
    llvm::ListSeparator separator(", ");
    for (StringRef item : values) {
      auto [name, text] = item.split('=');
      name = name.trim();
      std::optional<TDim> symbol = TDim::parse(name);
      if (!symbol || symbol->getSymbolName() != name.str() ||
          text.trim().empty())
        return module.emitError()
               << "tract-set expects NAME=EXPR, got '" << item << "'";
      std::string error;
      std::optional<TDim> value = TDim::parse(text.trim(), &error);
      if (!value)
        return module.emitError() << "tract-set: cannot parse the value of "
                                  << name << ": " << error;
      if (!declared.count(name.str()))
        return module.emitError()
               << "tract-set: the model has no symbol '" << name << "'";
      if (std::optional<int64_t> constant = value->getConstant();
          constant && *constant < 0)
        return module.emitError()
               << "tract-set: " << name << " is a dimension and cannot be "
               << *constant;
      if (!dims.try_emplace(name.str(), *value).second)
        return module.emitError() << "tract-set: " << name << " is set twice";
      description +=
          (StringRef(separator) + name + "=" + value->toString()).str();
    }
    return success();
  }

  /// Substitutes the module's assertions; fails on one that becomes false.
  LogicalResult substituteAssertions(ModuleOp module, const SymbolDims &dims,
                                     StringRef description) {
    auto assertions = module->getAttrOfType<ArrayAttr>(kAssertionsAttrName);
    if (!assertions)
      return success();
    SmallVector<Attribute> kept;
    for (auto text : assertions.getAsValueRange<StringAttr>()) {
      auto substituted = substituteRelation(text, dims);
      if (!substituted)
        return module.emitError() << "invalid assertion '" << text << "'";
      auto &[relation, outcome] = *substituted;
      if (outcome == Outcome::Fails)
        return module.emitError()
               << "the model's assertion " << text << " does not hold with "
               << description << " (it becomes " << relation.toString() << ")";
      if (outcome == Outcome::Open)
        kept.push_back(
            StringAttr::get(module.getContext(), relation.toString()));
    }
    setOrRemoveList<Attribute>(module, kAssertionsAttrName, kept);
    return success();
  }

  /// Substitutes the assertions of the If branches: those that become true
  /// go; one that becomes false stays, to fail when its branch is taken.
  void substituteBranchAssertions(ModuleOp module, const SymbolDims &dims) {
    Builder builder(module.getContext());
    module.walk([&](IfOp op) {
      for (StringRef name : {op.getThenAssertionsAttrName().getValue(),
                             op.getElseAssertionsAttrName().getValue()}) {
        auto texts = op->getAttrOfType<ArrayAttr>(name);
        if (!texts)
          continue;
        SmallVector<Attribute> kept;
        for (auto text : texts.getAsValueRange<StringAttr>()) {
          auto substituted = substituteRelation(text, dims);
          if (!substituted)
            kept.push_back(builder.getStringAttr(text));
          else if (substituted->second != Outcome::Holds)
            kept.push_back(
                builder.getStringAttr(substituted->first.toString()));
        }
        setOrRemoveList<Attribute>(op, name, kept);
      }
    });
  }

  /// Substitutes the scenarios' assertions; a scenario that becomes
  /// impossible is dropped.
  LogicalResult substituteScenarios(ModuleOp module, const SymbolDims &dims,
                                    StringRef description) {
    auto scenarios = module->getAttrOfType<DictionaryAttr>(kScenariosAttrName);
    if (!scenarios)
      return success();
    Builder builder(module.getContext());
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute scenario : scenarios) {
      SmallVector<Attribute> relations;
      bool possible = true;
      for (auto text :
           cast<ArrayAttr>(scenario.getValue()).getAsValueRange<StringAttr>()) {
        auto substituted = substituteRelation(text, dims);
        if (!substituted)
          return module.emitError()
                 << "invalid scenario assertion '" << text << "'";
        auto &[relation, outcome] = *substituted;
        if (outcome == Outcome::Fails) {
          module.emitWarning() << "scenario '" << scenario.getName().getValue()
                               << "' cannot happen with " << description << " ("
                               << text << "): it is dropped";
          possible = false;
          break;
        }
        if (outcome == Outcome::Open)
          relations.push_back(builder.getStringAttr(relation.toString()));
      }
      if (possible)
        kept.emplace_back(scenario.getName(), builder.getArrayAttr(relations));
    }
    setOrRemoveList<NamedAttribute>(module, kScenariosAttrName, kept);
    return success();
  }

  /// Replaces the symbols in every type and dim attribute.
  void substituteShapes(ModuleOp module, const SymbolDims &dims,
                        const SymbolScope &scope) {
    auto substitute = [&](const TDim &dim) {
      return scope.simplify(dim.substitute(dims));
    };
    MLIRContext *context = module.getContext();
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](RankedTensorType type) -> std::optional<Type> {
      if (!isa_and_present<DimsAttr>(type.getEncoding()) ||
          !isTractTensorType(type))
        return std::nullopt;
      Shape shape = getShape(type);
      for (TDim &dim : shape)
        dim = substitute(dim);
      return getTensorTypeLike(type, shape);
    });
    replacer.addReplacement([&](DimAttr attr) -> std::optional<Attribute> {
      return DimAttr::get(context, substitute(attr.getValue()));
    });
    replacer.addReplacement([&](ShapeAttr attr) -> std::optional<Attribute> {
      SmallVector<TDim> shape;
      for (const TDim &dim : attr.getDims())
        shape.push_back(substitute(dim));
      return ShapeAttr::get(context, shape);
    });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }

  /// Drops the symbols that no longer appear, declares those that the
  /// expressions brought in.
  void updateSymbolTable(ModuleOp module, const SymbolDims &dims,
                         const std::set<std::string> &usedBefore) {
    auto symbols = module->getAttrOfType<ArrayAttr>(kSymbolsAttrName);
    if (!symbols)
      return;
    std::set<std::string> usedAfter = collectUsedSymbols(module);
    Builder builder(module.getContext());
    SmallVector<Attribute> kept;
    std::set<std::string> declared;
    for (auto name : symbols.getAsValueRange<StringAttr>()) {
      declared.insert(name.str());
      // A symbol the model declares without using it stays declared.
      bool unused = !usedBefore.count(name.str()) && !dims.count(name);
      if (unused || usedAfter.count(name.str()))
        kept.push_back(builder.getStringAttr(name));
    }
    for (const std::string &name : usedAfter)
      if (!declared.count(name))
        kept.push_back(builder.getStringAttr(name));
    module->setAttr(kSymbolsAttrName, builder.getArrayAttr(kept));
  }

  LogicalResult concretize(ModuleOp module) {
    SymbolDims dims;
    std::string description;
    if (failed(parseAssignments(module, dims, description)))
      return failure();
    if (dims.empty())
      return success();
    std::set<std::string> usedBefore = collectUsedSymbols(module);
    if (failed(substituteAssertions(module, dims, description)) ||
        failed(substituteScenarios(module, dims, description)))
      return failure();
    substituteBranchAssertions(module, dims);
    FailureOr<SymbolScope> scope = getSymbolScope(module);
    if (failed(scope))
      return failure();
    substituteShapes(module, dims, *scope);
    // Ops re-derive their result types from the new inputs (a broadcast
    // `S#4` may now be decided, a contradiction shows up), then the shape
    // arithmetic over now-constant shapes folds.
    if (failed(inferShapes(module)))
      return failure();
    if (failed(applyPatternsGreedily(module, *patterns, foldingConfig()))) {
      module.emitError("tract-set: simplification did not converge");
      return failure();
    }
    updateSymbolTable(module, dims, usedBefore);
    return success();
  }

  static GreedyRewriteConfig foldingConfig() {
    GreedyRewriteConfig config;
    config.enableFolding(true);
    return config;
  }

  LogicalResult initialize(MLIRContext *context) override {
    // The dialect's folders and canonicalization patterns, as declutter
    // runs them.
    RewritePatternSet owning(context);
    auto *dialect = context->getLoadedDialect<TractDialect>();
    dialect->getCanonicalizationPatterns(owning);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (&op.getDialect() == dialect)
        op.getCanonicalizationPatterns(owning, context);
    patterns = std::make_shared<FrozenRewritePatternSet>(std::move(owning));
    return success();
  }

  std::shared_ptr<FrozenRewritePatternSet> patterns;
};

} // namespace
