// What a context does when a flush fails (docs/architecture.md, "Failure
// handling"): the host replay of the failed flush's recorded ops through the
// host loops, and the failure counts.
#pragma once

#include <npvk/npvk.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/error.hpp"
#include "compile/families/family.hpp"
#include "compile/fusion.hpp"
#include "runtime/fp_errors.hpp"

namespace npvk {

// Changes whenever any context of the process counts a failure, so that a
// caller that checks after every call (the shim, at every buffer export and
// error-state change) can skip the context's lock while nothing new failed
// (npvk_failure_epoch).
inline std::atomic<uint64_t> &failure_epoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

// Counts one failure of `kind` (a counter of `failures`) with its status and
// message, and moves the epoch on.
inline void count_failure(npvk_failure_stats &failures, uint64_t npvk_failure_stats::*kind,
                          npvk_status status, const char *what) {
  ++(failures.*kind);
  failures.last_status = uint32_t(status);
  std::snprintf(failures.last_message, sizeof failures.last_message, "%s", what);
  failure_epoch().fetch_add(1, std::memory_order_release);
}

class Recovery {
 public:
  void set_host_loop(npvk_host_loop_fn fn, void *user) { loop_ = {fn, user}; }
  npvk_failure_stats &failures() { return failures_; }
  npvk_failure_stats stats() const;
  // Parts of host runs that host workers ran, since the context was made.
  uint64_t parts_on_workers() const { return parts_on_workers_; }
  // Whether runs split among the host workers (host_workers.hpp). The cost
  // model's figures are measured unsplit: they price NumPy's own loops,
  // which is what the host runs for reductions and bypassed calls, so a
  // split flush only ever runs faster than its estimate.
  void set_split(bool split) { split_ = split; }
  // Runs `done` on the host if it can, and counts the failure.
  // `may_have_run`: the batch was (perhaps) submitted, so only work that is
  // safe to run twice is replayed. The replay's FP exceptions go to `errors`.
  bool recover(const std::vector<RecordedOp> &done, const Error &error, bool may_have_run,
               FpErrors &errors);
  // Whether `ops` can run on the host instead of the device, by choice (the
  // cost model): elementwise ops only, whose results are then NumPy's own
  // loops' bits, on memory the host reaches in place (no mirrored copies).
  bool can_run_elementwise(const std::vector<RecordedOp> &ops) const;
  // Runs `ops` on the host; their FP exceptions go to `errors`.
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
  std::vector<uint8_t>
      scratch_;  // replay_fused's blocks (a part's each), kept warm between flushes
  uint64_t parts_on_workers_ = 0;
  bool split_ = true;
  npvk_failure_stats failures_{};
};

}  // namespace npvk
