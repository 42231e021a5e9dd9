//===- TractArrayOps.td - shape, indexing and axis operators --------------===//

//===----------------------------------------------------------------------===//
// Axis operators
//===----------------------------------------------------------------------===//

def Tract_AddAxisOp : Tract_InferredOp<"add_axis", [DeclareOpInterfaceMethods<Tract_AxisTrackingOpInterface, ["getResultPermutation", "readUnpermuted"]>, DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "insert a unit axis";
  let description = [{
    Inserts an axis of size 1 before `axis` (`axis` may equal the rank).
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_RmAxisOp : Tract_InferredOp<"rm_axis", [DeclareOpInterfaceMethods<Tract_AxisTrackingOpInterface, ["getResultPermutation", "readUnpermuted"]>, DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "remove a unit axis";
  let description = [{
    Removes `axis`, whose dim must be 1.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_MoveAxisOp : Tract_InferredOp<"move_axis", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>]> {
  let summary = "move one axis to another position";
  let description = [{
    Removes axis `from` and inserts it back at position `to`; a permutation
    is a sequence of moves.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$from,
                   Tract_AxisAttr:$to);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_ReshapeOp : Tract_InferredOp<"reshape", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "replace a run of axes by others of the same volume";
  let description = [{
    Replaces the `count` axes starting at `at` by the dims of `to`; the
    product of the replaced dims must equal the product of `to`
    (symbolically: `S*4` may become `S, 4`).

    ```mlir
    %1 = tract.reshape %0 {at = 1 : i64, count = 1 : i64, to = #tract.shape<[S, 4]>}
        : tensor<1x?xf32, #tract.dims<[4*S]>> -> tensor<1x?x4xf32, #tract.dims<[S]>>
    ```
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$at,
                   Tract_AxisAttr:$count, Tract_ShapeAttr:$to);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_BroadcastOp : Tract_InferredOp<"broadcast", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface, ["startsStream"]>]> {
  let summary = "broadcast to a shape of the same rank";
  let description = [{
    Each dim of the input must be 1 or equal the target dim; `shape` may be symbolic (`#tract.shape<[B, 3]>`).
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_ShapeAttr:$shape);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_TileOp : Tract_InferredOp<"tile", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>]> {
  let summary = "repeat a tensor along each axis";
  let description = [{ `output[i] = input[i] * multipliers[i]`. }];
  let arguments = (ins Tract_Tensor:$input, Tract_ShapeAttr:$multipliers);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Slicing, padding, concatenation
//===----------------------------------------------------------------------===//

def Tract_SliceOp : Tract_InferredOp<"slice", [DeclareOpInterfaceMethods<Tract_AxisTrackingOpInterface, ["getResultPermutation", "readUnpermuted"]>, DeclareOpInterfaceMethods<Tract_PulsifyOpInterface, ["startsStream"]>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "the range [start, end) of one axis";
  let description = [{
    `output[axis] = end - start`; `start` and `end` are dims (`#tract.dim<S-1>`), constant or symbolic, with `0 <= start <= end <= input[axis]`.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   Tract_DimAttr:$start, Tract_DimAttr:$end);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_DynSliceOp : Tract_InferredOp<"dyn_slice", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "a slice whose bounds are runtime values";
  let description = [{
    Slices `[start, end)` of `axis`, with `start` and `end` scalar tensors;
    `len` is the symbolic length `end - start` (checked at run time).
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$start,
                   Tract_IndexTensor:$end, Tract_AxisAttr:$axis,
                   Tract_DimAttr:$len);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $start `,` $end attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_DownsampleOp : Tract_InferredOp<"downsample", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "keep every stride-th element of an axis";
  let description = [{
    Keeps the elements `modulo, modulo + stride, …` of `axis`:
    `output[axis] = ceil((input[axis] - modulo) / stride)`.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntPositive]>:$stride,
                   DefaultValuedAttr<Tract_AxisAttr, "0">:$modulo);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Tract_PadOp : Tract_InferredOp<"pad", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>]> {
  let summary = "pad each axis before and after";
  let description = [{
    `output[i] = input[i] + before[i] + after[i]`; the border is a constant
    (`value`, zero by default), a reflection, or the edge value repeated.
  }];
  let arguments = (ins Tract_Tensor:$input, DenseI64ArrayAttr:$before,
                   DenseI64ArrayAttr:$after,
                   DefaultValuedAttr<Tract_PadModeAttr, "::mlir::tract::PadMode::Constant">:$mode,
                   OptionalAttr<TypedAttrInterface>:$value);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tract_ConcatOp : Tract_InferredOp<"concat", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, SameOperandsAndResultElementType]> {
  let summary = "concatenate along an axis";
  let description = [{
    All inputs have the same rank and element type and equal dims off `axis`; `output[axis]` is the sum of the inputs' dims there.
  }];
  let arguments = (ins Variadic<Tract_Tensor>:$inputs, Tract_AxisAttr:$axis);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Gather, scatter
//===----------------------------------------------------------------------===//

def Tract_GatherOp : Tract_InferredOp<"gather", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface>, DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "pick slices of an axis by index";
  let description = [{
    `output = input[..axis] ++ indices.shape ++ input[axis+1..]`; negative
    indices count from the end.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$indices,
                   Tract_AxisAttr:$axis);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Tract_GatherElementsOp : Tract_InferredOp<"gather_elements", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "pick elements along an axis by an index tensor";
  let description = [{ The result has the shape of `indices`. }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$indices,
                   Tract_AxisAttr:$axis);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Tract_GatherNdOp : Tract_InferredOp<"gather_nd", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "pick slices by multi-dimensional indices";
  let description = [{
    With `n = indices.shape[-1]` (static):
    `output = indices.shape[..-1] ++ input.shape[batch_dims + n..]`.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$indices,
                   DefaultValuedAttr<Tract_AxisAttr, "0">:$batch_dims);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_ScatterElementsOp : Tract_InferredOp<"scatter_elements", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "write updates into a copy of data at element indices";
  let description = [{
    For each element of `indices` (same shape as `updates`), writes the update at that index along `axis`, combining with the data by `reduction`. The result has the data's type.
  }];
  let arguments = (ins Tract_Tensor:$data, Tract_IndexTensor:$indices,
                   Tract_Tensor:$updates, Tract_AxisAttr:$axis,
                   DefaultValuedAttr<Tract_ScatterReductionAttr,
                       "::mlir::tract::ScatterReduction::None">:$reduction);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_ScatterNdOp : Tract_InferredOp<"scatter_nd", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "write update slices into a copy of data at nd indices";
  let description = [{
    Each row of the last axis of `indices` addresses a slice of `data`; `updates` has shape `indices.shape[..-1] ++ data.shape[n..]`, combined by `reduction`. The result has the data's type.
  }];
  let arguments = (ins Tract_Tensor:$data, Tract_IndexTensor:$indices,
                   Tract_Tensor:$updates,
                   DefaultValuedAttr<Tract_ScatterReductionAttr,
                       "::mlir::tract::ScatterReduction::None">:$reduction);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_OneHotOp : Tract_InferredOp<"one_hot"> {
  let summary = "one-hot encoding of indices";
  let description = [{
    Inserts an axis of size `dim` at `axis`; the element is `on` where the
    position equals the index, `off` elsewhere. The element type is `on`'s.
  }];
  let arguments = (ins Tract_IndexTensor:$indices, Tract_AxisAttr:$axis,
                   ConfinedAttr<I64Attr, [IntPositive]>:$dim,
                   TypedAttrInterface:$off, TypedAttrInterface:$on);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($output)";
  let hasFolder = 1;
}

def Tract_TopKOp : Tract_InferredOp<"topk", [DeclareOpInterfaceMethods<Tract_CostOpInterface>]> {
  let summary = "the k largest (or smallest) elements along an axis";
  let description = [{
    `k` is a scalar operand; `len` is its symbolic value, the size of the
    axis in both results. Indices are `i64`.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$k,
                   Tract_AxisAttr:$axis, DefaultValuedAttr<BoolAttr, "true">:$largest,
                   Tract_DimAttr:$len);
  let results = (outs Tract_Tensor:$values, Tract_IntTensor:$indices);
  let assemblyFormat = [{
    $input `,` $k attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_NonZeroOp : Tract_InferredOp<"non_zero"> {
  let summary = "the coordinates of the non-zero elements";
  let description = [{
    The result is `rank, len` (`i64`): column `j` holds the coordinates of
    the `j`-th non-zero element in row-major order (ONNX's NonZero, tract's
    `tract_onnx_non_zero`). `len` is the count, known when the model runs:
    a symbol the op binds.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_DimAttr:$len);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Tract_UniqueOp : Tract_InferredOp<"unique"> {
  let summary = "the distinct rows of a matrix";
  let description = [{
    `input` is `M, S`: `M` rows of `S` elements (frontends move the axis
    of interest first and merge the others). `values` is `len, S`, the
    distinct rows, in the order of their first occurrence or, with
    `sorted`, in increasing lexicographic order; `indices` (`len`) is where
    each first occurs, `inverse` (`M`) the position in `values` of each
    input row, `counts` (`len`) how many rows equal each (`i64`; ONNX's
    Unique). Rows compare element by element (NaN equals nothing). `len`
    is the count, known when the model runs: a symbol the op binds.
  }];
  let arguments = (ins Tract_Tensor:$input,
                   DefaultValuedAttr<BoolAttr, "true">:$sorted,
                   Tract_DimAttr:$len);
  let results = (outs Tract_Tensor:$values, Tract_IntTensor:$indices,
                      Tract_IntTensor:$inverse, Tract_IntTensor:$counts);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
}

def Tract_NonMaxSuppressionOp : Tract_InferredOp<"non_max_suppression"> {
  let summary = "select boxes by score, dropping those that overlap a better one";
  let description = [{
    `boxes` is `B, N, 4`, `scores` is `B, C, N`; `max_output` (`i64`),
    `iou_threshold` and `score_threshold` are single values. For each batch
    and class, the boxes scoring above `score_threshold` are taken from the
    best score down (the lower index first among equal scores), and each is
    kept unless its intersection over union with a box already kept for
    that batch and class is above `iou_threshold`, until `max_output` are
    kept (none when it is 0 or less). Boxes are corners `y1, x1, y2, x2`
    (either way round), or `x, y, width, height` around a centre with
    `center_point_box`; a box of negative area, or one whose extents do not
    overlap, overlaps nothing. The result is `len, 3` (`i64`): the batch,
    class and box of each kept box, by batch, class, then order of
    selection (ONNX's NonMaxSuppression, tract's
    `tract_onnx_non_max_suppression`). `len` is the count, known when the
    model runs: a symbol the op binds.
  }];
  let arguments = (ins Tract_FloatTensor:$boxes, Tract_FloatTensor:$scores,
                   Tract_IntTensor:$max_output,
                   Tract_FloatTensor:$iou_threshold,
                   Tract_FloatTensor:$score_threshold,
                   DefaultValuedAttr<BoolAttr, "false">:$center_point_box,
                   Tract_DimAttr:$len);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = [{
    $boxes `,` $scores `,` $max_output `,` $iou_threshold `,` $score_threshold
    attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_TriluOp : Tract_InferredOp<"trilu"> {
  let summary = "keep the upper or lower triangle of the last two axes";
  let description = [{
    Zeroes elements with `col < row + k` (upper) or `col > row + k` (lower);
    `k` is a scalar operand.
  }];
  let arguments = (ins Tract_Tensor:$input, Tract_IndexTensor:$k, BoolAttr:$upper);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $k attr-dict `:` functional-type(operands, results)
  }];
}

def Tract_RangeOp : Tract_InferredOp<"range", [DeclareOpInterfaceMethods<Tract_PulsifyOpInterface, ["startsStream"]>]> {
  let summary = "start, start + step, … up to end (excluded)";
  let description = [{
    Scalar operands; `len` is the symbolic length `ceil((end - start) / step)`.
  }];
  let arguments = (ins Tract_Tensor:$start, Tract_Tensor:$end,
                   Tract_Tensor:$step, Tract_DimAttr:$len);
  let results = (outs Tract_Tensor:$output);
  let assemblyFormat = [{
    $start `,` $end `,` $step attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Tract_RandomOp : Tract_Op<"random", [Pure]> {
  let summary = "pseudo-random numbers of a tensor's shape";
  let description = [{
    The result has the shape of `like` (whose values are not read) and a
    float element type. `uniform` draws from `[a, b)`, `normal` from the
    normal distribution of mean `a` and standard deviation `b` (Box-Muller).
    Element `i` (in row-major order) is a function of `seed` and `i` only,
    a counter-based generator (SplitMix64 of the seed and the index): every
    run of the model draws the same numbers for the same seed, however the
    loops are split. Models with random ops (ONNX RandomUniform,
    RandomNormal, their `Like` forms, Bernoulli, Dropout in training mode)
    get a distinct seed per op unless they give one.

    ```mlir
    %r = tract.random %x {distribution = #tract<random_distribution uniform>, a = 0.0 : f64, b = 1.0 : f64, seed = 7 : i64} : tensor<3x4xf32> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Tract_Tensor:$like,
                   Tract_RandomDistributionAttr:$distribution, F64Attr:$a,
                   F64Attr:$b, I64Attr:$seed);
  let results = (outs Tract_FloatTensor:$output);
  let assemblyFormat = "$like attr-dict `:` type($like) `->` type($output)";
  let hasVerifier = 1;
}

def Tract_BindDimsOp : Tract_Op<"bind_dims", [MemoryEffects<[MemWrite]>]> {
  let summary = "dims that the values of a 1-D integer tensor decide";
  let description = [{
    Names the values of `values`, a 1-D integer tensor, by the dims of
    `dims`, one per element: where a shape is decided by a tensor's values
    (the shape input of an ONNX Reshape that is a graph input), the importer
    declares a fresh symbol per element and binds it here, and the ops
    downstream carry those symbols in their types and compile once for all
    values. When the model runs, each entry that is a lone symbol no input
    determines is bound to its element; the other entries (constants, once
    `tract-set` or facts have substituted a symbol) are what the model
    expects of the values. The op has no result; its side effect keeps it
    alive and in order before the ops whose types use the symbols.

    ```mlir
    tract.bind_dims %shape {dims = #tract.shape<[N0, N1]>} : tensor<2xi64>
    ```
  }];
  let arguments = (ins Tract_IntTensor:$values, Tract_ShapeAttr:$dims);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

def Tract_BindSymbolOp : Tract_Op<"bind_symbol", [MemoryEffects<[MemWrite]>]> {
  let summary = "the run-time value of a symbol, from here on";
  let description = [{
    Made by the lowering only: `tract-bind-symbols` binds each symbol the
    inputs' dims determine at the top of a function, and the lowering of an
    op that computes a symbol (the `len` of dyn_slice, range, top-k,
    non_zero, non_max_suppression, unique; the entries of bind_dims) binds
    it after computing it. A symbolic dim is materialized from the nearest
    binding of its symbols before the point of use, so the values of the
    symbols live in the IR and a rolled-back rewrite takes its bindings with
    it. The bindings are erased once the function is lowered.

    ```mlir
    %s = tensor.dim %input, %c1 : tensor<1x?xf32>
    tract.bind_symbol "S" = %s
    ```
  }];
  let arguments = (ins StrAttr:$symbol, Index:$value);
  let assemblyFormat = "$symbol `=` $value attr-dict";
}

def Tract_ShapeValueOp : Tract_InferredOp<"shape_value"> {
  let summary = "dims, symbolic or not, as a 1-D i64 tensor";
  let description = [{
    The values of `dims` when the model runs: what `shape_of` gives of a
    tensor of that shape, without the tensor. tract-detect-kv-cache makes
    it of a cache's past, which the model no longer takes as an input.
    Folds to a constant when every dim is known.

    ```mlir
    %p = tract.shape_value {dims = #tract.shape<[B, 2, P, 64]>} : tensor<4xi64>
    ```
  }];
  let arguments = (ins Tract_ShapeAttr:$dims);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasFolder = 1;
}

def Tract_ShapeOfOp : Tract_InferredOp<"shape_of"> {
  let summary = "the shape of a tensor, as a 1-D i64 tensor";
  let description = [{ Folds to a constant when the shape is static. }];
  let arguments = (ins Tract_Tensor:$input);
  let results = (outs Tract_IntTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}
