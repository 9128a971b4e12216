// Placement (docs/architecture.md, "Cost model"): where each piece of work
// runs, the device or the host executor (runtime/host/host_executor.hpp),
// decided in one place for every kind of work: elementwise flushes, when
// they are flushed; reductions, scans and matrix products, when a caller
// (the Python shim, or any C caller of npvk_reduce and npvk_matmul) asks
// through npvk_placement_decide before recording them. It owns what the
// decisions weigh: the cost figures measured once per device
// (calibration.cpp, cost_model.hpp), what flushes of the same work took
// (flush_history.hpp), what is left of making the device, and the streak of
// host flushes that makes loop calls bypass recording. Every member expects
// the context's lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compile/fusion.hpp"
#include "runtime/host/host_executor.hpp"
#include "runtime/placement/cost_model.hpp"
#include "runtime/placement/flush_history.hpp"

namespace npvk {

class Context;

// What moving the operands between host and device memory costs: nothing
// today, where the device is only asked when the host reaches every operand
// in place (zero-copy memory of a CPU or unified-memory device). A mirrored
// (discrete) device's transfers, priced at its measured transfer rate, go
// here: the term is already on the device's side of every decision.
struct TransferCost {
  uint64_t bytes = 0;      // copied one way or the other
  uint32_t transfers = 0;  // separate copies, each with its fixed cost
};

// The work a caller asks about before recording it (npvk_work_kind).
enum class CallKind {
  // A float sum along the axis memory is contiguous in: the device streams
  // it, pairwise (row sums, or all elements).
  StreamedSum,
  // Any other reduction or a scan: the device's workgroup kernels (column
  // sums, logical and extremum reductions, cumulative sums).
  OtherReduction,
  Product,
};

struct CallWork {
  CallKind kind = CallKind::OtherReduction;
  uint64_t bytes = 0;  // of the largest operand
  TransferCost transfer;
};

// What the caller provides for a call's decision, each asked only if the
// decision needs it. Each runs under the context's lock.
struct CallQueue {
  // Whether queued device work writes one of the call's operands.
  std::function<bool()> writes_operands;
  // Runs the queued work now; false where that failed (the device path then
  // reports it, and the call stays there).
  std::function<bool()> run_queued;
};

struct Decision {
  bool host = false;
  const char *reason = nullptr;  // "cost model" for the host, else null
  double device_ns = 0, host_ns = 0, transfer_ns = 0;
  // Elementwise loop calls: the answer holds for this many more calls, and
  // the caller asks again once per ask_every calls that would be recorded.
  uint64_t hold_calls = 0;
  uint32_t ask_every = 0;
};

class Placement {
 public:
  explicit Placement(Context &ctx) : ctx_(ctx) {}

  // The cost model: off until enabled (npvk_context_set_cost_model); it
  // needs the host loop. Setting it starts a new streak of host flushes.
  void set_enabled(bool on) {
    enabled_ = on;
    host_streak_ = 0;
  }
  bool enabled() const { return enabled_; }
  // The figures, measured (`measure`) or loaded at their first use.
  const CostParams &params(bool measure = true);
  // What making the device took in an earlier process (its stored description).
  void set_device_make_ns(uint64_t ns) { device_make_ns_ = ns; }

  // -- Elementwise flushes, at the flush.
  // The flush's name in the history of measured flushes (0: not weighed).
  uint64_t signature(const std::vector<PlannedKernel> &kernels) const {
    return enabled_ && !calibrating() ? FlushHistory::signature(kernels) : 0;
  }
  // Whether `done`, planned as `kernels`, runs on `host` rather than the device.
  bool flush_on_host(const std::vector<RecordedOp> &done, const std::vector<PlannedKernel> &kernels,
                     uint64_t signature, const HostExecutor &host);
  // A flush of `signature` took `ns` there, all of it.
  void ran(uint64_t signature, bool on_host, double ns) { history_.note(signature, on_host, ns); }
  // Whether the queued work `pending` (planned by `plan`) runs faster on the
  // host, by what the same planned work measured on the device before (false
  // where it was not measured, or it would not be weighed): a row sum of its
  // result then runs with NumPy rather than with it on the device.
  bool queued_on_host(const std::vector<RecordedOp> &pending,
                      const std::function<std::vector<PlannedKernel>()> &plan,
                      const HostExecutor &host);

  // -- Calls, before they are recorded (npvk_placement_decide).
  Decision decide_call(const CallWork &work, const CallQueue &queue);
  // An elementwise loop call: where the model sends flush after flush to the
  // host, the next calls skip recording and run with NumPy at once.
  Decision decide_loop_call(const std::function<bool()> &run_all_queued);

  // -- What it decided (npvk_cost_model).
  const CostEstimate &last_estimate() const { return last_estimate_; }
  uint64_t flushes_weighed() const { return flushes_weighed_; }
  uint64_t host_streak() const { return host_streak_; }
  uint64_t measured_estimates() const { return measured_estimates_; }
  uint64_t flushes_awaiting_device() const { return flushes_awaiting_device_; }
  // What is left of making the device's cost, weighed against it.
  double device_make_ns() const;
  // What `transfer` costs (TransferCost): 0 on the devices asked today.
  double transfer_ns(const TransferCost &transfer) const;

  // -- Calibration (calibration.cpp) forces where its own flushes run.
  enum class Forced { None, Device, Host };
  bool calibrating() const { return forced_ != Forced::None; }
  Forced forced() const { return forced_; }

 private:
  CostParams measure();  // calibration.cpp
  // The figures' file name: the driver's UUID and version, the device's ids.
  std::string device_key() const;

  Context &ctx_;
  bool enabled_ = false;
  Forced forced_ = Forced::None;
  bool costs_tried_ = false;
  CostParams costs_;
  CostEstimate last_estimate_;
  uint64_t flushes_weighed_ = 0, host_streak_ = 0, measured_estimates_ = 0;
  FlushHistory history_;
  // What making the device took in an earlier process (0: made at
  // creation), and what the device would have saved on the flushes run on
  // the host since, for want of it (flush_on_host).
  uint64_t device_make_ns_ = 0;
  double device_regret_ns_ = 0;
  uint64_t flushes_awaiting_device_ = 0;
  // The flushes weighed when loop calls last started to bypass recording.
  uint64_t weighed_at_bypass_ = 0;
};

}  // namespace npvk
