#include "lowering/Targets.h"

#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

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

bool mlir::tract::isTargetAvailable(const CpuTarget &target,
                                    std::string &error) {
  llvm::InitializeAllTargetInfos();
  return llvm::TargetRegistry::lookupTarget(llvm::Triple(target.triple),
                                            error) != nullptr;
}
