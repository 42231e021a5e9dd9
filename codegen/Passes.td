#ifndef TRACT_CODEGEN_PASSES_TD
#define TRACT_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractCpuAttentionKernels
    : Pass<"tract-cpu-attention-kernels", "func::FuncOp"> {
  let summary = "Attention in one loop nest over blocks of keys";
  let description = [{
    Lowers each `tract.sdpa` on f32 rank-4 tensors with a known head size
    (and at most an f32 mask) to one loop nest on tensors that never
    stores the scores (flash attention on the CPU): for each batch, query
    head and block of query rows, the keys come in blocks of one vector,
    whose scores are folded into a running maximum, a running sum of
    exponentials and an accumulator of weighted values. The blocks of query
    rows are sized for `register-file` f32 values in vector registers.

    Runs before `tract-lower-to-linalg`, which decomposes the other
    attentions (and one whose sizes an op computes at run time) into
    einsums and a softmax. Binds the function's symbols first, as
    `tract-bind-symbols` does, when it has an attention to lower.
  }];
  let options = [
    Option<"registerFile", "register-file", "int64_t", /*default=*/"512",
           "The f32 values the target's vector registers hold (512: 32 "
           "registers of 16, AVX-512)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def TractCpuQuantKernels : Pass<"tract-cpu-quant-kernels", "func::FuncOp"> {
  let summary = "8-bit integer products on the target's dot-product lanes";
  let description = [{
    Lowers each `tract.quant_matmul` to one loop nest on tensors whose inner
    step sums four byte products into each i32 lane, written in plain
    vector ops (`tract-convert-vector-to-llvm` selects AVX-512 VNNI's
    `vpdpbusd` for it where the target has one). The constant weights are laid out at compile time with
    their zero-point corrections; weights on the right are read as vectors
    of 16 channels by 4 k, and the input's four bytes broadcast; weights on
    the left (a convolution) broadcast their four bytes against panels of
    the input packed at run time. The requantization is the epilogue of
    each register tile. Column tiles are shared among threads (an
    `scf.forall`).

    With `signed-products`, the input's bytes are made signed rather than
    unsigned (their zero point moved by 128 to match), for a target whose
    instruction multiplies signed bytes by signed bytes (AArch64's `sdot`).

    `tract-lower-to-linalg` has no other lowering of the op: this pass runs
    before it.
  }];
  let options = [
    Option<"signedProducts", "signed-products", "bool", /*default=*/"false",
           "Products of signed input bytes by signed weight bytes (sdot) "
           "rather than unsigned by signed (vpdpbusd)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def TractCpuBlockQuantKernels
    : Pass<"tract-cpu-block-quant-kernels", "ModuleOp"> {
  let summary = "Products with Q4_0 or f16 weights that decode them in place";
  let description = [{
    Lowers each `tract.block_quant_matmul` to one loop nest on tensors that
    decodes its constant weights in its inner loop: they stay 4.5 bits
    (Q4_0) or 16 bits (f16) each in memory, laid out at compile time for
    vectors along the output columns. Register tiles are sized for
    `register-file` f32 values in vector registers; the column groups of
    the tiles are shared among threads (an `scf.forall`). Each kernel is a
    private function, `tract_block_quant_kernel`, called with the input,
    the weights and the sizes: the products of one shape share one (a
    decoder's layers), and bufferization analyses each kernel on its own
    rather than as part of one very large body (whose analysis grew with
    the square of the model's size: 17 s of a 135M-parameter decoder's 31 s
    compile).

    With `dot-product=vnni` or `sdot`, a product marked `q8_inputs` with
    fewer than 16 rows (a decoding step) rounds its rows to 8 bits per
    block of 32 (Q8_0) and sums the codes' byte products, in the form
    `tract-convert-vector-to-llvm` selects `vpdpbusd` or `sdot` for; the
    others decode the codes to f32.

    `tract-lower-to-linalg` has no other lowering of the op: this pass runs
    before it. Binds the function's symbols first, as `tract-bind-symbols`
    does, when it has a product to lower.
  }];
  let options = [
    Option<"registerFile", "register-file", "int64_t", /*default=*/"512",
           "The f32 values the target's vector registers hold (512: 32 "
           "registers of 16, AVX-512)">,
    Option<"dotProduct", "dot-product", "std::string", /*default=*/"\"none\"",
           "The target's byte dot-product instruction: vnni, sdot or none">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def TractCollapseDims : Pass<"tract-collapse-dims", "func::FuncOp"> {
  let summary = "Merge loop dims that stay contiguous in every operand";
  let description = [{
    Works on `linalg.generic` ops on tensors, before bufferization. Two
    neighbouring loop dims of the same iterator type that appear together,
    in order, in each operand (or in none) become one dim, and the operands
    are reshaped with `tensor.collapse_shape`, which costs nothing on a
    contiguous tensor. A 1×1 convolution's einsum over (n, f, h, w, c)
    becomes one over (n, f, h·w, c): a matrix product whose columns are the
    whole image, which the contraction kernels tile far better than rows of
    7 or 14 pixels. Element-wise ops become one long loop. An input
    broadcast along unit dims (a 1×C×1×1 bias read as `(n, c, 0, 0)`) is
    first read through a collapse_shape without them. An element-wise op
    on a product's result collapses exactly as the product did, so that
    the kernels can run it on the product's tiles; one writing into a
    padded tensor keeps its shape.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TractFuseElementwise : Pass<"tract-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse chains of element-wise linalg.generic ops";
  let description = [{
    Fuses an element-wise producer into its element-wise consumer when the
    consumer is its only user, so that a chain such as add → clip → mul is
    one loop nest and its intermediate tensors are never written. Rank-0
    ops are left alone (upstream fusion fails on them).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TractFusePads : Pass<"tract-fuse-pads", "func::FuncOp"> {
  let summary = "Element-wise producers write into padded tensors";
  let description = [{
    A convolution with padding reads a padded copy of its input: the
    padding value everywhere, the input in the interior. When the input is
    computed by an element-wise op (the activation before a depthwise
    convolution), that op now computes straight into the interior of the
    padded tensor (`tensor.insert_slice` into a filled tensor), and
    empty-tensor elimination lets bufferization write it in place: the
    padded copy of a 4.8 MB activation disappears. When the op's result
    has other readers too (a residual block's sum, which the next block
    both pads and adds), the fusion makes a second copy of the op; those
    readers then take the interior of the padded tensor instead, and the
    first copy goes.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TractConcatInPlace : Pass<"tract-concat-in-place", "func::FuncOp"> {
  let summary = "Producers write their part of a concatenation in place";
  let description = [{
    A `tensor.concat` of static shape whose inputs are computed into empty
    tensors (through destination-style ops and reshapes) becomes
    `tensor.insert_slice`s into one empty tensor made at the top of the
    function, and each such input's empty tensor becomes its slice of it.
    Bufferized, the producers write into the concatenation's buffer and the
    insertions copy nothing. A concatenation whose inputs are the first
    inputs of another (a dense block's, each layer one more) becomes the
    slice of the longer one's buffer that holds them, taken once they are
    inserted: each input is written once, and none is copied.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TractPrivateFills : Pass<"tract-private-fills", "func::FuncOp"> {
  let summary = "Each linalg op that writes into a fill, a broadcast or an "
                "empty tensor gets its own";
  let description = [{
    CSE merges identical `linalg.fill`s and `linalg.broadcast`s on tensors:
    the zeros or the bias that several products accumulate into become one.
    Bufferized, each product would write into a copy of that one buffer.
    Each use of a fill or a broadcast as the init of a linalg op (but the
    first, when no other op reads it) gets its own, on its own empty
    tensor, right before it: the kernels then fuse it into their tiles.

    CSE merges empty tensors of one shape too, and bufferization then
    shares their buffer among the ops that write into them: an activation
    after a product could write into the buffer the product reads, which
    the kernels cannot do on the product's tiles. Each op that writes into
    a shared empty tensor (as its init, or through a reshape that only
    inits use), but the first, gets an empty tensor of its own.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TractKernelResultsInPlace
    : Pass<"tract-kernel-results-in-place", "ModuleOp"> {
  let summary = "A kernel function writes into the buffer its caller passes";
  let description = [{
    After bufferization, a kernel function (`tract.kernel`, such as
    `tract_block_quant_kernel`) that writes its output into a buffer its
    caller passed returns that argument. Deallocation would then take the
    result for a buffer the caller does not own: it frees it at the end of
    the caller's body behind a test of its address, which no pass can move
    earlier. This pass drops each result that is one of the function's
    arguments (through casts), and each call then uses the buffer it
    passed, which its caller allocated and frees. The calls keep their
    attributes.

    A function that returns such an output gets it copied by One-Shot
    Bufferize into a buffer of its own (`%b = alloc; linalg.copy ins(%a)
    outs(%b); return %b`): where nothing uses `%a`, an allocation of the
    same block and type, after the copy, the function returns `%a` and the
    copy goes (a 512-token prompt's logits: 100 MB copied, and held twice).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TractFreeEarly : Pass<"tract-free-early", "func::FuncOp"> {
  let summary = "Free each buffer after its last use, not at the end";
  let description = [{
    Ownership-based deallocation frees a buffer at the end of the block
    that allocated it, and `tract-outline-steps` at the end of the step
    that last uses it: every intermediate of a step stayed allocated until
    the step ended, so the runtime's buffer pool could not hand one op's
    freed buffer to the next (a 135M-parameter decoder's prompt kept 56
    such buffers more than it needed). This pass moves each
    `memref.dealloc` of a `memref.alloc` in the same block, or of an
    argument of that block (a step frees what earlier steps hand it), to
    just after the op of that block that last uses the buffer or a view of
    it. A buffer whose uses cannot all be seen (passed to a call, returned
    or yielded, its address taken as an integer) stays freed where it was.

    The CPU pipeline runs it once the kernels are made, before
    `tract-share-kernels` turns loop nests into calls: the kernels' passes
    look for a buffer's death in the ops that follow a product, and a
    dealloc moved between a product and the copy after it kept a 1x1
    convolution from writing into its consumer's buffer.
  }];
}

def TractFillBorders : Pass<"tract-fill-borders", "func::FuncOp"> {
  let summary = "Fill only the border of a padded buffer";
  let description = [{
    A padded activation is a buffer filled with the padding value whose
    interior an op then overwrites (`tract-fuse-pads`). When the first op
    to touch the buffer after the fill overwrites all of a static subview
    without reading it (an op of parallel loops writing it through the
    identity map, a copy), only the slabs around that subview are filled:
    along each axis, before and after the interior, within the interior on
    the axes before it and whole on those after. For a depthwise
    convolution's 114×114×96 input, the 5 MB fill becomes one of 88 KB.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect"
  ];
}

def TractCpuPackWeights : Pass<"tract-cpu-pack-weights", "func::FuncOp"> {
  let summary = "Transpose constant operands of products for the kernels";
  let description = [{
    Works on multiply-accumulate linalg ops on tensors (matmuls, einsums,
    convolutions) before bufferization. The contraction kernels put one
    loop dim on the vector lanes (the rule is shared, `LaneChoice.h`): the
    output's innermost dim, or another output dim that fills clearly more
    lanes when the reduction is long (the output channels of a
    convolution over a 7×7 map). When the operand that walks that dim is a
    constant holding it on another axis (a Linear layer's `(out, in)`
    weight, a convolution's `(f, c, kh, kw)` kernel), the constant is
    transposed here, once, so that the dim is its last axis, and the op's
    indexing map follows (a named convolution becomes a `linalg.generic`).
    A constant slice of a constant that such an op reads (the gates of a
    recurrent layer, cut from one weight) is folded into a constant first.

    With `panel` P, a constant matrix `(k, n)` read along n (a product's
    weights) whose n is a multiple of P greater than P is laid out in
    panels `(n / P, k, P)`, read through `(n floordiv P, k, n mod P)`: a
    column tile of the kernels (never wider than a panel, and never
    crossing one) then reads one contiguous run of memory over all k,
    instead of a slice of every row. A product of few rows (a decoding
    step) streams the weights at the memory's speed that way.

    The packing is one pass over the constant's bytes. A packed constant
    of at least `own-memory-bytes` is a `dense_resource` blob in memory
    mapped for it (in huge pages where the system allows), not a copy in
    the context's attributes: a 1B-parameter model's 4 GB of matrices
    were copied twice there, and on a virtual machine each first touch
    of a page costs more than the copy (the packing took 28 s of the
    model's 49). The JIT links the compiled code to the blob's memory.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes in one vector register">,
    Option<"panel", "panel", "int64_t", /*default=*/"0",
           "columns per panel of a constant matrix (0: no panels)">,
    Option<"ownMemoryBytes", "own-memory-bytes", "int64_t",
           /*default=*/"65536",
           "Size from which a packed constant is a resource blob in memory "
           "of its own rather than an attribute">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TractCpuWinograd : Pass<"tract-cpu-winograd", "func::FuncOp"> {
  let summary = "3×3 convolutions of stride 1 in Winograd's F(2×2, 3×3)";
  let description = [{
    Works on `linalg.conv_2d_nhwc_hwcf` on tensors (the channels-last
    convolutions), before bufferization. A 3×3 convolution of stride and
    dilation 1 whose kernel is an f32 constant and whose output starts
    from a fill or a per-channel bias broadcast is computed in blocks of
    2×2 outputs with Winograd's minimal filtering algorithm F(2×2, 3×3):
    16 multiplications per (input channel, output channel) and block,
    where the convolution takes 36.

    * The kernel's transform `U = G g Gᵀ` is computed here, once, as a
      constant `(16, c, f)`.
    * The input, padded with zeros to whole blocks, becomes
      `V = Bᵀ d B` of each block's 4×4 patch, `(blocks, 16, c)`: one
      element-wise op over (n, block row, block column, point, c) that
      sums the patch's 16 values times their coefficients for the point.
    * The products are one `linalg.generic` over (block, point, f, c):
      for each point, `(blocks, c) × (c, f)`, which the contraction
      kernels run with the blocks as rows.
    * The output transform `Y = Aᵀ M A` is one element-wise op over the
      2×2 positions of each block, starting from the bias; outputs past
      an odd height or width are cut off.

    The blocks are the outermost axis of all three, so that on several
    threads each thread reads the blocks it wrote (on a machine where a
    line written by the other core costs tens of nanoseconds to read).

    Only convolutions of at least `min-tiles` blocks, of at least
    `min-channels` input and output channels and of at least `min-work`
    multiply-adds change: on a 5×5 map the transformed weights (16/9 of
    the kernel's size) are read for too few blocks, and on 16 channels the
    transforms cost more than they save.
  }];
  let options = [
    Option<"minTiles", "min-tiles", "int64_t", /*default=*/"16",
           "Fewest 2×2 output blocks (batch × blocks per image)">,
    Option<"minChannels", "min-channels", "int64_t", /*default=*/"32",
           "Fewest input and output channels">,
    Option<"minWork", "min-work", "int64_t", /*default=*/"0",
           "Fewest multiply-adds of the convolution">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TractCpuContractionKernels
    : Pass<"tract-cpu-contraction-kernels", "func::FuncOp"> {
  let summary = "Register-tiled vector kernels for contractions on buffers";
  let description = [{
    Rewrites every f32 `linalg` op on buffers whose body is
    `out + a * b` (matmul, batch matmul, einsum contractions, convolutions
    and depthwise convolutions, whatever their strides and dilations) into
    loops around a register tile of `rows` × `cols` accumulators:

    * one parallel dim is the vector dim (`cols` wide, `lanes` f32 per
      register, two registers per row): the output's innermost, or another
      output dim that fills more lanes over a long reduction (the rule of
      `tract-cpu-pack-weights`);
    * another parallel dim of the operand that does not vary along the
      vector dim gives the rows: each step broadcasts one scalar of that
      operand per row and adds its product with one vector of the other
      operand (shared by all rows for a matmul or a convolution, one per
      row for a depthwise convolution);
    * every reduction dim is a loop inside the tile, the accumulators stay
      in registers across it (`scf.for` iter_args) and the output tile is
      read once and written once;
    * a long single reduction dim (a matmul's k) is cut into blocks of
      `k-block` so that the panel of the vector operand stays in cache;
    * when the rows of the broadcast operand that the column tiles all
      read (its rows by the block of k) exceed `row-block-bytes`, the row
      tiles go in blocks that fit, each walking all the column tiles, so
      that those rows come from L2 rather than from memory once per column
      tile.

    Sizes that a tile does not divide end with a smaller tile of the exact
    remainder when static, or with single-row and single-column tiles when
    known only at run time, so that every vector has a static size and no
    masking is needed.

    Lane-wise ops around the product fuse into its tiles. A prologue (the
    op that last fills the output before the product: a bias broadcast,
    zeros) computes the accumulators' first value instead of being stored
    and read back. An epilogue (the next op to read the output, when it
    writes elsewhere and the output is dead after it: bias, activation,
    residual add) runs on the accumulators before the one write, into its
    own buffer, or in place, into the product's own buffer when it reads
    each element only where it writes it; the product moves down to the epilogue when nothing in
    between writes what it reads, and its own buffer is never written.
    A k cut in blocks keeps its partial sums in the product's own buffer:
    the first block starts from the prologue, the last runs the epilogue.

    Made for several threads (`threads`), a large enough op runs its whole
    nest once per thread, in an `scf.parallel` over `threads` chunks, each
    chunk on its run of one loop's iterations: an outer dim, the full
    column tiles or the full row tiles, whichever has the shortest slowest
    run (the last chunk also takes the remainder tiles; `ParallelChoice.h`).
    One fork and join per op; each output element is still summed by one
    thread in the same order.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "f32 lanes in one vector register">,
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "rows of the register tile (broadcast operand)">,
    Option<"vectorsPerRow", "vectors-per-row", "int64_t", /*default=*/"2",
           "vector registers per row of the register tile">,
    Option<"kBlock", "k-block", "int64_t", /*default=*/"256",
           "block of a single reduction dim kept in cache">,
    Option<"rowBlockBytes", "row-block-bytes", "int64_t",
           /*default=*/"262144",
           "bytes of the broadcast operand's rows (over one block of k) that "
           "a block of row tiles reads while it walks all the column tiles "
           "(0: no row blocks)">,
    Option<"prefetchBytes", "prefetch-bytes", "int64_t", /*default=*/"0",
           "weights (a product's vector operand) from which each step of a "
           "column tile prefetches, into L2, what the next column tile "
           "reads at that step (0: never)">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "threads the code is made for: one loop of a large enough op "
           "becomes an scf.parallel">,
    Option<"threadingThreshold", "threading-threshold", "double",
           /*default=*/"-1",
           "tract's --threading-threshold: ops of at least this many flops "
           "run on threads, smaller ones serially (below 0: the cost model "
           "decides)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TractCpuVectorLoops : Pass<"tract-cpu-vector-loops", "func::FuncOp"> {
  let summary = "Linalg ops on buffers as loops of vector tiles";
  let description = [{
    Rewrites each linalg op on buffers whose output's innermost dim is
    parallel (maps, broadcasts, fills, copies, transposes, pools,
    reductions over outer axes) into loops over the other dims around
    vector tiles of that dim: `4 × lanes` wide for maps, `2 × lanes` for
    reductions, then tiles of at most `lanes` for a static rest and single
    lanes for a rest known only at run time. Each input is read as a vector
    along the dim (contiguous, every n-th element through a shuffle for
    small strides, a strided view otherwise) or as one scalar broadcast to
    all lanes; the body runs unchanged on vectors (`linalg.index` of the
    vector dim becomes a step vector); reduction dims become loops around
    the output tile, which stays in registers. A pool (an outer dim that an
    input reads shifted by the reduction dims, `ow * stride + kw`, with at
    most 27 static taps) instead computes 4 outputs along that dim at once,
    the taps unrolled around their 4 accumulators: 4 chains of maxima or
    sums interleave, and the taps neighbouring windows share are read once
    (a 3×3 max pool of stride 1 over 28×28×192: 0.138 → 0.089 ms). A
    reduction whose output a fill sets right before it (a max pool's lowest
    value, a sum's zeros) starts its accumulators from the fill's value
    instead of reading the output, and the fill's own pass goes.
    A transpose (a copy of 32-bit items whose input's unit-stride last
    axis is an outer dim of the output) goes in blocks of `lanes` ×
    `lanes`: `lanes` rows read whole, log2(`lanes`) rounds of interleaving
    row i with row i + `lanes`/2, `lanes` rows written whole (56×56×96
    channels last to channels first: 0.312 → 0.111 ms), instead of a
    vector gathered lane by lane.

    Reductions that an input walks along its last axis, contiguously (a
    global pool, the max and the sum of a softmax), put that axis on the
    lanes instead: the body combines each step into a vector accumulator
    four registers wide (a sum, product, max or min), and one horizontal
    reduction per output element ends it.

    Ops whose body has regions or non-lane-wise ops (gathers with
    `tensor.extract`) are left for the loop lowering. `memref.copy` between
    non-contiguous buffers (the interior of a padded tensor) becomes a
    `linalg.copy` and is tiled too.

    Made for several threads (`threads`), a large enough op is cut into
    one chunk per thread along an outer dim or its full vector tiles, as
    the contraction kernels cut theirs; these loops are bound by memory, so
    each element read or written counts as much work as 16 flops.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "lanes of one vector register for 32-bit elements">,
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "threads the code is made for: one loop of a large enough op "
           "becomes an scf.parallel">,
    Option<"threadingThreshold", "threading-threshold", "double",
           /*default=*/"-1",
           "tract's --threading-threshold: ops of at least this many flops "
           "run on threads, smaller ones serially (below 0: the cost model "
           "decides)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TractCpuParallelLoops : Pass<"tract-cpu-parallel-loops", "func::FuncOp"> {
  let summary = "Ops the kernels leave, as parallel loops when large";
  let description = [{
    Runs after the contraction kernels and the vector loops, on the linalg
    ops on buffers they leave to the loop lowering (gathers, resizes, ops
    with regions or non-float reductions). When the code is
    made for several threads and such an op is large enough to pay a fork
    and a join (the estimate of the vector loops), it becomes loops (as
    `convert-linalg-to-loops` makes them) of which one, a parallel dim
    outside every reduction, is an `scf.parallel` that
    `convert-scf-to-openmp` shares among threads: the loop that would
    finish soonest, as the kernels choose theirs. One dim only, since a
    collapsed OpenMP loop recomputes each index with divisions. Smaller
    ops, and ops already inside a parallel loop, are left to
    `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"1",
           "threads the code is made for">,
    Option<"threadingThreshold", "threading-threshold", "double",
           /*default=*/"-1",
           "tract's --threading-threshold: ops of at least this many flops "
           "run on threads, smaller ones serially (below 0: the cost model "
           "decides)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TractOutlineSteps : Pass<"tract-outline-steps", "ModuleOp"> {
  let summary = "Split the large functions of a bufferized model into steps";
  let description = [{
    A model's body is one function holding the code of every op, and
    what comes after works a function at a time: MLIR's function passes
    run on threads, one function each; OpenMP's translation outlines each
    parallel region by scanning the whole function it is in (a cost in the
    square of the model's size: DenseNet-121 spent 24 s there); LLVM's
    optimization and code generation run on threads, a partition of the
    module's functions each. This pass cuts each function whose body is a
    single block of more than `min-ops` operations into runs of top-level
    operations of about `step-ops` each, every run moved into a private
    function `NAME.stepN` that the body calls in order. A run takes the
    values it uses from before as arguments (constants, including
    `memref.get_global`, are cloned into it instead, so that the kernels
    still see them) and returns those used after it. A run never ends
    where a stack allocation (`memref.alloca`) it made is still in use.
    A buffer argument whose contents the body never reads after the step
    (the next op to touch it frees it or overwrites all of it, or none
    does) is marked `tract.dead_after`: the kernels may then fuse into a
    product writing it the op that reads it, as they do for a buffer the
    step allocates itself. So is a buffer the step returns only for a later
    step to overwrite whole (bufferization reusing it). A run never ends
    between a product and the op that next reads its result (its
    epilogue, which the kernels fuse only within a step).

    The cut is not free: a step's code sees its buffers as arguments that
    LLVM must assume may alias, where the whole body saw the allocations
    themselves (MobileNetV2 ran 5% slower cut into steps of 64 ops).
    Models of up to `min-ops` ops at this stage (MobileNetV2 has about
    800, ResNet-18 fewer) stay whole; DenseNet-121's translation to LLVM
    IR went from 9.7 s to 0.7 s.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"1000",
           "Operations (nested ones included) a function needs before it "
           "is split">,
    Option<"stepOps", "step-ops", "int64_t", /*default=*/"250",
           "About how many operations each step holds">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def TractShareKernels : Pass<"tract-share-kernels", "ModuleOp"> {
  let summary = "Compile each kernel once, however many ops run it";
  let description = [{
    A language model's layers, a ResNet's blocks, a pulsed model's
    repeated cells: the same op on tensors of the same shapes, each with
    its own weights, comes back many times, and every copy of its kernel
    went through the rest of the pipeline and LLVM again (SmolLM2-135M's
    30 layers spent 15 s in LLVM where 4 layers of the same width spent
    1.5). This pass runs once the kernels are generated (loops over
    buffers) and compares the top-level ops with regions of each function
    body, structurally: the same ops, attributes, types and constants,
    and the same pattern of use of the values they take from outside.
    Each kind of which there are at least two, and of at least `min-ops`
    operations (nested ones included), becomes one private function
    `tract_kernel_N` that takes those values (buffers, weights' globals,
    sizes) as arguments; every copy becomes a call to it. Constants
    (`arith.constant`) are cloned into the function, so the kernel's code
    still sees its sizes and offsets.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"8",
           "Operations (nested ones included) an op needs to be shared">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def TractCpuInlineAllocaScopes
    : Pass<"tract-cpu-inline-alloca-scopes", "func::FuncOp"> {
  let summary = "Inline the stack scopes of parallel loop bodies";
  let description = [{
    Runs after `convert-scf-to-openmp`, which wraps the body of each
    worksharing loop in a `memref.alloca_scope` so that stack allocations
    do not pile up across iterations. That op holds a single block, which
    `convert-scf-to-cf` then breaks into several. The kernels allocate
    nothing on the stack, so a scope whose body has no `memref.alloca`
    (directly, outside nested scopes) is inlined into its parent; a scope
    that allocates is left alone.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TractCpuForkIf : Pass<"tract-cpu-fork-if", "func::FuncOp"> {
  let summary = "A parallel region whose loop runs once stays on its thread";
  let description = [{
    Runs after `convert-scf-to-openmp`. A kernel whose loop sizes are known
    only at run time shares its work only when it is large enough: its
    chunk count is then computed (`count` or 1; the kernels' `forkPoints`).
    Each `omp.parallel` whose worksharing loop has one dim, constant lower
    bound and step and an upper bound computed before the region gets the
    `if` clause "at least two iterations": with one, the OpenMP runtime
    runs the region on the calling thread without waking the others (a
    decoding step's element-wise ops on one token, each a fork and a join
    before, took ten times their time on two threads).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::omp::OpenMPDialect"
  ];
}

def TractApproximateMath : Pass<"tract-approximate-math", "func::FuncOp"> {
  let summary = "Vector exp, tanh, log and erf as polynomials";
  let description = [{
    LLVM has no vector exp, tanh, log or erf for a CPU: a `math.exp` on a
    vector of 16 lanes becomes 16 calls to libm. This pass rewrites the f32
    vector ops `math.exp`, `expm1`, `tanh`, `log`, `log1p`, `log2` and
    `erf` (from the vector loops: sigmoid, softmax, tanh of recurrent
    cells, GELU) into MLIR's polynomial approximations, which run on the
    vector registers and stay within the tolerance of `--approx
    approximate` (erf: 2.4e-7 at most from libm's over [-6, 6]; ConvNeXt's
    GELUs went from 2 ms to 0.3 ms each). Scalar math is left to libm.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TractConvertVectorToLLVM : Pass<"tract-convert-vector-to-llvm", "ModuleOp"> {
  let summary = "Lower the vector dialect to LLVM with the target's index";
  let description = [{
    What `convert-vector-to-llvm` does with its default options (the
    progressive lowering of transfers, masks, broadcasts, shape casts and
    contractions, then the conversion to the LLVM dialect), with `index` as
    wide as the module's data layout says (or `index-bitwidth`):
    upstream's pass always converts it to i64, so on a 32-bit target the
    memref descriptors it makes would not match those of the other
    conversions.

    With `dot-product=vnni`, each sum of four byte products per lane as
    `tract-cpu-quant-kernels` writes it (a `vector.multi_reduction <add>`
    over the last dim of `16x4` products of unsigned by signed bytes, each
    widened to i32) becomes AVX-512 VNNI's `vpdpbusd` (an LLVM intrinsic,
    which must not meet the bufferization: its memory effects are unknown);
    with `dot-product=sdot`, the same sums of signed by signed bytes become
    four of AArch64's `sdot` on 128-bit vectors.
  }];
  let options = [
    Option<"indexBitwidth", "index-bitwidth", "unsigned", /*default=*/"0",
           "Bits of index; 0 takes them from the data layout">,
    Option<"dotProduct", "dot-product", "std::string", /*default=*/"\"none\"",
           "The byte dot-product instruction to select: vnni, sdot or none">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

#endif // TRACT_CODEGEN_PASSES_TD
