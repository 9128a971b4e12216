#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

struct SharedState {
  npvk_context ctx{0};
  bool tried = false;
  std::string error;
};

SharedState &State() {
  static SharedState state;
  return state;
}

// Releases the shared context after the last test, while the library is still fully alive
// (a static destructor could run after the library's own statics are gone).
class SharedContextEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    SharedState &s = State();
    if (s.ctx.id != 0) {
      EXPECT_TRUE(IsOk(npvk_context_release(s.ctx), "npvk_context_release(shared)"));
      s.ctx.id = 0;
    }
  }
};

::testing::Environment *const kSharedContextEnvironment =
    ::testing::AddGlobalTestEnvironment(new SharedContextEnvironment);

uint64_t ValidationMessages(npvk_context ctx) {
  return GetStats(ctx).validation_messages;
}

}  // namespace

::testing::AssertionResult IsOk(npvk_status status, const char *call) {
  if (status == NPVK_SUCCESS) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << call << " returned " << npvk_status_string(status) << ": " << npvk_last_error_message();
}

npvk_context SharedContext() {
  SharedState &s = State();
  if (!s.tried) {
    s.tried = true;
    npvk_context_options options{};
    options.struct_size = sizeof(options);
    options.flags = NPVK_CONTEXT_VALIDATION;
    npvk_status status = npvk_context_create(&options, &s.ctx);
    if (status != NPVK_SUCCESS) {
      s.ctx.id = 0;
      s.error = std::string("npvk_context_create failed: ") + npvk_status_string(status) + ": " +
                npvk_last_error_message();
    }
  }
  return s.ctx;
}

const std::string &SharedContextError() {
  return State().error;
}

npvk_stats GetStats(npvk_context ctx) {
  npvk_stats stats{};
  stats.struct_size = sizeof(stats);
  EXPECT_TRUE(IsOk(npvk_context_get_stats(ctx, &stats), "npvk_context_get_stats"));
  return stats;
}

void NpvkTest::SetUp() {
  ctx_ = SharedContext();
  ASSERT_NE(ctx_.id, 0u) << SharedContextError();
  validation_messages_before_ = ValidationMessages(ctx_);
}

void NpvkTest::TearDown() {
  if (ctx_.id == 0) return;
  // Pending work may still trigger messages when it is submitted.
  EXPECT_TRUE(IsOk(npvk_sync(ctx_), "npvk_sync at test end"));
  uint64_t after = ValidationMessages(ctx_);
  EXPECT_EQ(after, validation_messages_before_)
      << "Khronos validation reported " << (after - validation_messages_before_)
      << " message(s) during this test (npvk printed them above)";
}

OwnedContext::OwnedContext(uint32_t flags, const char *cache_dir) {
  npvk_context_options options{};
  options.struct_size = sizeof(options);
  options.flags = flags | NPVK_CONTEXT_VALIDATION;
  options.cache_dir = cache_dir;
  status_ = npvk_context_create(&options, &ctx_);
  if (status_ != NPVK_SUCCESS) {
    ADD_FAILURE() << "npvk_context_create: " << npvk_status_string(status_) << ": "
                  << npvk_last_error_message();
    ctx_.id = 0;
  }
}

OwnedContext::~OwnedContext() {
  Release();
}

void OwnedContext::Release() {
  if (ctx_.id == 0) return;
  EXPECT_TRUE(IsOk(npvk_sync(ctx_), "npvk_sync before release"));
  uint64_t messages = ValidationMessages(ctx_);
  EXPECT_EQ(messages, 0u) << "Khronos validation reported messages on this test's own context";
  EXPECT_TRUE(IsOk(npvk_context_release(ctx_), "npvk_context_release"));
  ctx_.id = 0;
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
  if (this != &o) {
    Reset();
    b_ = o.b_;
    o.b_.id = 0;
  }
  return *this;
}

void Buffer::Reset() {
  if (b_.id != 0) {
    EXPECT_TRUE(IsOk(npvk_buffer_release(b_), "npvk_buffer_release"));
  }
  b_.id = 0;
}

View &View::operator=(View &&o) noexcept {
  if (this != &o) {
    Reset();
    v_ = o.v_;
    o.v_.id = 0;
  }
  return *this;
}

void View::Reset() {
  if (v_.id != 0) {
    EXPECT_TRUE(IsOk(npvk_view_release(v_), "npvk_view_release"));
  }
  v_.id = 0;
}

Buffer MakeBuffer(npvk_context ctx, const Bytes &bytes) {
  npvk_buffer b{0};
  const uint64_t size = bytes.empty() ? 16 : bytes.size();
  EXPECT_TRUE(IsOk(npvk_buffer_create(ctx, size, &b), "npvk_buffer_create"));
  if (b.id != 0 && !bytes.empty()) {
    EXPECT_TRUE(IsOk(npvk_buffer_write(b, 0, bytes.data(), bytes.size()), "npvk_buffer_write"));
  }
  return Buffer(b);
}

std::vector<int64_t> ToByteStrides(const std::vector<int64_t> &elements, npvk_dtype dtype) {
  std::vector<int64_t> bytes(elements.size());
  const int64_t itemsize = static_cast<int64_t>(Itemsize(dtype));
  for (size_t i = 0; i < elements.size(); ++i) bytes[i] = elements[i] * itemsize;
  return bytes;
}

View MakeView(const Buffer &buf, npvk_dtype dtype, const std::vector<int64_t> &shape,
              const std::vector<int64_t> &strides, int64_t offset) {
  npvk_view v{0};
  const std::vector<int64_t> byte_strides = ToByteStrides(strides, dtype);
  const uint64_t byte_offset = static_cast<uint64_t>(offset) * Itemsize(dtype);
  EXPECT_TRUE(
      IsOk(npvk_view_create(buf.get(), byte_offset, dtype, static_cast<uint32_t>(shape.size()),
                            shape.data(), strides.empty() ? nullptr : byte_strides.data(), &v),
           "npvk_view_create"));
  return View(v);
}

View MakeView1D(const Buffer &buf, npvk_dtype dtype, int64_t n) {
  return MakeView(buf, dtype, {n});
}

Bytes ReadBytes(const Buffer &buf) {
  uint64_t size = 0;
  EXPECT_TRUE(IsOk(npvk_buffer_size(buf.get(), &size), "npvk_buffer_size"));
  Bytes out(size);
  EXPECT_TRUE(IsOk(npvk_buffer_read(buf.get(), 0, out.data(), size), "npvk_buffer_read"));
  return out;
}

}  // namespace npvk_test
