// Placement (runtime/placement/placement.hpp): the cost model's setting and
// figures, and where work runs, asked before it is recorded.
#include "capi/capi_common.hpp"
#include "interpose/managed_memory.hpp"
#include "runtime/host/host_workers.hpp"
#include "runtime/placement/placement.hpp"

using namespace npvk;

namespace {

// Whether queued device work writes the managed memory at `data`: its
// allocation waits for the device before the host may read it.
bool queued_write(const void *data) {
  ManagedMemory *mm = ManagedMemory::instance();
  if (!mm || !mm->may_hold(data)) return false;
  ContextLock lock(mm->context()->mutex());
  const ManagedMemory::Allocation *a = mm->find(data);
  return a && (a->state == ManagedMemory::State::DeviceWrites ||
               a->state == ManagedMemory::State::Device);
}

}  // namespace

extern "C" {

NPVK_API npvk_status npvk_context_set_cost_model(npvk_context h, int enabled) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->placement().set_enabled(enabled != 0);
  });
}

NPVK_API npvk_status npvk_context_get_cost_model(npvk_context h, int measure,
                                                 npvk_cost_model *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    Placement &placement = ctx->placement();
    const CostParams &p = placement.params(measure != 0);
    const CostEstimate &e = placement.last_estimate();
    npvk_cost_model m{};
    m.struct_size = sizeof m;
    m.enabled = placement.enabled();
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
    m.flushes_weighed = placement.flushes_weighed();
    m.host_streak = placement.host_streak();
    m.measured_estimates = placement.measured_estimates();
    m.device_make_ns = placement.device_make_ns();
    m.flushes_awaiting_device = placement.flushes_awaiting_device();
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

NPVK_API npvk_status npvk_placement_decide(npvk_context h, const npvk_work_desc *work,
                                           npvk_placement *out) {
  return guarded([&] {
    require_out(out, "out");
    require(work != nullptr && work->struct_size >= sizeof(npvk_work_desc),
            NPVK_ERR_INVALID_ARGUMENT, "npvk_work_desc is null or its struct_size is not set");
    require(work->kind <= NPVK_WORK_PRODUCT, NPVK_ERR_INVALID_ARGUMENT, "unknown npvk_work_kind");
    require(work->count == 0 || work->operands != nullptr, NPVK_ERR_INVALID_ARGUMENT,
            "npvk_work_desc.operands is null");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    Placement &placement = ctx->placement();
    Decision d;
    if (work->kind == NPVK_WORK_ELEMENTWISE) {
      d = placement.decide_loop_call([] {
        if (ManagedMemory *mm = ManagedMemory::instance()) mm->flush_queued();
        return true;
      });
    } else {
      CallWork call;
      call.kind = work->kind == NPVK_WORK_STREAMED_SUM ? CallKind::StreamedSum
                  : work->kind == NPVK_WORK_PRODUCT    ? CallKind::Product
                                                       : CallKind::OtherReduction;
      call.bytes = work->bytes;
      CallQueue queue;
      queue.writes_operands = [&] {
        for (uint32_t k = 0; k < work->count; ++k)
          if (queued_write(work->operands[k])) return true;
        return false;
      };
      queue.run_queued = [&] {
        try {
          ctx->check_usable();  // as npvk_sync: a lost device runs nothing
          ctx->flush();
        } catch (const Error &) {
          return false;  // the device path reports it
        }
        return true;
      };
      d = placement.decide_call(call, queue);
    }
    npvk_placement p{};
    p.struct_size = sizeof p;
    p.host = d.host ? 1 : 0;
    p.reason = d.reason;
    p.device_ns = d.device_ns;
    p.host_ns = d.host_ns;
    p.transfer_ns = d.transfer_ns;
    p.hold_calls = d.hold_calls;
    p.ask_every = d.ask_every;
    copy_sized(out, p);
  });
}

}  // extern "C"
