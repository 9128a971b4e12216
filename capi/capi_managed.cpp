// Managed memory: the host-coherent allocations interposing runtimes use.
#include <algorithm>
#include <cstring>
#include <vector>

#include "capi/capi_common.hpp"
#include "compile/dtype.hpp"
#include "interpose/fault_handler.hpp"
#include "interpose/managed_memory.hpp"

using namespace npvk;

namespace {

ManagedMemory &managed() {
  ManagedMemory *mm = ManagedMemory::instance();
  require(mm != nullptr, NPVK_ERR_INVALID_ARGUMENT,
          "managed memory is not enabled (call npvk_managed_enable first)");
  return *mm;
}

}  // namespace

extern "C" {

NPVK_API npvk_status npvk_managed_enable(const npvk_context_options *options, npvk_context *out) {
  return guarded([&] {
    require_out(out, "out");
    static uint64_t handle = 0;  // the one context handle, made once
    ManagedMemory &mm = ManagedMemory::enable(options);
    ContextLock lock(mm.context()->mutex());
    if (!handle) handle = handle_add(HandleKind::Context, mm.context());
    out->id = handle;
  });
}

NPVK_API npvk_status npvk_managed_disable(void) {
  return guarded([&] {
    if (ManagedMemory *mm = ManagedMemory::instance()) mm->set_active(false);
  });
}

NPVK_API npvk_status npvk_managed_active(int *out) {
  return guarded([&] {
    require_out(out, "out");
    ManagedMemory *mm = ManagedMemory::instance();
    *out = mm && mm->active();
  });
}

NPVK_API npvk_status npvk_managed_alloc(uint64_t size, int zero, void **out) {
  return guarded([&] {
    require_out(out, "out");
    *out = managed().allocate(size, zero != 0);
  });
}

NPVK_API npvk_status npvk_managed_free(void *ptr) {
  return guarded([&] {
    if (ptr) managed().free(ptr);
  });
}

NPVK_API npvk_status npvk_managed_lookup(const void *ptr, int *found, void **base, uint64_t *size) {
  return guarded([&] {
    require_out(found, "found");
    *found = 0;
    ManagedMemory *mm = ManagedMemory::instance();
    if (!mm || !mm->may_hold(ptr)) return;
    ContextLock lock(mm->context()->mutex());
    if (ManagedMemory::Allocation *a = mm->find(ptr)) {
      *found = 1;
      if (base) *base = a->base;
      if (size) *size = a->size;
    }
  });
}

NPVK_API npvk_status npvk_managed_pending(const void *ptr, int *read_waits, int *write_waits) {
  return guarded([&] {
    require_out(read_waits, "read_waits");
    require_out(write_waits, "write_waits");
    *read_waits = *write_waits = 0;
    ManagedMemory *mm = ManagedMemory::instance();
    if (!mm || !mm->may_hold(ptr)) return;
    ContextLock lock(mm->context()->mutex());
    if (ManagedMemory::Allocation *a = mm->find(ptr)) {
      const ManagedMemory::State state = a->state;
      *read_waits =
          state == ManagedMemory::State::DeviceWrites || state == ManagedMemory::State::Device;
      *write_waits = state != ManagedMemory::State::Host;
    }
  });
}

NPVK_API npvk_status npvk_managed_view(const void *ptr, npvk_dtype dtype, uint32_t ndim,
                                       const int64_t *shape, const int64_t *strides,
                                       npvk_view *out) {
  return guarded([&] {
    require_out(out, "out");
    ManagedMemory &mm = managed();
    ContextLock lock(mm.context()->mutex());
    require(mm.active(), NPVK_ERR_UNSUPPORTED, "managed memory is disabled in this process");
    mm.context()->check_usable();
    ManagedMemory::Allocation *a = mm.find(ptr);
    require(a != nullptr, NPVK_ERR_INVALID_ARGUMENT, "the pointer is not in managed memory");
    uint64_t offset = uint64_t(static_cast<const uint8_t *>(ptr) - a->base);
    out->id = handle_add(HandleKind::View,
                         make_view(mm.buffer_of(*a), offset, dtype, ndim, shape, strides));
  });
}

NPVK_API npvk_status npvk_managed_apply(npvk_op op, uint32_t nin, uint32_t nout,
                                        const npvk_managed_operand *operands, uint64_t min_bytes,
                                        const char **declined) {
  return guarded([&] {
    require_out(declined, "declined");
    *declined = nullptr;
    require(nin + nout <= kMaxOperands && nout >= 1, NPVK_ERR_INVALID_ARGUMENT,
            "an operation has 1 to 4 operands and at least one output");
    require(operands != nullptr, NPVK_ERR_INVALID_ARGUMENT, "operands is null");
    // Scalars are read before the lock: one may lie in managed memory that
    // queued work writes (NumPy passes a 0-d array's element), and the fault
    // that syncs it must not come while this thread holds the context's lock.
    uint64_t scalar_bits[kMaxOperands] = {};
    for (uint32_t k = 0; k < nin; ++k)
      if (operands[k].scalar) {
        require(operands[k].data != nullptr, NPVK_ERR_INVALID_ARGUMENT,
                "an operand's data is null");
        require(dtype_info(operands[k].dtype).itemsize <= sizeof(uint64_t),
                NPVK_ERR_INVALID_ARGUMENT, "a scalar operand's dtype is wider than 8 bytes");
        std::memcpy(&scalar_bits[k], operands[k].data, dtype_info(operands[k].dtype).itemsize);
      }
    ManagedMemory &mm = managed();
    ContextLock lock(mm.context()->mutex());
    require(mm.active(), NPVK_ERR_UNSUPPORTED, "managed memory is disabled in this process");
    mm.context()->check_usable();
    // Every operand is found before any view is made: making one wraps its
    // allocation for the device, which a declined call must not do.
    ManagedMemory::Allocation *found[kMaxOperands] = {};
    uint64_t largest = 0;
    for (uint32_t k = 0; k < nin + nout; ++k) {
      const npvk_managed_operand &o = operands[k];
      require(o.data != nullptr, NPVK_ERR_INVALID_ARGUMENT, "an operand's data is null");
      require(!o.scalar || k < nin, NPVK_ERR_INVALID_ARGUMENT, "an output cannot be a scalar");
      if (o.scalar) continue;
      require(o.ndim <= NPVK_MAX_DIMS && (o.shape || o.ndim == 0), NPVK_ERR_INVALID_ARGUMENT,
              "an operand's shape is invalid");
      found[k] = mm.may_hold(o.data) ? mm.find(o.data) : nullptr;
      if (!found[k]) {
        uint64_t bytes = dtype_info(o.dtype).itemsize;
        for (uint32_t d = 0; d < o.ndim; ++d) bytes *= uint64_t(std::max<int64_t>(o.shape[d], 0));
        *declined = bytes < min_bytes ? "small" : "unmanaged operand";
        return;
      }
      largest = std::max(largest, found[k]->size);
    }
    if (largest < min_bytes) {
      *declined = "small";
      return;
    }
    View views[kMaxOperands];
    std::vector<const View *> ptrs(nin + nout);
    for (uint32_t k = 0; k < nin + nout; ++k) {
      const npvk_managed_operand &o = operands[k];
      if (o.scalar) {
        views[k] = scalar_view(mm.context(), o.dtype, &scalar_bits[k]);
      } else {
        const uint64_t offset = uint64_t(static_cast<const uint8_t *>(o.data) - found[k]->base);
        views[k] =
            strided_view(mm.buffer_of(*found[k]), offset, o.dtype, o.ndim, o.shape, o.strides);
      }
      ptrs[k] = &views[k];
    }
    mm.context()->apply(op, ptrs, nin);
  });
}

NPVK_API npvk_status npvk_managed_host_access(const void *ptr, uint64_t size, int write) {
  return guarded([&] {
    if (ManagedMemory *mm = ManagedMemory::instance()) mm->host_access(ptr, size, write != 0);
  });
}

NPVK_API npvk_status npvk_managed_sync(void) {
  return guarded([&] {
    if (ManagedMemory *mm = ManagedMemory::instance())
      mm->sync_all(&npvk_managed_stats::host_syncs_explicit, true);
  });
}

NPVK_API npvk_status npvk_managed_flush(void) {
  return guarded([&] {
    if (ManagedMemory *mm = ManagedMemory::instance()) mm->flush_queued();
  });
}

NPVK_API npvk_status npvk_managed_threads_starting(void) {
  return guarded([&] {
    if (ManagedMemory *mm = ManagedMemory::instance()) mm->threads_starting();
  });
}

NPVK_API npvk_status npvk_managed_threads_are_pools(void) {
  return guarded([&] { ManagedMemory::threads_are_pools(); });
}

NPVK_API npvk_status npvk_managed_check_fault_handler(void) {
  return guarded([&] {
    ManagedMemory *mm = ManagedMemory::instance();
    if (mm && mm->active()) ensure_fault_handler();
  });
}

NPVK_API npvk_status npvk_managed_get_stats(npvk_managed_stats *out) {
  return guarded([&] {
    require_out(out, "out");
    npvk_managed_stats s{};
    s.struct_size = sizeof s;
    if (ManagedMemory *mm = ManagedMemory::instance()) {
      ContextLock lock(mm->context()->mutex());
      s = mm->stats();
    }
    copy_sized(out, s);
  });
}

}  // extern "C"
