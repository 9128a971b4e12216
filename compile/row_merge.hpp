// Row merging: NumPy runs an N-d ufunc as one inner-loop call per outer row.
// Rows that step through memory by a constant outer stride are folded into
// the queued operation of the first row, which becomes one 2-d operation
// (docs/architecture.md, "How an operation runs"). This is the decision; the
// recorder re-validates the folded operation and replaces the queued one.
#pragma once

#include <npvk/npvk.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compile/iteration.hpp"
#include "compile/view.hpp"

namespace npvk {

class RowMerger {
 public:
  // The op just queued at `index` may be the first row of more to come.
  void remember(npvk_op op, const std::vector<const View *> &operands, uint32_t nin, size_t index);
  // Whether `operands` can be the next row of the remembered op, which must
  // still be the last queued (at `last_index`); if so, `merged` receives the
  // views of the folded operation.
  bool next_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
                size_t last_index, std::vector<View> &merged);
  // The folded operation `merged` was recorded in place of the queued one.
  void accept(const std::vector<View> &merged);
  // Nothing can merge any more (the queue ran, or the fold was refused).
  void forget() { *this = RowMerger{}; }

 private:
  bool valid_ = false;
  npvk_op op_ = NPVK_OP_ADD;
  uint32_t nin_ = 0, count_ = 0;
  View first_[kMaxOperands];       // the first row, as a 2-d view of one row
  int64_t outer_[kMaxOperands]{};  // bytes from one row to the next
  uint64_t rows_ = 0;
  size_t index_ = 0;
};

}  // namespace npvk
