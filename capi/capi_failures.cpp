// The host loop: it replays failed flushes and runs the flushes the cost
// model keeps on the host; failure counts, and fault injection for tests.
#include "capi/capi_common.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/host_workers.hpp"
#include "runtime/recovery.hpp"

using namespace npvk;

extern "C" {

NPVK_API npvk_status npvk_context_set_host_loop(npvk_context h, npvk_host_loop_fn fn, void *user) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->set_host_loop(fn, user);
  });
}

NPVK_API npvk_status npvk_context_get_failure_stats(npvk_context h, npvk_failure_stats *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    copy_sized(out, ctx->failure_stats());
  });
}

NPVK_API uint64_t npvk_failure_epoch(void) {
  return failure_epoch().load(std::memory_order_acquire);
}

NPVK_API npvk_status npvk_context_set_cost_model(npvk_context h, int enabled) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->set_cost_model(enabled != 0);
  });
}

NPVK_API npvk_status npvk_context_get_cost_model(npvk_context h, int measure,
                                                 npvk_cost_model *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    const CostParams &p = ctx->cost_params(measure != 0);
    const CostEstimate &e = ctx->last_cost_estimate();
    npvk_cost_model m{};
    m.struct_size = sizeof m;
    m.enabled = ctx->cost_model();
    m.measured = p.measured;
    m.device_flush_ns = p.device_flush_ns;
    m.device_ns_per_byte = p.device_ns_per_byte;
    m.device_math_ns = p.device_math_ns;
    m.device_pow_ns = p.device_pow_ns;
    m.device_narrow_ns = p.device_narrow_ns;
    m.device_dispatch_ns = p.device_dispatch_ns;
    m.host_ns_per_byte = p.host_ns_per_byte;
    m.host_math_ns = p.host_math_ns;
    m.host_pow_ns = p.host_pow_ns;
    m.last_device_ns = e.device_ns;
    m.last_host_ns = e.host_ns;
    m.flushes_weighed = ctx->flushes_weighed();
    m.host_streak = ctx->host_streak();
    m.measured_estimates = ctx->measured_estimates();
    m.device_make_ns = ctx->device_make_ns();
    m.flushes_awaiting_device = ctx->flushes_awaiting_device();
    m.device_made = ctx->device_made() ? 1 : 0;
    m.host_threads = uint32_t(HostWorkers::shared().threads());
    copy_sized(out, m);
  });
}

NPVK_API npvk_status npvk_context_pending_on_host(npvk_context h, int *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    *out = ctx->pending_runs_on_host() ? 1 : 0;
  });
}

NPVK_API npvk_status npvk_fault_inject(const char *spec) {
  return guarded([&] { fault::configure(spec); });
}

}  // extern "C"
