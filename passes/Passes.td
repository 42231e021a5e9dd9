#ifndef TRACT_PASSES_TD
#define TRACT_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractDeclutter : Pass<"tract-declutter", "ModuleOp"> {
  let summary = "Erase training-time clutter and simplify a tract model";
  let description = [{
    Runs the tract dialect's folders and canonicalization patterns to a
    fixpoint with the declutter rewrites (passes/Declutter*.cpp):

    * constant folding (under the dialect's fold budget), neutral elements
      (`x + 0`, `x - 0`, `x * 1`, `x / 1` where no broadcasting is
      involved), involutions (`neg(neg(x))`), casts and reshapes to the
      same type;
    * integer `x * 0` becomes 0 (floats keep it: NaN and infinities);
      float division by a constant becomes a multiplication by its
      reciprocal;
    * a per-channel constant multiplied into or added to a convolution's
      output (batch normalization) folds into its kernel and bias; a 1x1
      convolution without stride, padding or group becomes an einsum;
    * silu, gelu_approx, rms_norm and softmax are recognized from their
      expanded forms;
    * chains of move_axis become the fewest moves of their permutation
      (none for a transpose and its inverse), move_axis travels down
      through element-wise ops, add_axis/rm_axis pairs cancel.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

#endif // TRACT_PASSES_TD
