// Validation and recording: each npvk_apply, npvk_reduce, npvk_accumulate and
// npvk_matmul is checked (operands, dtypes, shapes, overlap), planned, and
// queued as a RecordedOp; NumPy's one call per outer row is folded back into
// one 2-d op (row merging). Nothing runs here; the context's flush does.
#pragma once

#include <npvk/npvk.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/families/reduce/reduce_plan.hpp"
#include "compile/fusion.hpp"
#include "compile/fusion_fences.hpp"
#include "compile/row_merge.hpp"
#include "runtime/buffer.hpp"
#include "runtime/profile.hpp"
#include "runtime/queue_budget.hpp"
#include "runtime/residency.hpp"

namespace npvk {

// The device's limits that planning and validation depend on.
struct RecordLimits {
  DeviceTraits traits;
  uint64_t max_groups = 1;  // workgroups per dispatch at most
  // The most iterations a kernel's loop over elements may run (see Context).
  int64_t loop_budget = int64_t(1) << 40;
};

class Recorder {
 public:
  // Ops go to `pending`; `flush` runs them (past kMaxPendingOps or about a
  // second of estimated device time, or when residency needs room). `observer` is the context's
  // managed-memory observer.
  Recorder(std::weak_ptr<Context> ctx, std::vector<RecordedOp> &pending,
           std::function<void()> flush, Residency &residency, MemoryObserver *const &observer,
           npvk_stats &stats, Profiler &profiler, RecordLimits limits);

  void apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  // `sum_block`: a float sum's blocks, as npvk_reduce_blocked takes it.
  void reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes, const View *initial,
              const View &out, int64_t sum_block = 0);
  void accumulate(npvk_op op, const View &in, uint32_t axis, const View &out);
  void matmul(const View &a, const View &b, const View &c);
  bool supported(npvk_op op, const npvk_dtype *dtypes, uint32_t count, std::string *why) const;
  // The queue was flushed: no later row can merge into a queued one.
  void forget_row() { rows_.forget(); }
  // A flush ran `done` in `device_seconds`: the queue's time estimate learns
  // the device's rate from it.
  void ran(const std::vector<RecordedOp> &done, double device_seconds);
  // The cuts planning will make, as recorded so far (compile/fusion_fences.hpp).
  const FenceTracker &fences() const { return fences_; }
  // Every queued op gets the next serial (a merged row keeps its op's):
  // npvk_context_last_op and npvk_flush_info name ops by it.
  uint64_t last_serial() const { return serial_; }
  // The serial of the op the calling thread last queued here; 0 if none.
  uint64_t last_serial_of_this_thread() const;
  // The same in whichever recorder the calling thread last queued an op.
  static uint64_t last_serial_of_this_thread_anywhere();
  const RecordLimits &limits() const { return limits_; }

 private:
  FenceTracker fences_;
  uint64_t serial_ = 0;
  void record(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
              bool replace_last);
  bool try_merge_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  void remember_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  // `what` names the operand in messages ("operand 2", "a matmul operand").
  // `what` names the operand in the error; `index` >= 0 is appended to it.
  void check_operand(const View &v, const char *what, int index = -1) const;
  // What every recorded op does before it is queued: makes its operands'
  // memory resident and tells managed memory which it reads and writes.
  void prepare(const View *const *operands, uint32_t n, uint32_t nin);
  // Queues `rec` at the end (a standalone kernel; record() fills its ops in
  // their queue place itself).
  void enqueue(RecordedOp &&rec);
  // The op just written into the queue's last place, new or replacing the
  // queued op of a merged row (which weighed `replaced_units`): stamps it,
  // marks mirrored outputs as newer on the device, and flushes when the
  // queue is full.
  void queued(RecordedOp &rec, bool replace_last, double replaced_units);
  void record_standalone(std::shared_ptr<const StandaloneKernel> kernel, KernelSpec spec,
                         OperandViews operands, std::vector<int64_t> lo, std::vector<int64_t> hi,
                         int64_t elements);

  // The owning context, for the views the recorder makes itself; not
  // included (runtime/context.hpp includes this header).
  std::weak_ptr<Context> ctx_;
  const Context *ctx_address_;  // what operands' views must name
  std::vector<RecordedOp> &pending_;
  std::function<void()> flush_;
  Residency &residency_;
  MemoryObserver *const &observer_;
  npvk_stats &stats_;
  Profiler &profiler_;
  RecordLimits limits_;
  RowMerger rows_;
  QueueBudget budget_;
};

}  // namespace npvk
