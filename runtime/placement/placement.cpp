#include "runtime/placement/placement.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "runtime/context.hpp"

namespace npvk {
namespace {

// Column sums, logical and extremum reductions and scans run as workgroup
// kernels; the device takes them only where it streams this much faster than
// the host. Lavapipe on Mesa 25 streams 0.028-0.029 ns/B against NumPy's
// 0.032-0.034, yet its workgroup kernels ran column sums (sklearn's
// StandardScaler, 1e5 x 50 along axis 0) in 9-23 ms against NumPy's 3-4, and
// isnan(X).any() over 5e6 elements in 14 ms against about 3.
constexpr double kOthersNeedDeviceFaster = 2.0;

// Elementwise work is weighed per flush, after it was recorded. Where the
// model sends flush after flush to the host (a slow device: Mesa 22.3's
// lavapipe streams memory 30x slower than NumPy), recording is pure cost:
// the replay ran SOR 1.4x slower than NumPy, its temporaries all distinct and
// cold instead of NumPy's one warm block, and each array's pages protected
// at its op and faulted open at its host use. After kHostStreak such flushes
// in a row, the next kBypassCalls loop calls run with NumPy at once; then
// recording resumes until the model decides another flush, and the streak
// it leaves decides whether to bypass again. The caller looks at the streak
// once per kCheckEvery calls it would record: each look takes the lock.
constexpr uint64_t kHostStreak = 2;
constexpr uint64_t kBypassCalls = 8192;
constexpr uint32_t kCheckEvery = 16;

}  // namespace

double Placement::device_make_ns() const {
  return ctx_.device_made() ? 0.0 : std::max(0.0, double(device_make_ns_) - device_regret_ns_);
}

double Placement::transfer_ns(const TransferCost &) const {
  // Every device asked today reaches the operands in place (zero-copy).
  return 0.0;
}

bool Placement::flush_on_host(const std::vector<RecordedOp> &done,
                              const std::vector<PlannedKernel> &kernels, uint64_t signature,
                              const HostExecutor &host) {
  switch (forced_) {
    case Forced::Device:
      return false;
    case Forced::Host:
      require(host.can_run_elementwise(done), NPVK_ERR_UNSUPPORTED,
              "the host cannot run this work");
      return true;
    case Forced::None:
      break;
  }
  if (!enabled_ || !host.can_run_elementwise(done)) return false;
  const CostParams &p = params();
  if (!p.measured) return false;
  last_estimate_ = estimate_costs(p, done, kernels);
  last_estimate_.device_ns += transfer_ns(TransferCost{});
  measured_estimates_ += history_.correct(signature, last_estimate_) != 0;
  ++flushes_weighed_;
  if (!last_estimate_.host() && !ctx_.device_made()) {
    // The device is not made yet, and making it costs what an earlier
    // process measured (lavapipe: 30-40 ms). Like renting skis until the
    // rent adds up to their price: the host runs the work until what the
    // device would have saved adds up to that, and then the device is made.
    // A program with one such flush (the matplotlib example's) never pays
    // for the device; a time step that gains a few ms on the device makes it
    // within a few steps. Waiting is not the host winning: no streak.
    device_regret_ns_ += last_estimate_.host_ns - last_estimate_.device_ns;
    if (device_regret_ns_ < double(device_make_ns_)) {
      ++flushes_awaiting_device_;
      host_streak_ = 0;
      return true;
    }
  }
  host_streak_ = last_estimate_.host() ? host_streak_ + 1 : 0;
  return last_estimate_.host();
}

bool Placement::queued_on_host(const std::vector<RecordedOp> &pending,
                               const std::function<std::vector<PlannedKernel>()> &plan,
                               const HostExecutor &host) {
  if (pending.empty() || !enabled_ || calibrating() || !host.can_run_elementwise(pending))
    return false;
  // Never measured from here: measuring runs flushes, and the caller is
  // between recording a producer and its sum (it measures at the next flush).
  const CostParams &p = params(false);
  if (!p.measured) return false;
  // Planned as the flush will plan it, less the contractions of arrays the
  // recorder still holds for row merging (it lets them go at the flush).
  // Only where the device's time for this work was measured (with the sum,
  // under the same name): the rule that keeps a sum with its producer is
  // left to the figures otherwise, which price every math function as exp.
  // scipy.ndimage's `smooth.std()` after a hypot went to the host by them,
  // 126 ms, against 14-62 ms on the device (NumPy's hypot is scalar).
  const std::vector<PlannedKernel> kernels = plan();
  CostEstimate e = estimate_costs(p, pending, kernels);
  e.device_ns += transfer_ns(TransferCost{});
  const unsigned measured = history_.correct(FlushHistory::signature(kernels), e);
  // Without the device, the flush runs on the host while it waits for the
  // device to pay off (flush_on_host), and the sum after it with NumPy.
  if (!ctx_.device_made() && e.host_ns - e.device_ns < device_make_ns()) return true;
  return measured & FlushHistory::kDevice && e.host();
}

Decision Placement::decide_call(const CallWork &work, const CallQueue &queue) {
  Decision d;
  if (!enabled_) return d;
  const CostParams &p = params();
  if (!p.measured) return d;
  const bool product = work.kind == CallKind::Product;
  const double device_speedup = p.host_ns_per_byte / p.device_ns_per_byte;
  const double bytes = double(work.bytes);
  d.transfer_ns = transfer_ns(work.transfer);
  d.host_ns = bytes * p.host_ns_per_byte;
  d.device_ns = p.device_flush_ns + bytes * p.device_ns_per_byte + device_make_ns() + d.transfer_ns;
  // No GLSL product beats a CPU's BLAS on the same cores, and where the host
  // streams memory faster than the device, no reduction does either; nor
  // does a workgroup reduction where the device streams less than twice as
  // fast (below: lavapipe's column sums ran 3-5x slower than NumPy's).
  const bool host_faster = product ? ctx_.device_info().type == NPVK_DEVICE_CPU
                                   : (work.kind == CallKind::OtherReduction &&
                                      device_speedup < kOthersNeedDeviceFaster) ||
                                         d.host_ns < d.device_ns;
  if (!host_faster) return d;
  // An operand that queued work writes: that work runs now (where its own
  // flush's estimate says), rather than with this call on the device.
  // - A streamed sum stays on the device with its producer where the device
  //   streams faster than the host and the producer's flush would run there:
  //   N-body's row sums of a fused chain (2-3x NumPy at medium size on Mesa
  //   25, 0.93x when they went to NumPy). Where the producer would run on
  //   the host, the sum runs there after it: scikit-learn's k-means++ chain
  //   (5 ops over (8, 1e5), in place, and its row sums) took 2.1-2.4 ms per
  //   flush on lavapipe, NumPy 0.86, and the chain's own flush is weighed by
  //   what it measured (FlushHistory), which the sum's flush then learns.
  // - Any other reduction only where the device streams at least twice as
  //   fast (a GPU; kOthersNeedDeviceFaster).
  // - A product never: no producer fuses into it, and on a CPU device BLAS
  //   wins whoever streams faster (sklearn's PCA transform, 1e5 x 50 @ 50 x
  //   10, took 170 ms as a GLSL product against NumPy's 5).
  if (queue.writes_operands && queue.writes_operands()) {
    if (work.kind == CallKind::StreamedSum && device_speedup >= 1.0) {
      bool producer_on_host = false;
      try {
        producer_on_host = ctx_.pending_runs_on_host();
      } catch (const Error &) {
        // Not weighed: the sum stays with its producer.
      }
      if (!producer_on_host) return d;
    }
    if (work.kind == CallKind::OtherReduction && device_speedup >= kOthersNeedDeviceFaster)
      return d;
    if (!queue.run_queued || !queue.run_queued()) return d;  // the device path reports it
  }
  d.host = true;
  d.reason = "cost model";
  return d;
}

Decision Placement::decide_loop_call(const std::function<bool()> &run_all_queued) {
  Decision d;
  d.ask_every = kCheckEvery;
  // Another bypass only after the model decided a flush recorded since.
  if (host_streak_ < kHostStreak || flushes_weighed_ <= weighed_at_bypass_) return d;
  // What was recorded since that flush is weighed first, whole. Without it
  // the first bypassed call read the last recorded ops' results, a flush of
  // those few ops that the host wins by the device's fixed cost alone, and
  // the streak fed itself: SOR, whose fused sweeps the device runs 1.8x
  // faster than NumPy, ran a one-op flush per sweep on the host (0.79x NumPy
  // at medium size). Where that work goes to the device the streak ends.
  if (!run_all_queued() || host_streak_ < kHostStreak) return d;
  weighed_at_bypass_ = flushes_weighed_;
  d.host = true;
  d.reason = "cost model";
  d.hold_calls = kBypassCalls;
  return d;
}

}  // namespace npvk
