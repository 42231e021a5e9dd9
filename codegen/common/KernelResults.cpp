//===- KernelResults.cpp - kernels write into their callers' buffers ------===//
//
// See TractKernelResultsInPlace in codegen/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/tract/TractDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTKERNELRESULTSINPLACE
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// A function result that One-Shot Bufferize copied out of a kernel's
/// output (`%b = alloc; linalg.copy ins(%a) outs(%b); return %b`, with
/// %a an allocation of the same block and type that nothing reads or
/// writes after the copy): the function returns %a itself.
void returnKernelOutputs(func::FuncOp func) {
  SmallVector<linalg::CopyOp> copies;
  func.walk([&](linalg::CopyOp copy) { copies.push_back(copy); });
  for (linalg::CopyOp copy : copies) {
    if (!copy.hasPureBufferSemantics())
      continue;
    Value source = copy.getInputs()[0], target = copy.getOutputs()[0];
    auto from = source.getDefiningOp<memref::AllocOp>();
    auto to = target.getDefiningOp<memref::AllocOp>();
    Block *block = copy->getBlock();
    if (!from || !to || source.getType() != target.getType() ||
        from->getBlock() != block || to->getBlock() != block)
      continue;
    // %a: nothing after the copy; %b: sizes before it, then only returned.
    auto after = [&](Operation *user) {
      return user != copy && copy->isBeforeInBlock(
                                 block->findAncestorOpInBlock(*user));
    };
    bool returnedOnly = llvm::all_of(target.getUsers(), [&](Operation *user) {
      return user == copy ||
             (isa<func::ReturnOp>(user) && user->getBlock() == block) ||
             (isa<memref::DimOp>(user) && !after(user));
    });
    if (!returnedOnly || llvm::any_of(source.getUsers(), after))
      continue;
    target.replaceAllUsesWith(source);
    copy->erase();
    to->erase();
  }
}

struct TractKernelResultsInPlace
    : public tract::impl::TractKernelResultsInPlaceBase<
          TractKernelResultsInPlace> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    DenseMap<Operation *, SmallVector<func::CallOp>> calls;
    module.walk([&](func::CallOp call) {
      if (auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee()))
        calls[callee].push_back(call);
    });
    IRRewriter rewriter(&getContext());
    for (func::FuncOp kernel : module.getOps<func::FuncOp>()) {
      if (kernel.isExternal() || !kernel.isPrivate() ||
          !kernel->hasAttr(tract::kKernelFunctionAttrName) ||
          !kernel.getBody().hasOneBlock())
        continue;
      auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
      // Each result that is one of the arguments (through casts), by index.
      DenseMap<unsigned, unsigned> argumentOf;
      llvm::BitVector dropped(ret.getNumOperands());
      SmallVector<Value> kept;
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        Value source = value;
        while (auto cast = source.getDefiningOp<memref::CastOp>())
          source = cast.getSource();
        auto argument = dyn_cast<BlockArgument>(source);
        if (argument && argument.getOwner() == &kernel.getBody().front()) {
          argumentOf[index] = argument.getArgNumber();
          dropped.set(index);
        } else {
          kept.push_back(value);
        }
      }
      if (dropped.none())
        continue;
      if (failed(kernel.eraseResults(dropped)))
        return signalPassFailure();
      ret.getOperandsMutable().assign(kept);
      for (func::CallOp call : calls.lookup(kernel)) {
        rewriter.setInsertionPoint(call);
        auto replacement =
            func::CallOp::create(rewriter, call.getLoc(), kernel,
                                 call.getOperands());
        replacement->setDiscardableAttrs(call->getDiscardableAttrDictionary());
        SmallVector<Value> results;
        unsigned next = 0;
        for (unsigned i = 0; i < call.getNumResults(); ++i) {
          if (!dropped.test(i)) {
            results.push_back(replacement.getResult(next++));
            continue;
          }
          Value buffer = call.getOperand(argumentOf[i]);
          if (buffer.getType() != call.getResult(i).getType())
            buffer = memref::CastOp::create(rewriter, call.getLoc(),
                                            call.getResult(i).getType(),
                                            buffer);
          results.push_back(buffer);
        }
        rewriter.replaceOp(call, results);
      }
    }
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        returnKernelOutputs(func);
  }
};

} // namespace
