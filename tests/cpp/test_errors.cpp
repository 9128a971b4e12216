// Error paths through the ABI. Each failing call must return the documented status, explain
// itself in npvk_last_error_message(), leave its `out` untouched and not crash; the context
// must stay usable afterwards.
#include <cstring>
#include <initializer_list>

#include "npvk_test_support.hpp"
#include "op_table.hpp"

namespace npvk_test {
namespace {

::testing::AssertionResult FailsWith(npvk_status got, std::initializer_list<npvk_status> want,
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

constexpr uint64_t kNeverCreated = 0x7fff00000000abcdull;
constexpr uint64_t kUntouched = 0x5151515151515151ull;

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

TEST_F(Errors, NullOutPointers) {
  const int64_t shape[] = {4};
  float value = 1;
  npvk_view v{kUntouched};
  npvk_buffer b{kUntouched};
  EXPECT_FAILS(npvk_context_create(nullptr, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_device_count(nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_device_get_info(0, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_device_select(nullptr, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_context_device_info(ctx(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_context_get_stats(ctx(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_buffer_create(ctx(), 16, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_buffer_wrap_host(ctx(), nullptr, 4096, &b), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(b.id, kUntouched);
  EXPECT_FAILS(npvk_buffer_size(buf_.get(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_buffer_is_zero_copy(buf_.get(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), 0, nullptr, 4), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), 0, nullptr, 4), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, nullptr, nullptr),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, nullptr, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  EXPECT_FAILS(npvk_view_create_scalar(ctx(), NPVK_FLOAT32, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create_scalar(ctx(), NPVK_FLOAT32, &value, nullptr),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  EXPECT_FAILS(npvk_op_get_info(NPVK_OP_ADD, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  const npvk_dtype dtypes[] = {NPVK_FLOAT32, NPVK_FLOAT32, NPVK_FLOAT32};
  EXPECT_FAILS(npvk_op_supported(ctx(), NPVK_OP_ADD, dtypes, 3, nullptr),
               NPVK_ERR_INVALID_ARGUMENT);
  int supported = -1;
  EXPECT_FAILS(npvk_op_supported(ctx(), NPVK_OP_ADD, nullptr, 3, &supported),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(supported, -1);
  const npvk_view outs[] = {out_.get()};
  const npvk_view ins[] = {view_.get(), view_.get()};
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_ADD, 2, nullptr, 1, outs), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_ADD, 2, ins, 1, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  ExpectContextUsable();
}

TEST_F(Errors, ZeroNeverCreatedAndReleasedHandles) {
  uint64_t size = 0;
  npvk_buffer b{kUntouched};
  for (uint64_t id : {uint64_t{0}, kNeverCreated}) {
    SCOPED_TRACE("handle " + std::to_string(id));
    EXPECT_FAILS(npvk_sync(npvk_context{id}), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_context_release(npvk_context{id}), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_buffer_create(npvk_context{id}, 16, &b), NPVK_ERR_INVALID_HANDLE);
    EXPECT_EQ(b.id, kUntouched);
    EXPECT_FAILS(npvk_buffer_release(npvk_buffer{id}), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_buffer_size(npvk_buffer{id}, &size), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_buffer_sync(npvk_buffer{id}), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_view_release(npvk_view{id}), NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, npvk_view{id}, out_.get()),
                 NPVK_ERR_INVALID_HANDLE);
    EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, view_.get(), npvk_view{id}),
                 NPVK_ERR_INVALID_HANDLE);
  }

  // Released handles stay invalid, also after new objects were created (never reused).
  Buffer released = MakeBuffer(ctx(), std::vector<float>(4, 0.0f));
  View released_view = MakeView1D(released, NPVK_FLOAT32, 4);
  const npvk_buffer old_buffer = released.get();
  const npvk_view old_view = released_view.get();
  released_view.Reset();
  released.Reset();
  Buffer fresh = MakeBuffer(ctx(), std::vector<float>(4, 0.0f));
  View fresh_view = MakeView1D(fresh, NPVK_FLOAT32, 4);
  EXPECT_NE(fresh.get().id, old_buffer.id);
  EXPECT_NE(fresh_view.get().id, old_view.id);
  EXPECT_FAILS(npvk_buffer_size(old_buffer, &size), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_release(old_buffer), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_view_release(old_view), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, old_view, fresh_view.get()),
               NPVK_ERR_INVALID_HANDLE);
  ExpectContextUsable();
}

TEST_F(Errors, HandlesOfAnotherKind) {
  uint64_t size = 0;
  const npvk_view buffer_as_view{buf_.get().id};
  const npvk_buffer view_as_buffer{view_.get().id};
  EXPECT_FAILS(npvk_view_release(buffer_as_view), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, buffer_as_view, view_.get(), out_.get()),
               NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, view_.get(), view_.get(),
                           npvk_view{out_buf_.get().id}),
               NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_size(view_as_buffer, &size), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_release(view_as_buffer), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_size(npvk_buffer{ctx().id}, &size), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_sync(npvk_context{buf_.get().id}), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_context_release(npvk_context{view_.get().id}), NPVK_ERR_INVALID_HANDLE);
  // The objects the wrong-kind calls named are unharmed.
  NPVK_EXPECT_OK(npvk_buffer_size(buf_.get(), &size));
  EXPECT_EQ(size, 64u);
  ExpectContextUsable();
}

TEST_F(Errors, ReleasedContextInvalidatesItsObjects) {
  OwnedContext other(0, nullptr);
  ASSERT_NE(other.get().id, 0u);
  const npvk_context released_ctx = other.get();
  npvk_buffer b{0};
  NPVK_ASSERT_OK(npvk_buffer_create(released_ctx, 64, &b));
  npvk_view v{0};
  const int64_t shape[] = {16};
  NPVK_ASSERT_OK(npvk_view_create(b, 0, NPVK_FLOAT32, 1, shape, nullptr, &v));
  // A view of another context in this one's op.
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v, view_.get(), out_.get()),
               NPVK_ERR_INVALID_HANDLE, NPVK_ERR_INVALID_ARGUMENT);
  other.Release();
  uint64_t size = 0;
  EXPECT_FAILS(npvk_sync(released_ctx), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_buffer_size(b, &size), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_view_release(v), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_context_release(released_ctx), NPVK_ERR_INVALID_HANDLE);
  ExpectContextUsable();
}

TEST_F(Errors, ContextOptions) {
  npvk_context c{kUntouched};
  npvk_context_options options{};
  options.struct_size = sizeof(options);
  options.flags = 1u << 30;
  EXPECT_FAILS(npvk_context_create(&options, &c), NPVK_ERR_INVALID_ARGUMENT);
  options.flags = NPVK_CONTEXT_VALIDATION;
  options.device = "no device is called this";
  EXPECT_FAILS(npvk_context_create(&options, &c), NPVK_ERR_NO_DEVICE);
  EXPECT_EQ(c.id, kUntouched);
}

TEST_F(Errors, ShapeMismatch) {
  std::vector<Buffer> keep;
  const npvk_view out34 = [&] {
    keep.push_back(MakeBuffer(ctx(), std::vector<float>(12, 0.0f)));
    npvk_view v{0};
    const int64_t shape[] = {3, 4};
    EXPECT_TRUE(IsOk(npvk_view_create(keep.back().get(), 0, NPVK_FLOAT32, 2, shape, nullptr, &v),
                     "npvk_view_create"));
    views_.emplace_back(v);
    return v;
  }();
  auto view_of = [&](std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    keep.push_back(MakeBuffer(ctx(), std::vector<float>(static_cast<size_t>(n), 1.0f)));
    npvk_view v{0};
    EXPECT_TRUE(IsOk(npvk_view_create(keep.back().get(), 0, NPVK_FLOAT32,
                                      static_cast<uint32_t>(shape.size()), shape.data(), nullptr,
                                      &v),
                     "npvk_view_create"));
    views_.emplace_back(v);
    return v;
  };
  const npvk_view v34 = view_of({3, 4});
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v34, view_of({5}), out34), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, view_of({4, 3}), v34, out34),
               NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, view_of({2, 3, 4}), v34, out34),
               NPVK_ERR_SHAPE_MISMATCH);
  // The output does not broadcast: inputs (3, 4) into a (4,) output.
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, v34, v34, view_of({4})), NPVK_ERR_SHAPE_MISMATCH);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, v34, view_of({1, 4})),
               NPVK_ERR_SHAPE_MISMATCH);
  // Broadcastable shapes are accepted.
  NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, view_of({3, 1}), view_of({4}), out34));
  NPVK_EXPECT_OK(npvk_binary(ctx(), NPVK_OP_ADD, view_of({1, 4}), v34, out34));
  ExpectContextUsable();
}

TEST_F(Errors, BadDtypes) {
  const int64_t shape[] = {4};
  npvk_view v{kUntouched};
  const char *name = nullptr;
  uint32_t itemsize = 0;
  float value = 1;
  for (int bad : {99, -1, static_cast<int>(NPVK_DTYPE_COUNT)}) {
    const npvk_dtype d = static_cast<npvk_dtype>(bad);
    SCOPED_TRACE("dtype " + std::to_string(bad));
    EXPECT_FAILS(npvk_view_create(buf_.get(), 0, d, 1, shape, nullptr, &v), NPVK_ERR_BAD_DTYPE);
    EXPECT_FAILS(npvk_view_create_scalar(ctx(), d, &value, &v), NPVK_ERR_BAD_DTYPE);
    EXPECT_FAILS(npvk_dtype_info(d, &name, &itemsize), NPVK_ERR_BAD_DTYPE);
  }
  EXPECT_EQ(v.id, kUntouched);

  // Dtype combinations that are no loop of the op (no implicit casts).
  std::vector<Buffer> keep;
  const npvk_view f32 = View1D(NPVK_FLOAT32, 4, keep);
  const npvk_view f64 = View1D(NPVK_FLOAT64, 4, keep);
  const npvk_view i32 = View1D(NPVK_INT32, 4, keep);
  const npvk_view i8 = View1D(NPVK_INT8, 4, keep);
  const npvk_view b8 = View1D(NPVK_BOOL, 4, keep);
  const npvk_view f32_out = View1D(NPVK_FLOAT32, 4, keep);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, i32, f32, f32_out), NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, f32, f32, f64), NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_TRUE_DIVIDE, i32, i32, View1D(NPVK_INT32, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_SUBTRACT, b8, b8, View1D(NPVK_BOOL, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_BITWISE_AND, f32, f32, f32_out), NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_LESS, f32, f32, f32_out), NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_SQRT, i32, View1D(NPVK_INT32, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_ISNAN, f32, f32_out), NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, b8, View1D(NPVK_BOOL, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  const npvk_view where_bad[] = {i8, f32, f32};
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_WHERE, 3, where_bad, 1, &f32_out), NPVK_ERR_BAD_DTYPE);
  const npvk_view where_mixed[] = {b8, f32, f64};
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_WHERE, 3, where_mixed, 1, &f32_out),
               NPVK_ERR_BAD_DTYPE);

  // float16 is declared but has no loops yet.
  const npvk_view f16 = View1D(NPVK_FLOAT16, 4, keep);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, f16, f16, View1D(NPVK_FLOAT16, 4, keep)),
               NPVK_ERR_UNSUPPORTED);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_CAST, f16, f32_out), NPVK_ERR_UNSUPPORTED);
  ExpectContextUsable();
}

TEST_F(Errors, ViewsOutsideTheirBuffer) {
  // buf_ holds 64 bytes: 16 float32.
  npvk_view v{kUntouched};
  auto create = [&](uint64_t offset, std::vector<int64_t> shape, std::vector<int64_t> strides) {
    return npvk_view_create(buf_.get(), offset, NPVK_FLOAT32, static_cast<uint32_t>(shape.size()),
                            shape.data(), strides.empty() ? nullptr : strides.data(), &v);
  };
  EXPECT_FAILS(create(0, {17}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(64, {1}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {16}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {4, 4}, {16, 4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(0, {2}, {-4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(4, {2, 2}, {-8, 4}), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(create(UINT64_MAX - 3, {1}, {}), NPVK_ERR_OUT_OF_BOUNDS);
  // Sizes whose byte extent overflows 64 bits must not wrap around into "inside".
  EXPECT_FAILS(create(0, {int64_t{1} << 40, int64_t{1} << 40}, {}), NPVK_ERR_OUT_OF_BOUNDS,
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(create(0, {3}, {int64_t{1} << 62}), NPVK_ERR_OUT_OF_BOUNDS,
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(create(0, {-1}, {}), NPVK_ERR_INVALID_ARGUMENT, NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_EQ(v.id, kUntouched);
  // The limits themselves are fine.
  for (auto [offset, shape, strides] :
       std::initializer_list<std::tuple<uint64_t, std::vector<int64_t>, std::vector<int64_t>>>{
           {60, {1}, {}}, {4, {2}, {-4}}, {0, {4, 4}, {16, 4}}, {60, {16}, {-4}},
           {8, {2, 2}, {-8, 4}},
           {0, {1000}, {0}}, {0, {0}, {}}}) {
    NPVK_EXPECT_OK(create(offset, shape, strides));
    views_.emplace_back(v);
  }
  ExpectContextUsable();
}

TEST_F(Errors, UnalignedViews) {
  npvk_view v{kUntouched};
  const int64_t shape[] = {2};
  const int64_t stride6[] = {6};
  const int64_t stride4[] = {4};
  EXPECT_FAILS(npvk_view_create(buf_.get(), 2, NPVK_FLOAT32, 1, shape, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, stride6, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_INT64, 1, shape, stride4, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 4, NPVK_FLOAT64, 1, shape, nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  // Offsets that are multiples of the itemsize but not of 4 or 16 bytes are fine.
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 3, NPVK_INT8, 1, shape, nullptr, &v));
  views_.emplace_back(v);
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 2, NPVK_INT16, 1, shape, nullptr, &v));
  views_.emplace_back(v);
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 8, NPVK_FLOAT64, 1, shape, nullptr, &v));
  views_.emplace_back(v);
}

TEST_F(Errors, TooManyDimensions) {
  npvk_view v{kUntouched};
  std::vector<int64_t> shape(NPVK_MAX_DIMS + 1, 1);
  EXPECT_FAILS(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, NPVK_MAX_DIMS + 1, shape.data(),
                                nullptr, &v),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(v.id, kUntouched);
  NPVK_EXPECT_OK(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, NPVK_MAX_DIMS, shape.data(),
                                  nullptr, &v));
  views_.emplace_back(v);
}

TEST_F(Errors, ScalarAsOutput) {
  float value = 3;
  npvk_view scalar{0};
  NPVK_ASSERT_OK(npvk_view_create_scalar(ctx(), NPVK_FLOAT32, &value, &scalar));
  views_.emplace_back(scalar);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, view_.get(), scalar),
               NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, scalar, scalar, scalar), NPVK_ERR_INVALID_ARGUMENT);
  ExpectContextUsable();
}

// "An output may alias an input exactly (in place) but must not otherwise overlap one."
TEST_F(Errors, PartialOverlapOfOutputAndInput) {
  npvk_view head{0}, tail{0}, reversed{0}, as_int{0};
  const int64_t shape[] = {8};
  const int64_t back[] = {-4};
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 0, NPVK_FLOAT32, 1, shape, nullptr, &head));
  views_.emplace_back(head);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 4, NPVK_FLOAT32, 1, shape, nullptr, &tail));
  views_.emplace_back(tail);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 28, NPVK_FLOAT32, 1, shape, back, &reversed));
  views_.emplace_back(reversed);
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 0, NPVK_INT32, 1, shape, nullptr, &as_int));
  views_.emplace_back(as_int);
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, tail), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, tail, tail, head), NPVK_ERR_INVALID_ARGUMENT);
  // The same elements in the opposite order are not "exactly" the input.
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, reversed), NPVK_ERR_INVALID_ARGUMENT);
  // Nor are the same bytes as another dtype.
  EXPECT_FAILS(npvk_unary(ctx(), NPVK_OP_CAST, head, as_int), NPVK_ERR_INVALID_ARGUMENT);
  // Disjoint views of one buffer are fine.
  npvk_view second_half{0};
  NPVK_ASSERT_OK(npvk_view_create(buf_.get(), 32, NPVK_FLOAT32, 1, shape, nullptr, &second_half));
  views_.emplace_back(second_half);
  NPVK_EXPECT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, head, second_half));
  std::vector<float> want(16, 1.0f);
  for (int i = 8; i < 16; ++i) want[i] = -1.0f;
  EXPECT_EQ(Read<float>(buf_), want);
}

TEST_F(Errors, WrongArityAndUnknownOps) {
  const npvk_view ins[] = {view_.get(), view_.get(), view_.get()};
  const npvk_view outs[] = {out_.get(), out_.get()};
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_ADD, 1, ins, 1, outs), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_ADD, 3, ins, 1, outs), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_ADD, 2, ins, 0, outs), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_NEGATIVE, 1, ins, 2, outs), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_NEGATIVE, view_.get(), view_.get(), out_.get()),
               NPVK_ERR_INVALID_ARGUMENT);
  // Opcodes beyond the enum are not ops; the header names no status, so any error will do.
  npvk_op_info info{};
  info.struct_size = sizeof(info);
  for (int op : {int{NPVK_OP_COUNT}, 200, -1}) {
    const npvk_op bad = static_cast<npvk_op>(op);
    EXPECT_FAILS(npvk_op_get_info(bad, &info), NPVK_ERR_INVALID_ARGUMENT, NPVK_ERR_UNSUPPORTED);
    EXPECT_FAILS(npvk_unary(ctx(), bad, view_.get(), out_.get()), NPVK_ERR_INVALID_ARGUMENT,
                 NPVK_ERR_UNSUPPORTED);
  }
  ExpectContextUsable();
}

// Every op the library reports as not implemented refuses to record, with float64 operands
// of the right arity.
TEST_F(Errors, UnimplementedOpsAreUnsupported) {
  std::vector<Buffer> keep;
  int unimplemented = 0;
  for (int i = 0; i < NPVK_OP_COUNT; ++i) {
    const npvk_op op = static_cast<npvk_op>(i);
    npvk_op_info info{};
    info.struct_size = sizeof(info);
    NPVK_ASSERT_OK(npvk_op_get_info(op, &info));
    if (info.implemented) continue;
    ++unimplemented;
    SCOPED_TRACE(info.name);
    std::vector<npvk_view> ins, outs;
    for (uint32_t k = 0; k < info.nin; ++k) ins.push_back(View1D(NPVK_FLOAT64, 4, keep));
    for (uint32_t k = 0; k < info.nout; ++k) outs.push_back(View1D(NPVK_FLOAT64, 4, keep));
    EXPECT_FAILS(npvk_apply(ctx(), op, info.nin, ins.data(), info.nout, outs.data()),
                 NPVK_ERR_UNSUPPORTED);
  }
  EXPECT_GT(unimplemented, 0) << "docs/ops.md lists fewer ops than the ABI declares";
  ExpectContextUsable();
}

TEST_F(Errors, BufferReadWriteBounds) {
  float data[17] = {};
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), 0, data, 65), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), 60, data, 8), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_write(buf_.get(), UINT64_MAX - 1, data, 4), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), 0, data, 65), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), 64, data, 1), NPVK_ERR_OUT_OF_BOUNDS);
  EXPECT_FAILS(npvk_buffer_read(buf_.get(), UINT64_MAX - 1, data, 4), NPVK_ERR_OUT_OF_BOUNDS);
  // The failed writes changed nothing.
  EXPECT_EQ(Read<float>(buf_), std::vector<float>(16, 1.0f));
  // Partial reads and writes at the end are fine.
  const float two[2] = {5, 6};
  NPVK_EXPECT_OK(npvk_buffer_write(buf_.get(), 56, two, 8));
  float back[2] = {};
  NPVK_EXPECT_OK(npvk_buffer_read(buf_.get(), 56, back, 8));
  EXPECT_EQ(back[0], 5);
  EXPECT_EQ(back[1], 6);
}

// "The view keeps the buffer's memory alive", and a pending operation does too: buffer and
// view handles go at every stage of a pending chain, and the result is still right.
TEST_F(Errors, ReleasedBufferLivesOnThroughViewsAndPendingWork) {
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
