#ifndef TRACT_PASSES_TD
#define TRACT_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractDeclutter : Pass<"tract-declutter", "ModuleOp"> {
  let summary = "Erase training-time clutter and simplify a tract model";
  let description = [{
    Runs the tract dialect's folders and canonicalization patterns to a
    fixpoint with the declutter rewrites (passes/Declutter*.cpp), inside
    scan and if bodies too:

    * constant folding (under the dialect's fold budget; reshapes of
      constants of any size), neutral elements (`x + 0`, `x - 0`, `x * 1`,
      `x / 1` where no broadcasting is involved), involutions
      (`neg(neg(x))`), casts and reshapes to the same type;
    * integer `x * 0` becomes 0 (floats keep it: NaN and infinities);
      float division by a constant becomes a multiplication by its
      reciprocal; two constant shifts or scalings in a row become one;
    * a per-channel constant multiplied into or added to a convolution's
      output (batch normalization) folds into its kernel and bias; a 1x1
      convolution without stride, padding or group becomes an einsum;
    * silu, gelu_approx, rms_norm, softmax and hard_swish (`x * relu6(x +
      3) / 6`, `x * hard_sigmoid(x)`) are recognized from their expanded
      forms; a layer normalization becomes its centering (`x - mean(x)`),
      an rms_norm of the centered value and its affine (the dialect has no
      layer_norm op);
    * axis changes: chains of move_axis become the fewest moves of their
      permutation (none for a transpose and its inverse); a move_axis
      travels down through element-wise ops, slices, axis insertions and
      removals, reductions, softmax and rms_norm, and up through
      element-wise ops into the einsum above it, until it cancels or
      becomes einsum letters (a constant weight's transpose included; an
      einsum operand of an element-wise op takes the inverse move); a move
      read by several ops that all let it through becomes one move per
      reader; add_axis/rm_axis pairs cancel; a reshape that removes or
      inserts one axis of 1 is rm_axis or add_axis;
    * reshape of reshape is one reshape, slice of slice one slice, a slice
      of a concat within one of its inputs a slice of that input;
    * scans: full inputs become values the body captures; states, scanned
      inputs and scanned outputs that nothing reads are dropped (the last
      scanned input stays, it gives the iteration count); a state yielded
      unchanged is its initial value; a scan of one iteration is inlined;
      an op of the body that reads a scanned chunk and loop-invariant
      values only (an einsum, an element-wise, slice or axis op) runs
      before the loop on the whole scanned input, and its result is
      scanned instead: the input half `x_t·Wᵀ + b` of a recurrent layer
      becomes one matrix product.

    Identical ops are merged by the CSE pass that
    `tract-declutter-pipeline` runs between two rounds of this pass.
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
