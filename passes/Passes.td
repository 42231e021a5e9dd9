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

def TractInferShapes : Pass<"tract-infer-shapes", "ModuleOp"> {
  let summary = "Propagate symbolic shapes through the model";
  let description = [{
    Recomputes every result type from its operands' types, in program
    order, with each op's result-type inference, so that the types
    downstream of a changed input type (a new input fact, `tract-set`)
    follow it. A scan's body arguments get its states, the chunks of its
    scanned inputs and its full inputs; its results are the final states
    and the scanned outputs stacked over the iterations. An if's results
    are what both regions yield. Function types follow the entry block's
    arguments and what the body returns.

    A contradiction is an error at the op's location: operands whose
    shapes the op cannot take (`S` and `S+1` concatenated on another
    axis), a scan state whose shape changes across an iteration, an if
    whose regions yield different types.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractSet : Pass<"tract-set", "ModuleOp"> {
  let summary = "Substitute symbols by values or expressions";
  let description = [{
    `tract-set{S=3 P=2*T+1}` replaces the symbols everywhere at once:
    in types' `#tract.dims` encodings (dims that become constant make the
    types static), in `#tract.dim` and `#tract.shape` attributes, and in
    the module's `tract.assertions` and `tract.scenarios`. Then it
    re-infers shapes as `tract-infer-shapes` does and runs the dialect's
    folders and canonicalization patterns, so that shape computations
    fold. `tract.symbols` loses the symbols that no longer appear and
    gains those the expressions introduce.

    An assertion that becomes false (`S >= 4` with `S=3`, or `S+P < 16`
    with `S=20`, since symbols are non-negative) is an error naming it; one
    that becomes true is dropped. A scenario that becomes impossible is
    dropped with a warning. Setting a symbol the model does not have, or a
    negative value, is an error.

    The assignments are separated by spaces or commas;
    `values=S=3,P=4` is the same as `S=3 P=4`.
  }];
  let options = [
    ListOption<"values", "values", "std::string",
               "assignments NAME=EXPR, EXPR a TDim over other symbols">
  ];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

#endif // TRACT_PASSES_TD
