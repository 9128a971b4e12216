#include "runtime/recovery.hpp"

#include "runtime/fault_injection.hpp"

namespace npvk {

bool Recovery::recover(const std::vector<RecordedOp> &done, const Error &error, bool may_have_run,
                       HostExecutor &host, FpErrors &errors) {
  count_failure(failures_, &npvk_failure_stats::flush_failures, error.status(), error.what());
  if (!host.can_replay(done, may_have_run)) {
    failures_.ops_lost += done.size();
    return false;
  }
  host.run(done, errors);
  failures_.ops_replayed += done.size();
  return true;
}

npvk_failure_stats Recovery::stats() const {
  npvk_failure_stats s = failures_;
  s.struct_size = sizeof s;
  s.faults_injected = fault::fired();
  return s;
}

}  // namespace npvk
