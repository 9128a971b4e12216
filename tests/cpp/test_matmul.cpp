// npvk_matmul through the C ABI: tile edges (sizes that are not multiples of
// 16), strided and transposed operands, broadcast batches, integer wrap-around
// and bad input. NumPy-facing tests: tests/python/test_matmul.py.
#include <cmath>
#include <cstdint>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class Matmul : public NpvkTest {};

// Doubles with few significant bits: every product and partial sum is exact,
// so any summation order gives the same result and the check can be exact.
double Small(int64_t i) {
  return double((i * 37) % 19 - 9) * 0.25;
}

TEST_F(Matmul, EdgesStridesAndBatches) {
  const int64_t batch = 3, m = 37, k = 29, n = 21;
  std::vector<double> a(size_t(batch * m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = Small(int64_t(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = Small(int64_t(i) + 5);
  Buffer ab = MakeBuffer(ctx(), a), bb = MakeBuffer(ctx(), b);
  Buffer cb = MakeBuffer(ctx(), std::vector<double>(size_t(batch * n * m)));
  View av = MakeView(ab, NPVK_FLOAT64, {batch, m, k});
  View bv = MakeView(bb, NPVK_FLOAT64, {1, k, n});  // broadcast over the batch
  // C stored transposed: (batch, n, m) memory seen as (batch, m, n).
  View cv = MakeView(cb, NPVK_FLOAT64, {batch, m, n}, {n * m, 1, m});
  NPVK_ASSERT_OK(npvk_matmul(ctx(), av.get(), bv.get(), cv.get()));
  std::vector<double> c = Read<double>(cb);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t q = 0; q < k; ++q)
          want += a[size_t((p * m + i) * k + q)] * b[size_t(q * n + j)];
        ASSERT_EQ(c[size_t(p * n * m + j * m + i)], want) << p << " " << i << " " << j;
      }
}

TEST_F(Matmul, IntegersWrapLikeNumPy) {
  const int64_t m = 20, k = 40, n = 18;
  std::vector<int8_t> a(size_t(m * k)), b(size_t(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = int8_t(i * 13);
  for (size_t i = 0; i < b.size(); ++i) b[i] = int8_t(i * 7 + 3);
  Buffer ab = MakeBuffer(ctx(), a), bb = MakeBuffer(ctx(), b);
  Buffer cb = MakeBuffer(ctx(), std::vector<int8_t>(size_t(m * n)));
  NPVK_ASSERT_OK(npvk_matmul(ctx(), MakeView(ab, NPVK_INT8, {m, k}).get(),
                             MakeView(bb, NPVK_INT8, {k, n}).get(),
                             MakeView(cb, NPVK_INT8, {m, n}).get()));
  std::vector<int8_t> c = Read<int8_t>(cb);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int8_t want = 0;  // NumPy's loop accumulates in the type itself
      for (int64_t q = 0; q < k; ++q)
        want = int8_t(want + int8_t(a[size_t(i * k + q)] * b[size_t(q * n + j)]));
      ASSERT_EQ(c[size_t(i * n + j)], want) << i << " " << j;
    }
}

TEST_F(Matmul, BadInputIsAnError) {
  Buffer ab = MakeBuffer(ctx(), std::vector<double>(64));
  Buffer fb = MakeBuffer(ctx(), std::vector<float>(64));
  View a = MakeView(ab, NPVK_FLOAT64, {4, 4});
  View a1 = MakeView(ab, NPVK_FLOAT64, {16});
  View f = MakeView(fb, NPVK_FLOAT32, {4, 4});
  Buffer cb = MakeBuffer(ctx(), std::vector<double>(16));
  View c = MakeView(cb, NPVK_FLOAT64, {4, 4});
  EXPECT_EQ(npvk_matmul(ctx(), a1.get(), a.get(), c.get()), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_EQ(npvk_matmul(ctx(), a.get(), f.get(), c.get()), NPVK_ERR_BAD_DTYPE);
  EXPECT_EQ(npvk_matmul(ctx(), a.get(), MakeView(ab, NPVK_FLOAT64, {3, 4}).get(), c.get()),
            NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_EQ(npvk_matmul(ctx(), a.get(), a.get(), a.get()), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_matmul(ctx(), npvk_view{999999}, a.get(), c.get()), NPVK_ERR_INVALID_HANDLE);
  NPVK_EXPECT_OK(npvk_sync(ctx()));
}

}  // namespace
}  // namespace npvk_test
