#include "runtime/buffer.hpp"

#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"

namespace npvk {

View strided_view(const std::shared_ptr<Buffer> &buffer, uint64_t offset, npvk_dtype dtype,
                  uint32_t ndim, const int64_t *shape, const int64_t *strides) {
  const DtypeInfo &info = dtype_info(dtype);
  NPVK_REQUIRE(ndim <= NPVK_MAX_DIMS, NPVK_ERR_INVALID_ARGUMENT,
               "ndim " + std::to_string(ndim) + " exceeds NPVK_MAX_DIMS");
  require(ndim == 0 || shape, NPVK_ERR_INVALID_ARGUMENT, "shape is null");
  const int64_t item = info.itemsize;
  NPVK_REQUIRE(offset % item == 0, NPVK_ERR_INVALID_ARGUMENT,
               "offset " + std::to_string(offset) + " is not a multiple of the itemsize");
  require(offset <= uint64_t(INT64_MAX), NPVK_ERR_OUT_OF_BOUNDS, "offset is too large");

  View view;
  view.ctx = buffer->ctx_ptr();
  view.buffer = buffer;
  view.offset = offset;
  view.dtype = dtype;
  view.ndim = ndim;
  int64_t contiguous = item, count = 1;
  for (int d = int(ndim) - 1; d >= 0; --d) {
    NPVK_REQUIRE(shape[d] >= 0, NPVK_ERR_INVALID_ARGUMENT,
                 "shape[" + std::to_string(d) + "] is negative");
    view.shape[d] = shape[d];
    view.strides[d] = strides ? strides[d] : contiguous;
    NPVK_REQUIRE(view.strides[d] % item == 0, NPVK_ERR_INVALID_ARGUMENT,
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
      require(!__builtin_mul_overflow(shape[d] - 1, view.strides[d], &span) &&
                  !__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi),
              NPVK_ERR_OUT_OF_BOUNDS, "the view's extent overflows");
    }
    NPVK_REQUIRE(lo >= 0 && hi <= int64_t(buffer->size()) - item, NPVK_ERR_OUT_OF_BOUNDS,
                 "the view reaches bytes [" + std::to_string(lo) + ", " +
                     std::to_string(hi + item) + ") of a buffer of " +
                     std::to_string(buffer->size()) + " bytes");
  }
  return view;
}

std::shared_ptr<View> make_view(const std::shared_ptr<Buffer> &buffer, uint64_t offset,
                                npvk_dtype dtype, uint32_t ndim, const int64_t *shape,
                                const int64_t *strides) {
  return std::make_shared<View>(strided_view(buffer, offset, dtype, ndim, shape, strides));
}

}  // namespace npvk
