// npvk_reduce through the C ABI: both kernel shapes (an invocation per result,
// a workgroup per chunk with a second pass over partial results), axes,
// casts on load, `initial`, zero-size reductions, FP exceptions and bad input.
// The NumPy-facing reductions are tested against NumPy in
// tests/python/test_reductions.py.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class Reduce : public NpvkTest {
 protected:
  npvk_status Run(npvk_op op, const View &in, std::vector<uint32_t> axes, const View &out,
                  npvk_view initial = {0}) {
    return npvk_reduce(ctx(), op, in.get(), uint32_t(axes.size()), axes.data(), initial, out.get());
  }
};

// Integers are exact, whichever kernel runs: a long 1-d sum (workgroups and
// partials) and the same data as many short rows (an invocation per row).
TEST_F(Reduce, IntegerSumsAreExact) {
  const int64_t n = 1 << 20;
  std::vector<int32_t> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = int32_t((i * 7919) % 2001) - 1000;
  Buffer xb = MakeBuffer(ctx(), x);
  Buffer total = MakeBuffer(ctx(), std::vector<int64_t>(1));
  Buffer rows = MakeBuffer(ctx(), std::vector<int64_t>(size_t(n / 16)));
  View flat = MakeView1D(xb, NPVK_INT32, n);
  View as_rows = MakeView(xb, NPVK_INT32, {n / 16, 16});
  NPVK_ASSERT_OK(Run(NPVK_OP_ADD, flat, {0}, MakeView(total, NPVK_INT64, {1})));
  NPVK_ASSERT_OK(Run(NPVK_OP_ADD, as_rows, {1}, MakeView(rows, NPVK_INT64, {n / 16, 1})));
  int64_t want = 0;
  for (int32_t v : x) want += v;
  EXPECT_EQ(Read<int64_t>(total)[0], want);
  std::vector<int64_t> got_rows = Read<int64_t>(rows);
  for (int64_t r = 0; r < n / 16; ++r) {
    int64_t s = 0;
    for (int64_t j = 0; j < 16; ++j) s += x[size_t(r * 16 + j)];
    ASSERT_EQ(got_rows[size_t(r)], s) << r;
  }
}

// Reducing the outer axis of a C-ordered matrix, and a tuple of axes.
TEST_F(Reduce, AxesAndStrides) {
  const int64_t a = 6, b = 50, c = 70;
  std::vector<double> x(size_t(a * b * c));
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i % 97) * 0.5;
  Buffer xb = MakeBuffer(ctx(), x);
  View in = MakeView(xb, NPVK_FLOAT64, {a, b, c});
  Buffer ob = MakeBuffer(ctx(), std::vector<double>(size_t(b)));
  NPVK_ASSERT_OK(Run(NPVK_OP_MAXIMUM, in, {0, 2}, MakeView(ob, NPVK_FLOAT64, {1, b, 1})));
  std::vector<double> got = Read<double>(ob);
  for (int64_t j = 0; j < b; ++j) {
    double m = -1;
    for (int64_t i = 0; i < a; ++i)
      for (int64_t k = 0; k < c; ++k) m = std::max(m, x[size_t((i * b + j) * c + k)]);
    ASSERT_EQ(got[size_t(j)], m) << j;
  }
}

// Halves sum exactly, so the float result must be exact too; a NaN anywhere
// makes maximum NaN (NumPy's propagation) but not fmax.
TEST_F(Reduce, FloatSumAndNaN) {
  const int64_t n = 300000;
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = double(i % 1000) * 0.5;
  x[12345] = std::numeric_limits<double>::quiet_NaN();
  Buffer xb = MakeBuffer(ctx(), x);
  Buffer out = MakeBuffer(ctx(), std::vector<double>(3));
  View in = MakeView1D(xb, NPVK_FLOAT64, n);
  NPVK_ASSERT_OK(Run(NPVK_OP_MAXIMUM, in, {0}, MakeView(out, NPVK_FLOAT64, {1}, {1}, 0)));
  NPVK_ASSERT_OK(Run(NPVK_OP_FMAX, in, {0}, MakeView(out, NPVK_FLOAT64, {1}, {1}, 1)));
  View tail = MakeView(xb, NPVK_FLOAT64, {n - 12346}, {1}, 12346);
  NPVK_ASSERT_OK(Run(NPVK_OP_ADD, tail, {0}, MakeView(out, NPVK_FLOAT64, {1}, {1}, 2)));
  std::vector<double> got = Read<double>(out);
  double want = 0;
  for (int64_t i = 12346; i < n; ++i) want += x[size_t(i)];
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 499.5);
  EXPECT_EQ(got[2], want);
}

// NumPy's pairwise_sum (numpy/core/src/umath/loops_utils.h.src).
double NumpyPairwise(const double *a, int64_t n) {
  if (n < 8) {
    double res = -0.0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    int64_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + k];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return NumpyPairwise(a, n2) + NumpyPairwise(a + n2, n - n2);
}

// Float sums of a contiguous run take NumPy's order: one pairwise tree over
// the run (npvk_reduce), or one per block added in order (npvk_reduce_blocked).
TEST_F(Reduce, FloatSumsTakeNumpysOrder) {
  const int64_t n = 100003;
  std::vector<double> x(static_cast<size_t>(n));
  uint64_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[size_t(i)] = double(int64_t(state >> 11) % 2000001 - 1000000) *
                   std::pow(10.0, double(int64_t(state >> 40) % 17 - 8));
  }
  Buffer xb = MakeBuffer(ctx(), x);
  Buffer out = MakeBuffer(ctx(), std::vector<double>(2));
  const View in = MakeView1D(xb, NPVK_FLOAT64, n);
  const uint32_t axis = 0;
  NPVK_ASSERT_OK(Run(NPVK_OP_ADD, in, {0}, MakeView(out, NPVK_FLOAT64, {1}, {1}, 0)));
  NPVK_ASSERT_OK(npvk_reduce_blocked(ctx(), NPVK_OP_ADD, in.get(), 1, &axis, {0},
                                     MakeView(out, NPVK_FLOAT64, {1}, {1}, 1).get(), 8192));
  std::vector<double> got = Read<double>(out);
  double blocked = 0;
  for (int64_t s = 0; s < n; s += 8192)
    blocked += NumpyPairwise(&x[size_t(s)], std::min<int64_t>(8192, n - s));
  EXPECT_EQ(got[0], 0.0 + NumpyPairwise(x.data(), n));
  EXPECT_EQ(got[1], blocked);
  EXPECT_NE(got[0], got[1]);  // the data tell the orders apart
}

// Sums that overflow report "overflow" once, tagged as a reduction.
TEST_F(Reduce, OverflowIsReported) {
  std::vector<npvk_fp_error> drain(NPVK_OP_COUNT);
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), drain.data(), NPVK_OP_COUNT, &count));
  Buffer xb = MakeBuffer(ctx(), std::vector<double>(5000, 1e305));
  Buffer out = MakeBuffer(ctx(), std::vector<double>(1));
  NPVK_ASSERT_OK(
      Run(NPVK_OP_ADD, MakeView1D(xb, NPVK_FLOAT64, 5000), {0}, MakeView(out, NPVK_FLOAT64, {1})));
  EXPECT_TRUE(std::isinf(Read<double>(out)[0]));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), drain.data(), NPVK_OP_COUNT, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(drain[0].op, uint32_t(NPVK_OP_ADD));
  EXPECT_EQ(drain[0].flags, uint32_t(NPVK_FP_OVERFLOW | NPVK_FP_IN_REDUCE));
}

// Casting on load (int8 summed as int64), `initial`, and the identity of an
// empty reduction.
TEST_F(Reduce, CastInitialAndEmpty) {
  std::vector<int8_t> x(4000, int8_t(100));
  Buffer xb = MakeBuffer(ctx(), x);
  Buffer out = MakeBuffer(ctx(), std::vector<int64_t>(2));
  View init = MakeScalar(ctx(), int64_t(-7));
  NPVK_ASSERT_OK(Run(NPVK_OP_ADD, MakeView1D(xb, NPVK_INT8, 4000), {0},
                     MakeView(out, NPVK_INT64, {1}, {1}, 0), init.get()));
  NPVK_ASSERT_OK(Run(NPVK_OP_MULTIPLY, MakeView(xb, NPVK_INT8, {0}), {0},
                     MakeView(out, NPVK_INT64, {1}, {1}, 1)));
  std::vector<int64_t> got = Read<int64_t>(out);
  EXPECT_EQ(got[0], 400000 - 7);
  EXPECT_EQ(got[1], 1);
}

TEST_F(Reduce, BadInputIsAnError) {
  Buffer xb = MakeBuffer(ctx(), std::vector<double>(100));
  Buffer ob = MakeBuffer(ctx(), std::vector<double>(10));
  View in = MakeView(xb, NPVK_FLOAT64, {10, 10});
  View out = MakeView(ob, NPVK_FLOAT64, {10, 1});
  EXPECT_EQ(Run(NPVK_OP_SUBTRACT, in, {1}, out), NPVK_ERR_UNSUPPORTED);
  EXPECT_EQ(Run(NPVK_OP_ADD, in, {0}, out), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_EQ(Run(NPVK_OP_ADD, in, {2}, out), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Run(NPVK_OP_ADD, in, {1, 1}, out), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Run(NPVK_OP_MAXIMUM, MakeView(xb, NPVK_FLOAT64, {10, 0}), {1}, out),
            NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Run(NPVK_OP_ADD, in, {1}, MakeView(xb, NPVK_FLOAT64, {10, 1})),
            NPVK_ERR_INVALID_ARGUMENT);  // overlaps the input
  EXPECT_EQ(npvk_reduce(ctx(), NPVK_OP_ADD, in.get(), 1, nullptr, {0}, out.get()),
            NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_reduce(ctx(), NPVK_OP_ADD, npvk_view{12345}, 0, nullptr, {0}, out.get()),
            NPVK_ERR_INVALID_HANDLE);
  EXPECT_EQ(Run(NPVK_OP_LOGICAL_AND, in, {1}, MakeView(ob, NPVK_BOOL, {10, 1})), NPVK_SUCCESS);
  NPVK_EXPECT_OK(npvk_sync(ctx()));
}

}  // namespace
}  // namespace npvk_test

namespace npvk_test {
namespace {

// Scans run each line in order: float results equal a sequential loop's
// bit for bit, long lines included.
TEST_F(Reduce, AccumulateIsSequential) {
  const int64_t n = 100000;
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[size_t(i)] = 0.1 * double(i % 13) + 1.0;
  Buffer xb = MakeBuffer(ctx(), x);
  Buffer ob = MakeBuffer(ctx(), std::vector<double>(size_t(n)));
  NPVK_ASSERT_OK(npvk_accumulate(ctx(), NPVK_OP_ADD, MakeView1D(xb, NPVK_FLOAT64, n).get(), 0,
                                 MakeView1D(ob, NPVK_FLOAT64, n).get()));
  std::vector<double> got = Read<double>(ob);
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) {
    acc = i == 0 ? x[0] : acc + x[size_t(i)];
    ASSERT_EQ(got[size_t(i)], acc)
        << i << " next " << got[size_t(i) + 1] << " prev " << got[size_t(i) - 1];
  }
}

}  // namespace
}  // namespace npvk_test
