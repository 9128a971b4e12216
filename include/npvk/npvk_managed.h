/*
 * npvk_managed.h - managed memory, kept coherent with the device by page
 * protection.
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_MANAGED_H
#define NPVK_NPVK_MANAGED_H

#include "npvk_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- managed memory ------------------------------------------------------
 *
 * For runtimes that sit under a host program (the NumPy shim): memory the
 * host program uses as ordinary memory, which npvk keeps coherent with the
 * device by page protection. While the device owns newer data the pages are
 * inaccessible (or read-only while the device reads them); a host access
 * faults, npvk runs the pending work, makes the pages current and lets the
 * access retry. Faults on other memory go to the previous handler unchanged.
 * A system call cannot fault, so callers that pass managed memory to the
 * kernel (write, read, send, recv) call npvk_managed_host_access first.
 */

typedef struct npvk_managed_stats {
  uint32_t struct_size; /* sizeof(npvk_managed_stats) */
  uint32_t reserved;
  uint64_t live_allocations;
  uint64_t live_bytes;
  uint64_t allocations;         /* ever made */
  uint64_t faults;              /* host accesses that found device-owned pages */
  uint64_t host_syncs_fault;    /* flushes a fault caused */
  uint64_t host_syncs_explicit; /* npvk_managed_sync / host_access that had to flush */
  uint64_t host_syncs_free;     /* flushes needed to free memory pending work used */
  uint64_t host_syncs_fork;
  uint64_t host_syncs_exit;
  uint64_t bytes_to_device;
  uint64_t bytes_to_host;
  uint64_t syscalls_guarded; /* I/O calls whose buffer the syscall guard made current */
} npvk_managed_stats;

/* Creates the process-wide managed context (the first call only; later calls
 * return the same handle) and installs the fault handler. The handle stays
 * owned by npvk: do not release it. On a CPU device whose description an
 * earlier process with the same settings stored in the kernel cache's
 * directory, the context starts from that description and makes the device
 * at the first work that needs it (npvk_context_make_device makes it now):
 * a device that cannot be made then fails that work, not this call. */
NPVK_API npvk_status npvk_managed_enable(const npvk_context_options *options, npvk_context *out);
/* Runs all pending work and makes every managed allocation plain host memory.
 * Allocations stay valid; later npvk_managed_view calls fail until the next
 * npvk_managed_enable. */
NPVK_API npvk_status npvk_managed_disable(void);
/* 1 in `out` while managed memory is enabled and usable in this process (0
 * after disable, and in the child of a fork). */
NPVK_API npvk_status npvk_managed_active(int *out);
/* Page-aligned host memory of `size` bytes (zero-filled when `zero`). */
NPVK_API npvk_status npvk_managed_alloc(uint64_t size, int zero, void **out);
/* Frees a managed allocation; pending work on it finishes first. */
NPVK_API npvk_status npvk_managed_free(void *ptr);
/* Whether `ptr` lies in a managed allocation; its start and size if so. */
NPVK_API npvk_status npvk_managed_lookup(const void *ptr, int *found, void **base, uint64_t *size);
/* Whether a host access to managed memory at `ptr` would wait for device
 * work: `read_waits` when queued work writes it (or the device copy is
 * newer), `write_waits` when queued work reads or writes it. Both 0 for
 * memory that is not managed. Lets a caller run the next operation on the
 * device rather than make the host wait. */
NPVK_API npvk_status npvk_managed_pending(const void *ptr, int *read_waits, int *write_waits);
/* A view of managed memory: as npvk_view_create, with the element at index 0
 * at `ptr`. NPVK_ERR_INVALID_ARGUMENT if `ptr` is not managed memory. */
NPVK_API npvk_status npvk_managed_view(const void *ptr, npvk_dtype dtype, uint32_t ndim,
                                       const int64_t *shape, const int64_t *strides,
                                       npvk_view *out);
/* One operand of npvk_managed_apply: an array of managed memory (`data`,
 * `ndim`, `shape` and byte `strides` as npvk_managed_view takes them; null
 * strides: C-contiguous), or with `scalar` set an input of one value of
 * `dtype` at `data`, read during the call. */
typedef struct npvk_managed_operand {
  const void *data;
  const int64_t *shape;
  const int64_t *strides;
  npvk_dtype dtype;
  uint32_t ndim;
  uint32_t scalar;
  uint32_t reserved; /* 0 */
} npvk_managed_operand;
/* npvk_apply on managed memory in one call: the runtime finds each operand's
 * allocation and makes its view itself, under one lock (an interposer's
 * per-call cost: no handles to look up, make and release). Inputs, then
 * outputs. Declining records nothing and sets `*declined` to a static reason:
 * "unmanaged operand" for an array outside managed memory ("small" when its
 * own bytes are below `min_bytes`), "small" when no array operand's allocation
 * reaches `min_bytes`. `*declined` is null when the op was recorded. Errors as
 * npvk_apply's (an output overlapping an input other than exactly:
 * NPVK_ERR_INVALID_ARGUMENT). */
NPVK_API npvk_status npvk_managed_apply(npvk_op op, uint32_t nin, uint32_t nout,
                                        const npvk_managed_operand *operands, uint64_t min_bytes,
                                        const char **declined);
/* Makes [ptr, ptr+size) current and accessible to the host (writable when
 * `write`). A no-op for memory that is not managed. */
NPVK_API npvk_status npvk_managed_host_access(const void *ptr, uint64_t size, int write);
/* Runs all pending work; every managed allocation is then host-current and
 * open to the host (also to system calls the syscall guard does not see). */
NPVK_API npvk_status npvk_managed_sync(void);
/* Runs all pending work, and nothing more: pages that device work left
 * protected stay so, and mirrored memory (a discrete GPU, NPVK_ZERO_COPY=0)
 * is downloaded at its first host access, as after any flush. For code that
 * needs the work done (its FP errors known), not the memory current. */
NPVK_API npvk_status npvk_managed_flush(void);
/* Tells npvk that the program is about to start another thread that may use
 * managed memory. With NPVK_PAGE_ALIAS unset, managed memory then gives each
 * allocation a second mapping for the device (made now for the existing
 * ones), so that no flush opens pages another thread may be reading.
 * Threads started without this call are noticed at the next new mapping. */
NPVK_API npvk_status npvk_managed_threads_starting(void);
/* Tells npvk, before npvk_managed_enable, that the threads other than the
 * caller that run now are library worker pools (OpenBLAS's): they touch
 * memory only inside calls the caller makes, never while a flush runs, so
 * they do not make the program threaded for NPVK_PAGE_ALIAS's default. Only
 * threads started later then count. Without it, any thread that runs when
 * managed memory is enabled counts. */
NPVK_API npvk_status npvk_managed_threads_are_pools(void);
/* Re-installs managed memory's SIGSEGV/SIGBUS handler where another has
 * taken its place since; that one then gets the faults that are not npvk's.
 * npvk checks this itself wherever it protects pages and at its syncs; call
 * it after installing a handler of your own over npvk's. */
NPVK_API npvk_status npvk_managed_check_fault_handler(void);
NPVK_API npvk_status npvk_managed_get_stats(npvk_managed_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_MANAGED_H */
