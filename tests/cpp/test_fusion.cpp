// Fusion and array contraction: ops that share an iteration space run as one
// kernel, temporaries whose owner let go before the flush are never stored,
// and whatever the planner decides, results are those of the ops in order.
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class Fusion : public NpvkTest {
 protected:
  template <class T>
  std::pair<Buffer, View> Array(const std::vector<T> &values) {
    return MakeArray(ctx(), values);
  }
  template <class T>
  std::pair<Buffer, View> Empty(int64_t n) {
    return Array(std::vector<T>(static_cast<size_t>(n)));
  }
  npvk_stats Delta(const npvk_stats &before) {
    npvk_stats now = GetStats(ctx());
    now.dispatches -= before.dispatches;
    now.ops_fused -= before.ops_fused;
    now.stores_contracted -= before.stores_contracted;
    now.barriers -= before.barriers;
    return now;
  }
  static std::vector<double> Ramp(int64_t n, double start, double step) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + step * double(i);
    return v;
  }
};

// y = (x * 2 + 1) * x with two temporaries that are released before the
// sync: one kernel, and neither temporary is written to memory.
TEST_F(Fusion, ReleasedTemporariesAreContracted) {
  const int64_t n = 1000;
  auto [xb, x] = Array(Ramp(n, -3.0, 0.01));
  auto [yb, y] = Empty<double>(n);
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  {
    auto [t1b, t1] = Empty<double>(n);
    auto [t2b, t2] = Empty<double>(n);
    View two = MakeScalar(ctx(), 2.0), one = MakeScalar(ctx(), 1.0);
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, x.get(), two.get(), t1.get()));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, t1.get(), one.get(), t2.get()));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, t2.get(), x.get(), y.get()));
  }  // the temporaries' handles are released here, before any flush
  const std::vector<double> got = Read<double>(yb);
  const npvk_stats d = Delta(before);
  EXPECT_EQ(d.dispatches, 1u);
  EXPECT_EQ(d.ops_fused, 3u);
  EXPECT_EQ(d.stores_contracted, 2u);
  const std::vector<double> xs = Ramp(n, -3.0, 0.01);
  for (int64_t i = 0; i < n; ++i) {
    double t1 = xs[size_t(i)] * 2.0, t2 = t1 + 1.0;
    ASSERT_EQ(got[size_t(i)], t2 * xs[size_t(i)]) << i;  // exact: the same roundings in order
  }
}

// A temporary that is still referenced is stored even when fused.
TEST_F(Fusion, LiveTemporariesAreStored) {
  const int64_t n = 300;
  auto [xb, x] = Array(Ramp(n, 1.0, 1.0));
  auto [tb, t] = Empty<double>(n);
  auto [yb, y] = Empty<double>(n);
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, x.get(), x.get(), t.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, t.get(), t.get(), y.get()));
  const std::vector<double> got_t = Read<double>(tb), got_y = Read<double>(yb);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got_t[size_t(i)], 2.0 * double(i + 1));
    ASSERT_EQ(got_y[size_t(i)], 4.0 * double(i + 1) * double(i + 1));
  }
}

// a[1:] = a[:-1] + 1 after a = a * 2: the second op reads elements that other
// invocations of a fused kernel would write, so it needs its own kernel.
TEST_F(Fusion, ShiftedReadOfAnEarlierOutputIsNotFused) {
  const int64_t n = 500;
  std::vector<int64_t> a0(n);
  std::iota(a0.begin(), a0.end(), 0);
  Buffer ab = MakeBuffer(ctx(), a0);
  View all = MakeView1D(ab, NPVK_INT64, n);
  View head = MakeView(ab, NPVK_INT64, {n - 1}, {1}, 0);
  View tail = MakeView(ab, NPVK_INT64, {n - 1}, {1}, 1);
  auto [ob, out] = Empty<int64_t>(n - 1);
  View two = MakeScalar(ctx(), int64_t(2)), one = MakeScalar(ctx(), int64_t(1));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, all.get(), two.get(), all.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, head.get(), one.get(), out.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, out.get(), tail.get(), out.get()));
  const std::vector<int64_t> got = Read<int64_t>(ob);
  const npvk_stats d = Delta(before);
  EXPECT_EQ(d.dispatches, 2u) << "the shape changes between the first and the second op";
  for (int64_t i = 0; i + 1 < n; ++i) ASSERT_EQ(got[size_t(i)], (2 * i + 1) - 2 * (i + 1)) << i;
}

// Same shape, overlapping but different elements: x[:-1] is written, then
// x[1:] is read; fusing them would race.
TEST_F(Fusion, OverlappingWriteThenReadSplitsTheKernel) {
  const int64_t n = 4097;
  std::vector<int64_t> x0(n);
  std::iota(x0.begin(), x0.end(), 0);
  Buffer xb = MakeBuffer(ctx(), x0);
  View head = MakeView(xb, NPVK_INT64, {n - 1}, {1}, 0);
  View tail = MakeView(xb, NPVK_INT64, {n - 1}, {1}, 1);
  auto [yb, y] = Empty<int64_t>(n - 1);
  View ten = MakeScalar(ctx(), int64_t(10));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, head.get(), ten.get(), head.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, tail.get(), head.get(), y.get()));
  const std::vector<int64_t> got = Read<int64_t>(yb);
  const npvk_stats d = Delta(before);
  EXPECT_EQ(d.dispatches, 2u);
  EXPECT_EQ(d.barriers, 1u);
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t tail_value = i + 1 < n - 1 ? 10 * (i + 1) : i + 1;  // the last element is not scaled
    ASSERT_EQ(got[size_t(i)], tail_value + 10 * i) << i;
  }
}

// t = sqrt(a); b = t - a[::-1]; a += b: the last op writes a, which the
// kernel so far only read, while a reversed view of it is read too.
TEST_F(Fusion, ReadSlotThatBecomesWrittenChecksOtherViews) {
  const int64_t n = 3000;
  std::vector<double> a0 = Ramp(n, 0.0, 0.25);
  Buffer ab = MakeBuffer(ctx(), a0);
  View a = MakeView1D(ab, NPVK_FLOAT64, n);
  View reversed = MakeView(ab, NPVK_FLOAT64, {n}, {-1}, n - 1);
  auto [tb, t] = Empty<double>(n);
  auto [bb, b] = Empty<double>(n);
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_SQRT, a.get(), t.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, t.get(), reversed.get(), b.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, a.get(), b.get(), a.get()));
  const std::vector<double> got = Read<double>(ab);
  EXPECT_EQ(Delta(before).dispatches, 2u);
  for (int64_t i = 0; i < n; ++i) {
    double expect = a0[size_t(i)] + (std::sqrt(a0[size_t(i)]) - a0[size_t(n - 1 - i)]);
    ASSERT_EQ(got[size_t(i)], expect) << i;
  }
}

// Values forwarded in registers go through the output's storage type, as
// they would through memory: int8 wraps, bool is 0 or 1, float32 rounds.
TEST_F(Fusion, ForwardedValuesHaveTheStoredType) {
  const int64_t n = 256;
  std::vector<int8_t> a(n);
  for (int64_t i = 0; i < n; ++i) a[size_t(i)] = int8_t(i - 128);
  auto [ab, av] = Array(a);
  auto [wb, w] = Empty<int8_t>(n);
  auto [fb, f] = Empty<double>(n);
  auto [bb, bv] = Empty<uint8_t>(n);
  View bools = MakeView1D(bb, NPVK_BOOL, n);
  auto [gb, g] = Empty<double>(n);
  View hundred = MakeScalar(ctx(), int8_t(100));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, av.get(), hundred.get(), w.get()));
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_CAST, w.get(), f.get()));
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_CAST, w.get(), bools.get()));
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_CAST, bools.get(), g.get()));
  const std::vector<double> got_f = Read<double>(fb), got_g = Read<double>(gb);
  for (int64_t i = 0; i < n; ++i) {
    int8_t wrapped = int8_t(a[size_t(i)] + 100);
    ASSERT_EQ(got_f[size_t(i)], double(wrapped)) << i;
    ASSERT_EQ(got_g[size_t(i)], wrapped != 0 ? 1.0 : 0.0) << i;
  }
}

// Broadcast and transposed 2-d operands fuse over the output's shape.
TEST_F(Fusion, BroadcastAndStridedOperands) {
  const int64_t rows = 37, cols = 53;
  std::vector<double> m(rows * cols), r(cols);
  for (int64_t i = 0; i < rows * cols; ++i) m[size_t(i)] = double(i % 97) - 40.0;
  for (int64_t j = 0; j < cols; ++j) r[size_t(j)] = 0.5 * double(j);
  Buffer mb = MakeBuffer(ctx(), m), rb = MakeBuffer(ctx(), r);
  // mt is m's transpose viewed as (cols, rows) -> use m as (rows, cols) and a
  // (rows, cols) view of the same data read column-major.
  View mv = MakeView(mb, NPVK_FLOAT64, {rows, cols});
  View rv = MakeView(rb, NPVK_FLOAT64, {1, cols});
  auto [ob, o] = Empty<double>(rows * cols);
  View ov = MakeView(ob, NPVK_FLOAT64, {rows, cols});
  auto [tb, t] = Empty<double>(rows * cols);
  View tv = MakeView(tb, NPVK_FLOAT64, {rows, cols}, {1, rows});  // column-major temporary
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, mv.get(), rv.get(), tv.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, tv.get(), mv.get(), ov.get()));
  const std::vector<double> got = Read<double>(ob), got_t = Read<double>(tb);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double prod = m[size_t(i * cols + j)] * r[size_t(j)];
      ASSERT_EQ(got_t[size_t(j * rows + i)], prod);
      ASSERT_EQ(got[size_t(i * cols + j)], prod - m[size_t(i * cols + j)]);
    }
}

// A chain over more arrays than push constants hold reads the rest from the
// argument table; past the slot limit it is split, not refused. Both in a
// contiguous loop and in a strided one (columns of 2-d arrays).
void SumOfArrays(npvk_context ctx, int64_t arrays, bool strided, uint64_t expect_dispatches) {
  const int64_t rows = 13, cols = 7, n = rows * cols;
  std::vector<Buffer> bufs;
  std::vector<View> views;
  auto view_of = [&](const Buffer &b) {
    // Strided: a column-major (rows, cols) view; contiguous: row-major.
    return strided ? MakeView(b, NPVK_INT64, {rows, cols}, {1, rows})
                   : MakeView(b, NPVK_INT64, {rows, cols});
  };
  for (int64_t k = 0; k < arrays; ++k) {
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = (k + 1) * (i + 1);
    bufs.push_back(MakeBuffer(ctx, v));
    views.push_back(view_of(bufs.back()));
  }
  Buffer accb = MakeBuffer(ctx, std::vector<int64_t>(n, 0));
  View acc = MakeView(accb, NPVK_INT64, {rows, cols});  // row-major, unlike the strided inputs
  NPVK_ASSERT_OK(npvk_sync(ctx));
  const npvk_stats before = GetStats(ctx);
  for (int64_t k = 0; k < arrays; ++k)
    NPVK_ASSERT_OK(npvk_binary(ctx, NPVK_OP_ADD, acc.get(), views[size_t(k)].get(), acc.get()));
  const std::vector<int64_t> got = Read<int64_t>(accb);
  EXPECT_EQ(GetStats(ctx).dispatches - before.dispatches, expect_dispatches);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      // acc[r, c] sums element [r, c] of every input view.
      int64_t i = strided ? c * rows + r : r * cols + c;
      ASSERT_EQ(got[size_t(r * cols + c)], arrays * (arrays + 1) / 2 * (i + 1)) << r << "," << c;
    }
}

TEST_F(Fusion, SlotsPastThePushConstantsContiguous) {
  SumOfArrays(ctx(), 20, false, 1);
}
TEST_F(Fusion, SlotsPastThePushConstantsStrided) {
  SumOfArrays(ctx(), 20, true, 1);
}
// Past 64 slots (the limit of a one-bit-per-slot mask once): one strided kernel.
TEST_F(Fusion, SlotsPastSixtyFourStrided) {
  SumOfArrays(ctx(), 100, true, 1);
}
TEST_F(Fusion, ManyArraysSplitIntoSeveralKernels) {
  SumOfArrays(ctx(), 144, false, 2);  // 145 slots: past the limit of 128
}

// A time-step loop longer than a kernel holds: each step is 110 ops on
// temporaries released within the step, plus an accumulation into a live
// array. Two steps do not fit in one kernel (160 ops), so the planner ends
// kernels at step boundaries (where no temporary crosses) rather than
// wherever the limit falls: one kernel per step, every one the same kernel.
TEST_F(Fusion, FullKernelsEndWhereFewestTemporariesCross) {
  const int64_t n = 512, steps = 6, ops_per_step = 110;
  auto [xb, x] = Array(Ramp(n, 0.5, 0.001));
  auto [accb, acc] = Empty<double>(n);
  View factor = MakeScalar(ctx(), 1.0001);
  // Made up front: writing a new buffer's contents runs the queued work.
  std::vector<std::pair<Buffer, View>> temps;
  for (int64_t k = 0; k < 2 * steps; ++k) temps.push_back(Empty<double>(n));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  for (int64_t s = 0; s < steps; ++s) {
    View &t1 = temps[size_t(2 * s)].second, &t2 = temps[size_t(2 * s + 1)].second;
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, x.get(), factor.get(), t1.get()));
    for (int64_t k = 1; k < ops_per_step; ++k) {
      const View &from = k % 2 ? t1 : t2, &to = k % 2 ? t2 : t1;
      NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, from.get(), factor.get(), to.get()));
    }
    const View &last = (ops_per_step - 1) % 2 ? t2 : t1;
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, acc.get(), last.get(), acc.get()));
    temps[size_t(2 * s)] = {};  // the step's temporaries die with it
    temps[size_t(2 * s + 1)] = {};
  }
  const std::vector<double> got = Read<double>(accb);
  const npvk_stats d = Delta(before);
  EXPECT_EQ(d.dispatches, uint64_t(steps));
  // New kernels this test made (none if an earlier test left it in memory).
  EXPECT_LE(GetStats(ctx()).kernels_compiled - before.kernels_compiled +
                GetStats(ctx()).disk_cache_hits - before.disk_cache_hits,
            1u);
  const std::vector<double> xs = Ramp(n, 0.5, 0.001);
  for (int64_t i = 0; i < n; ++i) {
    double t = xs[size_t(i)], sum = 0.0;
    for (int64_t k = 0; k < ops_per_step; ++k) t *= 1.0001;
    for (int64_t s = 0; s < steps; ++s) sum += t;
    ASSERT_EQ(got[size_t(i)], sum) << i;
  }
}

// Each op of a fused kernel reports its own FP exceptions.
TEST_F(Fusion, FpErrorsAreReportedPerOp) {
  const int64_t n = 64;
  std::vector<double> x = Ramp(n, 0.0, 1.0);  // x[0] == 0
  auto [xb, xv] = Array(x);
  auto [tb, t] = Empty<double>(n);
  auto [yb, y] = Empty<double>(n);
  View one = MakeScalar(ctx(), 1.0);
  npvk_fp_error drain[8];
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), drain, 8, &count));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, xv.get(), one.get(), t.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, one.get(), xv.get(), y.get()));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  npvk_fp_error errors[8];
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_TRUE_DIVIDE));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_DIVIDE_BY_ZERO));
  EXPECT_TRUE(std::isinf(Read<double>(yb)[0]));
}

// npvk_context_take_op_fp_errors: one entry per op, named by its serial, where
// the merged take gives one per op kind; and the serial up to which ops ran.
TEST_F(Fusion, FpErrorsPerOpSerial) {
  const int64_t n = 64;
  std::vector<double> x = Ramp(n, 0.0, 1.0);  // x[0] == 0
  auto [xb, xv] = Array(x);
  auto [yb, y] = Empty<double>(n);
  auto [zb, z] = Empty<double>(n);
  View one = MakeScalar(ctx(), 1.0);
  npvk_op_fp_error errors[8];
  uint32_t count = 0;
  uint64_t ran = 0, first = 0, second = 0;
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_op_fp_errors(ctx(), errors, 8, &count, nullptr));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, one.get(), xv.get(), y.get()));
  NPVK_ASSERT_OK(npvk_context_last_op(ctx(), &first));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, one.get(), xv.get(), z.get()));
  NPVK_ASSERT_OK(npvk_context_last_op(ctx(), &second));
  NPVK_ASSERT_OK(npvk_context_take_op_fp_errors(ctx(), errors, 8, &count, &ran));
  EXPECT_EQ(count, 0u);
  EXPECT_LT(ran, first);  // not run yet
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_op_fp_errors(ctx(), errors, 1, &count, &ran));
  ASSERT_EQ(count, 1u);  // the capacity: the other stays
  EXPECT_EQ(errors[0].serial, first);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_TRUE_DIVIDE));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_DIVIDE_BY_ZERO));
  EXPECT_EQ(ran, second);
  NPVK_ASSERT_OK(npvk_context_take_op_fp_errors(ctx(), errors, 8, &count, &ran));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(errors[0].serial, second);
}

// The rare path that computes flags starts over from the loaded values,
// not from memory this element's own in-place ops already overwrote.
TEST_F(Fusion, FpErrorsOfInPlaceChainsUseTheLoadedValues) {
  const int64_t n = 300;
  std::vector<double> x = Ramp(n, 1.0, 1.0), y = Ramp(n, 0.0, 1.0);  // y[0] == 0
  auto [xb, xv] = Array(x);
  auto [yb, yv] = Array(y);
  View one = MakeScalar(ctx(), 1.0);
  npvk_fp_error errors[8];
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, xv.get(), yv.get(), xv.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, xv.get(), one.get(), xv.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, xv.get(), yv.get(), xv.get()));
  const std::vector<double> got = Read<double>(xb);
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  // 1/0 = inf (divide by zero); inf - 1 = inf (quiet); inf * 0 = NaN from a
  // non-NaN input: invalid, reported for multiply.
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_TRUE_DIVIDE));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_DIVIDE_BY_ZERO));
  EXPECT_EQ(errors[1].op, uint32_t(NPVK_OP_MULTIPLY));
  EXPECT_EQ(errors[1].flags, uint32_t(NPVK_FP_INVALID));
  EXPECT_TRUE(std::isnan(got[0]));
  for (int64_t i = 1; i < n; ++i)
    ASSERT_EQ(got[size_t(i)], (x[size_t(i)] / y[size_t(i)] - 1.0) * y[size_t(i)]);
}

// The same chain in a time-step loop compiles its kernel once.
TEST_F(Fusion, RepeatedChainsReuseTheFusedKernel) {
  const int64_t n = 1000;
  auto [xb, x_binding] = Array(Ramp(n, 0.0, 0.001));
  View &x = x_binding;  // clang 14 cannot capture a structured binding
  View half = MakeScalar(ctx(), 0.5), quarter = MakeScalar(ctx(), 0.25);
  auto step = [&] {
    auto [tb, t] = Empty<double>(n);
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, x.get(), half.get(), t.get()));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, t.get(), quarter.get(), x.get()));
  };
  step();
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  for (int k = 0; k < 5; ++k) {
    step();
    NPVK_ASSERT_OK(npvk_sync(ctx()));
  }
  const npvk_stats after = GetStats(ctx());
  EXPECT_EQ(after.kernels_compiled, before.kernels_compiled);
  EXPECT_EQ(after.pipelines_created, before.pipelines_created);
  const std::vector<double> got = Read<double>(xb);
  const std::vector<double> x0 = Ramp(n, 0.0, 0.001);
  for (int64_t i = 0; i < n; ++i) {
    double v = x0[size_t(i)];
    for (int k = 0; k < 6; ++k) v = v * 0.5 + 0.25;
    ASSERT_EQ(got[size_t(i)], v) << i;
  }
}

}  // namespace
}  // namespace npvk_test
