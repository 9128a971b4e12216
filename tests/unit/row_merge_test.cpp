// Row merging (compile/row_merge.hpp): consecutive 1-d rows of a 2-d array,
// one ufunc inner-loop call each, fold into one 2-d operation.
#include "compile/row_merge.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>

namespace npvk {
namespace {

constexpr int64_t kN = 8;          // elements per row
constexpr int64_t kRowBytes = 48;  // a padded row: 8 float32 and 16 bytes of gap

// A distinct Buffer pointer (a byte of `owner`), never dereferenced.
std::shared_ptr<Buffer> FakeBuffer(const std::shared_ptr<std::array<char, 8>> &owner, int k) {
  return std::shared_ptr<Buffer>(owner, reinterpret_cast<Buffer *>(owner->data() + k));
}

// Row `r` of a (rows, kN) float32 array with outer stride `outer` bytes.
View Row(const std::shared_ptr<Buffer> &buffer, int64_t r, int64_t outer = kRowBytes,
         npvk_dtype dtype = NPVK_FLOAT32) {
  View v;
  v.buffer = buffer;
  v.dtype = dtype;
  v.ndim = 1;
  v.shape[0] = kN;
  v.strides[0] = dtype == NPVK_FLOAT64 ? 8 : 4;
  v.offset = uint64_t(r * outer);
  return v;
}

View Scalar(uint64_t bits) {
  View v;
  v.dtype = NPVK_FLOAT32;
  v.scalar = true;
  v.scalar_bits = bits;
  return v;
}

class RowMerge : public ::testing::Test {
 protected:
  std::shared_ptr<std::array<char, 8>> owner_ = std::make_shared<std::array<char, 8>>();
  std::shared_ptr<Buffer> a_ = FakeBuffer(owner_, 1), b_ = FakeBuffer(owner_, 2),
                          c_ = FakeBuffer(owner_, 3);
  RowMerger merger_;
  std::vector<View> merged_;

  // c[r] = a[r] + b[r]
  bool Next(int64_t r, size_t last_index = 7) {
    View a = Row(a_, r), b = Row(b_, r), c = Row(c_, r);
    return merger_.next_row(NPVK_OP_ADD, {&a, &b, &c}, 2, last_index, merged_);
  }
  void RememberRow0() {
    View a = Row(a_, 0), b = Row(b_, 0), c = Row(c_, 0);
    merger_.remember(NPVK_OP_ADD, {&a, &b, &c}, 2, 7);
  }
};

TEST_F(RowMerge, ConsecutiveRowsMergeWithTheOuterStride) {
  RememberRow0();
  for (int64_t r = 1; r < 4; ++r) {
    ASSERT_TRUE(Next(r)) << "row " << r;
    ASSERT_EQ(merged_.size(), 3u);
    for (const View &v : merged_) {
      EXPECT_EQ(v.ndim, 2u);
      EXPECT_EQ(v.shape[0], r + 1);
      EXPECT_EQ(v.shape[1], kN);
      EXPECT_EQ(v.strides[0], kRowBytes);
      EXPECT_EQ(v.strides[1], 4);
      EXPECT_EQ(v.offset, 0u);  // the first row's
    }
    EXPECT_EQ(merged_[0].buffer, a_);
    EXPECT_EQ(merged_[2].buffer, c_);
    merger_.accept(merged_);
  }
}

TEST_F(RowMerge, WithoutAcceptTheSameRowIsOfferedAgain) {
  RememberRow0();
  ASSERT_TRUE(Next(1));
  ASSERT_TRUE(Next(1));  // still row 1: nothing was folded yet
  EXPECT_EQ(merged_[0].shape[0], 2);
}

TEST_F(RowMerge, DifferentStrideStepDoesNotMerge) {
  RememberRow0();
  ASSERT_TRUE(Next(1));
  merger_.accept(merged_);
  // Row 3 where row 2 belongs: the step is twice the outer stride.
  EXPECT_FALSE(Next(3));
  EXPECT_TRUE(Next(2));
}

TEST_F(RowMerge, DifferentDtypeDoesNotMerge) {
  RememberRow0();
  View a = Row(a_, 1, kRowBytes, NPVK_FLOAT64), b = Row(b_, 1), c = Row(c_, 1);
  EXPECT_FALSE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &c}, 2, 7, merged_));
}

TEST_F(RowMerge, DifferentOpDoesNotMerge) {
  RememberRow0();
  View a = Row(a_, 1), b = Row(b_, 1), c = Row(c_, 1);
  EXPECT_FALSE(merger_.next_row(NPVK_OP_MULTIPLY, {&a, &b, &c}, 2, 7, merged_));
}

TEST_F(RowMerge, NonLastIndexDoesNotMerge) {
  RememberRow0();
  EXPECT_FALSE(Next(1, 8));  // another op was queued after row 0
  EXPECT_TRUE(Next(1, 7));
}

TEST_F(RowMerge, ScalarOperandMustKeepItsValue) {
  View a0 = Row(a_, 0), s = Scalar(0x3f800000), c0 = Row(c_, 0);
  merger_.remember(NPVK_OP_ADD, {&a0, &s, &c0}, 2, 7);
  View a1 = Row(a_, 1), other = Scalar(0x40000000), c1 = Row(c_, 1);
  EXPECT_FALSE(merger_.next_row(NPVK_OP_ADD, {&a1, &other, &c1}, 2, 7, merged_));
  View same = Scalar(0x3f800000);
  ASSERT_TRUE(merger_.next_row(NPVK_OP_ADD, {&a1, &same, &c1}, 2, 7, merged_));
  EXPECT_TRUE(merged_[1].scalar);
  EXPECT_EQ(merged_[1].scalar_bits, 0x3f800000u);
  EXPECT_EQ(merged_[0].shape[0], 2);
  EXPECT_EQ(merged_[2].strides[0], kRowBytes);
}

TEST_F(RowMerge, RepeatedInputRowBroadcasts) {
  // Inputs may repeat a row (outer stride 0): c[r] = a[r] + b[0].
  RememberRow0();
  View a = Row(a_, 1), b = Row(b_, 0), c = Row(c_, 1);
  ASSERT_TRUE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &c}, 2, 7, merged_));
  EXPECT_EQ(merged_[1].strides[0], 0);
  EXPECT_EQ(merged_[2].strides[0], kRowBytes);
}

TEST_F(RowMerge, OverlappingOutputRowDoesNotMerge) {
  RememberRow0();
  // The same output row again (an accumulating reduction) ...
  View a = Row(a_, 1), b = Row(b_, 1), same = Row(c_, 0);
  EXPECT_FALSE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &same}, 2, 7, merged_));
  // ... or one that starts inside the previous row's 32 bytes.
  View inside = Row(c_, 0);
  inside.offset = 16;
  EXPECT_FALSE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &inside}, 2, 7, merged_));
  // Exactly one row's bytes further is fine (a dense (rows, 8) array).
  View next = Row(c_, 0);
  next.offset = 32;
  EXPECT_TRUE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &next}, 2, 7, merged_));
  EXPECT_EQ(merged_[2].strides[0], 32);
}

TEST_F(RowMerge, StrideNotAMultipleOfTheItemsizeEndsMerging) {
  RememberRow0();
  View a = Row(a_, 1, 50), b = Row(b_, 1, 50), c = Row(c_, 1, 50);
  EXPECT_FALSE(merger_.next_row(NPVK_OP_ADD, {&a, &b, &c}, 2, 7, merged_));
  EXPECT_FALSE(Next(1));  // the merger gave up on this op
}

TEST_F(RowMerge, ForgetStopsMerging) {
  RememberRow0();
  ASSERT_TRUE(Next(1));
  merger_.accept(merged_);
  merger_.forget();
  EXPECT_FALSE(Next(2));
  EXPECT_FALSE(Next(1));
}

TEST_F(RowMerge, OnlyOneDimensionalRowsAreRemembered) {
  View a = Row(a_, 0), b = Row(b_, 0), c = Row(c_, 0);
  a.ndim = 2;
  a.shape[1] = 1;
  a.strides[1] = 4;
  merger_.remember(NPVK_OP_ADD, {&a, &b, &c}, 2, 7);
  EXPECT_FALSE(Next(1));
}

}  // namespace
}  // namespace npvk
