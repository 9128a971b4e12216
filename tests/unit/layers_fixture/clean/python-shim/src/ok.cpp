// python-shim/src/ may include the public ABI and its own headers, and read
// (not weigh) the figures.
#include <npvk/npvk.h>

#include "shim.hpp"

double figure(const npvk_cost_model &m) { return m.host_ns_per_byte; }
