// Measures the cost model's parameters (runtime/placement/cost_model.hpp) on its
// context's device and host, once per device and driver: the same ops
// (add, exp, power of float64 arrays) run as kernels and through the host
// loop, each timed as a whole flush, the fastest of a few runs, and on the
// device an add of uint8 arrays and one of 2^16 float64 elements. The figures are kept in the
// kernel cache's directory.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "runtime/context.hpp"
#include "runtime/placement/placement.hpp"

namespace npvk {
namespace {

constexpr int64_t kElements = 1 << 20;  // 8 MiB per operand: past the caches
// Math runs at a quarter of that: exp and power cost far more per element
// than their bytes, and at full size power's 12 runs took 0.1 s of the
// calibration's 0.16-0.18 (lavapipe, 2 cores; now 0.08-0.10 in all).
constexpr int64_t kMathElements = kElements / 4;
// A dispatch of this many elements runs its workgroups on every driver
// thread, and costs more than its bytes: the calibration's 1-element flush
// dispatches one workgroup.
constexpr int64_t kDispatchElements = 1 << 16;
constexpr int kRuns = 5;

}  // namespace

std::string Placement::device_key() const {
  const npvk_device_info &info = ctx_.device_info();
  std::string key;
  char hex[3];
  for (uint8_t byte : info.driver_uuid) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    key += hex;
  }
  // Drivers may share a UUID across releases (llvmpipe's is its name), and
  // their speeds differ by far: the driver's version string is in the key.
  uint32_t version = 2166136261u;  // FNV-1a
  for (const char *c = info.driver_info; *c; ++c) version = (version ^ uint8_t(*c)) * 16777619u;
  char ids[48];
  std::snprintf(ids, sizeof ids, "-%04x-%04x-%08x", info.vendor_id, info.device_id, version);
  return key + ids;
}

const CostParams &Placement::params(bool measure) {
  if (costs_tried_ || costs_.measured) return costs_;
  const std::string &dir = ctx_.cache_dir_;
  if (load_cost_params(dir, device_key(), &costs_) || !measure) return costs_;
  costs_tried_ = true;
  costs_ = this->measure();
  if (costs_.measured) save_cost_params(dir, device_key(), costs_);
  return costs_;
}

CostParams Placement::measure() {
  Context &ctx = ctx_;
  CostParams p;
  // The measurement's own work is no part of the program's statistics.
  const npvk_stats saved_stats = ctx.stats_;
  const Forced saved_forced = forced_;
  // NumPy's loops on one thread, as NumPy runs them (HostExecutor::set_split).
  ctx.host_.set_split(false);
  struct SplitAgain {
    HostExecutor &host;
    ~SplitAgain() { host.set_split(true); }
  } split_again{ctx.host_};
  // A page between neighbours: NumPy's SIMD loops take an output that ends
  // where an input starts as overlapping it, and run their scalar loop (a
  // power of two adjacent 8 MiB buffers measured 10 ns per element, against
  // 1.7 for the same call on separate arrays).
  const int64_t bytes = kElements * 8 + 4096;
  auto a = ctx.create_buffer(bytes), b = ctx.create_buffer(bytes), c = ctx.create_buffer(bytes);
  for (const auto &buf : {a, b})
    if (!buf->device->mapped()) return p;  // the host cannot run this device's work
  std::fill_n(static_cast<double *>(a->device->mapped()), kElements, 1.25);
  std::fill_n(static_cast<double *>(b->device->mapped()), kElements, 1.75);
  const int64_t n = kElements, m = kMathElements, one = 1;
  auto va = make_view(a, 0, NPVK_FLOAT64, 1, &n, nullptr),
       vb = make_view(b, 0, NPVK_FLOAT64, 1, &n, nullptr),
       vc = make_view(c, 0, NPVK_FLOAT64, 1, &n, nullptr),
       ma = make_view(a, 0, NPVK_FLOAT64, 1, &m, nullptr),
       mb = make_view(b, 0, NPVK_FLOAT64, 1, &m, nullptr),
       mc = make_view(c, 0, NPVK_FLOAT64, 1, &m, nullptr),
       ua = make_view(a, 0, NPVK_UINT8, 1, &n, nullptr),
       ub = make_view(b, 0, NPVK_UINT8, 1, &n, nullptr),
       uc = make_view(c, 0, NPVK_UINT8, 1, &n, nullptr),
       da = make_view(a, 0, NPVK_FLOAT64, 1, &kDispatchElements, nullptr),
       db = make_view(b, 0, NPVK_FLOAT64, 1, &kDispatchElements, nullptr),
       dc = make_view(c, 0, NPVK_FLOAT64, 1, &kDispatchElements, nullptr),
       ta = make_view(a, 0, NPVK_FLOAT64, 1, &one, nullptr),
       tc = make_view(c, 0, NPVK_FLOAT64, 1, &one, nullptr);
  // Nanoseconds per flush of one op on the device and on the host: runs
  // alternate between the two, after one each that builds the kernel, and
  // the fastest counts. On a shared machine the fastest run is the one least
  // disturbed; a median would carry the load of the moment into a figure
  // that is kept for good.
  struct Pair {
    double device, host;
  };
  auto time = [&](npvk_op op, std::vector<const View *> operands, bool host = true) {
    const uint32_t nin = uint32_t(operands.size() - 1);
    Pair best{1e300, 1e300};
    for (int run = 0; run <= kRuns; ++run) {
      for (Forced where : {Forced::Device, Forced::Host}) {
        if (where == Forced::Host && !host) continue;
        forced_ = where;
        ctx.apply(op, operands, nin);
        const auto start = std::chrono::steady_clock::now();
        ctx.flush();
        const double t =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                .count();
        double &slot = where == Forced::Device ? best.device : best.host;
        if (run > 0) slot = std::min(slot, t);
      }
    }
    return best;
  };
  try {
    // The four kernels built in one flush, in parallel (KernelStore::prepare),
    // rather than one after another at each op's first run: views of four
    // lengths keep them apart (a kernel's ops share one shape).
    {
      const int64_t n1 = n - 1, n2 = n - 2, n3 = n - 3;
      auto a1 = make_view(a, 0, NPVK_FLOAT64, 1, &n1, nullptr),
           c1 = make_view(c, 0, NPVK_FLOAT64, 1, &n1, nullptr),
           a2 = make_view(a, 0, NPVK_FLOAT64, 1, &n2, nullptr),
           b2 = make_view(b, 0, NPVK_FLOAT64, 1, &n2, nullptr),
           c2 = make_view(c, 0, NPVK_FLOAT64, 1, &n2, nullptr),
           ua3 = make_view(a, 0, NPVK_UINT8, 1, &n3, nullptr),
           uc3 = make_view(c, 0, NPVK_UINT8, 1, &n3, nullptr);
      forced_ = Forced::Device;
      ctx.apply(NPVK_OP_ADD, {va.get(), vb.get(), vc.get()}, 2);
      ctx.apply(NPVK_OP_EXP, {a1.get(), c1.get()}, 1);
      ctx.apply(NPVK_OP_POWER, {a2.get(), b2.get(), c2.get()}, 2);
      ctx.apply(NPVK_OP_ADD, {ua3.get(), ua3.get(), uc3.get()}, 2);
      ctx.flush();
    }
    const double bytes3 = 3.0 * 8 * kElements;
    p.device_flush_ns = time(NPVK_OP_ADD, {ta.get(), ta.get(), tc.get()}).device;
    const Pair add = time(NPVK_OP_ADD, {va.get(), vb.get(), vc.get()});
    const Pair exp = time(NPVK_OP_EXP, {ma.get(), mc.get()});
    const Pair pow = time(NPVK_OP_POWER, {ma.get(), mb.get(), mc.get()});
    // The device alone: the cost model prices the host's narrow loops by
    // their bytes (NumPy's uint8 add streams them).
    const double dev_narrow = time(NPVK_OP_ADD, {ua.get(), ub.get(), uc.get()}, false).device;
    const double dev_dispatch = time(NPVK_OP_ADD, {da.get(), db.get(), dc.get()}, false).device;
    const double dev_add = add.device, dev_exp = exp.device, dev_pow = pow.device;
    const double host_add = add.host, host_exp = exp.host, host_pow = pow.host;
    p.device_ns_per_byte = std::max(0.0, dev_add - p.device_flush_ns) / bytes3;
    const double math_bytes2 = 2.0 * 8 * kMathElements, math_bytes3 = 3.0 * 8 * kMathElements;
    p.device_math_ns =
        std::max(0.0, dev_exp - p.device_flush_ns - math_bytes2 * p.device_ns_per_byte) /
        kMathElements;
    p.device_pow_ns =
        std::max(0.0, dev_pow - p.device_flush_ns - math_bytes3 * p.device_ns_per_byte) /
        kMathElements;
    p.device_dispatch_ns = std::max(
        0.0, dev_dispatch - p.device_flush_ns - 3.0 * 8 * kDispatchElements * p.device_ns_per_byte);
    p.device_narrow_ns =
        std::max(0.0, dev_narrow - p.device_flush_ns - 3.0 * kElements * p.device_ns_per_byte) /
        (3.0 * kElements);
    p.host_ns_per_byte = host_add / bytes3;
    p.host_math_ns = std::max(0.0, host_exp - math_bytes2 * p.host_ns_per_byte) / kMathElements;
    p.host_pow_ns = std::max(0.0, host_pow - math_bytes3 * p.host_ns_per_byte) / kMathElements;
    p.measured = true;
  } catch (const Error &) {
    ctx.pending_.clear();  // no figures: every flush stays on the device
  }
  forced_ = saved_forced;
  ctx.stats_ = saved_stats;
  return p;
}

}  // namespace npvk
