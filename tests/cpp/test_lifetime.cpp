// Object lifetimes: a released context takes its objects with it, and a released buffer lives on
// for as long as a view or a pending operation uses it.
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

}  // namespace
}  // namespace npvk_test
