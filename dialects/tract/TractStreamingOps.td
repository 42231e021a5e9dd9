//===- TractStreamingOps.td - pulse and transformer operators -------------===//

def Tract_DelayOp : Tract_InferredOp<"delay", [Tract_Stateful]> {
  let summary = "delay a stream by a number of frames (stateful)";
  let description = [{
    Outputs the frames of `axis` received `delay` frames earlier, plus
    `overlap` more frames before them: `output[axis] = input[axis] + overlap`.
    The missing history at the start of the stream is zero.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$delay,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$overlap);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_PulsePadOp : Tract_InferredOp<"pulse_pad", [Tract_Stateful]> {
  let summary = "the padding of a stream, applied pulse by pulse (stateful)";
  let description = [{
    Replaces frames of `axis` outside `[begin_input, end_input)` of the
    whole stream by the border (`mode`, `value`), so that a padded batch
    op can run on pulses. `before` and `after` are the batch padding.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$before,
                   Tract_DimAttr:$after,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$begin_input,
                   Tract_DimAttr:$end_input,
                   DefaultValuedAttr<Tract_PadModeAttr, "::mlir::tract::PadMode::Constant">:$mode,
                   OptionalAttr<TypedAttrInterface>:$value,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$overlap);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_PulseMaskOp : Tract_InferredOp<"pulse_mask", [Tract_Stateful]> {
  let summary = "replace frames of a stream outside [begin, end) (stateful)";
  let description = [{
    Used by pulsified models where a batch op must not see frames past the end of the stream: frames of `axis` outside `[begin, end)` of the whole stream become `value`. The shape is unchanged.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$begin,
                   Tract_DimAttr:$end, TypedAttrInterface:$value);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_StreamSliceOp : Tract_InferredOp<"stream_slice", [Tract_Stateful]> {
  let summary = "the frames of a fixed table at the stream's position (stateful)";
  let description = [{
    Made by tract-pulsify from a slice of a value that does not stream (a
    positional table, say) over `[start, start + S)`, `S` the stream length:
    each call gives the `pulse` frames of `axis` from `start + position`,
    `position` being the frames the stream has passed before the call.
    Past the end of the input, its last frame repeats.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$start,
                   ConfinedAttr<I64Attr, [IntPositive]>:$pulse);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_StreamPositionOp : Tract_Op<"stream_position", [Tract_Stateful]> {
  let summary = "the positions in the whole stream of a pulse's frames (stateful)";
  let description = [{
    Made by tract-pulsify from a `range` of the stream's length (the
    positions of the frames, which masks over time compare): each call
    gives `start + step * (position + k)` for the `pulse` frames `k` of the
    call, `position` being the frames the stream has passed before it.

    ```mlir
    %i = tract.stream_position {pulse = 4 : i64, start = 0 : i64, step = 1 : i64} : tensor<4xi64>
    ```
  }];
  let arguments = (ins I64Attr:$start, I64Attr:$step,
                   ConfinedAttr<I64Attr, [IntPositive]>:$pulse);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Tract_SdpaOp : Tract_InferredOp<"sdpa", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `q`, `k`, `v` have rank 3 (`b, seq, d`) or 4 (`b, heads, seq, d`, with
    query heads a multiple of key heads). The result is `b, [heads,] seq_q,
    d_v`. `scale` defaults to `1 / sqrt(d)`; `causal` masks positions after
    the query's, and excludes an explicit `mask`.
  }];
  let arguments = (ins Tract_FloatTensor:$q, Tract_FloatTensor:$k,
                   Tract_FloatTensor:$v, Optional<Tract_Tensor>:$mask,
                   OptionalAttr<F64Attr>:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tract_GdnRecurrentOp : Tract_InferredOp<"gdn_recurrent", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "the gated delta rule over a sequence (linear attention)";
  let description = [{
    `query` and `key` are `b, S, hk, w`, `value` is `b, S, hv, w` with `hv`
    a multiple of `hk` (value head `h` reads query and key head
    `h / (hv / hk)`), `log_decay` and `beta` are `b, S, hv`, `initial_state`
    is `b, hv, w, w`. For each step, with `q` and `k` normalized to unit
    length (`x / sqrt(sum(x * x) + 1e-6)`) and `q` scaled by `1 / sqrt(w)`:
    `state *= exp(log_decay)`; `delta = (v - k . state) * beta`;
    `state += k (x) delta`; `output = q . state`. The output has the value's
    shape and the query's type, the final state the initial state's type;
    everything is computed in f32. It is tract's `GatedDeltaNetRecurrent`
    (Qwen3.5's linear attention).
  }];
  let arguments = (ins Tract_FloatTensor:$query, Tract_FloatTensor:$key,
                   Tract_FloatTensor:$value, Tract_FloatTensor:$log_decay,
                   Tract_FloatTensor:$beta, Tract_FloatTensor:$initial_state);
  let results = (outs Tract_FloatTensor:$output,
                      Tract_FloatTensor:$final_state);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tract_CausalConv1dUpdateOp : Tract_InferredOp<"causal_conv1d_update", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "a causal depthwise convolution over time that carries its state, then SiLU";
  let description = [{
    `input` is `b, C, S`, `weight` is `C, k` (or any shape of `C * k` values
    ending in `k`), `initial_state` is `b, C, k`: the last `k` frames seen
    before. Over `full = concat(initial_state, input)` along time,
    `output[t] = silu(sum over j < k of weight[c, j] * full[c, t + 1 + j])`
    for the `S` new frames, and `final_state = full[S : S + k]`, the state
    of the next call. The output has the input's type, the final state the
    initial state's; the sums are computed in f32. It is tract's
    `CausalConv1dUpdate` (Qwen3.5's linear attention front).
  }];
  let arguments = (ins Tract_FloatTensor:$input, Tract_FloatTensor:$weight,
                   Tract_FloatTensor:$initial_state);
  let results = (outs Tract_FloatTensor:$output,
                      Tract_FloatTensor:$final_state);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tract_ApplyRopeOp : Tract_InferredOp<"apply_rope", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "rotary position embedding: x * cos + rotate_half(x) * sin";
  let description = [{
    `rotate_half` negates and swaps the two halves of the last axis: `[-x[h:], x[:h]]`. `cos` and `sin` have the input's rank and broadcast to it. The result has the input's type.
  }];
  let arguments = (ins Tract_FloatTensor:$input, Tract_FloatTensor:$cos,
                   Tract_FloatTensor:$sin);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_DynKvCacheOp : Tract_InferredOp<"dyn_kv_cache", [Tract_Stateful]> {
  let summary = "append to a key/value cache and return it (stateful)";
  let description = [{
    Concatenates the cached past (of length `past` on `axis`) with the input
    and returns the result, which becomes the cache of the next call:
    `output[axis] = past + input[axis]`.
  }];
  let arguments = (ins Tract_Tensor:$input, StrAttr:$name, Tract_AxisAttr:$axis,
                   Tract_DimAttr:$past);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}
