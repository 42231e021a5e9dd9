// The CUDA runtime (runtime/tract_cuda.h). Without a CUDA driver (the
// machines the tests run on) it must say so; past dlopen, it runs on the
// fake driver fake_cuda.c, opened through TRACT_CUDA_LIBRARY, whose kernels
// are C functions on host memory and which counts what the runtime asks of
// it.
#include "runtime/tract_cuda.h"
#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"
#include "test/unit/fake_cuda.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

namespace {

const char *const fakeDriverPath = TRACT_FAKE_CUDA_LIBRARY;

// The text of the tests' module: the fake driver looks for ".entry NAME("
// in it. Its address names the module to the runtime.
const char ptx[] = ".version 7.0\n"
                   ".target sm_50\n"
                   ".address_size 64\n"
                   ".visible .entry scale_add(/* 4 memrefs */)\n{\n\tret;\n}\n"
                   ".visible .entry fails()\n{\n\ttrap;\n}\n";
const int64_t ptxSize = sizeof(ptx) - 1;

bool contains(const char *text, const char *part) {
  return std::strstr(text, part) != nullptr;
}

// Starts again from nothing, with the driver TRACT_CUDA_LIBRARY names
// (libcuda.so.1 when `library` is null).
void restartWith(const char *library) {
  if (library)
    setenv("TRACT_CUDA_LIBRARY", library, 1);
  else
    unsetenv("TRACT_CUDA_LIBRARY");
  tract_cuda_release();
}

// Whether this machine has a CUDA driver of its own.
bool machineHasDriver() {
  void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver)
    dlclose(driver);
  return driver != nullptr;
}

// ---- Without a driver ----

class CudaWithoutDriver : public ::testing::Test {
protected:
  void TearDown() override { restartWith(nullptr); }
};

TEST_F(CudaWithoutDriver, SaysThereIsNone) {
  if (machineHasDriver())
    GTEST_SKIP() << "this machine has libcuda.so.1";
  restartWith(nullptr);
  char why[256];
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "no CUDA driver (libcuda.so.1)");
  char shortWhy[8];
  EXPECT_EQ(tract_cuda_available(shortWhy, sizeof(shortWhy)), 0);
  EXPECT_STREQ(shortWhy, "no CUDA");
  EXPECT_EQ(tract_cuda_available(nullptr, 0), 0);
  EXPECT_STREQ(tract_cuda_device_name(), "");
  EXPECT_STREQ(tract_cuda_device_chip(), "");

  float value = 1.0f;
  void *pointers[] = {&value};
  int64_t bytes[] = {sizeof(value)};
  int32_t flags[] = {TRACT_GPU_READ | TRACT_GPU_WRITE};
  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize, "scale_add", 1, 1, 1, 64, 1,
                              pointers, bytes, flags),
            TRACT_ERROR);
  EXPECT_TRUE(contains(tract_last_error(), "'scale_add'"))
      << tract_last_error();
  EXPECT_TRUE(contains(tract_last_error(), "no CUDA driver (libcuda.so.1)"))
      << tract_last_error();

  tract_cuda_release();
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "no CUDA driver (libcuda.so.1)");
}

TEST_F(CudaWithoutDriver, NamesTheLibraryItLookedFor) {
  restartWith("/nonexistent/libcuda.so.1");
  char why[256];
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "no CUDA driver (/nonexistent/libcuda.so.1)");
}

// ---- On the fake driver ----

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

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i)
    values[i] = start + step * static_cast<float>(i);
  return values;
}

class FakeCuda : public ::testing::Test {
protected:
  void SetUp() override {
    unsetenv("TRACT_CUDA_DEVICE");
    unsetenv("TRACT_FAKE_CUDA_DEVICES");
    restartWith(fakeDriverPath);
    // The runtime's dlopen of the same path finds this library again.
    driver = dlopen(fakeDriverPath, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(driver, nullptr) << dlerror();
    fake = static_cast<fake_cuda_state *>(dlsym(driver, "fake_cuda"));
    contextDepth =
        reinterpret_cast<int (*)()>(dlsym(driver, "fake_cuda_context_depth"));
    ASSERT_NE(fake, nullptr);
    ASSERT_NE(contextDepth, nullptr);
    fake->memory_limit = 0;
  }

  // Everything the runtime held is given back.
  void TearDown() override {
    restartWith(nullptr);
    EXPECT_EQ(fake->live_buffers, 0);
    EXPECT_EQ(fake->live_modules, 0);
    EXPECT_EQ(fake->retained, 0);
    unsetenv("TRACT_CUDA_DEVICE");
    unsetenv("TRACT_FAKE_CUDA_DEVICES");
    dlclose(driver);
  }

  // Runs `entry` over `count` elements, y = a * 2 + b for scale_add, in
  // blocks of 64 threads.
  // With `record`, the launch joins the open batch (tract_cuda_record)
  // and `count` must outlive it.
  int32_t launch(const char *entry, Buffer a, Buffer b, Buffer y,
                 const uint32_t &count, bool record = false) {
    Buffer n{const_cast<uint32_t *>(&count), sizeof(count), TRACT_GPU_READ};
    void *pointers[] = {a.data, b.data, y.data, n.data};
    int64_t bytes[] = {a.bytes, b.bytes, y.bytes, n.bytes};
    int32_t flags[] = {a.flags, b.flags, y.flags, n.flags};
    auto blocks = static_cast<int32_t>((count + 63) / 64);
    return (record ? tract_cuda_record : tract_cuda_launch)(
        ptx, ptxSize, entry, blocks > 0 ? blocks : 1, 1, 1, 64, 4, pointers,
        bytes, flags);
  }

  // Records y = a * 2 + b, then z = y * 2 + b, into the open batch.
  void recordTwo(std::vector<float> &a, std::vector<float> &b,
                 std::vector<float> &y, std::vector<float> &z,
                 const uint32_t &count) {
    ASSERT_EQ(launch("scale_add", bufferOf(a, TRACT_GPU_READ),
                     bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE),
                     count, /*record=*/true),
              TRACT_OK)
        << failure();
    ASSERT_EQ(launch("scale_add", bufferOf(y, TRACT_GPU_READ),
                     bufferOf(b, TRACT_GPU_READ), bufferOf(z, TRACT_GPU_WRITE),
                     count, /*record=*/true),
              TRACT_OK)
        << failure();
  }

  int32_t scaleAdd(Buffer a, Buffer b, Buffer y, uint32_t count) {
    return launch("scale_add", a, b, y, count);
  }

  std::string failure() const {
    return std::string(tract_last_error()) +
           " [fake driver: " + fake->complaint + "]";
  }

  void *driver = nullptr;
  fake_cuda_state *fake = nullptr;
  int (*contextDepth)() = nullptr;
};

TEST_F(FakeCuda, DescribesTheDevice) {
  char why[256];
  ASSERT_EQ(tract_cuda_available(why, sizeof(why)), 1) << why;
  EXPECT_STREQ(why, "");
  EXPECT_STREQ(tract_cuda_device_name(), "Fake CUDA device 0");
  EXPECT_STREQ(tract_cuda_device_chip(), "sm_86");
  EXPECT_EQ(fake->retained, 1);
}

TEST_F(FakeCuda, ScaleAddMatchesTheCpu) {
  const uint32_t n = 1000; // 16 blocks of 64, the last one partly
  std::vector<float> a = ramp(n, -3.0f, 0.25f), b = ramp(n, 7.0f, -0.5f);
  std::vector<float> y(n, -1.0f);
  int64_t uploads = fake->host_to_device, downloads = fake->device_to_host;
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), n),
            TRACT_OK)
      << failure();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], a[i] * 2.0f + b[i]) << "at " << i;
  EXPECT_EQ(fake->host_to_device - uploads, 3);   // a, b, n
  EXPECT_EQ(fake->device_to_host - downloads, 1); // y
  EXPECT_EQ(contextDepth(), 0); // the thread's context is its own again
}

TEST_F(FakeCuda, AConstantBufferIsUploadedOnce) {
  const uint32_t n = 300;
  std::vector<float> weights = ramp(n, 1.0f, 0.5f);
  int64_t uploads = fake->host_to_device;
  for (float offset : {10.0f, -20.0f}) {
    std::vector<float> b = ramp(n, offset, 1.0f), y(n);
    ASSERT_EQ(scaleAdd(bufferOf(weights, TRACT_GPU_CONSTANT),
                       bufferOf(b, TRACT_GPU_READ),
                       bufferOf(y, TRACT_GPU_WRITE), n),
              TRACT_OK)
        << failure();
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], weights[i] * 2.0f + b[i])
          << "offset " << offset << ", at " << i;
  }
  // The weights once, b and n twice.
  EXPECT_EQ(fake->host_to_device - uploads, 1 + 2 * 2);
}

// The pool's buffers serve the next launch, the module is loaded once for
// both of its kernels.
TEST_F(FakeCuda, BuffersAndModulesAreKept) {
  std::vector<float> a(500, 1.0f), b(500, 2.0f), y(500);
  int64_t modules = fake->modules_loaded;
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), 500),
            TRACT_OK)
      << failure();
  int64_t buffers = fake->live_buffers;
  EXPECT_EQ(buffers, 4);
  std::vector<float> a2(400, 3.0f), b2(400, 4.0f), y2(400);
  ASSERT_EQ(scaleAdd(bufferOf(a2, TRACT_GPU_READ), bufferOf(b2, TRACT_GPU_READ),
                     bufferOf(y2, TRACT_GPU_WRITE), 400),
            TRACT_OK)
      << failure();
  EXPECT_EQ(y2[399], 10.0f);
  EXPECT_EQ(fake->live_buffers, buffers);
  EXPECT_EQ(launch("fails", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE),
                   500),
            TRACT_ERROR);
  EXPECT_EQ(fake->modules_loaded - modules, 1);
  EXPECT_EQ(fake->live_modules, 1);
}

// Recorded launches run as one batch: what the first writes stays on the
// device for the second, which reads it there; the sync waits once and
// copies back what the batch wrote.
TEST_F(FakeCuda, ABatchKeepsWhatItWritesOnTheDevice) {
  const uint32_t n = 200;
  std::vector<float> a = ramp(n, -1.0f, 0.5f), b = ramp(n, 2.0f, 0.25f);
  std::vector<float> y(n, -1.0f), z(n, -1.0f);
  int64_t uploads = fake->host_to_device, downloads = fake->device_to_host;
  int64_t launches = fake->launches;
  recordTwo(a, b, y, z, n);
  EXPECT_EQ(fake->launches - launches, 2);
  EXPECT_EQ(fake->device_to_host, downloads); // nothing back before the sync
  EXPECT_EQ(y[0], -1.0f);
  ASSERT_EQ(tract_cuda_sync(), TRACT_OK) << failure();
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], a[i] * 2.0f + b[i]) << "at " << i;
    ASSERT_EQ(z[i], y[i] * 2.0f + b[i]) << "at " << i;
  }
  EXPECT_EQ(fake->host_to_device - uploads, 3);   // a, b, n: y never goes up
  EXPECT_EQ(fake->device_to_host - downloads, 2); // y and z
  EXPECT_EQ(contextDepth(), 0);
  // An empty batch runs nothing.
  EXPECT_EQ(tract_cuda_sync(), TRACT_OK) << failure();
  EXPECT_EQ(fake->device_to_host - downloads, 2);
}

// Views of one buffer start at its address and span what their kernel
// reaches: a longer span of memory the batch holds is the same device
// buffer (the bytes past it uploaded from the host), not a reason to run
// the batch first.
TEST_F(FakeCuda, ALongerSpanOfTheSameMemoryStaysInTheBatch) {
  const uint32_t n = 100;
  std::vector<float> a = ramp(n, 1.0f, 1.0f), b(2 * n, 0.5f);
  std::vector<float> y = ramp(2 * n, -50.0f, 1.0f), z(2 * n, 0.0f);
  int64_t downloads = fake->device_to_host;
  // y's first half, written; then all of y, read (its second half as the
  // host has it).
  Buffer half{y.data(), static_cast<int64_t>(n * sizeof(float)),
              TRACT_GPU_WRITE};
  ASSERT_EQ(launch("scale_add", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), half, n, /*record=*/true),
            TRACT_OK)
      << failure();
  const uint32_t all = 2 * n;
  ASSERT_EQ(launch("scale_add", bufferOf(y, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(z, TRACT_GPU_WRITE),
                   all, /*record=*/true),
            TRACT_OK)
      << failure();
  EXPECT_EQ(fake->device_to_host, downloads); // the batch did not run
  ASSERT_EQ(tract_cuda_sync(), TRACT_OK) << failure();
  for (uint32_t i = 0; i < 2 * n; ++i) {
    float expected_y = i < n ? a[i] * 2.0f + 0.5f : -50.0f + static_cast<float>(i);
    ASSERT_EQ(y[i], expected_y) << "at " << i;
    ASSERT_EQ(z[i], expected_y * 2.0f + 0.5f) << "at " << i;
  }
}

// What the batch wrote into memory the host is about to free is not
// copied back.
TEST_F(FakeCuda, DiscardedBytesAreNotCopiedBack) {
  const uint32_t n = 64;
  std::vector<float> a(n, 1.0f), b(n, 1.0f), y(n, 7.0f), z(n, 0.0f);
  int64_t downloads = fake->device_to_host;
  recordTwo(a, b, y, z, n);
  tract_cuda_discard(y.data(), static_cast<int64_t>(n * sizeof(float)));
  ASSERT_EQ(tract_cuda_sync(), TRACT_OK) << failure();
  EXPECT_EQ(y[0], 7.0f);  // y stayed the device's
  EXPECT_EQ(z[0], 7.0f);  // (1 * 2 + 1) * 2 + 1
  EXPECT_EQ(fake->device_to_host - downloads, 1); // z only
}

// A failed recording drops the open batch unrun; the next sync says so.
TEST_F(FakeCuda, AFailedRecordingDropsTheBatch) {
  const uint32_t n = 64;
  std::vector<float> a(n, 1.0f), b(n, 1.0f), y(n, 7.0f);
  ASSERT_EQ(launch("scale_add", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE), n,
                   /*record=*/true),
            TRACT_OK)
      << failure();
  EXPECT_EQ(launch("no_such_kernel", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE), n,
                   /*record=*/true),
            TRACT_ERROR);
  EXPECT_EQ(y[0], 7.0f);
  EXPECT_EQ(tract_cuda_sync(), TRACT_ERROR);
  EXPECT_TRUE(contains(tract_last_error(), "dropped")) << tract_last_error();
  EXPECT_EQ(tract_cuda_sync(), TRACT_OK) << failure();
}

// A buffer both read and written comes back whole: what the kernel leaves
// (past n) keeps the host's values.
TEST_F(FakeCuda, AReadWriteBufferKeepsWhatTheKernelLeaves) {
  const uint32_t n = 100;
  std::vector<float> a = ramp(n, 0.0f, 1.0f), b(n, 1.0f);
  std::vector<float> y(2 * n, 42.0f);
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_READ | TRACT_GPU_WRITE), n),
            TRACT_OK)
      << failure();
  for (uint32_t i = 0; i < 2 * n; ++i)
    ASSERT_EQ(y[i], i < n ? a[i] * 2.0f + 1.0f : 42.0f) << "at " << i;
}

// The same host memory passed twice is one device buffer, uploaded once, as
// on Vulkan: the kernel sees the aliasing the host has.
TEST_F(FakeCuda, TheSameHostBufferTwiceIsOneDeviceBuffer) {
  const uint32_t n = 100;
  std::vector<float> a = ramp(n, 1.0f, 0.5f), y(n);
  int64_t uploads = fake->host_to_device;
  ASSERT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(a, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), n),
            TRACT_OK)
      << failure();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], a[i] * 3.0f) << "at " << i;
  EXPECT_EQ(fake->host_to_device - uploads, 2); // a and n
}

// Zero-byte buffers reach the kernel as null pointers of size 0.
TEST_F(FakeCuda, ZeroByteBuffersPassNullPointers) {
  Buffer none{nullptr, 0, TRACT_GPU_READ};
  Buffer output{nullptr, 0, TRACT_GPU_WRITE};
  EXPECT_EQ(scaleAdd(none, none, output, 0), TRACT_OK) << failure();
}

TEST_F(FakeCuda, NoBlocksRunNothing) {
  std::vector<float> a(4, 1.0f), b(4, 1.0f), y(4, 5.0f);
  uint32_t n = 4;
  void *pointers[] = {a.data(), b.data(), y.data(), &n};
  int64_t bytes[] = {16, 16, 16, 4};
  int32_t flags[] = {TRACT_GPU_READ, TRACT_GPU_READ, TRACT_GPU_WRITE,
                     TRACT_GPU_READ};
  int64_t launches = fake->launches;
  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize, "scale_add", 0, 1, 1, 64, 4,
                              pointers, bytes, flags),
            TRACT_OK)
      << failure();
  EXPECT_EQ(fake->launches, launches);
  EXPECT_EQ(y[0], 5.0f);
}

TEST_F(FakeCuda, AFailedLaunchNamesTheKernelAndTheCall) {
  std::vector<float> a(8), b(8), y(8);
  EXPECT_EQ(launch("fails", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE),
                   8),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "CUDA kernel 'fails': cuLaunchKernel failed: "
               "CUDA_ERROR_LAUNCH_FAILED (719): unspecified launch failure");
  EXPECT_EQ(contextDepth(), 0);
  // The fake's contexts survive a failed kernel (a real one would not).
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), 8),
            TRACT_OK)
      << failure();
}

TEST_F(FakeCuda, AnEntryTheModuleLacksIsNamed) {
  std::vector<float> a(8), b(8), y(8);
  EXPECT_EQ(launch("missing", bufferOf(a, TRACT_GPU_READ),
                   bufferOf(b, TRACT_GPU_READ), bufferOf(y, TRACT_GPU_WRITE),
                   8),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "CUDA kernel 'missing': cuModuleGetFunction failed: "
               "CUDA_ERROR_NOT_FOUND (500): named symbol not found");
}

TEST_F(FakeCuda, ARefusedModuleGivesThePtxCompilersLog) {
  static const char notPtx[] = "not PTX at all";
  EXPECT_EQ(tract_cuda_launch(notPtx, sizeof(notPtx) - 1, "scale_add", 1, 1, 1,
                              64, 0, nullptr, nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "CUDA kernel 'scale_add': cuModuleLoadDataEx failed: "
               "CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed; "
               "the PTX compiler says: ptxas application ptx input, line 1; "
               "fatal   : Parsing error near 'not PTX ': syntax error");
}

// A buffer the device has no memory for is named with its size; once
// there is memory, the same launch runs.
TEST_F(FakeCuda, AFailedAllocationNamesTheBuffer) {
  std::vector<float> a(1000, 1.0f), b(1000, 2.0f), y(1 << 16);
  fake->memory_limit = 8192;
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), 1000),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "CUDA kernel 'scale_add': buffer 2: a device buffer of 262144 "
               "bytes: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out "
               "of memory");
  fake->memory_limit = 0;
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), 1000),
            TRACT_OK)
      << failure();
  EXPECT_EQ(y[999], 4.0f);
}

TEST_F(FakeCuda, RefusedArgumentsNameTheKernelAndTheArgument) {
  std::vector<float> a(4), b(4), y(4);
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_CONSTANT | TRACT_GPU_WRITE), 4),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(), "CUDA kernel 'scale_add': buffer 2 is "
                                   "CONSTANT, so the kernel cannot write it");

  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize, "scale_add", 1, 1, 1, 2048, 0,
                              nullptr, nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(), "CUDA kernel 'scale_add': 2048 threads "
                                   "per block; the device runs 1 to 1024");

  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize, "scale_add", 1, 70000, 1, 64, 0,
                              nullptr, nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(), "CUDA kernel 'scale_add': 70000 blocks "
                                   "along y; the device runs 0 to 65535");

  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize - 1, "scale_add", 1, 1, 1, 64, 0,
                              nullptr, nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_TRUE(contains(tract_last_error(), "does not end with a NUL"))
      << tract_last_error();

  EXPECT_EQ(tract_cuda_launch(ptx, ptxSize, nullptr, 1, 1, 1, 64, 0, nullptr,
                              nullptr, nullptr),
            TRACT_ERROR);
  EXPECT_STREQ(tract_last_error(),
               "CUDA kernel launched without an entry point");
}

TEST_F(FakeCuda, ANamedDeviceThatIsNotThereIsExplained) {
  setenv("TRACT_CUDA_DEVICE", "3", 1);
  tract_cuda_release();
  char why[256];
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "TRACT_CUDA_DEVICE=3: no such device (the CUDA devices "
                    "are 0 to 0)");
  EXPECT_STREQ(tract_cuda_device_name(), "");

  setenv("TRACT_CUDA_DEVICE", "first", 1);
  tract_cuda_release();
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "TRACT_CUDA_DEVICE=first is not a device number");

  setenv("TRACT_CUDA_DEVICE", "0", 1);
  tract_cuda_release();
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 1) << why;
}

TEST_F(FakeCuda, ADriverWithoutDevicesSaysSo) {
  setenv("TRACT_FAKE_CUDA_DEVICES", "0", 1);
  tract_cuda_release();
  char why[256];
  EXPECT_EQ(tract_cuda_available(why, sizeof(why)), 0);
  EXPECT_STREQ(why, "no CUDA device");
  EXPECT_STREQ(tract_cuda_device_chip(), "");
}

// Each launch makes the context current on its own thread.
TEST_F(FakeCuda, LaunchesFromSeveralThreads) {
  auto work = [this](float scale, std::string *error) {
    for (int run = 0; run < 20 && error->empty(); ++run) {
      std::vector<float> a = ramp(200, scale, 1.0f), b(200, scale), y(200);
      if (scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                   bufferOf(y, TRACT_GPU_WRITE), 200) != TRACT_OK)
        *error = failure();
      else if (y[199] != a[199] * 2.0f + scale)
        *error = "wrong result in run " + std::to_string(run);
    }
  };
  std::string first, second;
  std::thread one(work, 1.0f, &first), two(work, -2.0f, &second);
  one.join();
  two.join();
  EXPECT_EQ(first, "");
  EXPECT_EQ(second, "");
}

TEST_F(FakeCuda, ALaunchCountsInTheProfile) {
  std::vector<float> a(8), b(8), y(8);
  ASSERT_EQ(tract_profile_start(1), TRACT_OK);
  tract_profile_enter(0);
  EXPECT_EQ(scaleAdd(bufferOf(a, TRACT_GPU_READ), bufferOf(b, TRACT_GPU_READ),
                     bufferOf(y, TRACT_GPU_WRITE), 8),
            TRACT_OK)
      << failure();
  tract_profile_exit(0);
  EXPECT_EQ(tract_profile_launches(0), 1);
  tract_profile_stop();
}

} // namespace
