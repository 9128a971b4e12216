// The cost model (docs/architecture.md, "Cost model"): whether a flush of
// elementwise work runs faster through NumPy's own loops on the host than as
// the planned kernels on the device. It is asked only where the host can
// reach every operand in place (a CPU or unified-memory device's zero-copy
// buffers) and a host loop is registered, so the choice never moves data.
// Its parameters are measured once per device (Placement, calibration.cpp) and
// kept beside the kernel cache.
#pragma once

#include <npvk/npvk.h>

#include <string>
#include <vector>

#include "compile/fusion.hpp"

namespace npvk {

// Per-device figures, in nanoseconds. "Bytes" are those an op or kernel
// reads and writes; "math" is one float64 math function (exp, log, pow...)
// per element, beyond its bytes.
struct CostParams {
  bool measured = false;
  double device_flush_ns = 0;     // submit-to-return of one tiny kernel
  double device_ns_per_byte = 0;  // a cheap kernel (add), per byte moved
  double device_math_ns = 0;      // per element and math call (exp)
  double device_pow_ns = 0;       // per element of a power with an array exponent
  // Per element and per access (load or store) of a 1- or 2-byte operand,
  // beyond its bytes: CPU drivers move narrow elements lane by lane (a bool
  // and, or a uint8 add, on lavapipe: 9 ms for 5e6 elements, NumPy 0.6).
  double device_narrow_ns = 0;
  // Per kernel of a flush, beyond the flush and its bytes: waking the
  // driver's threads for a dispatch of many workgroups (lavapipe: ~0.25 ms;
  // a flush of 23 small kernels of scikit-learn's took 14 ms there).
  double device_dispatch_ns = 0;
  double host_ns_per_byte = 0;  // NumPy's add loop, per byte moved
  double host_math_ns = 0;      // NumPy's exp loop, per element beyond its bytes
  double host_pow_ns = 0;       // NumPy's power loop, per element beyond its bytes
};

struct CostEstimate {
  double device_ns = 0, host_ns = 0;
  bool host() const { return host_ns < device_ns; }
};

// The two estimates for running `ops` as `kernels` on the device, or op by
// op on the host.
CostEstimate estimate_costs(const CostParams &params, const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels);

// One line of text per parameter; the file is named after the device and
// driver (`device_key`). Loading fails (returns false) on anything unexpected.
bool load_cost_params(const std::string &cache_dir, const std::string &device_key, CostParams *out);
void save_cost_params(const std::string &cache_dir, const std::string &device_key,
                      const CostParams &params);

}  // namespace npvk
