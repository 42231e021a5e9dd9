//===- Passes.h - the GPU codegen passes ------------------------*- C++ -*-===//
//
// From linalg on buffers to GPU kernels (gpu.module, gpu.launch_func), to
// SPIR-V, and to the host's calls of the GPU runtime (runtime/tract_gpu.h).
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_GPU_PASSES_H
#define CODEGEN_GPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith {
class ArithDialect;
} // namespace arith
namespace gpu {
class GPUDialect;
} // namespace gpu
namespace LLVM {
class LLVMDialect;
} // namespace LLVM
namespace memref {
class MemRefDialect;
} // namespace memref
namespace scf {
class SCFDialect;
} // namespace scf
namespace spirv {
class SPIRVDialect;
} // namespace spirv
} // namespace mlir

namespace mlir::tract {

/// The attribute of a gpu.launch_func with each buffer's use, as the GPU
/// runtimes' flags: tract-gpu-kernels-from-linalg writes it,
/// tract-gpu-launch-with-runtime reads it.
inline constexpr llvm::StringLiteral kBufferUsesAttrName = "buffer_uses";
/// Its flags, or-ed: the kernel reads the buffer, writes it, or the buffer
/// is constant (TRACT_GPU_READ, WRITE, CONSTANT of runtime/tract_gpu.h).
inline constexpr int32_t kBufferRead = 1, kBufferWritten = 2,
                         kBufferConstant = 4;

/// Marks the memref.alloca of a launch's parameters: host stores into it
/// leave the launches' buffers alone.
inline constexpr llvm::StringLiteral kParametersAttrName =
    "tract_gpu_parameters";

/// The buffer a memref value views, through views, casts and strided
/// metadata.
Value viewedBuffer(Value value);

#define GEN_PASS_DECL
#include "codegen/gpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/gpu/Passes.h.inc"

} // namespace mlir::tract

#endif // CODEGEN_GPU_PASSES_H
