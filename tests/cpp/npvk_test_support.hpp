// What every npvk test shares: one context per test binary, a fixture that turns Khronos
// validation messages into failures, RAII handles and small helpers over the C ABI.
#ifndef NPVK_TESTS_CPP_NPVK_TEST_SUPPORT_HPP
#define NPVK_TESTS_CPP_NPVK_TEST_SUPPORT_HPP

#include <gtest/gtest.h>
#include <npvk/npvk.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dtypes.hpp"

namespace npvk_test {

// Success, or a failure that names the call, the status and npvk's message.
::testing::AssertionResult IsOk(npvk_status status, const char *call);
#define NPVK_ASSERT_OK(call) ASSERT_TRUE(::npvk_test::IsOk((call), #call))
#define NPVK_EXPECT_OK(call) EXPECT_TRUE(::npvk_test::IsOk((call), #call))

// The context of this test binary, created on first use with NPVK_CONTEXT_VALIDATION and the
// default cache directory ($NPVK_CACHE_DIR under ctest). A context costs a Vulkan instance with
// the validation layer, so tests share it; it is released after the last test. Zero (and
// SharedContextError() says why) when it cannot be created.
npvk_context SharedContext();
const std::string &SharedContextError();

npvk_stats GetStats(npvk_context ctx);

// Base of every test that touches a device: fails the test when Khronos validation reported
// anything during it, because a validation message means the runtime misused Vulkan even if
// lavapipe happened to produce the right numbers.
class NpvkTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  npvk_context ctx() const { return ctx_; }

 private:
  npvk_context ctx_{0};
  uint64_t validation_messages_before_ = 0;
};

// A context of a test's own (other cache directory or flags), with the same validation check
// at release.
class OwnedContext {
 public:
  OwnedContext(uint32_t flags, const char *cache_dir);
  ~OwnedContext();
  OwnedContext(const OwnedContext &) = delete;
  OwnedContext &operator=(const OwnedContext &) = delete;
  npvk_context get() const { return ctx_; }
  npvk_status status() const { return status_; }
  // Releases now, failing the test on validation messages; the destructor then does nothing.
  void Release();

 private:
  npvk_context ctx_{0};
  npvk_status status_ = NPVK_SUCCESS;
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(npvk_buffer b) : b_(b) {}
  Buffer(Buffer &&o) noexcept : b_(o.b_) { o.b_.id = 0; }
  Buffer &operator=(Buffer &&o) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { Reset(); }
  npvk_buffer get() const { return b_; }
  // Releases the handle now (views keep the memory alive).
  void Reset();

 private:
  npvk_buffer b_{0};
};

class View {
 public:
  View() = default;
  explicit View(npvk_view v) : v_(v) {}
  View(View &&o) noexcept : v_(o.v_) { o.v_.id = 0; }
  View &operator=(View &&o) noexcept;
  View(const View &) = delete;
  View &operator=(const View &) = delete;
  ~View() { Reset(); }
  npvk_view get() const { return v_; }
  void Reset();

 private:
  npvk_view v_{0};
};

// A buffer holding `bytes`. Empty `bytes` gives 16 zero bytes, so that a size-0 view still has
// a buffer: whether a zero-byte buffer is valid is not what those tests check.
Buffer MakeBuffer(npvk_context ctx, const Bytes &bytes);
template <class T>
Buffer MakeBuffer(npvk_context ctx, const std::vector<T> &values) {
  return MakeBuffer(ctx, ToBytes(values));
}

// A view with shape and strides in elements (the ABI takes bytes; tests think in elements).
// Empty `strides` is C-contiguous. Negative and zero strides are passed through as they are.
View MakeView(const Buffer &buf, npvk_dtype dtype, const std::vector<int64_t> &shape,
              const std::vector<int64_t> &strides = {}, int64_t offset = 0);
// The whole buffer as a 1-D contiguous view.
View MakeView1D(const Buffer &buf, npvk_dtype dtype, int64_t n);

// A buffer holding `values` and a 1-D view of all of it.
template <class T>
std::pair<Buffer, View> MakeArray(npvk_context ctx, const std::vector<T> &values) {
  Buffer b = MakeBuffer(ctx, values);
  View v = MakeView1D(b, DtypeOf<T>(), int64_t(values.size()));
  return {std::move(b), std::move(v)};
}

template <class T>
View MakeScalar(npvk_context ctx, T value) {
  npvk_view v{0};
  EXPECT_TRUE(IsOk(npvk_view_create_scalar(ctx, DtypeOf<T>(), &value, &v), "view_create_scalar"));
  return View(v);
}

Bytes ReadBytes(const Buffer &buf);
template <class T>
std::vector<T> Read(const Buffer &buf) {
  return FromBytes<T>(ReadBytes(buf));
}

// Views' shapes and strides converted from elements to the ABI's bytes.
std::vector<int64_t> ToByteStrides(const std::vector<int64_t> &elements, npvk_dtype dtype);

// Sets (or, given null, unsets) an environment variable for a scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_NPVK_TEST_SUPPORT_HPP
