#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>

#include <unistd.h>

namespace {

TEST(RuntimeDtype, NamesAndSizesRoundTrip) {
  for (int i = 0; i < TRACT_DT_COUNT; ++i) {
    auto dt = static_cast<tract_dtype>(i);
    const char *name = tract_dtype_name(dt);
    ASSERT_NE(name, nullptr);
    tract_dtype parsed;
    ASSERT_EQ(tract_dtype_from_name(name, &parsed), TRACT_OK) << name;
    EXPECT_EQ(parsed, dt);
    EXPECT_GT(tract_dtype_size(dt), 0u);
  }
  EXPECT_EQ(tract_dtype_size(TRACT_DT_F32), 4u);
  EXPECT_EQ(tract_dtype_size(TRACT_DT_BF16), 2u);
  EXPECT_EQ(tract_dtype_size(TRACT_DT_U64), 8u);
  EXPECT_STREQ(tract_dtype_name(TRACT_DT_BOOL), "Bool");
}

TEST(RuntimeDtype, ParsingIgnoresCase) {
  tract_dtype dt;
  ASSERT_EQ(tract_dtype_from_name("f32", &dt), TRACT_OK);
  EXPECT_EQ(dt, TRACT_DT_F32);
  ASSERT_EQ(tract_dtype_from_name("bool", &dt), TRACT_OK);
  EXPECT_EQ(dt, TRACT_DT_BOOL);
}

TEST(RuntimeDtype, UnknownNameIsAnError) {
  tract_clear_error();
  tract_dtype dt;
  EXPECT_EQ(tract_dtype_from_name("f31", &dt), TRACT_ERROR);
  EXPECT_NE(std::strstr(tract_last_error(), "'f31'"), nullptr)
      << tract_last_error();
  EXPECT_EQ(tract_dtype_size(TRACT_DT_COUNT), 0u);
  EXPECT_EQ(tract_dtype_name(TRACT_DT_COUNT), nullptr);
}

TEST(RuntimeTensor, AllocatesZeroedAlignedData) {
  const int64_t dims[] = {2, 3, 5};
  tract_tensor *t = tract_tensor_new(TRACT_DT_F32, 3, dims);
  ASSERT_NE(t, nullptr) << tract_last_error();
  EXPECT_EQ(tract_tensor_len(t), 30);
  EXPECT_EQ(tract_tensor_nbytes(t), 120u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data) % TRACT_TENSOR_ALIGN, 0u);
  const auto *bytes = static_cast<const unsigned char *>(t->data);
  for (size_t i = 0; i < tract_tensor_nbytes(t); ++i)
    ASSERT_EQ(bytes[i], 0) << "byte " << i;
  tract_tensor_free(t);
}

TEST(RuntimeTensor, ScalarsAndEmptyTensors) {
  tract_tensor *scalar = tract_tensor_new(TRACT_DT_I64, 0, nullptr);
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(tract_tensor_len(scalar), 1);
  EXPECT_EQ(tract_tensor_nbytes(scalar), 8u);
  tract_tensor_free(scalar);

  const int64_t dims[] = {4, 0};
  tract_tensor *empty = tract_tensor_new(TRACT_DT_F16, 2, dims);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(tract_tensor_len(empty), 0);
  EXPECT_NE(empty->data, nullptr);
  tract_tensor_free(empty);
  tract_tensor_free(nullptr);
}

TEST(RuntimeTensor, RejectsBadShapes) {
  const int64_t negative[] = {3, -1};
  EXPECT_EQ(tract_tensor_new(TRACT_DT_F32, 2, negative), nullptr);
  EXPECT_NE(std::strstr(tract_last_error(), "negative"), nullptr);

  const int64_t huge[] = {INT64_MAX / 2, 16};
  EXPECT_EQ(tract_tensor_new(TRACT_DT_F64, 2, huge), nullptr);
  EXPECT_NE(std::strstr(tract_last_error(), "overflows"), nullptr);

  int64_t many[TRACT_MAX_RANK + 1] = {};
  EXPECT_EQ(tract_tensor_new(TRACT_DT_F32, TRACT_MAX_RANK + 1, many), nullptr);
  EXPECT_NE(std::strstr(tract_last_error(), "rank"), nullptr);
}

TEST(RuntimeBuffers, LargeBuffersAreKeptAndReused) {
  tract_release_buffers();
  ASSERT_EQ(tract_buffers_kept(), 0u);
  const uint64_t size = 3 * 1024 * 1024 + 100;
  void *first = tract_buffer_aligned_alloc(64, size);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 0x5a, size); // all `size` bytes are usable
  tract_buffer_free(first);
  // Kept in its size class: 3 MiB + 100 rounds up to an eighth of 2 MiB.
  EXPECT_EQ(tract_buffers_kept(), size_t{3} * 1024 * 1024 + 256 * 1024);
  // A size of the same class gets the same buffer back.
  void *second = tract_buffer_aligned_alloc(64, size - 50);
  EXPECT_EQ(second, first);
  EXPECT_EQ(tract_buffers_kept(), 0u);
  // Another class gets a new one.
  void *other = tract_buffer_aligned_alloc(64, 5 * 1024 * 1024);
  EXPECT_NE(other, first);
  tract_buffer_free(other);
  tract_buffer_free(second);
  EXPECT_EQ(tract_buffers_kept(), size_t{3 + 5} * 1024 * 1024 + 256 * 1024);
  tract_release_buffers();
  EXPECT_EQ(tract_buffers_kept(), 0u);
  tract_buffer_free(nullptr);
}

TEST(RuntimeBuffers, SmallBuffersAndLargeAlignments) {
  tract_release_buffers();
  void *small = tract_buffer_aligned_alloc(64, 100);
  ASSERT_NE(small, nullptr);
  tract_buffer_free(small);
  EXPECT_EQ(tract_buffers_kept(), 0u) << "small buffers go back to libc";
  void *wide = tract_buffer_aligned_alloc(4096, 1 << 20);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 4096, 0u);
  tract_buffer_free(wide);
  EXPECT_EQ(tract_buffers_kept(), size_t{1} << 20);
  // A kept buffer serves the tensor alignment only.
  void *again = tract_buffer_aligned_alloc(4096, 1 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again) % 4096, 0u);
  tract_buffer_free(again);
  EXPECT_EQ(tract_buffer_aligned_alloc(96, 64), nullptr) << "not a power of 2";
  tract_release_buffers();
}

TEST(RuntimeBuffers, TheLimitBoundsWhatIsKept) {
  tract_release_buffers();
  tract_buffer_cache_limit(1 << 20);
  void *a = tract_buffer_aligned_alloc(64, 600 * 1024);
  void *b = tract_buffer_aligned_alloc(64, 600 * 1024);
  tract_buffer_free(a);
  tract_buffer_free(b); // would go over 1 MiB: freed
  EXPECT_EQ(tract_buffers_kept(), size_t{640} * 1024);
  tract_buffer_cache_limit(size_t{1} << 30);
  EXPECT_EQ(tract_buffers_kept(), 0u) << "setting the limit releases";
}

TEST(RuntimeBuffers, BuffersNoRunAsksForGoBack) {
  // A prompt's buffer, then steps that ask for another size: the prompt's
  // goes back after four runs without it; the steps' own stays kept.
  tract_release_buffers();
  void *prompt = tract_buffer_aligned_alloc(64, 1 << 20);
  tract_buffer_free(prompt);
  for (int run = 1; run <= 5; ++run) {
    tract_buffers_run_started();
    void *step = tract_buffer_aligned_alloc(64, 64 * 1024);
    tract_buffer_free(step);
    size_t expected = size_t{64} * 1024 + (run <= 4 ? size_t{1} << 20 : 0);
    EXPECT_EQ(tract_buffers_kept(), expected) << "after run " << run;
  }
  tract_release_buffers();
}

TEST(RuntimeBuffers, ThreadsShareThePool) {
  tract_release_buffers();
  auto work = [](int seed) {
    for (int i = 0; i < 2000; ++i) {
      size_t size = (size_t)(16 + (i * 7 + seed) % 64) * 1024;
      auto *p =
          static_cast<unsigned char *>(tract_buffer_aligned_alloc(64, size));
      ASSERT_NE(p, nullptr);
      p[0] = p[size - 1] = (unsigned char)seed;
      ASSERT_EQ(p[0] + p[size - 1], 2 * seed);
      tract_buffer_free(p);
    }
  };
  std::thread one(work, 1), two(work, 2);
  one.join();
  two.join();
  EXPECT_GT(tract_buffers_kept(), 0u);
  EXPECT_LE(tract_buffers_kept(), size_t{2} * (16 + 64) * 64 * 1024);
  tract_release_buffers();
  EXPECT_EQ(tract_buffers_kept(), 0u);
}

TEST(RuntimeProfile, AccumulatesTimeBetweenEnterAndExit) {
  ASSERT_EQ(tract_profile_start(2), TRACT_OK);
  for (int run = 0; run < 2; ++run) {
    tract_profile_enter(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    tract_profile_exit(1);
  }
  EXPECT_GE(tract_profile_nanoseconds(1), 4000000);
  EXPECT_EQ(tract_profile_nanoseconds(0), 0);
  // Slots outside the table are ignored, and read as 0.
  tract_profile_enter(2);
  tract_profile_exit(2);
  tract_profile_exit(-1);
  EXPECT_EQ(tract_profile_nanoseconds(2), 0);
  tract_profile_reset();
  EXPECT_EQ(tract_profile_nanoseconds(1), 0);
  tract_profile_stop();
  tract_profile_enter(1);
  tract_profile_exit(1);
  EXPECT_EQ(tract_profile_nanoseconds(1), 0);
  EXPECT_EQ(tract_profile_start(-1), TRACT_ERROR);
  EXPECT_NE(std::strstr(tract_last_error(), "non-negative"), nullptr);
}

} // namespace

TEST(RuntimeBuffers, MemoryLimitIsThePhysicalMemoryWithinTheCaps) {
  int64_t limit = tract_memory_limit();
  EXPECT_GT(limit, int64_t{1} << 20);
  EXPECT_LE(limit, int64_t{1} << 48);
  EXPECT_LE(static_cast<uint64_t>(limit), SIZE_MAX / 2);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(limit, std::min<int64_t>(int64_t{pages} * page, int64_t{1} << 48));
  EXPECT_EQ(tract_memory_limit(), limit); // cached, the same
}

// tract_f16_from_f64 (what 32-bit ARM code calls as __aeabi_d2h) rounds as
// the host's own conversion does: every half, the midpoints between
// neighbours (ties to even), their neighbours, and random doubles around
// the half range.
TEST(RuntimeHalf, FromDoubleRoundsAsTheHost) {
  auto expected = [](double value) {
    _Float16 half = static_cast<_Float16>(value);
    uint16_t bits;
    std::memcpy(&bits, &half, sizeof(bits));
    return bits;
  };
  auto check = [&](double value) {
    uint16_t want = expected(value), got = tract_f16_from_f64(value);
    if (std::isnan(value))
      EXPECT_EQ(got & 0x7e00, 0x7e00) << value;
    else
      EXPECT_EQ(got, want) << std::hexfloat << value;
    return got == want || std::isnan(value);
  };
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    _Float16 half, next;
    uint16_t lower = static_cast<uint16_t>(bits);
    uint16_t upper = static_cast<uint16_t>(bits + 1);
    std::memcpy(&half, &lower, sizeof(half));
    std::memcpy(&next, &upper, sizeof(next));
    double value = static_cast<double>(half);
    if (!check(value))
      return;
    if ((bits & 0x7fff) < 0x7bff) { // a finite neighbour above
      double middle = (value + static_cast<double>(next)) / 2;
      if (!check(middle) || !check(std::nextafter(middle, 0.0)) ||
          !check(std::nextafter(middle, 1e300)))
        return;
    }
  }
  for (double special :
       {0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e300, -1e300, 1e-300,
        5.9604644775390625e-08, 2.98023223876953125e-08, 2.9802322387695314e-08,
        HUGE_VAL, -HUGE_VAL, std::nan("")})
    check(special);
  std::mt19937_64 random(7);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = random();
    // Exponents from 2^-40 to 2^20, both signs.
    uint64_t exponent = 1023 - 40 + random() % 61;
    bits = (bits & 0x800fffffffffffffULL) | exponent << 52;
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    if (!check(value))
      return;
  }
}
