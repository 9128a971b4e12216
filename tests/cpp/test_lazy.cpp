// Lazy execution: recorded work runs in recording order with the hazards between ops, buffer
// writes and reads respected, and the statistics count what happened.
#include <algorithm>
#include <numeric>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class Lazy : public NpvkTest {
 protected:
  // An int64 vector of n elements with a view over all of it; int64 keeps results exact.
  struct Vec {
    Buffer buf;
    View view;
  };
  Vec MakeVec(const std::vector<int64_t> &values) {
    Vec v;
    v.buf = MakeBuffer(ctx(), values);
    v.view = MakeView1D(v.buf, NPVK_INT64, static_cast<int64_t>(values.size()));
    return v;
  }
  static std::vector<int64_t> Iota(int64_t n, int64_t start) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), start);
    return v;
  }
};

TEST_F(Lazy, DependentOpsRunInOrder) {
  const int64_t n = 1000;
  const std::vector<int64_t> b0 = Iota(n, -300), c0 = Iota(n, 7);
  Vec a = MakeVec(std::vector<int64_t>(n, 0)), b = MakeVec(b0), c = MakeVec(c0);
  Vec d = MakeVec(std::vector<int64_t>(n, 0));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, b.view.get(), c.view.get(), a.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, a.view.get(), a.view.get(), d.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, d.view.get(), b.view.get(), a.view.get()));
  // Write after read: b is overwritten after the ops above read it.
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, c.view.get(), c.view.get(), b.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, a.view.get(), b.view.get(), d.view.get()));
  const std::vector<int64_t> got_a = Read<int64_t>(a.buf);
  const std::vector<int64_t> got_b = Read<int64_t>(b.buf);
  const std::vector<int64_t> got_d = Read<int64_t>(d.buf);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a1 = b0[i] + c0[i];
    const int64_t d1 = a1 * a1;
    const int64_t a2 = d1 - b0[i];
    const int64_t b2 = c0[i] * c0[i];
    ASSERT_EQ(got_a[i], a2) << "a at " << i;
    ASSERT_EQ(got_b[i], b2) << "b at " << i;
    ASSERT_EQ(got_d[i], a2 + b2) << "d at " << i;
  }
}

TEST_F(Lazy, LongChainOnOneBuffer) {
  const int64_t n = 129;
  Vec x = MakeVec(Iota(n, 0));
  const int64_t one = 1;
  View inc = MakeScalar(ctx(), one);
  // More ops than npvk queues before it flushes on its own ("when the queue is long").
  constexpr int kOps = 5000;
  for (int i = 0; i < kOps; ++i) {
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, x.view.get(), inc.get(), x.view.get()));
  }
  EXPECT_EQ(Read<int64_t>(x.buf), Iota(n, kOps));
}

TEST_F(Lazy, BufferWritesAreOrderedWithRecordedWork) {
  const int64_t n = 257;
  Vec src = MakeVec(Iota(n, 0));
  Vec first = MakeVec(std::vector<int64_t>(n, 0));
  Vec second = MakeVec(std::vector<int64_t>(n, 0));
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, src.view.get(), first.view.get()));
  // Overwrites what the pending negative reads: it must still see the old values.
  const std::vector<int64_t> replaced = Iota(n, 1000);
  NPVK_ASSERT_OK(npvk_buffer_write(src.buf.get(), 0, replaced.data(), n * sizeof(int64_t)));
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, src.view.get(), second.view.get()));
  // Overwrites part of what the second negative writes: the write comes after it.
  const int64_t patch[2] = {42, 43};
  NPVK_ASSERT_OK(npvk_buffer_write(second.buf.get(), 8, patch, sizeof patch));
  std::vector<int64_t> want_first = Iota(n, 0), want_second = replaced;
  for (int64_t &v : want_first) v = -v;
  for (int64_t &v : want_second) v = -v;
  want_second[1] = 42;
  want_second[2] = 43;
  EXPECT_EQ(Read<int64_t>(first.buf), want_first);
  EXPECT_EQ(Read<int64_t>(second.buf), want_second);
  EXPECT_EQ(Read<int64_t>(src.buf), replaced);
}

TEST_F(Lazy, StatsCountOpsFlushesAndKernelReuse) {
  Vec small_a = MakeVec(Iota(100, 0)), small_b = MakeVec(Iota(100, 5));
  Vec big_a = MakeVec(Iota(1000, 0)), big_b = MakeVec(Iota(1000, 9));
  NPVK_ASSERT_OK(npvk_sync(ctx()));

  const npvk_stats s0 = GetStats(ctx());
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, small_a.view.get(), small_b.view.get(),
                             small_a.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, small_a.view.get(), small_b.view.get(),
                             small_b.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, small_a.view.get(), small_b.view.get(),
                             small_a.view.get()));
  const npvk_stats s1 = GetStats(ctx());
  EXPECT_EQ(s1.ops_recorded - s0.ops_recorded, 3u);
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats s2 = GetStats(ctx());
  EXPECT_EQ(s2.flushes - s1.flushes, 1u) << "one sync of pending work is one submission";
  // The three ops touch the same elements of the same arrays: one fused
  // kernel, each element's ops in order within one invocation, no barrier.
  EXPECT_EQ(s2.dispatches - s0.dispatches, 1u);
  EXPECT_EQ(s2.ops_fused - s0.ops_fused, 3u);
  EXPECT_EQ(s2.barriers - s0.barriers, 0u);

  // The same op on another size reuses the kernel from memory. A read of
  // pending work flushes once.
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, big_a.view.get(), big_b.view.get(),
                             big_a.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, big_a.view.get(), big_b.view.get(),
                             big_b.view.get()));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, big_a.view.get(), big_b.view.get(),
                             big_a.view.get()));
  const npvk_stats s3 = GetStats(ctx());
  std::vector<int64_t> got = Read<int64_t>(big_a.buf);
  const npvk_stats s4 = GetStats(ctx());
  EXPECT_EQ(s4.kernels_compiled, s3.kernels_compiled);
  EXPECT_GT(s4.kernel_cache_hits, s3.kernel_cache_hits);
  EXPECT_EQ(s4.flushes - s3.flushes, 1u);
  // a ^= b; b ^= a; a ^= b swaps the two.
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(got[i], i + 9);

  // A failed record counts nothing.
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats s5 = GetStats(ctx());
  EXPECT_NE(npvk_binary(ctx(), NPVK_OP_BITWISE_XOR, small_a.view.get(), big_a.view.get(),
                        small_a.view.get()),
            NPVK_SUCCESS);
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats s6 = GetStats(ctx());
  EXPECT_EQ(s6.ops_recorded, s5.ops_recorded);
  EXPECT_EQ(s6.dispatches, s5.dispatches);
}

// NumPy calls a ufunc's inner loop once per row; npvk may fold such consecutive row ops into
// one 2-d operation. Whatever it folds, the result must be that of the ops in order.
class LazyRows : public Lazy {
 protected:
  static constexpr int64_t kRows = 40;
  static constexpr int64_t kCols = 37;
  View Row(const Buffer &buf, int64_t row) {
    return MakeView(buf, NPVK_INT64, {kCols}, {1}, row * kCols);
  }
  // Row `row` read backwards.
  View ReversedRow(const Buffer &buf, int64_t row) {
    return MakeView(buf, NPVK_INT64, {kCols}, {-1}, row * kCols + kCols - 1);
  }
};

TEST_F(LazyRows, RowByRowEqualsWholeMatrix) {
  const std::vector<int64_t> a0 = Iota(kRows * kCols, -500), b0 = Iota(kRows * kCols, 3);
  Buffer a = MakeBuffer(ctx(), a0), b = MakeBuffer(ctx(), b0);
  Buffer fwd = MakeBuffer(ctx(), std::vector<int64_t>(kRows * kCols, 0));
  Buffer bwd = MakeBuffer(ctx(), std::vector<int64_t>(kRows * kCols, 0));
  Buffer rev = MakeBuffer(ctx(), std::vector<int64_t>(kRows * kCols, 0));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  std::vector<View> keep;
  for (int64_t i = 0; i < kRows; ++i) {
    keep.push_back(Row(a, i));
    keep.push_back(Row(b, i));
    keep.push_back(Row(fwd, i));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, keep[keep.size() - 3].get(),
                               keep[keep.size() - 2].get(), keep.back().get()));
  }
  EXPECT_EQ(GetStats(ctx()).ops_recorded - before.ops_recorded, uint64_t{kRows});
  for (int64_t i = kRows - 1; i >= 0; --i) {  // rows in reverse order
    keep.push_back(Row(a, i));
    keep.push_back(Row(b, i));
    keep.push_back(Row(bwd, i));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, keep[keep.size() - 3].get(),
                               keep[keep.size() - 2].get(), keep.back().get()));
  }
  for (int64_t i = 0; i < kRows; ++i) {  // every row read backwards
    keep.push_back(ReversedRow(a, i));
    keep.push_back(Row(b, i));
    keep.push_back(ReversedRow(rev, i));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_SUBTRACT, keep[keep.size() - 3].get(),
                               keep[keep.size() - 2].get(), keep.back().get()));
  }
  const std::vector<int64_t> got_fwd = Read<int64_t>(fwd), got_bwd = Read<int64_t>(bwd);
  const std::vector<int64_t> got_rev = Read<int64_t>(rev);
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      const int64_t e = i * kCols + j;
      const int64_t mirrored = i * kCols + kCols - 1 - j;
      ASSERT_EQ(got_fwd[e], a0[e] - b0[e]) << i << "," << j;
      ASSERT_EQ(got_bwd[e], a0[e] - b0[e]) << i << "," << j;
      // rev[mirrored] = a[mirrored] - b[e]
      ASSERT_EQ(got_rev[mirrored], a0[mirrored] - b0[e]) << i << "," << j;
    }
  }
}

TEST_F(LazyRows, BroadcastRowScalarAndSkippedRows) {
  const std::vector<int64_t> a0 = Iota(kRows * kCols, 11), v0 = Iota(kCols, 1000);
  Buffer a = MakeBuffer(ctx(), a0), v = MakeBuffer(ctx(), v0);
  Buffer out = MakeBuffer(ctx(), std::vector<int64_t>(kRows * kCols, -1));
  View vrow = MakeView1D(v, NPVK_INT64, kCols);
  View seven = MakeScalar(ctx(), int64_t{7});
  std::vector<View> keep;
  // out[i] = a[i] + v for rows 0, 1, 2, then 4, 6, 8 (the step changes), then 9, 10 ...
  std::vector<int64_t> rows = {0, 1, 2, 4, 6, 8, 9, 10, 11, 20, 30, 31, 32};
  for (int64_t i : rows) {
    keep.push_back(Row(a, i));
    keep.push_back(Row(out, i));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, keep[keep.size() - 2].get(), vrow.get(),
                               keep.back().get()));
  }
  // Then out[i] *= 7 in place on every row.
  for (int64_t i = 0; i < kRows; ++i) {
    keep.push_back(Row(out, i));
    NPVK_ASSERT_OK(
        npvk_binary(ctx(), NPVK_OP_MULTIPLY, keep.back().get(), seven.get(), keep.back().get()));
  }
  const std::vector<int64_t> got = Read<int64_t>(out);
  for (int64_t i = 0; i < kRows; ++i) {
    const bool written = std::find(rows.begin(), rows.end(), i) != rows.end();
    for (int64_t j = 0; j < kCols; ++j) {
      const int64_t e = i * kCols + j;
      ASSERT_EQ(got[e], written ? (a0[e] + v0[j]) * 7 : -7) << i << "," << j;
    }
  }
}

TEST_F(LazyRows, DependentAndAccumulatingRows) {
  // x[i + 1] = x[i] + d[i]: each row reads the row written just before it.
  const std::vector<int64_t> d0 = Iota(kRows * kCols, 1);
  Buffer x = MakeBuffer(ctx(), std::vector<int64_t>(kRows * kCols, 0));
  Buffer d = MakeBuffer(ctx(), d0);
  Buffer acc = MakeBuffer(ctx(), std::vector<int64_t>(kCols, 0));
  View acc_view = MakeView1D(acc, NPVK_INT64, kCols);
  std::vector<View> keep;
  for (int64_t i = 0; i + 1 < kRows; ++i) {
    keep.push_back(Row(x, i));
    keep.push_back(Row(d, i));
    keep.push_back(Row(x, i + 1));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, keep[keep.size() - 3].get(),
                               keep[keep.size() - 2].get(), keep.back().get()));
  }
  // acc += d[i] for every row: the same output row again and again (a reduction).
  for (int64_t i = 0; i < kRows; ++i) {
    keep.push_back(Row(d, i));
    NPVK_ASSERT_OK(
        npvk_binary(ctx(), NPVK_OP_ADD, acc_view.get(), keep.back().get(), acc_view.get()));
  }
  const std::vector<int64_t> got_x = Read<int64_t>(x), got_acc = Read<int64_t>(acc);
  for (int64_t j = 0; j < kCols; ++j) {
    int64_t running = 0;
    for (int64_t i = 0; i < kRows; ++i) {
      ASSERT_EQ(got_x[i * kCols + j], running) << i << "," << j;
      running += d0[i * kCols + j];
    }
    ASSERT_EQ(got_acc[j], running) << "column " << j;
  }
}

// On a context of its own: resetting the shared one would hide validation messages.
TEST(LazyStats, ResetStatsZeroesCounters) {
  OwnedContext own(NPVK_CONTEXT_NO_DISK_CACHE, nullptr);
  ASSERT_NE(own.get().id, 0u);
  npvk_buffer b{0};
  NPVK_ASSERT_OK(npvk_buffer_create(own.get(), 64, &b));
  npvk_view v{0};
  const int64_t shape[] = {16};
  NPVK_ASSERT_OK(npvk_view_create(b, 0, NPVK_FLOAT32, 1, shape, nullptr, &v));
  NPVK_ASSERT_OK(npvk_unary(own.get(), NPVK_OP_NEGATIVE, v, v));
  NPVK_ASSERT_OK(npvk_sync(own.get()));
  npvk_stats before = GetStats(own.get());
  EXPECT_EQ(before.ops_recorded, 1u);
  EXPECT_GE(before.flushes, 1u);
  EXPECT_EQ(before.disk_cache_hits, 0u) << "NPVK_CONTEXT_NO_DISK_CACHE reads no disk cache";
  EXPECT_GE(before.kernels_compiled, 1u);
  NPVK_ASSERT_OK(npvk_context_reset_stats(own.get()));
  npvk_stats after = GetStats(own.get());
  EXPECT_EQ(after.ops_recorded, 0u);
  EXPECT_EQ(after.flushes, 0u);
  EXPECT_EQ(after.kernels_compiled, 0u);
  EXPECT_EQ(after.dispatches, 0u);
  NPVK_EXPECT_OK(npvk_view_release(v));
  NPVK_EXPECT_OK(npvk_buffer_release(b));
}

}  // namespace
}  // namespace npvk_test
