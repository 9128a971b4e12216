#include "compile/row_merge.hpp"

#include <algorithm>

#include "compile/dtype.hpp"

namespace npvk {

void RowMerger::remember(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
                         size_t index) {
  valid_ = false;
  for (const View *v : operands)
    if (!v->scalar && v->ndim != 1) return;
  op_ = op;
  nin_ = nin;
  count_ = uint32_t(operands.size());
  for (uint32_t k = 0; k < count_; ++k) {
    View &first = first_[k];
    first = *operands[k];
    if (!first.scalar) {
      // Stored as the first row of a 2-d view: shape (rows, n).
      first.ndim = 2;
      first.shape[1] = first.shape[0];
      first.strides[1] = first.strides[0];
      first.shape[0] = 1;
      first.strides[0] = 0;
    }
    outer_[k] = 0;
  }
  rows_ = 1;
  index_ = index;
  valid_ = true;
}

bool RowMerger::next_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
                         size_t last_index, std::vector<View> &merged) {
  if (!valid_ || index_ != last_index || op_ != op || nin_ != nin || count_ != operands.size())
    return false;
  for (uint32_t k = 0; k < count_; ++k) {
    const View &v = *operands[k];
    const View &first = first_[k];
    if (v.scalar != first.scalar || v.dtype != first.dtype) return false;
    if (v.scalar) {
      if (v.scalar_bits != first.scalar_bits) return false;
      continue;
    }
    if (v.ndim != 1 || v.buffer != first.buffer || v.shape[0] != first.shape[1] ||
        v.strides[0] != first.strides[1])
      return false;
    int64_t step = int64_t(v.offset) - int64_t(first.offset);
    if (rows_ > 1 && step != int64_t(rows_) * outer_[k]) return false;
    // Rows of an output must not overlap one another (an accumulating
    // reduction passes the same output row again and again).
    int64_t row_bytes = v.shape[0] * (v.strides[0] < 0 ? -v.strides[0] : v.strides[0]);
    if (k >= nin && (step < 0 ? -step : step) < std::max<int64_t>(row_bytes, 1)) return false;
  }
  merged.assign(first_, first_ + count_);
  for (uint32_t k = 0; k < count_; ++k) {
    if (merged[k].scalar) continue;
    merged[k].shape[0] = int64_t(rows_) + 1;
    merged[k].strides[0] =
        rows_ == 1 ? int64_t(operands[k]->offset) - int64_t(first_[k].offset) : outer_[k];
    // A stride that is not a multiple of the itemsize cannot be a view.
    if (merged[k].strides[0] % int64_t(dtype_info(merged[k].dtype).itemsize) != 0) {
      valid_ = false;
      return false;
    }
  }
  return true;
}

void RowMerger::accept(const std::vector<View> &merged) {
  for (uint32_t k = 0; k < count_; ++k) outer_[k] = merged[k].strides[0];
  ++rows_;
}

}  // namespace npvk
