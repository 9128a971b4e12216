// The error tests' shared checks: a failing call returns one of the documented statuses with a
// message, and a fixture with a small buffer and views to pass around.
#ifndef NPVK_TESTS_CPP_ERRORS_SUPPORT_HPP
#define NPVK_TESTS_CPP_ERRORS_SUPPORT_HPP

#include <initializer_list>
#include <vector>

#include "npvk_test_support.hpp"

namespace npvk_test {

inline ::testing::AssertionResult FailsWith(npvk_status got,
                                            std::initializer_list<npvk_status> want,
                                            const char *call) {
  bool expected = false;
  for (npvk_status w : want) expected = expected || got == w;
  if (!expected) {
    auto failure = ::testing::AssertionFailure();
    failure << call << " returned " << npvk_status_string(got) << ", want";
    for (npvk_status w : want) failure << " " << npvk_status_string(w);
    if (got != NPVK_SUCCESS) failure << " (message: " << npvk_last_error_message() << ")";
    return failure;
  }
  const char *message = npvk_last_error_message();
  if (message == nullptr || message[0] == '\0') {
    return ::testing::AssertionFailure() << call << " failed without a message";
  }
  return ::testing::AssertionSuccess();
}

#define EXPECT_FAILS(call, ...) EXPECT_TRUE(FailsWith((call), {__VA_ARGS__}, #call))

inline constexpr uint64_t kNeverCreated = 0x7fff00000000abcdull;
inline constexpr uint64_t kUntouched = 0x5151515151515151ull;

class Errors : public NpvkTest {
 protected:
  // A float32 buffer of 16 elements (64 bytes) and a view of all of it.
  void SetUp() override {
    NpvkTest::SetUp();
    buf_ = MakeBuffer(ctx(), std::vector<float>(16, 1.0f));
    view_ = MakeView1D(buf_, NPVK_FLOAT32, 16);
    out_buf_ = MakeBuffer(ctx(), std::vector<float>(16, 0.0f));
    out_ = MakeView1D(out_buf_, NPVK_FLOAT32, 16);
  }

  npvk_view View1D(npvk_dtype dtype, int64_t n, std::vector<Buffer> &keep) {
    keep.push_back(MakeBuffer(ctx(), Bytes(static_cast<size_t>(n) * Itemsize(dtype), 0)));
    npvk_view v{0};
    const int64_t shape[] = {n};
    EXPECT_TRUE(IsOk(npvk_view_create(keep.back().get(), 0, dtype, 1, shape, nullptr, &v),
                     "npvk_view_create"));
    views_.emplace_back(v);
    return v;
  }

  // The context still works: a small add gives the right answer.
  void ExpectContextUsable() {
    NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, view_.get(), view_.get(), out_.get()));
    EXPECT_EQ(Read<float>(out_buf_), std::vector<float>(16, 2.0f));
  }

  Buffer buf_, out_buf_;
  View view_, out_;
  std::vector<View> views_;
};

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_ERRORS_SUPPORT_HPP
