//===- DetectKvCache.cpp - explicit key/value caches made internal --------===//
//
// A decoder exported with its cache as inputs and outputs takes the past
// keys (or values) as an input, concatenates the new ones after them, and
// returns the concatenation as an output (HuggingFace's past_key_values /
// present). tract's DynamicKeyValueCache keeps that cache inside the
// model: the input and the output disappear, and tract.dyn_kv_cache appends
// the new keys to what the previous call left. tract-unfold-kv-cache undoes
// it.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTDETECTKVCACHE
#define GEN_PASS_DEF_TRACTUNFOLDKVCACHE
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// The cache that argument `index` of `main` is the past of: a concat of
/// it and one other value along an axis where its dim is a lone symbol,
/// returned once by `main`. Its other uses can only read its shape (the
/// past's length gives the positions of the new tokens).
ConcatOp cacheOf(func::FuncOp main, unsigned index, unsigned &result) {
  BlockArgument past = main.getArgument(index);
  ConcatOp concat;
  for (Operation *user : past.getUsers()) {
    if (isa<ShapeOfOp>(user))
      continue;
    if (concat || !isa<ConcatOp>(user))
      return nullptr;
    concat = cast<ConcatOp>(user);
  }
  if (!concat || concat.getInputs().size() != 2 ||
      concat.getInputs()[0] != past)
    return nullptr;
  Shape shape = getShape(past);
  if (!shape[concat.getAxis()].getSymbolName())
    return nullptr;
  // Returned once (the present), whatever else uses it (the attention).
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  std::optional<unsigned> returned;
  for (OpOperand &operand : ret->getOpOperands())
    if (operand.get() == concat.getOutput()) {
      if (returned)
        return nullptr;
      returned = operand.getOperandNumber();
    }
  if (!returned)
    return nullptr;
  result = *returned;
  return concat;
}

struct TractDetectKvCache
    : public tract::impl::TractDetectKvCacheBase<TractDetectKvCache> {
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    llvm::BitVector arguments(main.getNumArguments()),
        results(main.getNumResults());
    OpBuilder builder(&getContext());
    for (unsigned index = 0; index < main.getNumArguments(); ++index) {
      unsigned result;
      ConcatOp concat = cacheOf(main, index, result);
      if (!concat || results.test(result))
        continue;
      auto name = main.getArgAttrOfType<StringAttr>(index, "tract.name");
      if (!name)
        continue;
      BlockArgument past = main.getArgument(index);
      for (Operation *user : llvm::make_early_inc_range(past.getUsers()))
        if (auto shapeOf = dyn_cast<ShapeOfOp>(user)) {
          builder.setInsertionPoint(shapeOf);
          Value dims = ShapeValueOp::create(
              builder, shapeOf.getLoc(),
              ShapeAttr::get(&getContext(), getShape(past)));
          shapeOf.getOutput().replaceAllUsesWith(dims);
          shapeOf.erase();
        }
      int64_t axis = concat.getAxis();
      builder.setInsertionPoint(concat);
      auto cache = DynKvCacheOp::create(
          builder, concat.getLoc(), concat.getInputs()[1], name, axis,
          DimAttr::get(&getContext(), getShape(past)[axis]));
      concat.getOutput().replaceAllUsesWith(cache.getOutput());
      concat.erase();
      arguments.set(index);
      results.set(result);
    }
    if (arguments.none())
      return;
    // The caches' outputs leave the results, their pasts the arguments.
    SmallVector<Value> kept;
    for (OpOperand &operand : ret->getOpOperands())
      if (!results.test(operand.getOperandNumber()))
        kept.push_back(operand.get());
    ret->setOperands(kept);
    if (failed(main.eraseResults(results)) ||
        failed(main.eraseArguments(arguments)))
      return signalPassFailure();
    if (failed(inferShapes(getOperation())))
      return signalPassFailure();
  }
};

struct TractUnfoldKvCache
    : public tract::impl::TractUnfoldKvCacheBase<TractUnfoldKvCache> {
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    MLIRContext *context = &getContext();
    auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    SmallVector<DynKvCacheOp> caches(main.getBody().getOps<DynKvCacheOp>());
    OpBuilder builder(context);
    for (DynKvCacheOp cache : caches) {
      std::string name = cache.getName().str();
      Shape shape = getShape(cache.getInput());
      shape[cache.getAxis()] = cache.getPast().getValue();
      RankedTensorType type = getTensorTypeLike(cache.getInput(), shape);
      unsigned index = main.getNumArguments();
      if (failed(main.insertArgument(index, type, {}, cache.getLoc())))
        return signalPassFailure();
      main.setArgAttr(index, "tract.name", cache.getNameAttr());
      builder.setInsertionPoint(cache);
      auto concat = ConcatOp::create(
          builder, cache.getLoc(), cache.getType(),
          ValueRange{main.getArgument(index), cache.getInput()},
          cache.getAxis());
      cache.getOutput().replaceAllUsesWith(concat.getOutput());
      cache.erase();
      unsigned result = main.getNumResults();
      ret->insertOperands(ret->getNumOperands(), concat.getOutput());
      if (failed(main.insertResult(result, concat.getType(), {})))
        return signalPassFailure();
      main.setResultAttr(result, "tract.name",
                         StringAttr::get(context, name + "_concat"));
    }
  }
};

} // namespace
