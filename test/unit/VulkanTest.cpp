// The Vulkan runtime (runtime/tract_gpu.h) on whatever device the machine
// has (lavapipe, Mesa's CPU device, in CI). Its kernel, y = a * 2 + b, is
// kernels/scale_add.spvasm, assembled and validated by the build; without a
// device or without spirv-as the tests skip, saying why.
#include "runtime/tract_gpu.h"
#include "runtime/tract_runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <link.h>

namespace {

// The .spv the build made, or "" when spirv-as was missing.
const char *const kernelPath = TRACT_VULKAN_TEST_KERNEL;

// The kernel's words, read once (their address names the kernel to the
// runtime, so they stay put); empty when there is no kernel file.
const std::vector<uint32_t> &scaleAddKernel() {
  static const std::vector<uint32_t> words = [] {
    std::vector<uint32_t> read;
    std::ifstream file(kernelPath, std::ios::binary | std::ios::ate);
    if (!*kernelPath || !file)
      return read;
    auto bytes = static_cast<size_t>(file.tellg());
    read.resize(bytes / sizeof(uint32_t));
    file.seekg(0);
    file.read(reinterpret_cast<char *>(read.data()),
              static_cast<std::streamsize>(read.size() * sizeof(uint32_t)));
    return read;
  }();
  return words;
}

// Tests that launch kernels: skipped without a device or a kernel.
class VulkanLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    char why[256];
    if (!tract_gpu_available(why, sizeof(why)))
      GTEST_SKIP() << "no Vulkan device: " << why;
    if (scaleAddKernel().empty())
      GTEST_SKIP() << (*kernelPath ? "cannot read the test kernel "
                                   : "spirv-as was missing at configure "
                                     "time: no test kernel")
                   << kernelPath;
  }
};

// One buffer of a launch.
struct Buffer {
  void *data;
  int64_t bytes;
  int32_t flags;
};

template <typename T> Buffer bufferOf(std::vector<T> &values, int32_t flags) {
  return {values.data(), static_cast<int64_t>(values.size() * sizeof(T)),
          flags};
}

// Runs scale_add over `count` elements: y = a * 2 + b; with `record`,
// into the open batch (tract_gpu_record).
int32_t scaleAdd(Buffer a, Buffer b, Buffer y, uint32_t count,
                 bool record = false) {
  const std::vector<uint32_t> &kernel = scaleAddKernel();
  Buffer n{&count, sizeof(count), TRACT_GPU_READ};
  void *pointers[] = {a.data, b.data, y.data, n.data};
  int64_t bytes[] = {a.bytes, b.bytes, y.bytes, n.bytes};
  int32_t flags[] = {a.flags, b.flags, y.flags, n.flags};
  auto groups = static_cast<int32_t>((count + 63) / 64);
  return (record ? tract_gpu_record : tract_gpu_launch)(
      kernel.data(), static_cast<int64_t>(kernel.size()), "main",
      groups > 0 ? groups : 1, 1, 1, 4, pointers, bytes, flags);
}

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = start + step * static_cast<float>(i);
  return values;
}

TEST_F(VulkanLaunch, ScaleAddMatchesTheCpu) {
  const uint32_t n = 1000; // 16 workgroups of 64, the last one partly
  std::vector<float> a = ramp(n, -3.0f, 0.25f), b = ramp(n, 7.0f, -0.5f);
  std::vector<float> y(n, -1.0f);
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), n),
            TRACT_OK)
      << tract_last_error();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], a[i] * 2.0f + b[i]) << "at " << i;
}

// Recorded launches run at the sync, in order: the second reads what the
// first wrote on the device, and the host sees both results only then.
TEST_F(VulkanLaunch, ABatchRunsAtTheSyncInOrder) {
  const uint32_t n = 500;
  std::vector<float> a = ramp(n, 1.0f, 0.5f), b = ramp(n, -2.0f, 0.25f);
  std::vector<float> t(n, -1.0f), y(n, -1.0f);
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(t, TRACT_GPU_READ | TRACT_GPU_WRITE), n,
                     /*record=*/true),
            TRACT_OK)
      << tract_last_error();
  // (The count is a fresh host copy for each launch: read when recorded.)
  ASSERT_EQ(scaleAdd(bufferOf(t, TRACT_GPU_READ), bufferOf(a, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_READ | TRACT_GPU_WRITE), n,
                     /*record=*/true),
            TRACT_OK)
      << tract_last_error();
  EXPECT_EQ(t[0], -1.0f) << "ran before the sync";
  EXPECT_EQ(y[0], -1.0f) << "ran before the sync";
  ASSERT_EQ(tract_gpu_sync(), TRACT_OK) << tract_last_error();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(t[i], a[i] * 2.0f + b[i]) << "at " << i;
    ASSERT_EQ(y[i], t[i] * 2.0f + a[i]) << "at " << i;
  }
  // Nothing is left open.
  EXPECT_EQ(tract_gpu_sync(), TRACT_OK) << tract_last_error();
}

// A buffer that shares bytes with one of the batch, without being it, makes
// the batch run first: the second launch reads the first one's result.
TEST_F(VulkanLaunch, APartlySharedBufferRunsTheBatchFirst) {
  const uint32_t n = 256;
  std::vector<float> a = ramp(2 * n, 0.5f, 1.0f), b = ramp(n, 3.0f, -1.0f);
  std::vector<float> y(n, 0.0f);
  Buffer whole{a.data(), static_cast<int64_t>(a.size() * sizeof(float)),
               TRACT_GPU_READ | TRACT_GPU_WRITE};
  ASSERT_EQ(scaleAdd(whole, bufferOf(b, TRACT_GPU_READ), whole, n,
                     /*record=*/true),
            TRACT_OK)
      << tract_last_error();
  std::vector<float> expected(a.begin(), a.begin() + n);
  for (uint32_t i = 0; i < n; ++i)
    expected[i] = a[i] * 2.0f + b[i];
  Buffer half{a.data(), static_cast<int64_t>(n * sizeof(float)),
              TRACT_GPU_READ};
  ASSERT_EQ(scaleAdd(half, bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_READ | TRACT_GPU_WRITE), n,
                     /*record=*/true),
            TRACT_OK)
      << tract_last_error();
  ASSERT_EQ(tract_gpu_sync(), TRACT_OK) << tract_last_error();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], expected[i] * 2.0f + b[i]) << "at " << i;
}

// A failed launch drops the open batch unrun (its memory may be freed next)
// and the next sync says so.
TEST_F(VulkanLaunch, AFailedLaunchDropsTheBatch) {
  const uint32_t n = 64;
  std::vector<float> a = ramp(n, 1.0f, 1.0f), y(n, -1.0f);
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(a, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_READ | TRACT_GPU_WRITE), n,
                     /*record=*/true),
            TRACT_OK)
      << tract_last_error();
  Buffer bad{nullptr, 16, TRACT_GPU_READ};
  EXPECT_EQ(scaleAdd(bad, bufferOf(a, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), n, /*record=*/true),
            TRACT_ERROR);
  EXPECT_EQ(tract_gpu_sync(), TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "GPU kernels: launches were dropped unrun after one failed");
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(tract_gpu_sync(), TRACT_OK) << tract_last_error();
}

TEST_F(VulkanLaunch, AConstantBufferServesTwoLaunches) {
  const uint32_t n = 300;
  std::vector<float> weights = ramp(n, 1.0f, 0.5f);
  for (float offset : {10.0f, -20.0f}) {
    std::vector<float> b = ramp(n, offset, 1.0f), y(n);
    ASSERT_EQ(scaleAdd(bufferOf(weights, TRACT_GPU_CONSTANT),
                       bufferOf(b, TRACT_GPU_READ),
                       bufferOf(y, TRACT_GPU_WRITE), n),
              TRACT_OK)
        << tract_last_error();
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], weights[i] * 2.0f + b[i])
          << "offset " << offset << ", at " << i;
  }
}

// A buffer both read and written comes back whole: what the kernel leaves
// (past n) keeps the host's values.
TEST_F(VulkanLaunch, AReadWriteBufferKeepsWhatTheKernelLeaves) {
  const uint32_t n = 100;
  std::vector<float> a = ramp(n, 0.0f, 1.0f), b(n, 1.0f);
  std::vector<float> y(2 * n, 42.0f);
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_READ | TRACT_GPU_WRITE), n),
            TRACT_OK)
      << tract_last_error();
  for (uint32_t i = 0; i < 2 * n; ++i)
    ASSERT_EQ(y[i], i < n ? a[i] * 2.0f + 1.0f : 42.0f) << "at " << i;
}

// Buffers of zero bytes still bind something (n = 0: the kernel writes
// nothing).
TEST_F(VulkanLaunch, ZeroByteBuffersBind) {
  Buffer none{nullptr, 0, TRACT_GPU_READ};
  Buffer output{nullptr, 0, TRACT_GPU_WRITE};
  EXPECT_EQ(scaleAdd(none, none, output, 0), TRACT_OK) << tract_last_error();
}

TEST_F(VulkanLaunch, RefusedArgumentsNameTheKernelAndBuffer) {
  std::vector<float> a(4), b(4), y(4);
  tract_clear_error();
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_CONSTANT | TRACT_GPU_WRITE), 4),
            TRACT_ERROR);
  EXPECT_NE(std::strstr(tract_last_error(), "GPU kernel 'main'"), nullptr)
      << tract_last_error();
  EXPECT_NE(std::strstr(tract_last_error(), "buffer 2"), nullptr)
      << tract_last_error();

  const std::vector<uint32_t> &kernel = scaleAddKernel();
  EXPECT_EQ(tract_gpu_launch(kernel.data(), static_cast<int64_t>(kernel.size()),
                             "main", -1, 1, 1, 0, nullptr, nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_NE(std::strstr(tract_last_error(), "workgroups along x"), nullptr)
      << tract_last_error();
}

TEST_F(VulkanLaunch, FeaturesDescribeTheDevice) {
  EXPECT_STRNE(tract_gpu_device_name(), "");
  tract_gpu_features features;
  tract_gpu_get_features(&features);
  EXPECT_GE(features.max_workgroup_invocations, 64); // the kernel's size
  EXPECT_GE(features.max_workgroup_size[0], 64);
  EXPECT_GE(features.max_workgroup_count[0], 16);
  EXPECT_GT(features.subgroup_size, 0);
  EXPECT_GE(features.max_storage_buffer_range, 1 << 27); // Vulkan's minimum
  for (int32_t flag : {features.int8, features.int16, features.int64,
                       features.float16, features.float64})
    EXPECT_TRUE(flag == 0 || flag == 1);
}

// TRACT_VULKAN_DEVICE naming a device that is not there: no device, said
// by tract_gpu_available and by launches; once unset, the device is back.
TEST(VulkanDevice, AMissingNamedDeviceIsExplained) {
  char why[256];
  if (!tract_gpu_available(why, sizeof(why)))
    GTEST_SKIP() << "no Vulkan device: " << why;
  setenv("TRACT_VULKAN_DEVICE", "99", 1);
  tract_gpu_release();
  EXPECT_EQ(tract_gpu_available(why, sizeof(why)), 0);
  EXPECT_NE(std::strstr(why, "TRACT_VULKAN_DEVICE=99"), nullptr) << why;
  char shortWhy[8];
  EXPECT_EQ(tract_gpu_available(shortWhy, sizeof(shortWhy)), 0);
  EXPECT_EQ(std::strlen(shortWhy), sizeof(shortWhy) - 1);
  EXPECT_STREQ(tract_gpu_device_name(), "");
  tract_gpu_features features;
  tract_gpu_get_features(&features);
  EXPECT_EQ(features.max_workgroup_invocations, 0);
  EXPECT_EQ(features.max_storage_buffer_range, 0);

  const uint32_t words[] = {0x07230203u};
  EXPECT_EQ(
      tract_gpu_launch(words, 1, "main", 1, 1, 1, 0, nullptr, nullptr, nullptr),
      TRACT_ERROR);
  // Named after the kernel, as CUDA's and Metal's launches are.
  EXPECT_EQ(std::string(tract_last_error()),
            std::string("GPU kernel 'main': ") + why);

  unsetenv("TRACT_VULKAN_DEVICE");
  tract_gpu_release();
  EXPECT_EQ(tract_gpu_available(why, sizeof(why)), 1) << why;
  EXPECT_STREQ(why, "");
}

// Lavapipe keeps a few bytes in its globals for good: once the loader
// unloads it (at tract_gpu_release), LeakSanitizer counts them lost, in an
// unknown module. Keeping the libraries the device loaded in memory leaves
// them reachable, so that a leak check reports only what is the runtime's.
void keepDriversLoaded() {
  std::vector<std::string> loaded;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *names) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::vector<std::string> *>(names)->push_back(
              info->dlpi_name);
        return 0;
      },
      &loaded);
  for (const std::string &name : loaded) // never closed
    dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

// Frees the device after the last test, so that leak checkers see nothing.
class ReleaseGpu : public ::testing::Environment {
public:
  void SetUp() override {
    if (tract_gpu_available(nullptr, 0))
      keepDriversLoaded();
  }
  void TearDown() override { tract_gpu_release(); }
};

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ReleaseGpu);
  return RUN_ALL_TESTS();
}
