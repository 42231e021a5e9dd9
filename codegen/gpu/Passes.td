#ifndef TRACT_GPU_CODEGEN_PASSES_TD
#define TRACT_GPU_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractGpuKernelsFromLinalg
    : Pass<"tract-gpu-kernels-from-linalg", "ModuleOp"> {
  let summary = "Outline linalg ops on buffers into GPU kernels";
  let description = [{
    Runs after bufferization. Each linalg op whose operands are strided
    memrefs of element types the device handles, and whose body is
    arith and math (plus `linalg.index`, and constants from above), becomes
    a `gpu.func` in the `gpu.module @tract_kernels` and a `gpu.launch_func`
    in its place; everything else stays on the host, and so do ops of
    fewer static iterations than `min-work`. A `memref.copy` between
    memrefs of one shape (a concatenation's parts, an input into the
    interior of its padded buffer) becomes such an op first, so that it is
    a kernel too rather than host work between the launches.

    A kernel runs one invocation per iteration of the op's parallel loops
    (a 1-D workgroup of `workgroup-size`, a 2-D grid when the groups exceed
    65535 along x); the reduction loops run in the invocation, from the
    output's value (linalg's init). The operands reach the kernel as 1-D
    buffers over their whole span (`memref.reinterpret_cast` of their base;
    for a view of a whole buffer of the identity layout, that buffer's
    elements, so that all its views are one buffer to the runtime), and
    their offsets and strides, the loop bounds and the number of
    invocations, as one `memref<?xi32>` of parameters, so that dynamic
    shapes and layouts need no specialization. A parameter known while
    compiling (a static bound, offset or stride) is a constant in the
    kernel instead, which the device's compiler folds (division by a
    constant, a reduction of known length); the kernel reads the others
    once, at its start. When all are known, the table is a constant
    (`memref.global` `@__tract_kernel_parameters`), which the runtime
    uploads once. The launch's `buffer_uses` says
    how the kernel uses each buffer, as the runtimes' flags: read (1),
    written (2, and read too unless the kernel writes every element of the
    span without reading it first: an output of the identity layout that
    the payload does not read; what the kernel does not write must come
    back as it was), constant (4: a view of a `memref.get_global`).

    ```
    kernel params: [invocations, bound(d0) .. bound(dn-1),
                    offset(x), stride(x, 0) .., offset(y), stride(y, 0) ..]
    ```

    A product (two inputs and an output through projected permutations,
    one row loop m of the first input and the output, one column loop n of
    the second and the output, one reduction k of both inputs, and batch
    loops of all three; element types of 8 bits or more; static extents of
    at least a tile) gets a tiled kernel instead: a workgroup of
    `tile-size` x `tile-size` / 4 invocations per `tile-size` square tile
    of the output (columns along x, rows along y, batches along z), each
    invocation 4 rows of one column. Step by step along k, the workgroup
    copies a tile of each input into workgroup memory (the kernel's two
    workgroup attributions; zero past the edges), waits (`gpu.barrier`),
    reduces there (each element of the second tile read once for 4 rows),
    and waits again.
  }];
  let options = [
    Option<"workgroupSize", "workgroup-size", "int64_t", /*default=*/"64",
           "Invocations per workgroup">,
    Option<"minWork", "min-work", "int64_t", /*default=*/"0",
           "Ops whose loops iterate fewer times than this in all (static "
           "extents) stay on the host: shape arithmetic, which a launch "
           "would cost more than">,
    Option<"tileSize", "tile-size", "int64_t", /*default=*/"16",
           "The side of the output tiles of products (a multiple of 4: "
           "tile-size^2 / 4 invocations per workgroup, 4 rows each); 0: "
           "products get no tiled kernel">,
    Option<"allowedTypes", "types", "std::string",
           /*default=*/"\"f32,i32,i1\"",
           "Element types the device computes and stores, comma-separated "
           "(f16, f32, f64, i1, i8, i16, i32, i64)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::spirv::SPIRVDialect"
  ];
}

def TractGpuToSpirv : Pass<"tract-gpu-to-spirv", "ModuleOp"> {
  let summary = "Convert the GPU kernels to SPIR-V modules for Vulkan";
  let description = [{
    Each `gpu.module` gets a `spirv.module` for Vulkan's compute shaders
    next to it (the gpu.module stays for the launches that name it), with
    the capabilities of `capabilities` (what the device supports): the
    kernels' arguments are storage buffers at descriptor set 0, binding i,
    as upstream's `convert-gpu-to-spirv` does, and their bodies convert
    with arith's, math's, scf's, memref's and index's patterns (upstream's
    pass has no math). Index is 32 bits wide. A kernel's workgroup
    attributions, which the GPU patterns do not take, become workgroup
    allocations in its body first, then Workgroup variables of the shader.
  }];
  let options = [
    ListOption<"capabilities", "capabilities", "std::string",
               "SPIR-V capabilities beyond Shader (Int8, Int16, Int64, "
               "Float16, Float64, StorageBuffer8BitAccess, "
               "StorageBuffer16BitAccess)">
  ];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def TractGpuLaunchWithRuntime
    : Pass<"tract-gpu-launch-with-runtime", "ModuleOp"> {
  let summary = "Embed the kernels' code and launch them through the GPU "
                "runtime";
  let description = [{
    For Vulkan (`api=vulkan`), each `spirv.module` is serialized into a
    constant global of 32-bit words; for CUDA (`api=cuda`), each
    `gpu.binary` holds the PTX of its module (from `gpu-module-to-binary`)
    and becomes a NUL-terminated string, or with `cuda-toolkit` a fatbin
    that holds the module assembled for its chip (ptxas) and its PTX, for
    newer chips (fatbinary); for Metal (`api=metal`), each
    kernel of a `spirv.module` becomes a NUL-terminated string of MSL, from
    SPIRV-Cross. Each `gpu.launch_func` becomes a call of the runtime's

    ```c
    int32_t tract_gpu_record(const uint32_t *spirv, int64_t words,
                             const char *entry, int32_t groups_x,
                             int32_t groups_y, int32_t groups_z,
                             int32_t num_buffers, void *const *pointers,
                             const int64_t *bytes, const int32_t *flags);
    ```

    (`runtime/tract_gpu.h`), or of `tract_cuda_record`
    (`runtime/tract_cuda.h`: the same with the block size after the grid),
    or of `tract_metal_launch` (`runtime/tract_metal.h`: as CUDA's, with
    the MSL and the name of its kernel function),
    with each buffer's aligned pointer, its size in bytes, and its use from
    the launch's `buffer_uses`. For Vulkan and CUDA, the launch only joins
    the open batch: a call of `tract_gpu_sync` (`tract_cuda_sync`) runs the
    batch before the first host
    op that may touch memory its launches use (anything but pure ops,
    launches, stores into a launch's parameters, allocations, the freeing
    of a buffer the batch only reads, and ifs of those), and at the end of
    each block. Before the freeing of a buffer the batch writes (of the
    identity layout), a call of `tract_gpu_discard` (`tract_cuda_discard`)
    on its address and bytes tells the runtime that those bytes are dead,
    so that the batch goes on and copies nothing back there. A failed launch or sync calls `tract_fail`
    with the kernel's name, so the model's entry returns an error. The
    gpu, spirv and binary modules are erased. With `spirv-dir`, each module's
    words are also written to `<dir>/<module>.spv`, for spirv-val; with
    `msl-dir`, each kernel's Metal Shading Language, from SPIRV-Cross, to
    `<dir>/<kernel>.metal` (buffer i of the kernel is `[[buffer(i)]]`;
    SPIRV-Cross's reflection must find each buffer the kernel uses at its
    binding).
  }];
  let options = [
    Option<"api", "api", "std::string", /*default=*/"\"vulkan\"",
           "The runtime the launches call: vulkan, cuda or metal">,
    Option<"ptxDir", "ptx-dir", "std::string", /*default=*/"",
           "A folder to write each PTX module to, as <module>.ptx">,
    Option<"cudaToolkit", "cuda-toolkit", "std::string", /*default=*/"",
           "A CUDA toolkit whose bin/ptxas and bin/fatbinary turn each PTX "
           "module into a fatbin (the cubin for the PTX's chip, and the "
           "PTX); \"\": the PTX alone">,
    Option<"spirvDir", "spirv-dir", "std::string", /*default=*/"",
           "A folder to write each SPIR-V module to, as <module>.spv">,
    Option<"mslDir", "msl-dir", "std::string", /*default=*/"",
           "A folder to write each kernel's MSL to, as <kernel>.metal">
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

#endif // TRACT_GPU_CODEGEN_PASSES_TD
