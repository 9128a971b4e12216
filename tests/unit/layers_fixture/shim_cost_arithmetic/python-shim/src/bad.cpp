// python-shim/src/ computes nothing with the cost figures it can read.
#include <npvk/npvk.h>

bool host_faster(const npvk_cost_model &m, double bytes) {
  return bytes * m.host_ns_per_byte < m.device_flush_ns;
}
