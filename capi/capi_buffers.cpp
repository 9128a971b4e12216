// Buffers: device memory and wrapped host memory.
#include "capi/capi_common.hpp"

using namespace npvk;

namespace {

// Runs `body` on a live buffer with its context locked.
template <typename Body>
npvk_status with_buffer(npvk_buffer h, Body &&body) {
  return guarded([&] {
    auto buffer = get_buffer(h);
    ContextLock lock(buffer->ctx().mutex());
    buffer->ctx().check_usable();
    require(buffer->has_memory(), NPVK_ERR_INVALID_HANDLE, "the buffer's memory was freed");
    body(*buffer);
  });
}

void check_range(const Buffer &b, uint64_t offset, uint64_t size) {
  NPVK_REQUIRE(offset <= b.size() && size <= b.size() - offset, NPVK_ERR_OUT_OF_BOUNDS,
               "bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + "+" +
                   std::to_string(size) + ") are outside the buffer of " +
                   std::to_string(b.size()) + " bytes");
}

}  // namespace

extern "C" {

NPVK_API npvk_status npvk_buffer_create(npvk_context h, uint64_t size, npvk_buffer *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    out->id = handle_add(HandleKind::Buffer, ctx->create_buffer(size));
  });
}

NPVK_API npvk_status npvk_buffer_wrap_host(npvk_context h, void *host, uint64_t size,
                                           npvk_buffer *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    out->id = handle_add(HandleKind::Buffer, ctx->wrap_host(host, size));
  });
}

NPVK_API npvk_status npvk_buffer_release(npvk_buffer h) {
  return guarded([&] {
    auto buffer = std::static_pointer_cast<Buffer>(handle_remove(HandleKind::Buffer, h.id));
    // The last reference may free Vulkan memory: do it under the context's
    // lock, and keep the context alive until the lock is let go.
    std::shared_ptr<Context> ctx = buffer->ctx_ptr();
    ContextLock lock(ctx->mutex());
    buffer.reset();
    // The handle is gone either way; a released context had invalidated it.
    require(!ctx->released(), NPVK_ERR_INVALID_HANDLE, "the buffer's context was released");
  });
}

NPVK_API npvk_status npvk_buffer_size(npvk_buffer h, uint64_t *out) {
  return guarded([&] {
    require_out(out, "out");
    auto buffer = get_buffer(h);
    ContextLock lock(buffer->ctx().mutex());
    buffer->ctx().check_usable();
    *out = buffer->size();
  });
}

NPVK_API npvk_status npvk_buffer_is_zero_copy(npvk_buffer h, int *out) {
  return guarded([&] {
    require_out(out, "out");
    auto buffer = get_buffer(h);
    ContextLock lock(buffer->ctx().mutex());
    buffer->ctx().check_usable();
    *out = buffer->zero_copy ? 1 : 0;
  });
}

NPVK_API npvk_status npvk_buffer_write(npvk_buffer h, uint64_t offset, const void *src,
                                       uint64_t size) {
  return with_buffer(h, [&](Buffer &b) {
    require(src || size == 0, NPVK_ERR_INVALID_ARGUMENT, "src is null");
    check_range(b, offset, size);
    b.ctx().write(b, offset, src, size);
  });
}

NPVK_API npvk_status npvk_buffer_read(npvk_buffer h, uint64_t offset, void *dst, uint64_t size) {
  return with_buffer(h, [&](Buffer &b) {
    require(dst || size == 0, NPVK_ERR_INVALID_ARGUMENT, "dst is null");
    check_range(b, offset, size);
    b.ctx().read(b, offset, dst, size);
  });
}

NPVK_API npvk_status npvk_buffer_sync(npvk_buffer h) {
  return with_buffer(h, [&](Buffer &b) { b.ctx().sync_buffer(b); });
}

NPVK_API npvk_status npvk_buffer_host_modified(npvk_buffer h) {
  return with_buffer(h, [&](Buffer &b) { b.ctx().host_modified(b); });
}

}  // extern "C"
