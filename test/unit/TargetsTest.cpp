#include "target/Targets.h"

#include <gtest/gtest.h>

using namespace mlir::tract;

namespace {

TEST(CpuTargets, EveryTargetIsKnownToTheLinkedLLVM) {
  ASSERT_EQ(cpuTargets().size(), 4u);
  for (const CpuTarget &target : cpuTargets()) {
    std::string error;
    EXPECT_TRUE(isTargetAvailable(target, error))
        << target.name.str() << ": " << error;
  }
}

TEST(CpuTargets, LookupByNameOrTriple) {
  const CpuTarget *byName = lookupCpuTarget("aarch64");
  ASSERT_NE(byName, nullptr);
  EXPECT_EQ(byName->triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(lookupCpuTarget("wasm32-unknown-wasi"), lookupCpuTarget("wasm32"));
  EXPECT_EQ(lookupCpuTarget("riscv64"), nullptr);
}

TEST(CpuTargets, HostIsOneOfThem) {
#if defined(__x86_64__)
  ASSERT_NE(hostCpuTarget(), nullptr);
  EXPECT_EQ(hostCpuTarget()->name, "x86_64");
#elif defined(__aarch64__)
  ASSERT_NE(hostCpuTarget(), nullptr);
  EXPECT_EQ(hostCpuTarget()->name, "aarch64");
#else
  GTEST_FAIL() << "unexpected host architecture for these tests";
#endif
}

} // namespace
