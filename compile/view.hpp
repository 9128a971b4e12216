// What an npvk_view handle refers to: a strided window on a buffer, or an
// inline scalar.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <memory>

#include "compile/view_dims.hpp"

namespace npvk {

class Buffer;
class Context;

struct View {
  std::shared_ptr<Context> ctx;
  std::shared_ptr<Buffer> buffer;  // null for a scalar
  uint64_t offset = 0;             // bytes
  npvk_dtype dtype = NPVK_BOOL;
  uint32_t ndim = 0;
  ViewDims shape;
  ViewDims strides;  // bytes
  bool scalar = false;
  uint64_t scalar_bits = 0;  // the value widened to 64 bits as kernels read it
  // The buffer's generation when the op was recorded (Buffer::generation).
  uint32_t generation = 0;

  int64_t size() const {
    int64_t n = 1;
    for (uint32_t d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
  // The bytes [lo, hi) that the view's elements occupy (lo == hi when empty).
  void byte_extent(int64_t itemsize, int64_t &lo, int64_t &hi) const {
    lo = hi = int64_t(offset);
    if (size() == 0) return;
    for (uint32_t d = 0; d < ndim; ++d) {
      int64_t span = (shape[d] - 1) * strides[d];
      (span < 0 ? lo : hi) += span;
    }
    hi += itemsize;
  }
};

// Whether two views of one buffer interleave without touching (a[0::2] and
// a[1::2]), when their byte extents overlap.
bool views_interleave_apart(const View &a, const View &b);

}  // namespace npvk
