//===- TargetInfo.h - what the CPU code generator knows of a CPU -*- C++ -*-===//

#ifndef CODEGEN_CPU_TARGETINFO_H
#define CODEGEN_CPU_TARGETINFO_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::tract {

/// The facts of a CPU that choose tile sizes: the width and number of its
/// vector registers and the caches the blocking aims at.
struct TargetInfo {
  std::string isa = "scalar"; ///< the vector ISA, for listings
  int64_t f32Lanes = 1;       ///< f32 per vector register
  int64_t vectorRegisters = 16;
  int64_t l1Bytes = 32 * 1024;
  int64_t l2Bytes = 512 * 1024;
  /// The instruction that sums four byte products into each i32 lane, for
  /// the 8-bit products: "vnni" (AVX-512 VNNI's vpdpbusd, unsigned by
  /// signed bytes), "sdot" (AArch64's dot product, signed by signed) or
  /// "none".
  std::string dotProduct = "none";
  /// Threads the code is made for: above one, large ops share their tiles
  /// among OpenMP threads (the code then needs LLVM's OpenMP runtime).
  int64_t threads = 1;
  /// tract's --threading-threshold: the work, in flops, from which an op
  /// runs on threads; below zero, the cost model decides
  /// (ParallelCost::threshold).
  double threadingThreshold = -1;
  /// Bits of `index`, as wide as the target's pointers: the memref
  /// descriptors, the sizes passed to the runtime's allocator and the loop
  /// counters are C's intptr_t and size_t.
  unsigned indexBitwidth = 64;
  /// The GPU API the linalg ops run through ("vulkan"), or "" for the CPU
  /// alone; with one, the element types its kernels may use (as
  /// tract-gpu-kernels-from-linalg's `types`) and the SPIR-V capabilities
  /// beyond Shader.
  std::string gpu = "";
  std::string gpuTypes = "f32,i32,i1";
  std::vector<std::string> gpuCapabilities = {};
  /// The side of the output tiles of products' kernels (a quarter of its
  /// square invocations per workgroup; 0: no tiled kernels).
  int64_t gpuTileSize = 16;
  /// With a GPU: folders to write the kernels' SPIR-V and their Metal
  /// Shading Language to, or "".
  std::string spirvDir = "";
  std::string mslDir = "";
  /// With CUDA: the chip the PTX is for, and a folder to write it to.
  std::string gpuChip = "sm_80";
  std::string ptxDir = "";
  /// With CUDA: the toolkit whose libdevice the kernels' math links, or "".
  std::string cudaPath = "";
  /// With CUDA: embed a fatbin of each module (the cubin for the chip, from
  /// cudaPath's ptxas, and the PTX) rather than the PTX alone.
  bool cudaFatbin = false;
  /// With a GPU: stop the lowering once the kernels are outlined (the
  /// launches are gpu.launch_func), to see which ops run where.
  bool stopAtGpuKernels = false;

  /// Rows of the register tile: accumulators plus one vector operand and
  /// a broadcast must fit the register file.
  int64_t tileRows() const { return vectorRegisters >= 32 ? 8 : 6; }
  /// Vector registers per row of the register tile.
  int64_t vectorsPerRow() const { return 2; }
  /// The block of a matmul's k: a panel of the vector operand, `k` rows
  /// of a tile's columns, about the size of L1.
  int64_t kBlock() const;

  /// The target of `arch` (an LLVM triple's arch name: x86_64, aarch64,
  /// arm, wasm32) with the features for which `has` is true ("avx512f",
  /// "avx2", "neon", "simd128").
  static TargetInfo forFeatures(llvm::StringRef arch,
                                llvm::function_ref<bool(llvm::StringRef)> has);
  /// The machine this process runs on.
  static TargetInfo host();

  /// What a GPU's kernels may use beyond f32 and i32 (Vulkan's features).
  struct GpuFeatures {
    bool int8 = false, int16 = false, int64 = false, float16 = false,
         float64 = false;
    /// Invocations a workgroup may have (Vulkan guarantees 128).
    int64_t maxWorkgroupInvocations = 128;

    /// What NVVM's kernels have on every CUDA chip: every type, blocks of
    /// 1024 threads.
    static GpuFeatures cuda() {
      GpuFeatures features;
      features.int8 = features.int16 = features.int64 = features.float16 =
          features.float64 = true;
      features.maxWorkgroupInvocations = 1024;
      return features;
    }
  };
  /// Runs the linalg ops through `api` on a device with `features`: sets
  /// gpu, gpuTypes, gpuCapabilities and gpuTileSize. `forMetal`: kernels
  /// Metal runs too, so no doubles.
  void setGpu(llvm::StringRef api, const GpuFeatures &features,
              bool forMetal = false);
};

} // namespace mlir::tract

#endif // CODEGEN_CPU_TARGETINFO_H
