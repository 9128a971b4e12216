// The cuts plan_kernels (compile/fusion.cpp) cannot avoid, known while ops
// are recorded: fusion's rules, kept beside the planner that applies them.
// The recorder feeds each op to a FenceTracker; managed memory asks it
// whether a freed array's queued op may still share a kernel with the next
// one (reusing the memory before then would put two values in one slot).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "compile/iteration.hpp"
#include "compile/view.hpp"

namespace npvk {

// The latest recorded op that wrote a buffer (its op count), the bytes it
// wrote, and which elements (a hash of offset, dtype, shape and strides). Held
// by each buffer, written by FenceTracker only.
struct LastWrite {
  uint64_t op = 0;
  int64_t lo = 0, hi = 0;
  uint64_t layout = 0;
};

class FenceTracker {
 public:
  // An elementwise op, count `op`, over `space` (each operand's byte range
  // in `extent`; `writes[k]`: the LastWrite of operand k's buffer, null for a
  // scalar). `replaces_last`: a merged row that replaces the op before.
  void note_elementwise(uint64_t op, const std::vector<const View *> &operands, uint32_t nin,
                        const IterationSpace &space,
                        const std::array<std::pair<int64_t, int64_t>, kMaxOperands> &extent,
                        const std::array<LastWrite *, kMaxOperands> &writes, bool replaces_last);
  // A standalone kernel (reduction, scan, matrix product), count `op`: a
  // kernel of its own.
  void note_standalone(uint64_t op) {
    fence_ = op;
    last_shape_.clear();
  }
  // An op count up to which no recorded op shares a kernel with a later one.
  uint64_t fence() const { return fence_; }
  // Whether op `op` may share a kernel with an op recorded after `now`
  // (the count of ops recorded so far).
  bool may_fuse_with_next(uint64_t op, uint64_t now) const;

 private:
  uint64_t fence_ = 0;
  Dims last_shape_;         // the full shape of the last elementwise op
  bool last_flat_ = false;  // and whether it was in memory order (in_memory_order)
};

}  // namespace npvk
