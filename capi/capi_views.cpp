// Views: strided windows on buffers, and inline scalars.
#include <string>

#include "capi/capi_common.hpp"
#include "core/dtype.hpp"

using namespace npvk;

namespace {

uint64_t widen_scalar(npvk_dtype dtype, const void *value) {
  const DtypeInfo &info = dtype_info(dtype);
  switch (dtype) {
    case NPVK_BOOL: return *static_cast<const uint8_t *>(value) != 0;
    case NPVK_INT8: return uint64_t(int64_t(*static_cast<const int8_t *>(value)));
    case NPVK_INT16: return uint64_t(int64_t(*static_cast<const int16_t *>(value)));
    case NPVK_INT32: return uint64_t(int64_t(*static_cast<const int32_t *>(value)));
    default: {
      // Unsigned integers zero-extend; floats keep their bit pattern.
      uint64_t bits = 0;
      std::memcpy(&bits, value, info.itemsize);
      return bits;
    }
  }
}

}  // namespace

extern "C" {

NPVK_API npvk_status npvk_view_create(npvk_buffer hb, uint64_t offset, npvk_dtype dtype,
                                      uint32_t ndim, const int64_t *shape, const int64_t *strides,
                                      npvk_view *out) {
  return guarded([&] {
    require_out(out, "out");
    auto buffer = get_buffer(hb);
    std::lock_guard<std::recursive_mutex> lock(buffer->ctx().mutex());
    buffer->ctx().check_usable();
    const DtypeInfo &info = dtype_info(dtype);
    require(ndim <= NPVK_MAX_DIMS, NPVK_ERR_INVALID_ARGUMENT,
            "ndim " + std::to_string(ndim) + " exceeds NPVK_MAX_DIMS");
    require(ndim == 0 || shape, NPVK_ERR_INVALID_ARGUMENT, "shape is null");
    const int64_t item = info.itemsize;
    require(offset % item == 0, NPVK_ERR_INVALID_ARGUMENT,
            "offset " + std::to_string(offset) + " is not a multiple of the itemsize");
    require(offset <= uint64_t(INT64_MAX), NPVK_ERR_OUT_OF_BOUNDS, "offset is too large");

    auto view = std::make_shared<View>();
    view->ctx = buffer->ctx_ptr();
    view->buffer = buffer;
    view->offset = offset;
    view->dtype = dtype;
    view->ndim = ndim;
    int64_t contiguous = item, count = 1;
    for (int d = int(ndim) - 1; d >= 0; --d) {
      require(shape[d] >= 0, NPVK_ERR_INVALID_ARGUMENT,
              "shape[" + std::to_string(d) + "] is negative");
      view->shape[d] = shape[d];
      view->strides[d] = strides ? strides[d] : contiguous;
      require(view->strides[d] % item == 0, NPVK_ERR_INVALID_ARGUMENT,
              "strides[" + std::to_string(d) + "] is not a multiple of the itemsize");
      require(!__builtin_mul_overflow(contiguous, shape[d] ? shape[d] : 1, &contiguous) &&
                  !__builtin_mul_overflow(count, shape[d], &count),
              NPVK_ERR_OUT_OF_BOUNDS, "the view's size overflows");
    }
    // Every element must lie inside the buffer; overflow means it cannot.
    if (count > 0) {
      int64_t lo = int64_t(offset), hi = int64_t(offset);
      for (uint32_t d = 0; d < ndim; ++d) {
        int64_t span = 0;
        require(!__builtin_mul_overflow(shape[d] - 1, view->strides[d], &span) &&
                    !__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi),
                NPVK_ERR_OUT_OF_BOUNDS, "the view's extent overflows");
      }
      require(lo >= 0 && hi <= int64_t(buffer->size()) - item, NPVK_ERR_OUT_OF_BOUNDS,
              "the view reaches bytes [" + std::to_string(lo) + ", " + std::to_string(hi + item) +
                  ") of a buffer of " + std::to_string(buffer->size()) + " bytes");
    }
    out->id = handle_add(HandleKind::View, view);
  });
}

NPVK_API npvk_status npvk_view_create_scalar(npvk_context hc, npvk_dtype dtype, const void *value,
                                             npvk_view *out) {
  return guarded([&] {
    require_out(out, "out");
    require(value != nullptr, NPVK_ERR_INVALID_ARGUMENT, "value is null");
    auto ctx = get_context(hc);
    std::lock_guard<std::recursive_mutex> lock(ctx->mutex());
    ctx->check_usable();
    dtype_info(dtype);  // validates
    auto view = std::make_shared<View>();
    view->ctx = ctx;
    view->dtype = dtype;
    view->scalar = true;
    view->scalar_bits = widen_scalar(dtype, value);
    out->id = handle_add(HandleKind::View, view);
  });
}

NPVK_API npvk_status npvk_view_release(npvk_view h) {
  return guarded([&] {
    auto view = std::static_pointer_cast<View>(handle_remove(HandleKind::View, h.id));
    std::shared_ptr<Context> ctx = view->ctx;
    std::lock_guard<std::recursive_mutex> lock(ctx->mutex());
    view.reset();
  });
}

}  // extern "C"
