// Object lifetimes: a released context takes its objects with it, and a released buffer lives on
// for as long as a view or a pending operation uses it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "errors_support.hpp"

namespace npvk_test {
namespace {

class Lifetime : public Errors {};

TEST_F(Lifetime, ReleasedContextInvalidatesItsObjects) {
  OwnedContext other(0, nullptr);
  ASSERT_NE(other.get().id, 0u);
  const npvk_context released_ctx = other.get();
  npvk_buffer b{0};
  NPVK_ASSERT_OK(npvk_buffer_create(released_ctx, 64, &b));
  npvk_view v{0};
  const int64_t shape[] = {16};
  NPVK_ASSERT_OK(npvk_view_create(b, 0, NPVK_FLOAT32, 1, shape, nullptr, &v));
  // A view of another context in this one's op.
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v, view_.get(), out_.get()), NPVK_ERR_INVALID_HANDLE,
               NPVK_ERR_INVALID_ARGUMENT);
  other.Release();
  uint64_t size = 0;
  EXPECT_FAILS(npvk_sync(released_ctx), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_size(b, &size), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_view_release(v), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_context_release(released_ctx), NPVK_ERR_INVALID_HANDLE);
  ExpectContextUsable();
}

// "The view keeps the buffer's memory alive", and a pending operation does too: buffer and
// view handles go at every stage of a pending chain, and the result is still right.
TEST_F(Lifetime, ReleasedBufferLivesOnThroughViewsAndPendingWork) {
  const int64_t n = 1000;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(3 * i + 1);
  }
  Buffer a_buf = MakeBuffer(ctx(), a);
  Buffer b_buf = MakeBuffer(ctx(), b);
  Buffer out_buf = MakeBuffer(ctx(), std::vector<float>(n, 0.0f));
  Buffer final_buf = MakeBuffer(ctx(), std::vector<float>(n, 0.0f));
  View a_view = MakeView1D(a_buf, NPVK_FLOAT32, n);
  View b_view = MakeView1D(b_buf, NPVK_FLOAT32, n);
  View out_view = MakeView1D(out_buf, NPVK_FLOAT32, n);
  View final_view = MakeView1D(final_buf, NPVK_FLOAT32, n);
  // a's handle goes while its upload may still be pending; only its view holds it.
  a_buf.Reset();
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, a_view.get(), b_view.get(), out_view.get()));
  // b goes entirely, and the output's buffer handle too, while the add is pending.
  b_buf.Reset();
  b_view.Reset();
  out_buf.Reset();
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, out_view.get(), a_view.get(), out_view.get()));
  a_view.Reset();
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  // The output is only reachable through its view now: copy it out with positive.
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_POSITIVE, out_view.get(), final_view.get()));
  out_view.Reset();
  std::vector<float> got = Read<float>(final_buf);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], a[i] + b[i] + a[i]) << "at " << i;
  }
}

// fork() while another thread is inside a handle lookup: the child must still
// be able to call the ABI (the handle table's lock is held across the fork,
// not left locked by a thread the child does not have). Before that, about
// one fork in a few hundred left a child that hung in its first call. (The
// looking thread never throws: the unwinder's own lock is not fork-safe.)
//
// Not under AddressSanitizer: clang 14's ASan allocator (Debian 12's) takes
// no lock across fork(), so a child forked while any thread of the process
// is inside malloc (Mesa's own threads, say its shader-cache writer) hangs in
// its own first allocation, which this child makes when it builds the
// error's message. The sanitizer stage hung there once in about 30 runs
// under load; the plain build runs this test in the main stage.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPVK_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NPVK_TEST_UNDER_ASAN 1
#endif
TEST_F(Lifetime, ChildOfAForkCanLookUpHandlesWhileAThreadDid) {
#ifdef NPVK_TEST_UNDER_ASAN
  GTEST_SKIP() << "the ASan runtime's allocator is not fork-safe";
#endif
  npvk_buffer buffer{0};
  NPVK_ASSERT_OK(npvk_buffer_create(ctx(), 64, &buffer));
  const npvk_view unknown{(uint64_t(3) << 56) | 0xffffffu};  // a view handle never made
  std::atomic<bool> stop{false};
  std::thread looker([&] {
    uint64_t size = 0;
    while (!stop.load(std::memory_order_relaxed)) (void)npvk_buffer_size(buffer, &size);
  });
  int hung = 0, wrong = 0;
  for (int i = 0; i < 300 && hung == 0; ++i) {
    const pid_t pid = fork();
    if (pid == 0) _exit(npvk_view_release(unknown) == NPVK_ERR_INVALID_HANDLE ? 0 : 3);
    ASSERT_GT(pid, 0);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ++hung;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!hung && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) ++wrong;
  }
  stop = true;
  looker.join();
  NPVK_EXPECT_OK(npvk_buffer_release(buffer));
  EXPECT_EQ(hung, 0) << "a child hung in its first ABI call";
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace npvk_test
