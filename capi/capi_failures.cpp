// The host loop: it replays failed flushes and runs the flushes the
// placement gives the host (capi_placement.cpp); failure counts, and fault
// injection for tests.
#include "capi/capi_common.hpp"
#include "runtime/fault_injection.hpp"
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

NPVK_API npvk_status npvk_fault_inject(const char *spec) {
  return guarded([&] { fault::configure(spec); });
}

}  // extern "C"
