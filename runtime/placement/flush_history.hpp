// What flushes of the same planned work took, on each side, so that the cost
// model's estimate of a flush it has seen run gives way to the measurement
// (docs/architecture.md, "Cost model", "Measured flushes"). The figures price
// bytes and math calls; they miss what the measurement holds: a CPU driver's
// FP-class code for in-place steps, caches that a few MB of operands fit in,
// libraries' threads competing for the cores.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "compile/fusion.hpp"
#include "runtime/placement/cost_model.hpp"

namespace npvk {

class FlushHistory {
 public:
  // Names a flush's elementwise kernels (their keys and sizes to a power of
  // two); 0 for a flush that has none. Reductions and other standalone
  // kernels are left out: a row sum that runs with its producer on the
  // device is part of that work's device time, and runs apart on the host.
  static uint64_t signature(const std::vector<PlannedKernel> &kernels);

  // Replaces each side of `estimate` that has been measured for `signature`.
  // Returns the sides it replaced (kDevice | kHost; 0 for none).
  static constexpr unsigned kDevice = 1, kHost = 2;
  unsigned correct(uint64_t signature, CostEstimate &estimate) const;

  // A flush of `signature` took `ns` on the host or the device, all of it
  // (planning, submission, page protection, faults).
  void note(uint64_t signature, bool host, double ns);

 private:
  // A side counts once it ran twice, as the faster of its runs: the first
  // run of a program's step often writes fresh pages (1.2-2.3 ns per byte in
  // a guest), which later runs do not.
  static constexpr uint32_t kRunsToCount = 2;
  // Entries kept; a program whose flushes are all different starts over.
  static constexpr size_t kMaxEntries = 4096;
  struct Side {
    double fastest_ns = 0;
    uint32_t runs = 0;
  };
  struct Times {
    Side device, host;
  };
  std::unordered_map<uint64_t, Times> times_;
};

}  // namespace npvk
