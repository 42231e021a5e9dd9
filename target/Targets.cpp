#include "target/Targets.h"

#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir::tract;

static const CpuTarget kCpuTargets[] = {
    {"x86_64", "x86_64-unknown-linux-gnu", "x86-64-v2"},
    // armv8-a: NEON is part of it.
    {"aarch64", "aarch64-unknown-linux-gnu", "generic"},
    // ARMv7-A with NEON and VFPv4 (not a core's extras, such as the
    // integer division Cortex-A9 lacks).
    {"armv7", "armv7-unknown-linux-gnueabihf", "generic", "+neon,+vfp4"},
    // SIMD128, which every current browser and WASI runtime has.
    {"wasm32", "wasm32-unknown-wasi", "generic", "+simd128"},
};

llvm::ArrayRef<CpuTarget> mlir::tract::cpuTargets() { return kCpuTargets; }

const CpuTarget &mlir::tract::metalHostTarget() {
  static const CpuTarget target = {"arm64-macos", "arm64-apple-macosx11.0.0",
                                   "apple-m1"};
  return target;
}

const CpuTarget *mlir::tract::lookupCpuTarget(llvm::StringRef nameOrTriple) {
  for (const CpuTarget &target : kCpuTargets)
    if (target.name == nameOrTriple || target.triple == nameOrTriple)
      return &target;
  return nullptr;
}

const CpuTarget *mlir::tract::hostCpuTarget() {
  llvm::Triple host(llvm::sys::getDefaultTargetTriple());
  for (const CpuTarget &target : kCpuTargets)
    if (llvm::Triple(target.triple).getArch() == host.getArch())
      return &target;
  return nullptr;
}

llvm::Expected<std::string>
mlir::tract::resolveCudaToolkit(llvm::StringRef given) {
  std::string found = findCudaToolkit(given);
  if (!given.empty() && found.empty())
    return llvm::createStringError("--cuda-path " + given +
                                   ": not a CUDA toolkit (no nvvm/libdevice "
                                   "in it)");
  return found;
}

bool mlir::tract::hasCudaAssembler(llvm::StringRef root) {
  if (root.empty())
    return false;
  for (const char *tool : {"ptxas", "fatbinary"}) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "bin", tool);
    if (!llvm::sys::fs::can_execute(path))
      return false;
  }
  return true;
}

std::string mlir::tract::findCudaToolkit(llvm::StringRef given) {
  auto hasLibdevice = [](llvm::StringRef root) {
    llvm::SmallString<128> path(root);
    llvm::sys::path::append(path, "nvvm", "libdevice");
    return !root.empty() && llvm::sys::fs::is_directory(path);
  };
  if (!given.empty())
    return hasLibdevice(given) ? given.str() : "";
  for (const char *variable : {"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"})
    if (const char *value = std::getenv(variable); value && hasLibdevice(value))
      return value;
  if (hasLibdevice("/usr/local/cuda"))
    return "/usr/local/cuda";
  if (llvm::ErrorOr<std::string> ptxas =
          llvm::sys::findProgramByName("ptxas")) {
    llvm::StringRef root =
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas));
    if (hasLibdevice(root))
      return root.str();
  }
  return "";
}

bool mlir::tract::isTargetAvailable(const CpuTarget &target,
                                    std::string &error) {
  llvm::InitializeAllTargetInfos();
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(target.triple),
                                            error) != nullptr;
}
