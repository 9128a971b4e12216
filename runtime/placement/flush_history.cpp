#include "runtime/placement/flush_history.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace npvk {

uint64_t FlushHistory::signature(const std::vector<PlannedKernel> &kernels) {
  uint64_t h = 0;
  for (const PlannedKernel &k : kernels) {
    if (k.standalone) continue;
    const uint64_t size_class = 64 - __builtin_clzll(uint64_t(std::max<int64_t>(k.space.count, 1)));
    const uint64_t key =
        std::hash<std::string>{}(k.spec.key()) ^ (size_class * 0x9e3779b97f4a7c15ull);
    h = (h ^ key) * 0x100000001b3ull + 1;
  }
  return h;
}

unsigned FlushHistory::correct(uint64_t signature, CostEstimate &estimate) const {
  if (!signature) return 0;
  auto it = times_.find(signature);
  if (it == times_.end()) return 0;
  unsigned replaced = 0;
  if (it->second.device.runs >= kRunsToCount) {
    estimate.device_ns = it->second.device.fastest_ns;
    replaced |= kDevice;
  }
  if (it->second.host.runs >= kRunsToCount) {
    estimate.host_ns = it->second.host.fastest_ns;
    replaced |= kHost;
  }
  return replaced;
}

void FlushHistory::note(uint64_t signature, bool host, double ns) {
  if (!signature) return;
  if (times_.size() >= kMaxEntries && !times_.count(signature)) times_.clear();
  Side &side = host ? times_[signature].host : times_[signature].device;
  side.fastest_ns = side.runs ? std::min(side.fastest_ns, ns) : ns;
  ++side.runs;
}

}  // namespace npvk
