// Error paths of views and their use: shapes that do not broadcast, views reaching outside
// their buffer, misalignment, rank, scalar outputs, overlapping outputs, out-of-range copies.
#include "errors_support.hpp"

namespace npvk_test {
namespace {

TEST_F(Errors, ShapeMismatch) {
  std::vector<Buffer> keep;
  const npvk_view out34 = [&] {
    keep.push_back(MakeBuffer(ctx(), std::vector<float>(12, 0.0f)));
    npvk_view v{0};
    const int64_t shape[] = {3, 4};
    EXPECT_TRUE(IsOk(npvk_view_create(keep.back().get(), 0, NPVK_FLOAT32, 2, shape, nullptr, &v),
                     "npvk_view_create"));
    views_.emplace_back(v);
    return v;
  }();
  auto view_of = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    keep.push_back(MakeBuffer(ctx(), std::vector<float>(static_cast<size_t>(n), 1.0f)));
    npvk_view v{0};
    EXPECT_TRUE(
        IsOk(npvk_view_create(keep.back().get(), 0, NPVK_FLOAT32,
                              static_cast<uint32_t>(shape.size()), shape.data(), nullptr, &v),
             "npvk_view_create"));
    views_.emplace_back(v);
    return v;
  };
  const npvk_view v34 = view_of({3, 4});
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v34, view_of({5}), out34), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, view_of({4, 3}), v34, out34),
               NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, view_of({2, 3, 4}), v34, out34),
               NPVK_ERR_SHAPE_MISMATCH);
  // The output does not broadcast: inputs (3, 4) into a (4,) output.
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v34, v34, view_of({4})), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, v34, view_of({1, 4})), NPVK_ERR_SHAPE_MISMATCH);
  // Broadcastable shapes are accepted.
  NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, view_of({3, 1}), view_of({4}), out34));
  NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, view_of({1, 4}), v34, out34));
  ExpectContextUsable();
}

TEST_F(Errors, ViewsOutsideTheirBuffer) {
  // buf_ holds 64 bytes: 16 float32.
  npvk_view v{kUntouched};
  auto create = [&](uint64_t offset, std::vector<int64_t> shape, std::vector<int64_t> strides) {
    return npvk_view_create(buf_.get(), offset, NPVK_FLOAT32, static_cast<uint32_t>(shape.size()),
                            shape.data(), strides.empty() ? nullptr : strides.data(), &v);
  };
  EXPECT_FAILS(create(0, {17}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(64, {1}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {16}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {4, 4}, {16, 4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(0, {2}, {-4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {2, 2}, {-8, 4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(UINT64_MAX - 3, {1}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  // Sizes whose byte extent overflows 64 bits must not wrap around into "inside".
  EXPECT_FAILS(create(0, {int64_t{1} << 40, int64_t{1} << 40}, {}), NPVK_ERR_OUT_OF_BOUNDS,
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(create(0, {3}, {int64_t{1} << 62}), NPVK_ERR_OUT_OF_BOUNDS,
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(create(0, {-1}, {}), NPVK_ERR_INVALID_ARGUMENT, NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(v.id, kUntouched);
  // The limits themselves are fine.
  for (auto [offset, shape, strides] :
       std::initializer_list<std::tuple<uint64_t, std::vector<int64_t>, std::vector<int64_t>>>{
           {60, {1}, {}},
           {4, {2}, {-4}},
           {0, {4, 4}, {16, 4}},
           {60, {16}, {-4}},
           {8, {2, 2}, {-8, 4}},
           {0, {1000}, {0}},
           {0, {0}, {}}}) {
    NPVK_EXPECT_OK(create(offset, shape, strides));
    views_.emplace_back(v);
  }
  ExpectContextUsable();
}

TEST_F(Errors, UnalignedViews) {
  npvk_view v{kUntouched};
  const int64_t shape[] = {2};
  const int64_t stride6[] = {6};
  const int64_t stride4[] = {4};
  EXPECT_FAILS(npvk_view_create(buf_.get(), 2, NPVK_FLOAT32, 1, shape, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, stride6, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_INT64, 1, shape, stride4, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 4, NPVK_FLOAT64, 1, shape, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  // Offsets that are multiples of the itemsize but not of 4 or 16 bytes are fine.
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 3, NPVK_INT8, 1, shape, nullptr, &v));
  views_.emplace_back(v);
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 2, NPVK_INT16, 1, shape, nullptr, &v));
  views_.emplace_back(v);
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 8, NPVK_FLOAT64, 1, shape, nullptr, &v));
  views_.emplace_back(v);
}

TEST_F(Errors, TooManyDimensions) {
  npvk_view v{kUntouched};
  std::vector<int64_t> shape(NPVK_MAX_DIMS + 1, 1);
  EXPECT_FAILS(
      npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, NPVK_MAX_DIMS + 1, shape.data(), nullptr, &v),
      NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  NPVK_EXPECT_OK(
      npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, NPVK_MAX_DIMS, shape.data(), nullptr, &v));
  views_.emplace_back(v);
}

TEST_F(Errors, ScalarAsOutput) {
  float value = 3;
  npvk_view scalar{0};
  NPVK_ASSERT_OK(npvk_view_create_scalar(ctx(), NPVK_FLOAT32, &value, &scalar));
  views_.emplace_back(scalar);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, view_.get(), scalar), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, scalar, scalar, scalar), NPVK_ERR_INVALID_ARGUMENT);
  ExpectContextUsable();
}

// "An output may alias an input exactly (in place) but must not otherwise overlap one."
TEST_F(Errors, PartialOverlapOfOutputAndInput) {
  npvk_view head{0}, tail{0}, reversed{0}, as_int{0};
  const int64_t shape[] = {8};
  const int64_t back[] = {-4};
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, nullptr, &head));
  views_.emplace_back(head);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 4, NPVK_FLOAT32, 1, shape, nullptr, &tail));
  views_.emplace_back(tail);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 28, NPVK_FLOAT32, 1, shape, back, &reversed));
  views_.emplace_back(reversed);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 0, NPVK_INT32, 1, shape, nullptr, &as_int));
  views_.emplace_back(as_int);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, tail), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, tail, tail, head), NPVK_ERR_INVALID_ARGUMENT);
  // The same elements in the opposite order are not "exactly" the input.
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, reversed), NPVK_ERR_INVALID_ARGUMENT);
  // Nor are the same bytes as another dtype.
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_CAST, head, as_int), NPVK_ERR_INVALID_ARGUMENT);
  // Disjoint views of one buffer are fine.
  npvk_view second_half{0};
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 32, NPVK_FLOAT32, 1, shape, nullptr, &second_half));
  views_.emplace_back(second_half);
  NPVK_EXPECT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, second_half));
  std::vector<float> want(16, 1.0f);
  for (int i = 8; i < 16; ++i) want[i] = -1.0f;
  EXPECT_EQ(Read<float>(buf_), want);
}

// Views that interleave without sharing an element do not overlap, as NumPy's
// np.negative(a[1::2], out=a[0::2]) or the columns of an (n, 2) array: both must be accepted.
TEST_F(Errors, InterleavedViewsDoNotOverlap) {
  std::vector<float> init(16);
  for (int i = 0; i < 16; ++i) init[i] = static_cast<float>(i);
  NPVK_ASSERT_OK(npvk_buffer_write(buf_.get(), 0, init.data(), 64));
  npvk_view even{0}, odd{0};
  const int64_t shape[] = {8};
  const int64_t every_2nd[] = {8};
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, every_2nd, &even));
  views_.emplace_back(even);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 4, NPVK_FLOAT32, 1, shape, every_2nd, &odd));
  views_.emplace_back(odd);
  NPVK_EXPECT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, odd, even));
  NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, even, even, odd));
  std::vector<float> want(16);
  for (int i = 0; i < 16; i += 2) {
    want[i] = -init[i + 1];
    want[i + 1] = 2 * want[i];
  }
  EXPECT_EQ(Read<float>(buf_), want);
}

TEST_F(Errors, BufferReadWriteBounds) {
  float data[17] = {};
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), 0, data, 65), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), 60, data, 8), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), UINT64_MAX - 1, data, 4), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), 0, data, 65), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), 64, data, 1), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), UINT64_MAX - 1, data, 4), NPVK_ERR_OUT_OF_BOUNDS);
  // The failed writes changed nothing.
  EXPECT_EQ(Read<float>(buf_), std::vector<float>(16, 1.0f));
  // Partial reads and writes at the end are fine.
  const float two[2] = {5, 6};
  NPVK_EXPECT_OK(npvk_buffer_write(buf_.get(), 56, two, 8));
  float back[2] = {};
  NPVK_EXPECT_OK(npvk_buffer_read(buf_.get(), 56, back, 8));
  EXPECT_EQ(back[0], 5);
  EXPECT_EQ(back[1], 6);
}

}  // namespace
}  // namespace npvk_test
