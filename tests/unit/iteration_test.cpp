// Iteration planning (compile/iteration.hpp): broadcasting, dropped size-1
// dimensions, merged contiguous dimensions.
#include "compile/iteration.hpp"

#include <gtest/gtest.h>

namespace npvk {
namespace {

// A C-contiguous view of `shape` (strides in bytes), or a transposed one.
View Array(std::vector<int64_t> shape, npvk_dtype dtype = NPVK_FLOAT32, bool transpose = false) {
  View v;
  v.dtype = dtype;
  v.ndim = uint32_t(shape.size());
  const int64_t item = dtype == NPVK_FLOAT64 ? 8 : 4;
  int64_t stride = item;
  for (int d = int(v.ndim) - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  if (transpose && v.ndim == 2) {
    std::swap(v.shape[0], v.shape[1]);
    std::swap(v.strides[0], v.strides[1]);
  }
  return v;
}

TEST(Iteration, ContiguousMergesToOneDimension) {
  View a = Array({4, 5, 6}), b = Array({4, 5, 6}), c = Array({4, 5, 6});
  IterationSpace s = plan_iteration({&a, &b, &c}, 2);
  EXPECT_EQ(s.count, 120);
  EXPECT_EQ(s.rank, 1u);
  EXPECT_TRUE(s.contiguous);
  EXPECT_EQ(s.shape, Dims({120}));
  // Planned for fusion as the flat loop NumPy hands a ufunc's inner loop.
  EXPECT_EQ(s.full_shape, Dims({120}));
  EXPECT_EQ(s.full_strides, OperandDims(3, Dims({1})));
}

TEST(Iteration, SizeOneDimensionsDropped) {
  View a = Array({1, 7, 1}), c = Array({1, 7, 1});
  IterationSpace s = plan_iteration({&a, &c}, 1);
  EXPECT_EQ(s.count, 7);
  EXPECT_EQ(s.rank, 1u);
  EXPECT_TRUE(s.contiguous);
  EXPECT_EQ(s.shape, Dims({7}));
}

TEST(Iteration, BroadcastRowKeepsTwoDimensions) {
  // (3, 4) + (4,): the row repeats, so the dimensions cannot merge.
  View a = Array({3, 4}), b = Array({4}), c = Array({3, 4});
  IterationSpace s = plan_iteration({&a, &b, &c}, 2);
  EXPECT_EQ(s.count, 12);
  EXPECT_EQ(s.rank, 2u);
  EXPECT_FALSE(s.contiguous);
  ASSERT_EQ(s.strides.size(), 3u);
  EXPECT_EQ(s.strides[1][0], 0);  // broadcast along the rows
  EXPECT_EQ(s.strides[1][1], 1);
}

TEST(Iteration, TransposedInputIsStrided) {
  View a = Array({4, 3}, NPVK_FLOAT32, true), c = Array({3, 4});
  IterationSpace s = plan_iteration({&a, &c}, 1);
  EXPECT_EQ(s.rank, 2u);
  EXPECT_FALSE(s.contiguous);
  EXPECT_EQ(s.shape, Dims({3, 4}));
}

TEST(Iteration, ScalarInputStaysContiguous) {
  View a = Array({2, 8}), c = Array({2, 8});
  View k;
  k.dtype = NPVK_FLOAT32;
  k.scalar = true;
  IterationSpace s = plan_iteration({&a, &k, &c}, 2);
  EXPECT_EQ(s.rank, 1u);
  EXPECT_TRUE(s.contiguous);
  EXPECT_EQ(s.strides[1], Dims({0}));
}

// 32-bit offsets need every partial sum of coordinate * stride below 2^31,
// negative strides included, and fewer than 2^31 elements.
TEST(Iteration, OffsetsFitInt32) {
  const OperandFlags unit = {true, true};  // both operands
  // A 1000 x 1000 interior of a 1002-wide grid, and a reversed view.
  EXPECT_TRUE(offsets_fit_int32(merge_dimensions({1000, 1000}, {{1002, 1}, {-1002, -1}}, unit)));
  // 2^16 rows 2^15 apart: offsets up to (2^16 - 1) * 2^15 + 1 < 2^31.
  EXPECT_TRUE(offsets_fit_int32(merge_dimensions({1 << 16, 2}, {{1 << 15, 1}, {0, 1}}, unit)));
  // Twice the stride: (2^16 - 1) * 2^16 + 1 > 2^31, either sign.
  EXPECT_FALSE(offsets_fit_int32(merge_dimensions({1 << 16, 2}, {{1 << 16, 1}, {0, 1}}, unit)));
  EXPECT_FALSE(offsets_fit_int32(merge_dimensions({1 << 16, 2}, {{-(1 << 16), 1}, {0, 1}}, unit)));
  // 2^31 elements do not fit even contiguous.
  EXPECT_FALSE(offsets_fit_int32(merge_dimensions({int64_t(1) << 31}, {{1}, {1}}, unit)));
  EXPECT_TRUE(offsets_fit_int32(merge_dimensions({(int64_t(1) << 31) - 1}, {{1}, {1}}, unit)));
}

TEST(Iteration, MismatchedShapesThrow) {
  View a = Array({3, 4}), b = Array({5}), c = Array({3, 4});
  EXPECT_ANY_THROW(plan_iteration({&a, &b, &c}, 2));
}

}  // namespace
}  // namespace npvk
