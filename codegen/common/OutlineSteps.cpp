//===- OutlineSteps.cpp - a large model body split into functions ---------===//
//
// See TractOutlineSteps in codegen/Passes.td: the runs of top-level ops of
// a large function body become private functions called in order, so that
// the rest of the pipeline, OpenMP's translation and LLVM work on functions
// of bounded size, several at a time.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/common/BufferUses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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

/// A view of a buffer (subview, reshape, cast): steps rebuild the views
/// they use from the buffers themselves, so that two arguments of a step
/// are never two views of one buffer, which the kernels, comparing
/// buffers by value, would take for two buffers.
bool isView(Operation *op) {
  return op && isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0 &&
         op->getNumResults() == 1 && isMemoryEffectFree(op);
}

/// Whether what `buffer` (a buffer the body made) holds after `last` is
/// never read: the next op of the body to touch it, through any view,
/// frees it or overwrites all of it without reading it (a linalg op with
/// parallel loops only, whose output is the whole buffer through an
/// identity map and which reads neither it nor its output's old values);
/// or nothing does and the body does not return it. The ops after `last`
/// are those of the body, the later steps not yet outlined.
bool contentsDeadAfter(Value buffer, Operation *last) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  // An allocation of the body, or one that an earlier step made and
  // returned (a step returns buffers, never views: those are made again).
  if (!type || !type.hasStaticShape() ||
      !(buffer.getDefiningOp<memref::AllocOp>() ||
        buffer.getDefiningOp<func::CallOp>()))
    return false;
  for (Operation *next = last->getNextNode(); next;
       next = next->getNextNode()) {
    if (next->hasTrait<OpTrait::IsTerminator>())
      return llvm::none_of(next->getOperands(), [&](Value operand) {
        return tract::baseBuffer(operand) == buffer;
      });
    if (!tract::touchesBuffers(next, {buffer}, /*writesOnly=*/false))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(next))
      return dealloc.getMemref() == buffer;
    auto overwrite = dyn_cast<linalg::LinalgOp>(next);
    if (!overwrite || !overwrite.hasPureBufferSemantics() ||
        overwrite.getNumDpsInits() != 1 ||
        overwrite.getNumReductionLoops() != 0)
      return false;
    OpOperand *output = overwrite.getDpsInitOperand(0);
    auto outputType = dyn_cast<MemRefType>(output->get().getType());
    if (tract::baseBuffer(output->get()) != buffer || !outputType ||
        !outputType.hasStaticShape() ||
        outputType.getNumElements() != type.getNumElements() ||
        !overwrite.getMatchingIndexingMap(output).isIdentity() ||
        overwrite.payloadUsesValueFromOperand(output))
      return false;
    return llvm::none_of(overwrite.getDpsInputOperands(), [&](OpOperand *in) {
      return tract::baseBuffer(in->get()) == buffer;
    });
  }
  return false;
}

/// Ops, nested ones included.
int64_t weigh(Operation *op) {
  int64_t count = 0;
  op->walk([&](Operation *) { ++count; });
  return count;
}

/// Moves `run` (consecutive top-level ops of `function`'s body) into a new
/// private function `name`, called where the run was.
func::FuncOp outlineRun(func::FuncOp function, ArrayRef<Operation *> run,
                        StringRef name, SymbolTable &symbols) {
  llvm::SmallPtrSet<Operation *, 32> inRun(run.begin(), run.end());
  auto isInRun = [&](Operation *op) {
    Operation *top = op;
    while (top && !inRun.contains(top))
      top = top->getParentOp();
    return top != nullptr;
  };
  // A view the run makes and what follows reads is made again after the
  // run, from its source: what follows then takes the buffer.
  OpBuilder builder(function);
  for (Operation *op : llvm::reverse(run)) {
    if (!isView(op) ||
        llvm::all_of(op->getUsers(), [&](Operation *user) {
          return isInRun(user);
        }))
      continue;
    builder.setInsertionPointAfter(run.back());
    Operation *copy = builder.clone(*op);
    op->getResult(0).replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
      return !isInRun(use.getOwner());
    });
  }
  // What the run takes from before it (the views it reads made again
  // inside, from their buffers), and what it gives to what follows.
  llvm::SetVector<Value> captured;
  llvm::SetVector<Operation *> clonedConstants;
  llvm::SetVector<Operation *> clonedViews; // each after its operands'
  std::function<void(Value)> take = [&](Value operand) {
    Operation *definer = operand.getDefiningOp();
    if (definer ? isInRun(definer)
                : isInRun(
                      cast<BlockArgument>(operand).getOwner()->getParentOp()))
      return;
    if (isClonable(definer)) {
      clonedConstants.insert(definer);
    } else if (isView(definer)) {
      if (clonedViews.contains(definer))
        return;
      for (Value source : definer->getOperands())
        take(source);
      clonedViews.insert(definer);
    } else {
      captured.insert(operand);
    }
  };
  for (Operation *op : run)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        take(operand);
    });
  llvm::SetVector<Value> escaping;
  for (Operation *op : run)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!isInRun(user)) {
          escaping.insert(result);
          break;
        }

  // Before the run moves: which buffers it takes hold nothing the body
  // reads afterwards (kDeadAfterAttrName), so that a product's epilogue
  // can fuse into a product writing a buffer that an earlier step made.
  SmallVector<bool> deadAfter = llvm::map_to_vector(captured, [&](Value value) {
    return contentsDeadAfter(value, run.back());
  });
  // And which buffers it gives back only for a later step to overwrite
  // (bufferization reusing them): their contents die in this step too.
  SmallVector<bool> diesInStep =
      llvm::map_to_vector(escaping, [&](Value value) {
        return contentsDeadAfter(value, run.back());
      });

  builder.setInsertionPoint(function);
  SmallVector<Type> inputs, outputs;
  for (Value value : captured)
    inputs.push_back(value.getType());
  for (Value value : escaping)
    outputs.push_back(value.getType());
  auto step = func::FuncOp::create(builder, function.getLoc(), name,
                                   builder.getFunctionType(inputs, outputs));
  step.setPrivate();
  for (auto [index, dead] : llvm::enumerate(deadAfter))
    if (dead)
      step.setArgAttr(index, tract::kDeadAfterAttrName,
                      builder.getUnitAttr());
  for (auto [index, dead] : llvm::enumerate(diesInStep))
    if (dead)
      step.setResultAttr(index, tract::kDeadAfterAttrName,
                         builder.getUnitAttr());
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
  for (Operation *view : clonedViews)
    builder.clone(*view, mapping);
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
  return step;
}

/// Moves each dealloc (deallocation puts them at the end of the body) to
/// the end of the step that last uses its buffer: a buffer is then not
/// handed from step to step only to be freed, and the kernels see it die
/// in the step that uses it (an epilogue fuses only into a product whose
/// buffer is not read afterwards).
void freeInLastStep(Block &block, SmallVectorImpl<SmallVector<Operation *>> &runs) {
  DenseMap<Operation *, size_t> runOf;
  for (auto [index, run] : llvm::enumerate(runs))
    for (Operation *op : run)
      runOf[op] = index;
  for (auto dealloc : llvm::make_early_inc_range(block.getOps<memref::DeallocOp>())) {
    Value buffer = dealloc.getMemref();
    if (!buffer.getDefiningOp<memref::AllocOp>() || !runOf.count(dealloc))
      continue;
    std::optional<Operation *> used =
        tract::lastUseInBlock(block, buffer, dealloc);
    Operation *last = used ? *used : nullptr;
    if (!last || !runOf.count(last))
      continue;
    size_t from = runOf[dealloc], to = runOf[last];
    if (to >= from)
      continue;
    llvm::erase(runs[from], dealloc.getOperation());
    dealloc->moveAfter(runs[to].back());
    runs[to].push_back(dealloc);
    runOf[dealloc] = to;
  }
}

/// Whether a cut before `op` would part the last product of `run` (a
/// linalg op with reduction loops) from its epilogue: nothing in the run
/// after the product touches its result, and the next op that does, from
/// `op` on, is a linalg op (which the kernels fuse only within a step).
bool partsProduct(ArrayRef<Operation *> run, Operation *op) {
  for (auto [index, ran] : llvm::enumerate(llvm::reverse(run))) {
    auto product = dyn_cast<linalg::LinalgOp>(ran);
    if (!product || !product.hasPureBufferSemantics() ||
        product.getNumReductionLoops() == 0)
      continue;
    SmallVector<Value> results = llvm::map_to_vector(
        product.getDpsInits(),
        [](Value init) { return tract::baseBuffer(init); });
    auto touches = [&](Operation *other) {
      return tract::touchesBuffers(other, results, /*writesOnly=*/false);
    };
    if (llvm::any_of(run.take_back(index), touches))
      return false;
    for (Operation *next = op; next; next = next->getNextNode())
      if (touches(next))
        return isa<linalg::LinalgOp>(next);
    return false;
  }
  return false;
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
      // used later, nor right after a product whose result the next op
      // reads.
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
          // Nor between a product and the op that reads its result next
          // (its epilogue, which the kernels fuse only within a step).
          if (partsProduct(runs.back(), &op))
            pinned = true;
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
      freeInLastStep(block, runs);
      llvm::erase_if(runs, [](const SmallVector<Operation *> &run) {
        return run.empty();
      });
      if (runs.size() < 2)
        continue;
      int index = 0;
      SmallVector<func::FuncOp> steps;
      for (ArrayRef<Operation *> run : runs)
        steps.push_back(outlineRun(
            function, run,
            (function.getName() + ".step" + Twine(index++)).str(), symbols));
      // The views that the steps made again, left unread.
      steps.push_back(function);
      for (func::FuncOp step : steps)
        for (Operation &op : llvm::make_early_inc_range(
                 llvm::reverse(step.getBody().front())))
          if (isView(&op) && op.use_empty())
            op.erase();
    }
  }
};

} // namespace
