//===- ExportScanState.cpp - a one-iteration scan's state to the caller ---===//
//
// tract's `export_scan_state`: a scan that tract carries from one call to
// the next (`tract.stateful`) and that runs its body once, on a constant
// initial state, takes that state from a new input of `main` and returns
// its final state as a new output. With the state in the caller's hands,
// the scan is an ordinary one-iteration scan, which declutter inlines.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTEXPORTSCANSTATE
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

std::string nameOf(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  return "scan";
}

struct TractExportScanState
    : public tract::impl::TractExportScanStateBase<TractExportScanState> {
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    SmallVector<ScanOp> scans(main.getBody().getOps<ScanOp>());
    for (ScanOp scan : scans) {
      if (!scan->hasAttr(kStatefulScanAttrName) ||
          scan->hasAttr("pulse.skip") || !scan.runsOnce())
        continue;
      SmallVector<unsigned> seeded;
      for (unsigned i = 0; i < scan.getNumStates(); ++i)
        if (scan.getInputs()[i].getDefiningOp<ConstOp>())
          seeded.push_back(i);
      if (seeded.empty())
        continue;
      MLIRContext *context = &getContext();
      auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
      std::string name = nameOf(scan);
      for (unsigned i : seeded) {
        unsigned index = main.getNumArguments();
        Type type = scan.getInputs()[i].getType();
        if (failed(main.insertArgument(index, type, {}, scan.getLoc())))
          return signalPassFailure();
        main.setArgAttr(index, "tract.name",
                        StringAttr::get(context, name + ".state_in"));
        scan->setOperand(i, main.getArgument(index));
        unsigned result = main.getNumResults();
        ret->insertOperands(ret->getNumOperands(), scan.getResult(i));
        if (failed(main.insertResult(result, type, {})))
          return signalPassFailure();
        main.setResultAttr(result, "tract.name",
                           StringAttr::get(context, name + ".state_out"));
      }
      scan->removeAttr(kStatefulScanAttrName);
    }
  }
};

} // namespace
