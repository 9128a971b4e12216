// Contexts: creation, release, synchronisation and statistics.
#include <algorithm>
#include <vector>

#include "capi/capi_common.hpp"
#include "vulkan/prepared_device.hpp"

using namespace npvk;

extern "C" {

NPVK_API npvk_status npvk_context_create(const npvk_context_options *options, npvk_context *out) {
  return guarded([&] {
    require_out(out, "out");
    std::shared_ptr<Context> ctx = Context::create(options);
    out->id = handle_add(HandleKind::Context, ctx);
  });
}

NPVK_API npvk_status npvk_device_prepare(const npvk_context_options *options) {
  return guarded([&] {
    const npvk_context_options opts = read_context_options(options);
    vk::prepare_device(opts.device, (opts.flags & NPVK_CONTEXT_VALIDATION) != 0);
  });
}

NPVK_API npvk_status npvk_device_prepare_after(const npvk_context_options *options,
                                               uint32_t delay_ms) {
  return guarded([&] {
    const npvk_context_options opts = read_context_options(options);
    vk::prepare_device(opts.device, (opts.flags & NPVK_CONTEXT_VALIDATION) != 0, delay_ms);
  });
}

NPVK_API npvk_status npvk_device_prepare_end(void) {
  return guarded([&] { vk::end_preparation(); });
}

NPVK_API npvk_status npvk_context_release(npvk_context h) {
  return guarded([&] {
    auto ctx = std::static_pointer_cast<Context>(handle_remove(HandleKind::Context, h.id));
    ContextLock lock(ctx->mutex());
    ctx->release();
  });
}

NPVK_API npvk_status npvk_context_device_info(npvk_context h, npvk_device_info *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    copy_sized(out, ctx->device_info());
  });
}

NPVK_API npvk_status npvk_context_make_device(npvk_context h) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    ctx->make_device_now();
  });
}

NPVK_API npvk_status npvk_sync(npvk_context h) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    ctx->flush();
  });
}

NPVK_API npvk_status npvk_context_get_stats(npvk_context h, npvk_stats *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    copy_sized(out, ctx->stats());
  });
}

namespace {

npvk_status take_fp_errors(npvk_context h, uint32_t thread, npvk_fp_error *out, uint32_t capacity,
                           uint32_t *count) {
  return guarded([&] {
    require_out(count, "count");
    require(out || capacity == 0, NPVK_ERR_INVALID_ARGUMENT, "out is null");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    std::vector<npvk_fp_error> errors = ctx->take_fp_errors(thread);
    uint32_t n = uint32_t(std::min<size_t>(errors.size(), capacity));
    std::copy(errors.begin(), errors.begin() + n, out);
    *count = n;
  });
}

}  // namespace

NPVK_API npvk_status npvk_context_take_fp_errors(npvk_context h, npvk_fp_error *out,
                                                 uint32_t capacity, uint32_t *count) {
  return take_fp_errors(h, 0, out, capacity, count);
}

NPVK_API npvk_status npvk_context_take_thread_fp_errors(npvk_context h, npvk_fp_error *out,
                                                        uint32_t capacity, uint32_t *count) {
  return take_fp_errors(h, npvk::recording_thread(), out, capacity, count);
}

NPVK_API npvk_status npvk_context_take_op_fp_errors(npvk_context h, npvk_op_fp_error *out,
                                                    uint32_t capacity, uint32_t *count,
                                                    uint64_t *ran_through) {
  return guarded([&] {
    require_out(count, "count");
    require(out || capacity == 0, NPVK_ERR_INVALID_ARGUMENT, "out is null");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    uint64_t ran = 0;
    std::vector<npvk_op_fp_error> errors =
        ctx->take_op_fp_errors(npvk::recording_thread(), capacity, &ran);
    std::copy(errors.begin(), errors.end(), out);
    *count = uint32_t(errors.size());
    if (ran_through) *ran_through = ran;
  });
}

NPVK_API uint64_t npvk_fp_error_epoch(void) {
  return npvk::fp_error_epoch().load(std::memory_order_acquire);
}

NPVK_API npvk_status npvk_context_reset_stats(npvk_context h) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->reset_stats();
  });
}

}  // extern "C"
