//===- InferShapes.cpp - symbolic shape propagation -----------------------===//
//
// Recomputes every result type from the operand types, in program order,
// with each op's own result-type inference (inferOpResultTypes): after an input
// type changed (a new input fact, `tract-set`), the types downstream follow.
// Scan bodies and if regions are inferred with the types their operands give
// them. A contradiction (an op whose operands cannot have these shapes) is an
// error at the op.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTINFERSHAPES
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

struct InferShapesPass
    : mlir::tract::impl::TractInferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    if (failed(inferShapes(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tract::inferShapes(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    // The entry block's arguments are the inputs; the function type
    // follows them and what the body returns.
    Block &entry = function.getBody().front();
    if (failed(inferBlockResultTypes(entry)))
      return failure();
    auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
    if (!ret)
      continue;
    function.setFunctionType(FunctionType::get(
        module.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  }
  return success();
}
