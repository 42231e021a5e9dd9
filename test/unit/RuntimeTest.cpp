#include "runtime/tract_profile.h"
#include "runtime/tract_runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

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
