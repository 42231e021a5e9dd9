#include "codegen/cpu/TargetInfo.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>

using namespace mlir::tract;

int64_t TargetInfo::kBlock() const {
  int64_t panelRowBytes = f32Lanes * vectorsPerRow() * 4;
  // Half of L1 for the panel, the rest for the broadcast rows and output.
  int64_t rows = l1Bytes / 2 / panelRowBytes;
  return std::max<int64_t>(64, rows / 64 * 64);
}

TargetInfo
TargetInfo::forFeatures(llvm::StringRef arch,
                        llvm::function_ref<bool(llvm::StringRef)> has) {
  TargetInfo info;
  if (arch == "x86_64" || arch == "x86-64") {
    if (has("avx512f"))
      info = {"avx512", 16, 32, 48 * 1024, 1024 * 1024};
    else if (has("avx2") && has("fma"))
      info = {"avx2", 8, 16, 32 * 1024, 512 * 1024};
    else
      info = {"sse", 4, 16, 32 * 1024, 256 * 1024};
  } else if (arch == "aarch64") {
    info = {"neon", 4, 32, 64 * 1024, 512 * 1024};
  } else if (arch == "arm" || arch == "armv7") {
    if (has("neon"))
      info = {"neon", 4, 16, 32 * 1024, 256 * 1024};
  } else if (arch == "wasm32") {
    if (has("simd128"))
      info = {"simd128", 4, 16, 32 * 1024, 256 * 1024};
  }
  return info;
}

TargetInfo TargetInfo::host() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  return forFeatures(triple.getArchName(), [&](llvm::StringRef name) {
    auto it = features.find(name);
    return it != features.end() && it->second;
  });
}
