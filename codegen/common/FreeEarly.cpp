//===- FreeEarly.cpp - buffers freed after their last use -----------------===//
//
// See TractFreeEarly in codegen/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/common/BufferUses.h"
#include "dialects/tract/TractDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTFREEEARLY
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

Value mlir::tract::baseBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool mlir::tract::touchesBuffers(Operation *op, ArrayRef<Value> buffers,
                                 bool writesOnly) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (MemoryEffects::EffectInstance &effect : list) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()))
      continue;
    if (writesOnly && isa<MemoryEffects::Read>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (!value || llvm::is_contained(buffers, baseBuffer(value)))
      return true;
  }
  return false;
}

std::optional<Operation *> mlir::tract::lastUseInBlock(Block &block,
                                                       Value buffer,
                                                       Operation *except) {
  Operation *last = nullptr;
  SmallVector<Value> aliases{buffer};
  DenseSet<Value> seen{buffer};
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (Operation *user : alias.getUsers()) {
      if (user == except)
        continue;
      // A kernel's call reads or writes the buffer and returns buffers of
      // its own (kKernelFunctionAttrName).
      bool kernelCall = isa<CallOpInterface>(user) &&
                        user->hasAttr(tract::kKernelFunctionAttrName);
      // Ways out of what the uses show: the buffer's address as a value,
      // another function, or a region's result.
      if ((isa<CallOpInterface>(user) && !kernelCall) ||
          isa<memref::ExtractAlignedPointerAsIndexOp,
              UnrealizedConversionCastOp>(user) ||
          user->hasTrait<OpTrait::ReturnLike>() ||
          user->getDialect()->getNamespace() == "llvm")
        return std::nullopt;
      // Any other buffer made from it may be a view of it.
      for (Value result : user->getResults())
        if (!kernelCall && isa<BaseMemRefType>(result.getType()) &&
            seen.insert(result).second)
          aliases.push_back(result);
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        return std::nullopt;
      if (!last || last->isBeforeInBlock(top))
        last = top;
    }
  }
  return last;
}

namespace {

struct TractFreeEarly
    : public tract::impl::TractFreeEarlyBase<TractFreeEarly> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs) {
      // A buffer made in the block, or handed to it (a step's argument
      // that the step frees).
      Value buffer = dealloc.getMemref();
      Block *block = dealloc->getBlock();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      bool argument = isa<BlockArgument>(buffer) &&
                      cast<BlockArgument>(buffer).getOwner() == block;
      if (!(alloc && alloc->getBlock() == block) && !argument)
        continue;
      std::optional<Operation *> last =
          tract::lastUseInBlock(*block, buffer, dealloc);
      if (!last)
        continue;
      if (!*last) {
        if (alloc)
          dealloc->moveAfter(alloc);
        else
          dealloc->moveBefore(&block->front());
        continue;
      }
      if ((*last)->isBeforeInBlock(dealloc))
        dealloc->moveAfter(*last);
    }
  }
};

} // namespace
