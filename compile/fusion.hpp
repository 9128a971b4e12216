// The fusion planner: at a flush, consecutive recorded elementwise ops over
// the same elements in the same order (loops_pair_up: the same full shape,
// or the same count where one side's arrays are all in memory order) become
// one kernel when every array they share is
// either the same elements (so each invocation sees its own writes) or bytes
// that no op of the kernel writes. Outputs that nobody reads after their
// kernel, in buffers their owner already freed, are never stored (array
// contraction). See docs/architecture.md, "Fusion".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "compile/families/family.hpp"
#include "compile/iteration.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/view.hpp"

namespace npvk {

// An op's operands, inline: recording allocates nothing for them.
using OperandViews = InlineVector<View, kMaxOperands>;

// One validated elementwise op, as record() queued it.
struct RecordedOp {
  KernelSpec spec;        // op and dtypes
  OperandViews operands;  // inputs, then outputs (they keep the buffers alive)
  Dims lo, hi;            // byte extent of each operand
  IterationSpace space;   // its own loop, with the full shape and strides
  // Set for a kernel of its own (compile/families/kernels.hpp): a reduction
  // or scan (operands: input, output) or a matrix product (A, B, C).
  std::shared_ptr<const StandaloneKernel> standalone;
  uint32_t thread = 0;  // who recorded it: its FP errors are theirs (runtime/fp_errors.hpp)
  uint64_t serial = 0;  // npvk_context_last_op's number for it (a merged row keeps its op's)
};

// The queue grows by moving its ops: a copy would cost more than recording.
static_assert(std::is_nothrow_move_constructible_v<RecordedOp>);

// The memory or scalar behind one slot of a planned kernel.
struct SlotBinding {
  const View *view = nullptr;  // the first operand that named it
  int64_t lo = 0, hi = 0;      // byte extent
  bool read = false, written = false;
  Dims strides;  // full-rank element strides
};

struct PlannedKernel {
  FusedKernelSpec spec;
  std::vector<size_t> ops;         // indices into the recorded ops, one per step
  std::vector<SlotBinding> slots;  // parallel to spec.slots
  Dims shape;                      // the loop's full shape, which the slots' strides walk
  IterationSpace space;            // the loop over all slots, merged
  uint64_t contracted_bytes = 0;   // stores it leaves out
  // A standalone kernel (its slots are the recorded op's operands), or null
  // for a fused elementwise kernel.
  const StandaloneKernel *standalone = nullptr;
};

// Whether the value an operand names (its buffer in the generation the op
// saw, View::generation) is dead after the flush: its owner freed it, or the
// memory holds a newer array's, so only the recorded ops can still read it.
using DeadValue = std::function<bool(const View &)>;

// `fuse`: false gives one kernel per op (NPVK_FUSION=0). Ops over fewer than
// `min_fuse_elements` elements get a kernel each: every distinct chain is a
// kernel to compile (a second or more on a CPU driver), which small work never
// pays back, while single-op kernels are few and shared.
std::vector<PlannedKernel> plan_kernels(const std::vector<RecordedOp> &ops, bool fuse,
                                        uint64_t min_fuse_elements, const DeadValue &dead);

}  // namespace npvk
