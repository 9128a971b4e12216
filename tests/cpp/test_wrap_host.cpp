// npvk_buffer_wrap_host: page-aligned memory is imported (zero-copy where the device has
// VK_EXT_external_memory_host, as lavapipe does); other memory works through a device copy.
// Either way results land in the host memory after npvk_buffer_sync, and host writes announced
// with npvk_buffer_host_modified are seen by the next op.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class WrapHost : public NpvkTest {
 protected:
  bool DeviceImportsHostMemory() {
    npvk_device_info info{};
    info.struct_size = sizeof(info);
    EXPECT_TRUE(IsOk(npvk_context_device_info(ctx(), &info), "npvk_context_device_info"));
    return info.host_memory_import != 0;
  }

  // out = a * 3 + 1 over wrapped memory, then the host changes `a`, says so, and the op runs
  // again. `a_mem` and `out_mem` hold n int32 each.
  void CheckRoundTrip(int32_t *a_mem, int32_t *out_mem, int64_t n, int expect_zero_copy) {
    for (int64_t i = 0; i < n; ++i) {
      a_mem[i] = static_cast<int32_t>(i - 50);
      out_mem[i] = -7;
    }
    const uint64_t bytes = static_cast<uint64_t>(n) * sizeof(int32_t);
    npvk_buffer a_raw{0}, out_raw{0};
    NPVK_ASSERT_OK(npvk_buffer_wrap_host(ctx(), a_mem, bytes, &a_raw));
    Buffer a(a_raw);
    NPVK_ASSERT_OK(npvk_buffer_wrap_host(ctx(), out_mem, bytes, &out_raw));
    Buffer out(out_raw);
    int zero_copy = -1;
    NPVK_ASSERT_OK(npvk_buffer_is_zero_copy(a.get(), &zero_copy));
    if (expect_zero_copy >= 0) {
      EXPECT_EQ(zero_copy, expect_zero_copy);
    }
    uint64_t size = 0;
    NPVK_ASSERT_OK(npvk_buffer_size(a.get(), &size));
    EXPECT_EQ(size, bytes);

    View a_view = MakeView1D(a, NPVK_INT32, n);
    View out_view = MakeView1D(out, NPVK_INT32, n);
    View three = MakeScalar(ctx(), int32_t{3});
    View one = MakeScalar(ctx(), int32_t{1});
    auto run = [&] {
      NPVK_ASSERT_OK(
          npvk_binary(ctx(), NPVK_OP_MULTIPLY, a_view.get(), three.get(), out_view.get()));
      NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, out_view.get(), one.get(), out_view.get()));
      NPVK_ASSERT_OK(npvk_buffer_sync(out.get()));
    };
    run();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out_mem[i], static_cast<int32_t>(i - 50) * 3 + 1) << "host memory at " << i;
    }
    // The host rewrites the input, announces it, and the next op must see the new values.
    for (int64_t i = 0; i < n; ++i) a_mem[i] = static_cast<int32_t>(2 * i);
    NPVK_ASSERT_OK(npvk_buffer_host_modified(a.get()));
    run();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out_mem[i], static_cast<int32_t>(2 * i) * 3 + 1) << "after host_modified, at " << i;
    }
    // npvk_buffer_read sees the same.
    std::vector<int32_t> read = Read<int32_t>(out);
    EXPECT_EQ(0, std::memcmp(read.data(), out_mem, bytes));
    // The memory must outlive the buffers: release them and let pending work finish first.
    a_view.Reset();
    out_view.Reset();
    a.Reset();
    out.Reset();
    NPVK_ASSERT_OK(npvk_sync(ctx()));
  }
};

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

TEST_F(WrapHost, PageAlignedMemoryIsZeroCopy) {
  const size_t bytes = 4 * 4096;
  std::unique_ptr<void, FreeDeleter> a(std::aligned_alloc(4096, bytes));
  std::unique_ptr<void, FreeDeleter> out(std::aligned_alloc(4096, bytes));
  ASSERT_TRUE(a && out);
  const int expect = DeviceImportsHostMemory() ? 1 : 0;
  CheckRoundTrip(static_cast<int32_t *>(a.get()), static_cast<int32_t *>(out.get()),
                 bytes / sizeof(int32_t), expect);
}

TEST_F(WrapHost, UnalignedMemoryWorksThroughACopy) {
  // 4 bytes past a page boundary and a size that is no multiple of a page: nothing to import.
  const int64_t n = 1001;
  std::unique_ptr<void, FreeDeleter> a(std::aligned_alloc(4096, 2 * 4096 + 4096));
  std::unique_ptr<void, FreeDeleter> out(std::aligned_alloc(4096, 2 * 4096 + 4096));
  ASSERT_TRUE(a && out);
  CheckRoundTrip(reinterpret_cast<int32_t *>(static_cast<char *>(a.get()) + 4),
                 reinterpret_cast<int32_t *>(static_cast<char *>(out.get()) + 4), n, 0);
}

TEST_F(WrapHost, ZeroCopyMemoryUnderAnOffsetView) {
  // A wrapped page holding float64 data used through a strided view with an offset.
  const size_t bytes = 4096;
  std::unique_ptr<void, FreeDeleter> mem(std::aligned_alloc(4096, bytes));
  ASSERT_TRUE(mem);
  double *d = static_cast<double *>(mem.get());
  const int64_t count = bytes / sizeof(double);
  for (int64_t i = 0; i < count; ++i) d[i] = static_cast<double>(i);
  npvk_buffer raw{0};
  NPVK_ASSERT_OK(npvk_buffer_wrap_host(ctx(), d, bytes, &raw));
  Buffer buf(raw);
  // Odd elements, negated in place, starting at element 1.
  View odd = MakeView(buf, NPVK_FLOAT64, {count / 2}, {2}, 1);
  NPVK_ASSERT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, odd.get(), odd.get()));
  NPVK_ASSERT_OK(npvk_buffer_sync(buf.get()));
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(d[i], (i % 2) ? -static_cast<double>(i) : static_cast<double>(i)) << "at " << i;
  }
  odd.Reset();
  buf.Reset();
  NPVK_ASSERT_OK(npvk_sync(ctx()));
}

// "Waits for pending work, then frees everything": work recorded on zero-copy memory has run
// by the time npvk_context_release returns, without any sync.
TEST(WrapHostOwn, ContextReleaseFinishesPendingWork) {
  npvk_context_options options{};
  options.struct_size = sizeof(options);
  options.flags = NPVK_CONTEXT_VALIDATION | NPVK_CONTEXT_NO_DISK_CACHE;
  npvk_context ctx{0};
  NPVK_ASSERT_OK(npvk_context_create(&options, &ctx));
  npvk_device_info info{};
  info.struct_size = sizeof(info);
  NPVK_ASSERT_OK(npvk_context_device_info(ctx, &info));
  const size_t bytes = 2 * 4096;
  std::unique_ptr<void, FreeDeleter> mem(std::aligned_alloc(4096, bytes));
  ASSERT_TRUE(mem);
  float *f = static_cast<float *>(mem.get());
  const int64_t n = bytes / sizeof(float);
  for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(i);
  npvk_buffer buf{0};
  NPVK_ASSERT_OK(npvk_buffer_wrap_host(ctx, f, bytes, &buf));
  int zero_copy = 0;
  NPVK_ASSERT_OK(npvk_buffer_is_zero_copy(buf, &zero_copy));
  npvk_view v{0};
  const int64_t shape[] = {n};
  NPVK_ASSERT_OK(npvk_view_create(buf, 0, NPVK_FLOAT32, 1, shape, nullptr, &v));
  NPVK_ASSERT_OK(npvk_unary(ctx, NPVK_OP_NEGATIVE, v, v));
  NPVK_ASSERT_OK(npvk_binary(ctx, NPVK_OP_MULTIPLY, v, v, v));
  // Neither handle is released: the context release frees them.
  NPVK_ASSERT_OK(npvk_context_release(ctx));
  if (!zero_copy) GTEST_SKIP() << "not zero-copy: the results stay in device memory";
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(f[i], static_cast<float>(i * i)) << "at " << i;
}

}  // namespace
}  // namespace npvk_test
