#include "codegen/cpu/TargetInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>

using namespace mlir::tract;

int64_t TargetInfo::kBlock() const {
  int64_t panelRowBytes = f32Lanes * vectorsPerRow() * 4;
  // A block's panel about the size of L1, rounded up to a power of two:
  // the row tiles read it from L2 as fast as from L1 (two vectors per
  // step of 16 FMAs), and each block costs every tile a pass over its
  // partial sums. With the panel in half of L1 (192 rows with AVX-512),
  // a 512 × 2048 × 8192 product ran at 105 GFLOP/s, and 145 in blocks
  // of 512; Llama-3.2-1B's prompt of 512 tokens 40 → 56 tokens/s on one
  // thread; the convolutional networks did not move.
  return std::max<int64_t>(
      64, static_cast<int64_t>(llvm::PowerOf2Ceil(l1Bytes / panelRowBytes)));
}

TargetInfo
TargetInfo::forFeatures(llvm::StringRef arch,
                        llvm::function_ref<bool(llvm::StringRef)> has) {
  TargetInfo info;
  if (arch == "x86_64" || arch == "x86-64") {
    if (has("avx512f")) {
      info = {"avx512", 16, 32, 48 * 1024, 1024 * 1024};
      if (has("avx512vnni") && has("avx512bw"))
        info.dotProduct = "vnni";
    }
    else if (has("avx2") && has("fma"))
      info = {"avx2", 8, 16, 32 * 1024, 512 * 1024};
    else
      info = {"sse", 4, 16, 32 * 1024, 256 * 1024};
  } else if (arch == "aarch64" || arch == "arm64") {
    info = {"neon", 4, 32, 64 * 1024, 512 * 1024};
    if (has("dotprod"))
      info.dotProduct = "sdot";
  } else if (arch == "arm" || arch == "armv7") {
    if (has("neon"))
      info = {"neon", 4, 16, 32 * 1024, 256 * 1024};
  } else if (arch == "wasm32") {
    if (has("simd128"))
      info = {"simd128", 4, 16, 32 * 1024, 256 * 1024};
  }
  return info;
}

void TargetInfo::setGpu(llvm::StringRef api, const GpuFeatures &features,
                        bool forMetal) {
  gpu = api.str();
  gpuTypes = "f32,i32";
  gpuCapabilities.clear();
  auto add = [&](bool has, llvm::StringRef types,
                 std::initializer_list<const char *> capabilities) {
    if (!has)
      return;
    gpuTypes += ",";
    gpuTypes += types;
    for (const char *capability : capabilities)
      if (!llvm::is_contained(gpuCapabilities, capability))
        gpuCapabilities.push_back(capability);
  };
  // Booleans are stored as bytes, as on the CPU.
  add(features.int8, "i8,i1", {"Int8", "StorageBuffer8BitAccess"});
  add(features.int16, "i16", {"Int16", "StorageBuffer16BitAccess"});
  add(features.float16, "f16", {"Float16", "StorageBuffer16BitAccess"});
  add(features.int64, "i64", {"Int64"});
  add(features.float64 && !forMetal, "f64", {"Float64"});
  // Tiles of 16 x 16 outputs take workgroups of 64 invocations (4 rows
  // each), which every Vulkan device runs.
  gpuTileSize = features.maxWorkgroupInvocations >= 64 ? 16 : 8;
}

TargetInfo TargetInfo::host() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  return forFeatures(triple.getArchName(), [&](llvm::StringRef name) {
    auto it = features.find(name);
    return it != features.end() && it->second;
  });
}
