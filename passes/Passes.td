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
      becomes one matrix product; a loop over the positions `range(0, n)`
      of a sequence of `n` frames whose body gathers the frame at its
      position (TensorFlow's while loops exported as ONNX Loop) scans the
      sequence instead, and streams;
    * transformer blocks, once the rest has converged (so that attention's
      head moves become einsum letters first): `x * cos +
      rotate_half(x) * sin` is apply_rope; the einsums, scale, additive
      mask and softmax of attention are sdpa (keys and values taken before
      a grouped-query repetition; a mask built from position ranges, `j >
      i + past`, is the causal flag), followed by the moves to the second
      einsum's output order; rms_norm is also found as `x * (1 /
      sqrt(mean(x²) + eps))`;
    * weights: a product by Q4_0 blocks read from a file becomes
      `block_quant_matmul` on them (the others are folded to f32), and a
      product by weights the model stores as f16 (a constant cast to f32,
      too large to fold) becomes `block_quant_matmul` on the halves,
      rather than a cast at every run.

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

def TractPulsify : Pass<"tract-pulsify", "ModuleOp"> {
  let summary = "Turn a model over a time axis into a streaming model";
  let description = [{
    `tract-pulsify{symbol=S pulse=8}` rewrites `main` so that each call
    takes `pulse` frames of the axis its inputs carry `S` on (an input
    must have `S` itself on exactly one axis). Every value that carries
    `S` then carries a pulse of frames instead, and a delay: frame `t` of
    its stream is frame `t - delay` of the batch value.

    * Element-wise ops, einsum (through its axis letters), concat,
      add/rm/move_axis, reshape, broadcast, tile, reductions, softmax,
      rms_norm and gather work on pulses as on the batch when they do not
      mix frames of the streaming axis; streamed operands whose delays
      differ are realigned with `tract.delay`.
    * conv, max_pool and sum_pool over the streaming axis: the padding
      becomes a `tract.pulse_pad` of the stream (after enough delay for
      the padding before it), the kernel's reach becomes the overlap of a
      `tract.delay`, and the op runs unpadded on each pulse. The stride
      must divide the op's input pulse: a pulse that is not a multiple of
      the product of the strides up to the op is refused, naming that
      product.
    * deconv over the streaming axis becomes a convolution of its input
      upsampled by the stride (zero frames between the frames), with the
      kernel transposed and flipped, pulsified as above.
    * pad over the streaming axis becomes a `tract.pulse_pad`; a slice of
      the streaming axis only shifts the delay; a downsample delays the
      stream to a stride boundary; a constant broadcast to the stream
      length is a stream of equal frames.
    * A scan over the stream keeps its states across pulses; it is marked
      `pulse.skip = D`, the delay of its input, so that the frames before
      it do not update the states (see `tract-externalize-state`).

    What cannot stream is an error naming the op and why: a reduction or
    normalization over the streaming axis, a scan running backwards, a
    scan's final state used, a value computed from `S` but not from the
    stream. The module's `tract.properties` get `pulse.symbol`,
    `pulse.pulse`, `pulse.input_axes`, `pulse.output_axes`, `pulse.delay`
    (per output, in output frames) and `pulse.output_lengths` (the batch
    length of each output, over `S`). Without `symbol`, the model's only
    symbol is used, or `S` (tract's streaming symbol) among several.
  }];
  let options = [
    Option<"symbol", "symbol", "std::string", /*default=*/"\"\"",
           "the streaming symbol">,
    Option<"pulse", "pulse", "int64_t", /*default=*/"0",
           "frames per call">
  ];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractExternalizeState : Pass<"tract-externalize-state", "ModuleOp"> {
  let summary = "Make the state of a streaming model explicit";
  let description = [{
    After `tract-pulsify`, a model keeps state from one call to the next.
    This pass turns it into arguments and results, so that the step
    function is pure: `main(inputs..., symbols..., step, states...)`
    returns `(outputs..., step + 1, states...)`.

    * `pulse_step` (`tensor<i64>`) counts the calls so far;
    * the symbols that pulse_pad and pulse_mask ends need at run time
      (the stream length `S`) become `tensor<i64>` inputs, marked
      `tract.symbol`;
    * a `tract.delay` keeps its last `delay + overlap` frames: its output
      is the start of `concat(history, input)` and the next history its
      end;
    * `tract.pulse_pad` and `tract.pulse_mask` become a `tract.select` on
      the positions `step * pulse + i` of the frames;
    * a scan marked `pulse.skip` starts from its initial states when the
      step is 0 and from the states of the previous call after, and its
      iterations over frames before the skip keep the states;
    * a `tract.dyn_kv_cache` is a state named after the cache, of the
      input's shape with the past's length on its axis: the output is
      `concat(past, input)`, which is also the next past. A model whose
      only states are such caches has no `pulse_step`.

    States are marked `tract.state` (arguments and results); every state
    starts at zero (a cache empty). A state inside a region is not
    supported.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractExportScanState : Pass<"tract-export-scan-state", "ModuleOp"> {
  let summary = "Hand the state of one-iteration scans to the caller";
  let description = [{
    tract's `export_scan_state` transform. A scan marked `tract.stateful`
    (one that tract carries from one call to the next) that runs one
    iteration, skips none, and starts from a constant state takes that state
    from a new input of `main` instead, `<scan name>.state_in`, and returns
    its final state as a new output, `<scan name>.state_out`: the caller
    passes the state from call to call. The scan loses the mark, so that
    declutter inlines its body. Other scans are left as they are.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractBlockQuant : Pass<"tract-block-quant", "ModuleOp"> {
  let summary = "Store the constant weights of products as Q4_0 or f16";
  let description = [{
    tract's `block-quant` transform. An einsum of rows by a constant f32
    matrix (`...k,kn->...n` or `...k,nk->...n`) becomes
    `tract.block_quant_matmul` with the matrix as Q4_0 blocks along k. As
    in tract, weights under 2^14 values and those whose name (or the
    product's) says they are an embedding, a normalization, a pooler, a
    classifier or the output head (`embed`, `norm`, `pooler`,
    `classifier`, `lm_head`, `logits`, any case of the first letter) stay
    f32, and so do products whose k is not a multiple of 32 (the block) or
    whose n is not a multiple of 16 (the kernels' lanes), and weights that
    are not all finite. The output head (a product named `lm_head` or
    `logits`) is the exception, ours: its weights are stored as f16, which
    keeps their precision, so that a decoding step reads half their bytes
    (for a 1B model, a gigabyte in f32). Weights read from Q4_0 files
    (dequantized at load) get their blocks back exactly.

    With `format=f16` (`-t f16-weights`, ours: tract's `f32-to-f16` makes
    the whole model f16) the same products keep their weights as f16
    values, n x k, and sum in f32: the same rules, but any k and weights
    of magnitude at most 65504. Weights read from f16 files get their
    values back exactly.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"q4_0\"",
           "How the weights are stored: q4_0 (tract's blocks) or f16">,
  ];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractDetectKvCache : Pass<"tract-detect-kv-cache", "ModuleOp"> {
  let summary = "Keep key/value caches inside the model (tract.dyn_kv_cache)";
  let description = [{
    A decoder exported with its cache as inputs and outputs (HuggingFace's
    `past_key_values.*` and `present.*`) concatenates each past input with
    the new keys or values along an axis whose dim is a symbol (`P`) and
    returns the result. Each such input, used by that concat only, and the
    output become one `tract.dyn_kv_cache` named after the input: the
    model keeps the cache from one call to the next, as tract's
    `DynamicKeyValueCache`. Run and compiled, the cache is a state
    (tract-externalize-state) that starts empty.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractUnfoldKvCache : Pass<"tract-unfold-kv-cache", "ModuleOp"> {
  let summary = "Key/value caches inside the model made inputs and outputs again";
  let description = [{
    The reverse of tract-detect-kv-cache, as tract's `unfold-kv-cache`:
    each `tract.dyn_kv_cache` of `main` becomes a concat of a new input
    (the past, named after the cache, appended to the inputs) and what the
    cache appended, and the concat is appended to the outputs, named
    `NAME_concat`. The model then takes its cache from the caller again.
  }];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractConvRegions : Pass<"tract-conv-regions", "ModuleOp"> {
  let summary = "Convolutions and max pools cut into regions where their taps read padding";
  let description = [{
    With the shapes known, each output position of a convolution reads the
    input through a range of the kernel's taps, the same in the interior
    and narrower near the borders. Where the taps that only ever multiply
    padding make a large share of the products (an atrous convolution on a
    map not much wider than its dilation), the convolution becomes one per
    region (the product of each axis' bands of outputs, at most
    `max-bands` per axis, merged where they differ least; an axis whose
    bands save less than `min-saved` stays whole), each over its own taps
    on the slice of the input it reads, concatenated back. Each region's
    kernel is cut at compile time: the regions' kernels may hold at most
    `max-weights` times the kernel's weights.

    A padded max pool (without indices) is cut the same way, every band
    kept whatever the options: each region a valid pool over the taps its
    outputs read inside the input, since padding never wins a maximum. The
    interior then pools the input in place, where the pool read a copy of
    it padded with the lowest value.
  }];
  let options = [
    Option<"minSaved", "min-saved", "double", /*default=*/"0.25",
           "The share of the products the regions must save">,
    Option<"minWork", "min-work", "double", /*default=*/"1048576",
           "The multiply-adds the regions must save">,
    Option<"maxBands", "max-bands", "unsigned", /*default=*/"3",
           "The most bands along one axis">,
    Option<"maxWeights", "max-weights", "double", /*default=*/"3.0",
           "The most weights the regions' kernels may hold, in kernels">,
  ];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

def TractChannelsLast : Pass<"tract-channels-last", "ModuleOp"> {
  let summary = "Convolutional networks with their channels last";
  let description = [{
    The CPU code generator's layout for convolutions. Each depthwise
    convolution (and each dense or grouped one with `dense`) becomes its
    `channels_last` form: input `N, spatial…, C`, kernel `k…, C/group, O`,
    output `N, spatial…, O`. A grouped one whose groups have fewer outputs
    than `lanes` (and a constant kernel) runs neighbouring groups as one,
    enough to fill a vector: its kernel is zero between a group's outputs
    and the other groups' inputs. With `dense`, so does each 8-bit
    `quant_conv` of static shapes, but a 1x1 one whose input comes channels
    first; input channels not a multiple of four (a stem's three) are
    padded with the input's zero point, the kernel with zeros. The layout
    is carried forward through what reads the results: element-wise ops
    whose operands all have the result's rank, casts, pads, einsums (their
    letters move, the result's too when its axis 1 is not a pixel axis),
    reductions, concatenations and rms_norm (their axes move), max and sum
    pools of one or two spatial axes (their `channels_last` form; max pools
    of integers too), and a model's own move of the channels last
    (ConvNeXt's), which disappears. Any other reader gets a `move_axis`
    back to the channels first. An input that comes channels first gets
    one forward, folded for constants; but an einsum, or an element-wise op
    read once, writes its result channels last itself. Constants do not
    carry the layout: an op whose only operands channels last are constants
    stays as it is.

    Not for NNEF: export and pulsification refuse a channels-last
    convolution.
  }];
  let options = [
    Option<"dense", "dense", "bool", /*default=*/"true",
           "Dense and grouped convolutions too, not only the depthwise ones">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes of the target's vectors: a grouped convolution whose "
           "groups have fewer outputs runs neighbouring groups as one">,
  ];
  let dependentDialects = ["::mlir::tract::TractDialect"];
}

#endif // TRACT_PASSES_TD
