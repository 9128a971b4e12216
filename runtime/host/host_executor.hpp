// The host executor (docs/architecture.md, "Host replay"): recorded work run
// with the host loops (NumPy's own) on the pool of host threads, on the same
// memory the device would use. It runs the flushes the placement gives the
// host (fused kernels block by block, fused_replay.hpp) and replays failed
// flushes for Recovery, which only counts and reports the failures.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <vector>

#include "compile/families/family.hpp"
#include "compile/fusion.hpp"
#include "runtime/fp_errors.hpp"

namespace npvk {

class HostExecutor {
 public:
  void set_host_loop(npvk_host_loop_fn fn, void *user) { loop_ = {fn, user}; }
  // Parts of host runs that host workers ran, since the context was made.
  uint64_t parts_on_workers() const { return parts_on_workers_; }
  // Whether runs split among the host workers (host_workers.hpp). The cost
  // model's figures are measured unsplit: they price NumPy's own loops,
  // which is what the host runs for reductions and bypassed calls, so a
  // split flush only ever runs faster than its estimate.
  void set_split(bool split) { split_ = split; }
  // Whether `ops` can run on the host instead of the device, by choice (the
  // placement): elementwise ops only, whose results are then NumPy's own
  // loops' bits, on memory the host reaches in place (no mirrored copies).
  bool can_run_elementwise(const std::vector<RecordedOp> &ops) const;
  // Whether a failed flush of `ops` can be replayed here: every operand is
  // reachable and has a host loop, and where the batch `may_have_run`, no op
  // writes bytes that it or an earlier op reads (running it again is safe).
  bool can_replay(const std::vector<RecordedOp> &ops, bool may_have_run) const;
  // Runs `ops` on the host, op by op; their FP exceptions go to `errors`.
  void run(const std::vector<RecordedOp> &ops, FpErrors &errors);
  // The same, as planned for the device: a fused kernel's steps run block by
  // block, and the values it contracts are never written (fused_replay.hpp):
  // returns their bytes.
  uint64_t run(const std::vector<RecordedOp> &ops, const std::vector<PlannedKernel> &kernels,
               FpErrors &errors);

 private:
  bool loops_exist(const RecordedOp &op) const;
  void replay_op(const RecordedOp &op, FpErrors &errors);
  void replay_elementwise(const RecordedOp &op, FpErrors &errors);
  HostLoop loop_;
  // replay_fused's blocks (a part's each), kept warm between flushes.
  std::vector<uint8_t> scratch_;
  uint64_t parts_on_workers_ = 0;
  bool split_ = true;
};

}  // namespace npvk
