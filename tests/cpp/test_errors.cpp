// Error paths of arguments and handles. Each failing call must return the documented status,
// explain itself in npvk_last_error_message(), leave its `out` untouched and not crash; the
// context must stay usable afterwards.
#include "errors_support.hpp"

namespace npvk_test {
namespace {

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
    int on_host = -1;
    EXPECT_FAILS(npvk_context_pending_on_host(npvk_context{id}, &on_host), NPVK_ERR_INVALID_HANDLE);
    npvk_work_desc work{};
    work.struct_size = sizeof work;
    npvk_placement answer{};
    answer.struct_size = sizeof answer;
    EXPECT_FAILS(npvk_placement_decide(npvk_context{id}, &work, &answer), NPVK_ERR_INVALID_HANDLE);
    EXPECT_EQ(on_host, -1);
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

// Without the cost model (off for C callers until enabled), queued work
// never runs on the host by choice; a null out pointer is an error.
TEST_F(Errors, PendingOnHostWithoutTheCostModel) {
  int on_host = -1;
  EXPECT_FAILS(npvk_context_pending_on_host(ctx(), nullptr), NPVK_ERR_INVALID_ARGUMENT);
  NPVK_EXPECT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, view_.get(), out_.get()));
  NPVK_EXPECT_OK(npvk_context_pending_on_host(ctx(), &on_host));
  EXPECT_EQ(on_host, 0);
  ExpectContextUsable();
}

// The same component answers a C caller before it records a reduction, a
// scan or a product (npvk_placement_decide): the device while the cost model
// is off, with queued work left queued; descriptions it cannot read fail.
TEST_F(Errors, PlacementWithoutTheCostModel) {
  NPVK_EXPECT_OK(npvk_unary(ctx(), NPVK_OP_NEGATIVE, view_.get(), out_.get()));
  const void *operands[1] = {nullptr};
  npvk_work_desc work{};
  work.struct_size = sizeof work;
  work.kind = NPVK_WORK_REDUCTION;
  work.operands = operands;
  work.count = 1;
  work.bytes = uint64_t(1) << 30;
  npvk_placement answer{};
  answer.struct_size = sizeof answer;
  answer.host = 7;
  for (uint32_t kind : {NPVK_WORK_ELEMENTWISE, NPVK_WORK_STREAMED_SUM, NPVK_WORK_REDUCTION,
                        NPVK_WORK_SCAN, NPVK_WORK_PRODUCT}) {
    work.kind = kind;
    NPVK_EXPECT_OK(npvk_placement_decide(ctx(), &work, &answer));
    EXPECT_EQ(answer.host, 0u);
    EXPECT_EQ(answer.reason, nullptr);
    EXPECT_EQ(answer.transfer_ns, 0.0);
    // A loop call's answer says when to ask again; the others hold for no call.
    EXPECT_EQ(answer.ask_every > 0, kind == NPVK_WORK_ELEMENTWISE);
    EXPECT_EQ(answer.hold_calls, 0u);
  }
  int on_host = -1;
  NPVK_EXPECT_OK(npvk_context_pending_on_host(ctx(), &on_host));
  EXPECT_EQ(on_host, 0);
  EXPECT_FAILS(npvk_placement_decide(ctx(), &work, nullptr), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_FAILS(npvk_placement_decide(ctx(), nullptr, &answer), NPVK_ERR_INVALID_ARGUMENT);
  work.kind = NPVK_WORK_PRODUCT + 1;
  EXPECT_FAILS(npvk_placement_decide(ctx(), &work, &answer), NPVK_ERR_INVALID_ARGUMENT);
  work.kind = NPVK_WORK_REDUCTION;
  work.operands = nullptr;
  EXPECT_FAILS(npvk_placement_decide(ctx(), &work, &answer), NPVK_ERR_INVALID_ARGUMENT);
  work.operands = operands;
  work.struct_size = 4;
  EXPECT_FAILS(npvk_placement_decide(ctx(), &work, &answer), NPVK_ERR_INVALID_ARGUMENT);
  ExpectContextUsable();
}

TEST_F(Errors, HandlesOfAnotherKind) {
  uint64_t size = 0;
  const npvk_view buffer_as_view{buf_.get().id};
  const npvk_buffer view_as_buffer{view_.get().id};
  EXPECT_FAILS(npvk_view_release(buffer_as_view), NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, buffer_as_view, view_.get(), out_.get()),
               NPVK_ERR_INVALID_HANDLE);
  EXPECT_FAILS(
      npvk_binary(ctx(), NPVK_OP_ADD, view_.get(), view_.get(), npvk_view{out_buf_.get().id}),
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
  EXPECT_FAILS(npvk_apply(ctx(), NPVK_OP_WHERE, 3, where_mixed, 1, &f32_out), NPVK_ERR_BAD_DTYPE);

  // float16 has NumPy's float16 loops: no float_power, no mixing with float32.
  const npvk_view f16 = View1D(NPVK_FLOAT16, 4, keep);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_FLOAT_POWER, f16, f16, View1D(NPVK_FLOAT16, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  EXPECT_FAILS(npvk_binary(ctx(), NPVK_OP_ADD, f16, f32, View1D(NPVK_FLOAT16, 4, keep)),
               NPVK_ERR_BAD_DTYPE);
  ExpectContextUsable();
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
// Every op the ABI declares is implemented (docs/ops.md lists them all); the
// shim still checks the flag, so an op added to the ABI ahead of its kernel
// must say so here.
TEST_F(Errors, EveryDeclaredOpIsImplemented) {
  for (int i = 0; i < NPVK_OP_COUNT; ++i) {
    npvk_op_info info{};
    info.struct_size = sizeof(info);
    NPVK_ASSERT_OK(npvk_op_get_info(static_cast<npvk_op>(i), &info));
    EXPECT_TRUE(info.implemented) << info.name;
  }
}

}  // namespace
}  // namespace npvk_test
