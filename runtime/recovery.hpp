// What a context does when a flush fails (docs/architecture.md, "Failure
// handling"): counts and reports the failure, and has the host executor
// (runtime/host/host_executor.hpp) replay the failed flush's recorded ops
// where it can.
#pragma once

#include <npvk/npvk.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/error.hpp"
#include "compile/fusion.hpp"
#include "runtime/fp_errors.hpp"
#include "runtime/host/host_executor.hpp"

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
  npvk_failure_stats &failures() { return failures_; }
  npvk_failure_stats stats() const;
  // Counts the failure and runs `done` on `host` if it can.
  // `may_have_run`: the batch was (perhaps) submitted, so only work that is
  // safe to run twice is replayed. The replay's FP exceptions go to `errors`.
  bool recover(const std::vector<RecordedOp> &done, const Error &error, bool may_have_run,
               HostExecutor &host, FpErrors &errors);

 private:
  npvk_failure_stats failures_{};
};

}  // namespace npvk
