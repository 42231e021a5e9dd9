//===- TractNNOps.td - contractions, convolutions, pools, reductions ------===//

def Tract_EinsumOp : Tract_InferredOp<"einsum",
    [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, SameOperandsAndResultElementType, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "tensor contraction described by axis letters";
  let description = [{
    `expr` names each operand's axes and the result's, e.g. `mk,kn->mn` for a
    matrix product or `bmk,bkn->bmn` batched; letters absent from the result
    are summed. An axis of size 1 broadcasts against the same letter
    elsewhere. Matmul and gemm are einsums.
  }];
  let arguments = (ins Variadic<Tract_Tensor>:$inputs, StrAttr:$expr);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Each letter's size: the broadcast of the dims the inputs give it
    /// (which the verifier checks).
    std::map<char, ::mlir::tract::TDim> getLetterSizes();
  }];
}

class Tract_WindowOp<string mnemonic>
    : Tract_InferredOp<mnemonic, [DeclareOpInterfaceMethods<Tract_CostOpInterface>,
                                  DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>]> {
  // Shared spatial attributes: per spatial axis, in the order of the input's
  // axes after N and C. Empty strides and dilations mean all 1.
  dag windowAttrs = (ins
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$dilations,
    DefaultValuedAttr<Tract_PaddingAttr, "::mlir::tract::Padding::Valid">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pads_before,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pads_after);
}

def Tract_ConvOp : Tract_WindowOp<"conv"> {
  let summary = "convolution, NC[spatial] input and O I/g [spatial] kernel";
  let description = [{
    `input` is `N, C, spatial…`; `kernel` is `O, C/group, k…`; `bias`, if
    present, has `O` elements. Output spatial dims: valid
    `ceil((x - kf + 1) / s)`, explicit `(x + b + a - kf) / s + 1`, same
    `ceil(x / s)`, with `kf = (k - 1) * d + 1`.

    With `channels_last` (which only the code generator's
    `tract-channels-last` sets), the channels come last instead: `input` is
    `N, spatial…, C`, the output `N, spatial…, O` and `kernel`
    `k…, C/group, O` (tract's HWIO).
  }];
  let arguments = !con((ins Tract_Tensor:$input, Tract_Tensor:$kernel,
                            Optional<Tract_Tensor>:$bias,
                            DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$group),
                       windowAttrs,
                       (ins UnitAttr:$channels_last));
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tract_DeconvOp : Tract_WindowOp<"deconv"> {
  let summary = "transposed convolution, kernel C O/g [spatial]";
  let description = [{
    `input` is `N, C, spatial…`; `kernel` is `C, O/group, k…` (the layout of
    the convolution it transposes). Output spatial dims: valid
    `(x - 1) * s + kf + adj`, explicit `(x - 1) * s + kf - b - a + adj`,
    same `x * s`.
  }];
  let arguments = !con((ins Tract_Tensor:$input, Tract_Tensor:$kernel,
                            Optional<Tract_Tensor>:$bias,
                            DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$group,
                            DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$adjustments),
                       windowAttrs);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tract_MaxPoolOp : Tract_WindowOp<"max_pool"> {
  let summary = "maximum over windows of the spatial axes";
  let description = [{
    `input` is `N, C, spatial…`; `kernel_shape` is spatial. With
    `ceil_mode`, explicit padding rounds the output size up. With
    `with_index`, a second result gives the flat index of each maximum.
    With `channels_last` (the code generator's, as conv's), the input and
    output are `N, spatial…, C`.
  }];
  let arguments = !con((ins Tract_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                            DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                            DefaultValuedAttr<BoolAttr, "false">:$with_index),
                       windowAttrs,
                       (ins UnitAttr:$channels_last));
  let results = (outs Tract_Tensor:$output, Optional<Tract_IntTensor>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tract_SumPoolOp : Tract_WindowOp<"sum_pool"> {
  let summary = "sum (or average) over windows of the spatial axes";
  let description = [{
    Average pooling is a sum pool with `normalize`; `count_include_pad`
    counts padded cells in the divisor. With `channels_last` (the code
    generator's, as conv's), the input and output are `N, spatial…, C`.
  }];
  let arguments = !con((ins Tract_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
                            DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                            DefaultValuedAttr<BoolAttr, "false">:$normalize,
                            DefaultValuedAttr<BoolAttr, "false">:$count_include_pad),
                       windowAttrs,
                       (ins UnitAttr:$channels_last));
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tract_ReduceOp : Tract_InferredOp<"reduce",
    [DeclareOpInterfaceMethods<Tract_WorkAxesOpInterface>, Tract_AxisTrackingOpInterface,
     DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "reduce axes, keeping them as size 1";
  let description = [{
    `axes` are strictly increasing. argmax/argmin give `i64` indices (of the
    first extremum, or the last with `last`); all/any take booleans;
    mean_of_squares averages `x * x`.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_ReducerAttr:$reducer,
                   DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$last);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$reducer $input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

class Tract_AxesNormOp<string mnemonic, string summaryText>
    : Tract_InferredOp<mnemonic,
        [DeclareOpInterfaceMethods<Tract_WorkAxesOpInterface>, Tract_AxisTrackingOpInterface,
     DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = summaryText;
  let arguments = (ins Tract_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_SoftmaxOp : Tract_AxesNormOp<"softmax", "exp(x) / sum(exp(x)) over axes">;
def Tract_LogSoftmaxOp : Tract_AxesNormOp<"log_softmax", "x - log(sum(exp(x))) over axes">;

def Tract_RmsNormOp : Tract_InferredOp<"rms_norm",
    [DeclareOpInterfaceMethods<Tract_WorkAxesOpInterface>, Tract_AxisTrackingOpInterface,
     DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "x / sqrt(mean(x * x, axis) + eps)";
  let description = [{
    Normalizes along one axis by the root mean square; `eps` keeps the division finite. The result has the input's type.
  }];
  let arguments = (ins Tract_FloatTensor:$input, Tract_AxisAttr:$axis,
                   DefaultValuedAttr<F64Attr, "1e-6">:$eps);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_BlockQuantMatmulOp : Tract_InferredOp<"block_quant_matmul",
    [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "rows times a compactly stored (q4_0 or f16) matrix, transposed";
  let description = [{
    `output[..., n] = sum over k of input[..., k] * w[n, k]`, where `w` is
    an `n x k` matrix stored in `weights`, a constant, in one of two forms:
    - tract's Q4_0 blocks, `n x k/32 x 18` bytes (i8): each run of 32
      values along k is 18 bytes, an f16 scale `d` then 16 bytes of 4-bit
      codes `q`, two per byte in order (the low nibble first), each value
      `(q - 8) * d`. It is what tract's `block-quant` transform makes of an
      einsum with constant weights.
    - f16 values, `n x k`, summed in the input's type (`-t f16-weights`).
    The lowering reads the stored form in its inner loop instead of a
    decoded copy: a decoding step of a language model reads the weights'
    bytes once per token.

    `q8_inputs` allows the lowering to round the input to 8 bits per run
    of 32 along k (Q8_0: one scale, the largest magnitude over 127, and
    codes rounded to nearest, ties to even) where few rows are multiplied,
    so that Q4_0 codes and inputs multiply as bytes (the accuracy level 4
    of onnxruntime's MatMulNBits). Its error, a 254th of the run's largest
    input at most, is a small part of the weights' own; without it the
    input is used as it is.
  }];
  let arguments = (ins Tract_FloatTensor:$input,
                   Tract_TensorOf<[AnyInteger, F16], "integers or f16">:$weights,
                   UnitAttr:$q8_inputs);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weights attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_BlockDequantOp : Tract_Op<"block_dequant", [Pure]> {
  let summary = "the f32 values of tract's Q4_0 blocks";
  let description = [{
    `blocks` is `b x 18` bytes (i8) of tract's Q4_0 blocks (an f16 scale,
    then 16 bytes of 4-bit codes, the low nibble first); the result holds
    their `b * 32` values `(q - 8) * d` in the row-major order of its
    shape. The NNEF importer makes it of a Q4_0 `.dat` file, so that the
    weights stay as stored: declutter turns a product of rows by it, with
    the blocks along the summed axis, into `block_quant_matmul` on the same
    bytes, and folds what remains into an f32 constant.

    ```mlir
    %w = tract.block_dequant %blocks : tensor<64x18xi8> -> tensor<32x64xf32>
    ```
  }];
  let arguments = (ins Tract_IntTensor:$blocks);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = "$blocks attr-dict `:` type($blocks) `->` type($output)";
  let hasVerifier = 1;
}

def Tract_QuantMatmulOp : Tract_InferredOp<"quant_matmul",
    [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "8-bit integer product with constant weights, summed in i32";
  let description = [{
    The integer product of quantized inputs (`ui8` or `i8`) by quantized
    weights (`ui8` or `i8`) that QLinearMatMul, MatMulInteger, QLinearConv,
    ConvInteger and the quantize-dequantize pairs around float products
    come to:

    `acc[c] = sum over k of (input[k] - input_zero) * (w[k, c] - weight_zero[c]) + bias[c]`

    where `c` is the weights' channel. Two forms:
    - by default `lhs` is the input, `…, K`, and `rhs` the weights, `K, C`;
      the result is `…, C`;
    - with `weights_left`, `lhs` is the weights, `C, K`, and `rhs` the
      input, `K, N` or `B, K, N` (a convolution's patches); the result is
      `C, N` or `B, C, N`.
    `weight_zero` holds one value, or one per channel, or none (zero);
    `bias`, if present, is `C` i32. Without `multiplier` the result is the
    i32 sums. With it (one value or one per channel) each sum is
    requantized: `round_half_even(acc * multiplier[c]) + output_zero`,
    saturated to `ui8`, or to `i8` with `output_signed`.

    The CPU lowering packs the weights at compile time with their zero-point
    corrections and sums four byte products per lane and instruction where
    the target has them (AVX-512 VNNI's `vpdpbusd`).
  }];
  let arguments = (ins Tract_IntTensor:$lhs, Tract_IntTensor:$rhs,
                   Optional<Tract_IntTensor>:$bias,
                   UnitAttr:$weights_left,
                   DefaultValuedAttr<I64Attr, "0">:$input_zero,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$weight_zero,
                   OptionalAttr<DenseF32ArrayAttr>:$multiplier,
                   DefaultValuedAttr<I64Attr, "0">:$output_zero,
                   UnitAttr:$output_signed);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The operands that hold the input and the weights.
    ::mlir::Value getInput() { return getWeightsLeft() ? getRhs() : getLhs(); }
    ::mlir::Value getWeights() { return getWeightsLeft() ? getLhs() : getRhs(); }
  }];
}

def Tract_QuantConvOp : Tract_InferredOp<"quant_conv",
    [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "8-bit 2-D convolution with constant weights, summed in i32";
  let description = [{
    The dense form (one group) of QLinearConv and ConvInteger and of the
    quantize-dequantize pairs around a float `Conv`, on an input already
    padded with its zero point:

    `acc[b, o, y, x] = sum over (c, i, j) of (input[b, c, y * s0 + i * d0, x * s1 + j * d1] - input_zero) * (w[o, c, i, j] - weight_zero[o]) + bias[o]`

    `input` is `B, C, H, W` (`ui8` or `i8`), `weights` `O, C, kh, kw` (`ui8`
    or `i8`), the result `B, O, (H - (kh - 1) * d0 - 1) / s0 + 1,
    (W - (kw - 1) * d1 - 1) / s1 + 1`. With `channels_last` (which only
    `tract-channels-last` makes) the input is `B, H, W, C`, the weights
    `kh, kw, C, O` and the result `B, OH, OW, O`. `weight_zero`, `bias`,
    `multiplier`, `output_zero` and `output_signed` mean what they mean for
    `tract.quant_matmul`: i32 sums, or requantized when `multiplier` is
    given.

    The CPU lowering runs the channels-last form as the products of
    `tract.quant_matmul` with the weights on the right, whose rows are the
    output's pixels and whose four bytes per step are read from the input
    at each tap (no patches are copied); the channels-first form as those
    patches by the kernel on the left.
  }];
  let arguments = (ins Tract_IntTensor:$input, Tract_IntTensor:$weights,
                   Optional<Tract_IntTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   UnitAttr:$channels_last,
                   DefaultValuedAttr<I64Attr, "0">:$input_zero,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$weight_zero,
                   OptionalAttr<DenseF32ArrayAttr>:$multiplier,
                   DefaultValuedAttr<I64Attr, "0">:$output_zero,
                   UnitAttr:$output_signed);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_QuantDepthwiseOp : Tract_InferredOp<"quant_depthwise",
    [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "8-bit depthwise convolution with constant weights";
  let description = [{
    The depthwise form of QLinearConv and ConvInteger (one channel in, one
    out per group), on an input already padded with its zero point:

    `acc[b, c, y, x] = sum over (i, j) of (input[b, c, y * s0 + i * d0, x * s1 + j * d1] - input_zero) * (w[c, i, j] - weight_zero[c]) + bias[c]`

    `input` is `B, C, H, W` (`ui8` or `i8`), `weights` `C, kh, kw` (`ui8`
    or `i8`), the result `B, C, (H - (kh - 1) * d0 - 1) / s0 + 1,
    (W - (kw - 1) * d1 - 1) / s1 + 1`. `weight_zero`, `bias`, `multiplier`,
    `output_zero` and `output_signed` mean what they mean for
    `tract.quant_matmul`: i32 sums, or requantized when `multiplier` is
    given. With `channels_last` (which only `tract-channels-last` makes)
    the input is `B, H, W, C` and the result `B, OH, OW, C`; the weights
    stay `C, kh, kw`.

    The CPU lowering sums in f32 lanes, which is exact: each output sums a
    few products of bytes (a 3x3 kernel, 9), below 2^24. Channels first,
    the lanes run along the output's columns; channels last, along its
    channels, several output pixels of a row sharing each input pixel they
    read.
  }];
  let arguments = (ins Tract_IntTensor:$input, Tract_IntTensor:$weights,
                   Optional<Tract_IntTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                   UnitAttr:$channels_last,
                   DefaultValuedAttr<I64Attr, "0">:$input_zero,
                   DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$weight_zero,
                   OptionalAttr<DenseF32ArrayAttr>:$multiplier,
                   DefaultValuedAttr<I64Attr, "0">:$output_zero,
                   UnitAttr:$output_signed);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_GruEpilogueOp : Tract_InferredOp<"gru_epilogue", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "the gates of a GRU step, from its input and recurrent products";
  let description = [{
    `x_h` and `r_h` are the input and recurrent products with their biases,
    `3 * hidden` wide on the last axis in ONNX's gate order (z, r, n); `h` is
    the previous state, `hidden` wide. With linear-before-reset gates:
    `z = sigmoid(x_z + r_z)`, `r = sigmoid(x_r + r_r)`,
    `n = tanh(x_n + r * r_n)`, and the next state `(1 - z) * n + z * h`.
    It is tract's `GruEpilogue`; the lowering expands it into those ops.
  }];
  let arguments = (ins Tract_FloatTensor:$x_h, Tract_FloatTensor:$r_h,
                   Tract_FloatTensor:$h);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $x_h `,` $r_h `,` $h attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_GridSampleOp : Tract_InferredOp<"grid_sample", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "sample an image at the points of a grid";
  let description = [{
    `input` is `N, C, D1, …, Dr` and `grid` is `N, E1, …, Er, r`; the result
    is `N, C, E1, …, Er`. Each point of the grid holds normalized
    coordinates in `[-1, 1]`, the last spatial axis first (`x`, then `y`…):
    along an axis of length `D`, `c` maps to `(c + 1) / 2 * (D - 1)` with
    `align_corners` (-1 and 1 are the centres of the edge cells), to
    `((c + 1) * D - 1) / 2` without (they are the edges of the edge cells).

    `nearest` reads the cell the coordinate rounds to (halves to even),
    `linear` interpolates the 2^r cells around it, `cubic` the 4^r around
    it with Keys' kernel of parameter -0.75. Padding says what lies beyond
    the edges (-0.5 and `D - 0.5`, or 0 and `D - 1` with `align_corners`):
    with `border`, a point beyond them along any axis is clamped to
    `[0, D - 1]` along every axis, and so is each cell read; with
    `reflection`, the point and each cell are reflected at the edges until
    they fall between them; with `zeros`, cells outside the input read 0.
    Cubic sampling pads its 4^r cells only, not the point. (ONNX's
    GridSample, as onnxruntime computes it.)
  }];
  let arguments = (ins Tract_FloatTensor:$input, Tract_FloatTensor:$grid,
                   DefaultValuedAttr<Tract_InterpolatorAttr,
                       "::mlir::tract::Interpolator::Linear">:$interpolator,
                   DefaultValuedAttr<Tract_GridPaddingAttr,
                       "::mlir::tract::GridPadding::Zeros">:$padding,
                   DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $grid attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_RoiAlignOp : Tract_InferredOp<"roi_align"> {
  let summary = "pool regions of an image, sampled bilinearly";
  let description = [{
    `input` is `N, C, H, W`, `rois` is `R, 4` (`x1, y1, x2, y2`, in units of
    the input times `1 / spatial_scale`) and `batch_indices` (`R`, integers)
    says which image each region is of. The result is
    `R, C, output_height, output_width`: each region, shifted by -0.5 with
    `half_pixel` (else at least 1 wide and high), is cut into that many
    bins, and each bin is the average (or, with `max`, the largest
    weighted corner) of `sampling_ratio` × `sampling_ratio` bilinear
    samples at the centres of a grid over it (`ceil(bin size)` per axis
    when `sampling_ratio` is 0). Samples more than a cell outside the
    image count as 0. (ONNX's RoiAlign, as onnxruntime computes it.)
  }];
  let arguments = (ins Tract_FloatTensor:$input, Tract_FloatTensor:$rois,
                   Tract_IntTensor:$batch_indices,
                   DefaultValuedAttr<BoolAttr, "false">:$max,
                   DefaultValuedAttr<I64Attr, "1">:$output_height,
                   DefaultValuedAttr<I64Attr, "1">:$output_width,
                   DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                   DefaultValuedAttr<F64Attr, "1.0">:$spatial_scale,
                   DefaultValuedAttr<BoolAttr, "true">:$half_pixel);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $rois `,` $batch_indices attr-dict `:`
    functional-type(operands, results)
  }];
}

def Tract_ResizeOp : Tract_InferredOp<"resize",
    [AttrSizedOperandSegments, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "resample to a new shape";
  let description = [{
    `sizes` is the output shape. Each output coordinate `x` of an axis maps
    to an input coordinate `x_in`, with `in`/`out` the axis' input and
    output lengths and `s` its scale: `scales[axis]` when `scales` (one
    positive value per axis) is given, otherwise `out / in`. Frontends pass
    the scales a model asked for: its output length `floor(in * s)` is
    rounded, so `out / in` may differ from `s`.

    * `half_pixel`: `(x + 0.5) / s - 0.5`;
    * `pytorch_half_pixel`: the same, but `0` when `out == 1`;
    * `half_pixel_symmetric`: `c * (1 - out / (s * in)) + (x + 0.5) / s - 0.5`
      with `c = in / 2` (keeps the resampled grid centred);
    * `align_corners`: `x * (in - 1) / (s * in - 1)`, `0` when `out == 1`
      (`s * in` is `out` unless a given scale's output length was rounded);
    * `asymmetric`: `x / s`;
    * `tf_half_pixel_for_nn`: `(x + 0.5) / s`;
    * `tf_crop_and_resize`: samples the box `roi` (`rank` starts then `rank`
      ends, in units of `in - 1`): `start * (in - 1) + x * (end - start) *
      (in - 1) / (out - 1)`, or `(start + end) * (in - 1) / 2` when
      `out == 1`; a coordinate outside `[0, in - 1]` gives
      `extrapolation_value`.

    `nearest` takes the input at `x_in` rounded by `nearest_mode`; `linear`
    interpolates the 2 inputs around `x_in`, `cubic` the 4 around it with
    Keys' kernel of parameter `cubic_coeff_a`. Neighbours outside the input
    repeat its edge, or, with `exclude_outside`, get weight 0, the others
    being renormalized to sum to 1.

    Scales that only the model's values decide come as `scale_values`, a
    1-D tensor of one scale per axis, read when the model runs; `scales` is
    then empty and `sizes` holds the dims bound to `floor(in * s)`. So does
    a region of interest, as `roi_values` (`rank` starts then `rank` ends)
    in place of `roi`.
  }];
  let arguments = (ins Tract_FloatTensor:$input,
                   Optional<Tract_FloatTensor>:$scale_values,
                   Optional<Tract_FloatTensor>:$roi_values,
                   Tract_ShapeAttr:$sizes,
                   DefaultValuedAttr<Tract_CoordTransformAttr,
                       "::mlir::tract::CoordTransform::HalfPixel">:$coord_transform,
                   DefaultValuedAttr<Tract_InterpolatorAttr,
                       "::mlir::tract::Interpolator::Nearest">:$interpolator,
                   DefaultValuedAttr<Tract_NearestModeAttr,
                       "::mlir::tract::NearestMode::Floor">:$nearest_mode,
                   DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$scales,
                   DefaultValuedAttr<F64Attr, "-0.75">:$cubic_coeff_a,
                   DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                   DefaultValuedAttr<DenseF64ArrayAttr, "{}">:$roi,
                   DefaultValuedAttr<F64Attr, "0.0">:$extrapolation_value);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`scales` $scale_values^ `:` type($scale_values))?
    (`roi` $roi_values^ `:` type($roi_values))? attr-dict `:` type($input)
    `->` type($output)
  }];
}
