// Views: strided windows on buffers, and inline scalars.
#include <string>

#include "capi/capi_common.hpp"
#include "compile/dtype.hpp"

using namespace npvk;

namespace {

uint64_t widen_scalar(npvk_dtype dtype, const void *value) {
  const DtypeInfo &info = dtype_info(dtype);
  switch (dtype) {
    case NPVK_BOOL:
      return *static_cast<const uint8_t *>(value) != 0;
    case NPVK_INT8:
      return uint64_t(int64_t(*static_cast<const int8_t *>(value)));
    case NPVK_INT16:
      return uint64_t(int64_t(*static_cast<const int16_t *>(value)));
    case NPVK_INT32:
      return uint64_t(int64_t(*static_cast<const int32_t *>(value)));
    default: {
      // Unsigned integers zero-extend; floats keep their bit pattern.
      uint64_t bits = 0;
      std::memcpy(&bits, value, info.itemsize);
      return bits;
    }
  }
}

}  // namespace

namespace npvk {

View scalar_view(const std::shared_ptr<Context> &ctx, npvk_dtype dtype, const void *value) {
  dtype_info(dtype);  // validates
  View view;
  view.ctx = ctx;
  view.dtype = dtype;
  view.scalar = true;
  view.scalar_bits = widen_scalar(dtype, value);
  return view;
}

std::shared_ptr<View> make_scalar_view(const std::shared_ptr<Context> &ctx, npvk_dtype dtype,
                                       const void *value) {
  return std::make_shared<View>(scalar_view(ctx, dtype, value));
}

}  // namespace npvk

extern "C" {

NPVK_API npvk_status npvk_view_create(npvk_buffer hb, uint64_t offset, npvk_dtype dtype,
                                      uint32_t ndim, const int64_t *shape, const int64_t *strides,
                                      npvk_view *out) {
  return guarded([&] {
    require_out(out, "out");
    auto buffer = get_buffer(hb);
    ContextLock lock(buffer->ctx().mutex());
    buffer->ctx().check_usable();
    out->id = handle_add(HandleKind::View, make_view(buffer, offset, dtype, ndim, shape, strides));
  });
}

NPVK_API npvk_status npvk_view_create_scalar(npvk_context hc, npvk_dtype dtype, const void *value,
                                             npvk_view *out) {
  return guarded([&] {
    require_out(out, "out");
    require(value != nullptr, NPVK_ERR_INVALID_ARGUMENT, "value is null");
    auto ctx = get_context(hc);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    out->id = handle_add(HandleKind::View, make_scalar_view(ctx, dtype, value));
  });
}

NPVK_API npvk_status npvk_view_release(npvk_view h) {
  return guarded([&] {
    auto view = std::static_pointer_cast<View>(handle_remove(HandleKind::View, h.id));
    std::shared_ptr<Context> ctx = view->ctx;
    ContextLock lock(ctx->mutex());
    view.reset();
    // The handle is gone either way; a released context had invalidated it.
    require(!ctx->released(), NPVK_ERR_INVALID_HANDLE, "the view's context was released");
  });
}

}  // extern "C"
