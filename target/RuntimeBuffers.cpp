//===- RuntimeBuffers.cpp - the tract-use-runtime-buffers pass ------------===//
//
// Points the allocation calls of the memref lowering at the runtime's
// buffer pool (runtime/tract_buffers.c).
//
//===----------------------------------------------------------------------===//

#include "target/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTUSERUNTIMEBUFFERS
#include "target/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

struct TractUseRuntimeBuffersPass
    : public tract::impl::TractUseRuntimeBuffersBase<
          TractUseRuntimeBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (auto plain = module.lookupSymbol<LLVM::LLVMFuncOp>(
            "_mlir_memref_to_llvm_alloc")) {
      plain.emitError() << "memref allocations must be aligned to use the "
                           "runtime's buffers";
      return signalPassFailure();
    }
    static constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
        renames[] = {
            {"_mlir_memref_to_llvm_aligned_alloc",
             "tract_buffer_aligned_alloc"},
            {"_mlir_memref_to_llvm_free", "tract_buffer_free"},
        };
    for (auto [from, to] : renames) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!function)
        continue;
      if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(to)) {
        if (existing.getFunctionType() != function.getFunctionType()) {
          existing.emitError() << "'" << to << "' is a runtime function of "
                               << "type " << function.getFunctionType();
          return signalPassFailure();
        }
        if (failed(SymbolTable::replaceAllSymbolUses(
                function, existing.getSymNameAttr(), module)))
          return signalPassFailure();
        function.erase();
        continue;
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              function, StringAttr::get(&getContext(), to), module)))
        return signalPassFailure();
      function.setSymName(to);
    }
  }
};

} // namespace
