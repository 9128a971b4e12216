#include "compile/fusion_fences.hpp"

#include <algorithm>

#include "compile/kernel_spec.hpp"

namespace npvk {
namespace {

// Which elements of its bytes an operand is, as KernelBuilder's slots tell
// them apart (same_elements: offset, dtype, strides over the op's shape).
// Equal layouts may collide; that only misses a cut.
uint64_t element_layout(const View &v, const IterationSpace &space, uint32_t k) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(v.offset);
  mix(uint64_t(v.dtype));
  // In C order, the same elements as in any loop of that count walking
  // them in order (KernelBuilder rebases such slots: loops_pair_up).
  if (in_c_order(space.full_shape, space.full_strides[k])) {
    mix(uint64_t(space.count));
    return h;
  }
  for (size_t d = 0; d < space.full_shape.size(); ++d) {
    mix(uint64_t(space.full_shape[d]));
    mix(uint64_t(space.full_strides[k][d]));
  }
  return h;
}

}  // namespace

void FenceTracker::note_elementwise(
    uint64_t op, const std::vector<const View *> &operands, uint32_t nin,
    const IterationSpace &space,
    const std::array<std::pair<int64_t, int64_t>, kMaxOperands> &extent,
    const std::array<LastWrite *, kMaxOperands> &writes, bool replaces_last) {
  // Two ops in a row whose loops cannot pair up are never in one kernel (a
  // merged row replaces the op before). Where one is in memory order the
  // planner may or may not cut: no fence.
  const bool flat = in_memory_order(space);
  if (!replaces_last && !last_shape_.empty() &&
      !loops_pair_up(last_shape_, last_flat_, space.full_shape, flat))
    fence_ = std::max(fence_, op - 1);
  last_shape_ = space.full_shape;
  last_flat_ = flat;
  // An op that reads other elements of bytes a queued op wrote cannot join
  // that op's kernel (KernelBuilder::conflicts): a stencil's read of the last
  // step's grid, so a time loop's steps fence each other (the heat equation's
  // and SOR's). Views interleaving apart (an image's channels) still share a
  // kernel after such a fence, so two arrays may meet in one kernel's slot
  // after all: plan_kernels keeps each slot's last written array and asks
  // contract() about each array it read.
  for (uint32_t k = 0; k < nin; ++k) {
    const LastWrite *w = writes[k];
    if (!w || operands[k]->scalar) continue;
    if (w->op <= fence_ || w->op >= op) continue;
    if (extent[k].second <= w->lo || w->hi <= extent[k].first) continue;
    if (element_layout(*operands[k], space, k) != w->layout) fence_ = w->op;
  }
  for (uint32_t k = nin; k < uint32_t(operands.size()); ++k) {
    LastWrite *w = writes[k];
    if (!w) continue;
    w->op = op;
    w->lo = extent[k].first;
    w->hi = extent[k].second;
    w->layout = element_layout(*operands[k], space, k);
  }
}

bool FenceTracker::may_fuse_with_next(uint64_t op, uint64_t now) const {
  // A reset of the counts (reset_stats) makes `op` or the fence later than now.
  if (op > now || fence_ > now) return true;
  // Planning must start a new kernel after the fence (a standalone kernel, a
  // change of shape, a read of other elements of bytes a queued op wrote): an
  // op up to it is in a kernel that runs before the next op's. A time step
  // that ends in reductions (N-body's row sums) or whose stencil reads the
  // last step's grid then hands its temporaries to the next step instead of
  // mapping fresh pages.
  if (op <= fence_) return false;
  // plan_kernels ends a kernel at kMaxFusedSteps ops.
  return now - op <= kMaxFusedSteps;
}

}  // namespace npvk
