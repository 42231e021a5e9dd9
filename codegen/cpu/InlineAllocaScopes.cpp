//===- InlineAllocaScopes.cpp - flatten stack scopes of parallel bodies ---===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUINLINEALLOCASCOPES
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Whether `scope` allocates on the stack itself (nested scopes keep
/// their own allocations).
bool allocates(memref::AllocaScopeOp scope) {
  WalkResult result = scope.getBodyRegion().walk(
      [&](Operation *op) -> WalkResult {
        if (isa<memref::AllocaScopeOp>(op) && op != scope)
          return WalkResult::skip();
        if (isa<memref::AllocaOp>(op))
          return WalkResult::interrupt();
        return WalkResult::advance();
      });
  return result.wasInterrupted();
}

struct TractCpuInlineAllocaScopes
    : public tract::impl::TractCpuInlineAllocaScopesBase<
          TractCpuInlineAllocaScopes> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      if (!allocates(scope))
        scopes.push_back(scope);
    });
    IRRewriter rewriter(&getContext());
    for (memref::AllocaScopeOp scope : scopes) {
      Block *body = &scope.getBodyRegion().front();
      auto terminator =
          cast<memref::AllocaScopeReturnOp>(body->getTerminator());
      SmallVector<Value> results(terminator.getResults());
      rewriter.eraseOp(terminator);
      rewriter.inlineBlockBefore(body, scope);
      rewriter.replaceOp(scope, results);
    }
  }
};

} // namespace
