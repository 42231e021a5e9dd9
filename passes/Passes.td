#ifndef TRACT_PASSES_TD
#define TRACT_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractDeclutter : Pass<"tract-declutter", "ModuleOp"> {
  let summary = "Erase training-time clutter and simplify a tract model";
  let description = [{
    Runs the tract dialect's folders and canonicalization patterns to a
    fixpoint: constant folding, neutral elements (`x + 0`, `x * 1` where no
    broadcasting is involved), involutions (`neg(neg(x))`).
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

#endif // TRACT_PASSES_TD
