//===- OutlineSteps.cpp - a large model body split into functions ---------===//
//
// See TractOutlineSteps in codegen/Passes.td: the runs of top-level ops of
// a large function body become private functions called in order, so that
// the rest of the pipeline, OpenMP's translation and LLVM work on functions
// of bounded size, several at a time.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTOUTLINESTEPS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Values a run can have its own copy of rather than take as an argument:
/// constants, and the addresses of constant globals (weights).
bool isClonable(Operation *op) {
  return op && op->getNumRegions() == 0 && op->getNumOperands() == 0 &&
         (op->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(op));
}

/// Ops, nested ones included.
int64_t weigh(Operation *op) {
  int64_t count = 0;
  op->walk([&](Operation *) { ++count; });
  return count;
}

/// Moves `run` (consecutive top-level ops of `function`'s body) into a new
/// private function `name`, called where the run was.
void outlineRun(func::FuncOp function, ArrayRef<Operation *> run,
                StringRef name, SymbolTable &symbols) {
  llvm::SmallPtrSet<Operation *, 32> inRun(run.begin(), run.end());
  auto isInRun = [&](Operation *op) {
    Operation *top = op;
    while (top && !inRun.contains(top))
      top = top->getParentOp();
    return top != nullptr;
  };
  // What the run takes from before it, and what it gives to what follows.
  llvm::SetVector<Value> captured;
  llvm::SetVector<Operation *> clonedConstants;
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *definer = operand.getDefiningOp();
        if (definer ? isInRun(definer)
                    : isInRun(cast<BlockArgument>(operand)
                                  .getOwner()
                                  ->getParentOp()))
          continue;
        if (isClonable(definer))
          clonedConstants.insert(definer);
        else
          captured.insert(operand);
      }
    });
  llvm::SetVector<Value> escaping;
  for (Operation *op : run)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!isInRun(user)) {
          escaping.insert(result);
          break;
        }

  OpBuilder builder(function);
  SmallVector<Type> inputs, outputs;
  for (Value value : captured)
    inputs.push_back(value.getType());
  for (Value value : escaping)
    outputs.push_back(value.getType());
  auto step = func::FuncOp::create(builder, function.getLoc(), name,
                                   builder.getFunctionType(inputs, outputs));
  step.setPrivate();
  symbols.insert(step);
  Block *body = step.addEntryBlock();

  // The run's ops move in; its constants are cloned at the top.
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  for (Operation *constant : clonedConstants)
    mapping.map(constant->getResults(),
                builder.clone(*constant)->getResults());
  for (auto [value, argument] : llvm::zip(captured, body->getArguments()))
    mapping.map(value, argument);
  builder.setInsertionPoint(run.front());
  auto call = func::CallOp::create(builder, run.front()->getLoc(), step,
                                   captured.getArrayRef());
  for (Operation *op : run)
    op->moveBefore(body, body->end());
  for (auto [escaped, replacement] : llvm::zip(escaping, call.getResults()))
    Value(escaped).replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !isInRun(use.getOwner()) && use.getOwner() != call;
    });
  // Inside, the uses of captured values and constants become the step's.
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (OpOperand &operand : nested->getOpOperands())
        if (Value mapped = mapping.lookupOrNull(operand.get()))
          operand.set(mapped);
    });
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, function.getLoc(),
                         escaping.getArrayRef());
}

struct TractOutlineSteps
    : public tract::impl::TractOutlineStepsBase<TractOutlineSteps> {
  using TractOutlineStepsBase::TractOutlineStepsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && function.getBody().hasOneBlock())
        functions.push_back(function);
    for (func::FuncOp function : functions) {
      Block &block = function.getBody().front();
      if (weigh(function) <= minOps)
        continue;
      // Constants first: they stay in the body, and each step that uses
      // one has its own copy.
      for (Operation &op : llvm::make_early_inc_range(block))
        if (isClonable(&op))
          op.moveBefore(&block, block.begin());
      // Runs of about stepOps, cut where no stack allocation of the run is
      // used later.
      SmallVector<SmallVector<Operation *>> runs(1);
      int64_t weight = 0;
      llvm::SmallPtrSet<Operation *, 8> stack;
      for (Operation &op : block.without_terminator()) {
        if (isClonable(&op))
          continue;
        if (weight >= stepOps && !runs.back().empty()) {
          bool pinned = llvm::any_of(stack, [&](Operation *alloca) {
            return llvm::any_of(alloca->getUsers(), [&](Operation *user) {
              Operation *top = block.findAncestorOpInBlock(*user);
              return top && !top->isBeforeInBlock(&op);
            });
          });
          if (!pinned) {
            runs.emplace_back();
            weight = 0;
            stack.clear();
          }
        }
        runs.back().push_back(&op);
        weight += weigh(&op);
        op.walk([&](memref::AllocaOp alloca) { stack.insert(alloca); });
      }
      if (runs.size() < 2)
        continue;
      int index = 0;
      for (ArrayRef<Operation *> run : runs)
        outlineRun(function, run,
                   (function.getName() + ".step" + Twine(index++)).str(),
                   symbols);
    }
  }
};

} // namespace
