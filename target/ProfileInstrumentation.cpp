//===- ProfileInstrumentation.cpp - the tract-instrument-profile pass -----===//
//
// Brackets each top-level op of the entry function with calls to the
// runtime's tract_profile_enter / tract_profile_exit, so that a compiled
// model measures the time of each op (`tract dump --profile`).
//
//===----------------------------------------------------------------------===//

#include "target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTINSTRUMENTPROFILE
#include "target/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

constexpr llvm::StringLiteral kEnter = kProfileEnterName;
constexpr llvm::StringLiteral kExit = kProfileExitName;

/// The declaration `func.func private @name(i64)`, added if missing.
FailureOr<func::FuncOp> declareRuntimeFunction(ModuleOp module,
                                               StringRef name) {
  MLIRContext *context = module.getContext();
  auto type = FunctionType::get(context, {IntegerType::get(context, 64)}, {});
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() != type)
      return existing.emitError()
             << "'" << name << "' is a runtime function of type " << type;
    return existing;
  }
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(builder, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

struct TractInstrumentProfilePass
    : public tract::impl::TractInstrumentProfileBase<
          TractInstrumentProfilePass> {
  using TractInstrumentProfileBase::TractInstrumentProfileBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto function = module.lookupSymbol<func::FuncOp>(entry);
    if (!function || function.isExternal()) {
      module.emitError() << "no function '" << entry << "' to instrument";
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> enter = declareRuntimeFunction(module, kEnter);
    FailureOr<func::FuncOp> exit = declareRuntimeFunction(module, kExit);
    if (failed(enter) || failed(exit))
      return signalPassFailure();

    Block &body = function.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    OpBuilder builder(module.getContext());
    for (auto [slot, op] : llvm::enumerate(ops)) {
      builder.setInsertionPoint(op);
      Value id = arith::ConstantIntOp::create(builder, op->getLoc(),
                                              static_cast<int64_t>(slot), 64);
      func::CallOp::create(builder, op->getLoc(), *enter, id);
      builder.setInsertionPointAfter(op);
      func::CallOp::create(builder, op->getLoc(), *exit, id);
    }
  }
};

} // namespace
