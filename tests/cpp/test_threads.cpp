// "All functions are thread-safe. Work on one context is serialised." Several threads record,
// sync and read on one context at once, and error messages stay with their thread.
#include <atomic>
#include <thread>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class Threads : public NpvkTest {};

// Each thread runs x = x * 3 + t on its own buffer many times, reading back as it goes, while
// the others do the same and one more thread keeps calling npvk_sync and npvk_context_get_stats.
TEST_F(Threads, ManyThreadsOnOneContext) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  constexpr int64_t kN = 513;
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::thread syncer([&] {
    while (!done) {
      if (npvk_sync(ctx()) != NPVK_SUCCESS) ++failures;
      npvk_stats s{};
      s.struct_size = sizeof(s);
      if (npvk_context_get_stats(ctx(), &s) != NPVK_SUCCESS) ++failures;
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      npvk_buffer buf{0};
      npvk_view x{0}, three{0}, add{0};
      const int64_t shape[] = {kN};
      const int64_t t64 = t, k3 = 3;
      if (npvk_buffer_create(ctx(), kN * 8, &buf) != NPVK_SUCCESS ||
          npvk_view_create(buf, 0, NPVK_INT64, 1, shape, nullptr, &x) != NPVK_SUCCESS ||
          npvk_view_create_scalar(ctx(), NPVK_INT64, &k3, &three) != NPVK_SUCCESS ||
          npvk_view_create_scalar(ctx(), NPVK_INT64, &t64, &add) != NPVK_SUCCESS) {
        ++failures;
        return;
      }
      std::vector<int64_t> want(kN, 0), got(kN);
      for (int64_t i = 0; i < kN; ++i) want[i] = i;
      if (npvk_buffer_write(buf, 0, want.data(), kN * 8) != NPVK_SUCCESS) ++failures;
      for (int r = 0; r < kRounds; ++r) {
        if (npvk_binary(ctx(), NPVK_OP_MULTIPLY, x, three, x) != NPVK_SUCCESS ||
            npvk_binary(ctx(), NPVK_OP_ADD, x, add, x) != NPVK_SUCCESS) {
          ++failures;
        }
        for (int64_t &w : want) w = static_cast<int64_t>(static_cast<uint64_t>(w) * 3u) + t;
        if (r % 5 == 4) {
          if (npvk_buffer_read(buf, 0, got.data(), kN * 8) != NPVK_SUCCESS || got != want) {
            ++failures;
          }
        }
      }
      npvk_view_release(x);
      npvk_view_release(three);
      npvk_view_release(add);
      npvk_buffer_release(buf);
    });
  }
  for (std::thread &w : workers) w.join();
  done = true;
  syncer.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(Threads, LastErrorMessageIsPerThread) {
  uint64_t size = 0;
  ASSERT_NE(npvk_buffer_size(npvk_buffer{0}, &size), NPVK_SUCCESS);
  const std::string mine = npvk_last_error_message();
  EXPECT_FALSE(mine.empty());
  std::string other = "unset";
  std::thread([&] { other = npvk_last_error_message(); }).join();
  EXPECT_EQ(other, "") << "another thread sees this thread's failure";
  EXPECT_EQ(std::string(npvk_last_error_message()), mine);
}

// npvk_context_take_thread_fp_errors hands a thread the FP errors of the ops it recorded only,
// whichever thread's flush ran them; npvk_context_take_fp_errors takes everyone's.
TEST_F(Threads, FpErrorsStayWithTheRecordingThread) {
  npvk_fp_error errors[8];
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  auto [zb, z] = MakeArray(ctx(), std::vector<double>(64, 0.0));
  auto [rb, r] = MakeArray(ctx(), std::vector<double>(64, 1.0));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, z.get(), z.get(), r.get()));
  uint32_t other_count = 99;
  npvk_status other_sync = NPVK_SUCCESS, other_take = NPVK_SUCCESS;
  std::thread([&] {
    other_sync = npvk_sync(ctx());  // runs this thread's division
    other_take = npvk_context_take_thread_fp_errors(ctx(), errors, 8, &other_count);
  }).join();
  NPVK_ASSERT_OK(other_sync);
  NPVK_ASSERT_OK(other_take);
  EXPECT_EQ(other_count, 0u) << "another thread took this thread's FP error";
  NPVK_ASSERT_OK(npvk_context_take_thread_fp_errors(ctx(), errors, 8, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_TRUE_DIVIDE));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_INVALID));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, z.get(), z.get(), r.get()));
  std::thread([&] { other_sync = npvk_sync(ctx()); }).join();
  NPVK_ASSERT_OK(other_sync);
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  EXPECT_EQ(count, 1u) << "the unfiltered take lost it";
}

TEST(ThreadsOwn, ContextsInParallelThreads) {
  std::atomic<int> failures{0};
  auto work = [&](int seed) {
    OwnedContext own(NPVK_CONTEXT_NO_DISK_CACHE, nullptr);
    if (own.get().id == 0) {
      ++failures;
      return;
    }
    const int64_t n = 1000;
    std::vector<float> a(n);
    for (int64_t i = 0; i < n; ++i) a[i] = static_cast<float>(i * seed);
    Buffer buf = MakeBuffer(own.get(), a);
    View v = MakeView1D(buf, NPVK_FLOAT32, n);
    for (int r = 0; r < 10; ++r) {
      if (npvk_binary(own.get(), NPVK_OP_ADD, v.get(), v.get(), v.get()) != NPVK_SUCCESS) {
        ++failures;
      }
    }
    std::vector<float> got = Read<float>(buf);
    for (int64_t i = 0; i < n; ++i) {
      if (got[i] != a[i] * 1024.0f) ++failures;
    }
  };
  std::thread t1(work, 1), t2(work, 3);
  t1.join();
  t2.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace npvk_test
