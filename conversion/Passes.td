#ifndef TRACT_CONVERSION_PASSES_TD
#define TRACT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractBindSymbols : Pass<"tract-bind-symbols", "ModuleOp"> {
  let summary = "Bind each function's symbols to its inputs' dims in the IR";
  let description = [{
    At the top of each function, reads the dims of the tensor arguments
    (`tensor.dim`) that determine a symbol (`S`, or `a*S+b` with S the only
    unbound symbol) and binds it with `tract.bind_symbol`, from which the
    lowering computes every dynamic size. Symbols that an op computes at run
    time (a dyn_slice's `len`, bind_dims' entries) are bound by that op's
    lowering. A symbol that neither an input nor an op determines is an
    error naming it. `tract-lower-to-linalg` binds the symbols of a
    function that has no bindings yet itself, and erases the bindings once
    the function is lowered.

    ```mlir
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %arg0, %c1 : tensor<1x?xf32, #tract.dims<[S]>>
    tract.bind_symbol "S" = %dim
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TractLowerQuantizedTypes : Pass<"tract-lower-quantized-types",
                                     "ModuleOp"> {
  let summary = "Quantized values as their integers, products in integers";
  let description = [{
    Gives every value of tract's quantized types (QU8, QI8, QI32) the
    integer type holding it and rewrites the casts and the arithmetic that
    give those types their meaning into integer and f32 tract ops (which
    `tract-lower-to-linalg` otherwise does first). Before that, a 1-D or
    2-D convolution (depthwise, or one per group of 8 channels or more,
    concatenated) whose input is a quantized value
    dequantized, whose kernel is a constant quantized then dequantized and
    whose bias (if any) is a constant, and whose only use quantizes its
    result to 8 bits, becomes a `tract.quant_conv` (or
    `tract.quant_depthwise`) on the integers: the kernel's integers are
    what its quantizing cast makes of it, the bias is counted in units of
    the input's scale times the kernel's, and the result is requantized in
    the epilogue. The same holds for a product by constant weights (an
    einsum `…k,nk->…n` or `…k,kn->…n`, then an optional constant bias),
    which becomes a `tract.quant_matmul`. And an op that commutes with the
    quantization (reshapes, axis moves, slices, concatenation, tiling, max
    pools, a maximum or minimum with a constant: relu and clip) between
    dequantizing casts from one type and a cast back to it runs on the
    integers. This is what tract's quantized NNEF (graph.quant) comes to,
    so that it runs in integers and not in float. The CPU pipeline runs
    this pass before `tract-channels-last`.

    ```mlir
    %x = tract.cast %q : tensor<1x8x10x10x!quant.uniform<u8:f32, 0.02:128>> to tensor<1x8x10x10xf32>
    %c = tract.conv %x, %w, %b {...}
    %y = tract.cast %c : tensor<1x16x10x10xf32> to tensor<1x16x10x10x!quant.uniform<u8:f32, 0.05:120>>
    // becomes, on the integers:
    %p = tract.pad %q ... value 128
    %y = tract.quant_conv %p, %wq, %bq {input_zero = 128, multiplier = [...], output_zero = 120, ...}
    ```
  }];
}

def TractLowerToLinalg : Pass<"tract-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower tract ops to linalg, tensor, arith, math and scf";
  let description = [{
    Converts every tract op to upstream dialects on tensors: element-wise ops
    to `linalg.generic`, contractions and windows to linalg named or generic
    ops, axis ops to `tensor` reshapes and slices, `scan`/`if` to `scf`.
    Composite ops (attention, rotary embeddings, deconvolutions, resizes)
    are first decomposed into the tract ops that compute them; a target's
    kernels (`tract-cpu-attention-kernels`, `tract-cpu-block-quant-kernels`)
    run before this pass to take the ones they do better.

    The symbols of each function are bound at its entry from its arguments'
    dims (`tract-bind-symbols`, run here for a function that has no
    bindings yet), and every dynamic size is computed from them, so
    symbolic shapes become `index` arithmetic. Function signatures lose the
    `#tract.dims` encoding and unsigned integers become signless. Results
    are copied into fresh tensors, so that a caller owns every buffer it
    gets back.

    What lowering erases and a caller's inputs must satisfy is kept on each
    public function, for `tract-entry-checks`: the tract shapes of its
    inputs (`tract.input_shapes`), the dims of intermediate results that
    the module's assertions do not prove non-negative
    (`tract.guarded_dims`), and the sizes in bytes of intermediate results
    that could be larger than every input (`tract.guarded_sizes`), each
    with the model node it comes from.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // TRACT_CONVERSION_PASSES_TD
