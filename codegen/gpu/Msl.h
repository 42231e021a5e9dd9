//===- Msl.h - Metal Shading Language from the SPIR-V kernels ---*- C++ -*-===//
//
// Metal runs the Vulkan kernels as MSL, which SPIRV-Cross writes from their
// SPIR-V.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_GPU_MSL_H
#define CODEGEN_GPU_MSL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::tract {

/// A compute kernel in MSL: its source, and the name of its `kernel`
/// function there (SPIRV-Cross renames those MSL reserves, such as `main`).
struct MslKernel {
  std::string source;
  std::string entry;
};

/// The MSL of the compute shader `entry` of the SPIR-V module `words`,
/// whose storage buffers are at descriptor set 0, binding i: buffer i
/// becomes `[[buffer(i)]]`, and the workgroup size is the shader's. Fails
/// with SPIRV-Cross's reason, or when its reflection finds a storage buffer
/// of the entry point elsewhere than at bindings 0 to buffers-1 of set 0,
/// or two at one binding.
llvm::Expected<MslKernel> translateToMsl(llvm::ArrayRef<uint32_t> words,
                                         llvm::StringRef entry,
                                         unsigned buffers);

} // namespace mlir::tract

#endif // CODEGEN_GPU_MSL_H
