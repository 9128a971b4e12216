// A view's extents or byte strides: NPVK_MAX_DIMS entries, each 0 until set.
// The first kInline sit in the view itself, the rest on the heap, made at the
// first write past them. Nearly every view has at most 4 dimensions, and a
// queued op copies its operands' views: as fixed arrays of 32 a view was 584
// bytes, and copying them was most of the cost of recording an op once its
// allocations were gone (bench/record).
#pragma once

#include <npvk/npvk.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace npvk {

class ViewDims {
 public:
  static constexpr size_t kInline = 4;

  ViewDims() = default;
  ViewDims(const ViewDims &other) { *this = other; }
  ViewDims(ViewDims &&other) noexcept = default;
  ViewDims &operator=(ViewDims &&other) noexcept = default;
  ViewDims &operator=(const ViewDims &other) {
    if (this == &other) return *this;
    std::copy(other.inline_, other.inline_ + kInline, inline_);
    if (other.rest_) {
      if (!rest_) rest_ = std::make_unique<int64_t[]>(kRest);
      std::copy(other.rest_.get(), other.rest_.get() + kRest, rest_.get());
    } else {
      rest_.reset();
    }
    return *this;
  }

  int64_t operator[](size_t d) const {
    if (d < kInline) return inline_[d];
    return rest_ ? rest_[d - kInline] : 0;
  }
  int64_t &operator[](size_t d) {
    if (d < kInline) return inline_[d];
    if (!rest_) rest_ = std::make_unique<int64_t[]>(kRest);  // zeroed
    return rest_[d - kInline];
  }

  bool operator==(const ViewDims &other) const {
    for (size_t d = 0; d < NPVK_MAX_DIMS; ++d)
      if ((*this)[d] != other[d]) return false;
    return true;
  }
  bool operator!=(const ViewDims &other) const { return !(*this == other); }

 private:
  static constexpr size_t kRest = NPVK_MAX_DIMS - kInline;
  int64_t inline_[kInline] = {};
  std::unique_ptr<int64_t[]> rest_;
};

}  // namespace npvk
