// What a context does when a flush fails (docs/architecture.md, "Failure
// handling"): the host replay of the failed flush's recorded ops through the
// host loops, and the failure counts.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <vector>

#include "base/error.hpp"
#include "compile/families/family.hpp"
#include "compile/fusion.hpp"
#include "runtime/fp_errors.hpp"

namespace npvk {

class Recovery {
 public:
  void set_host_loop(npvk_host_loop_fn fn, void *user) { loop_ = {fn, user}; }
  npvk_failure_stats &failures() { return failures_; }
  npvk_failure_stats stats() const;
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
  std::vector<uint8_t> scratch_;  // replay_fused's blocks, kept warm between flushes
  npvk_failure_stats failures_{};
};

}  // namespace npvk
