/*
 * npvk_placement.h - failure handling and placement: the host loop, the cost
 * model, where work runs, and the flush hook.
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_PLACEMENT_H
#define NPVK_NPVK_PLACEMENT_H

#include "npvk_managed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- failure handling ---------------------------------------------------
 *
 * When a flush cannot run its work on the device (a kernel fails to compile,
 * the submission fails, the device is lost), the recorded work is not lost if
 * the context has a host loop: every recorded op of the batch then runs on the
 * host through it, in recording order, on the buffers' host-visible memory,
 * and the flush succeeds. Without a host loop, or when some operand's memory
 * is not host-visible (device-local memory of a discrete GPU), the flush
 * reports the failure as before and the batch's results are undefined.
 * After a device loss every later call still fails with NPVK_ERR_DEVICE_LOST.
 * See docs/architecture.md, "Failure handling".
 */

/* Runs one op as a NumPy inner loop: `args[k]` points at operand k's first
 * element (a scalar input: at its value), `steps[k]` is its byte stride, and
 * `count` elements are processed. Called with `args` NULL and `count` 0 to ask
 * whether this loop can run at all. `fp_flags` (not NULL when args is set)
 * receives the npvk_fp_flags the loop raised. Returns 0 on success. It runs
 * under the context's lock and must not call npvk. */
typedef int (*npvk_host_loop_fn)(void *user, npvk_op op, uint32_t nin, uint32_t nout,
                                 const npvk_dtype *dtypes, char **args, int64_t count,
                                 const int64_t *steps, uint32_t *fp_flags);
/* Registers (fn != NULL) or removes the context's host loop. */
NPVK_API npvk_status npvk_context_set_host_loop(npvk_context ctx, npvk_host_loop_fn fn, void *user);

/* The cost model (docs/architecture.md, "Cost model"). Where a host loop is
 * registered and the host reaches every operand in place (zero-copy memory of
 * a CPU or unified-memory device, no mirrored copy), a flush of elementwise
 * ops whose estimated host time is below its estimated device time runs
 * through the host loop instead of the device: the same memory, the host
 * loop's results. The estimate uses figures measured once per device and
 * driver (add, exp and power of float64 arrays, each way) and kept in the
 * kernel cache's directory. Off until enabled. */
NPVK_API npvk_status npvk_context_set_cost_model(npvk_context ctx, int enabled);

typedef struct npvk_cost_model {
  uint32_t struct_size; /* set by the caller to sizeof(npvk_cost_model) */
  uint32_t enabled;
  uint32_t measured; /* 0: not measured (yet, or the device's memory is not the host's) */
  uint32_t reserved;
  double device_flush_ns;    /* submit to return of one tiny kernel */
  double device_ns_per_byte; /* a cheap kernel, per byte read or written */
  double device_math_ns;     /* one float64 math call (exp), per element */
  double device_pow_ns;      /* a power with an array exponent, per element */
  double host_ns_per_byte;   /* the host loop of add, per byte */
  double host_math_ns;       /* the host loop of exp, per element beyond its bytes */
  double host_pow_ns;        /* the host loop of power, per element beyond its bytes */
  double last_device_ns;     /* the last weighed flush's estimates */
  double last_host_ns;
  uint64_t flushes_weighed; /* flushes the cost model decided */
  uint64_t host_streak;     /* the last of them that all ran on the host */
  double device_narrow_ns;  /* per element and access of a 1- or 2-byte operand, beyond its bytes */
  double device_dispatch_ns; /* per kernel of a flush, beyond the flush and its bytes */
  /* Weighed flushes whose estimate used what the same planned work measured
   * when it ran before (a side counts once it ran twice, as its faster run). */
  uint64_t measured_estimates;
  /* A context that binds before making its device (npvk_managed_enable, where
   * an earlier process stored the device's description) makes it once the
   * device would have saved, over the flushes weighed since, what making it
   * took then; until then those flushes run on the host
   * (flushes_awaiting_device). device_make_ns: what is left of that cost (0
   * once the device is made). device_made: 1 once the device exists. */
  double device_make_ns;
  uint64_t flushes_awaiting_device;
  uint32_t device_made;
  /* Threads a flush run on the host splits NumPy's elementwise loops over,
   * the caller's included (NPVK_HOST_THREADS; default one per usable core).
   * The host figures above are one thread's. */
  uint32_t host_threads;
} npvk_cost_model;

/* The cost model's figures; `measure` != 0 measures them now if they are
 * neither measured nor cached (a fraction of a second; needs the host loop). */
NPVK_API npvk_status npvk_context_get_cost_model(npvk_context ctx, int measure,
                                                 npvk_cost_model *out);

/* 1 in `out` when the cost model, having measured the same planned work on
 * the device before, estimates the queued work faster on the host; 0 when
 * not, when it was never measured there, or when it would not be weighed
 * (nothing queued, the model off, a reduction queued). A caller that is
 * about to reduce a queued result decides with it whether the reduction
 * joins that work on the device or runs on the host after it. */
NPVK_API npvk_status npvk_context_pending_on_host(npvk_context ctx, int *out);

/* Placement: where a piece of work runs, the device or the host loop, asked
 * before it is recorded (docs/architecture.md, "Cost model"). Flushes of
 * elementwise ops are placed by the context itself at each flush; this asks
 * the same component about the rest. It answers "device" (host = 0) unless
 * the cost model is enabled and its figures are measured (measured now at
 * the first question, as npvk_context_get_cost_model with `measure` does). */
typedef enum npvk_work_kind {
  /* An elementwise loop call the caller would record (npvk_apply): "host"
   * while flush after flush ran on the host (the streak of npvk_cost_model),
   * the call then running with the host loops unrecorded. Asking flushes the
   * managed memory's queued work first. The answer holds for `hold_calls`
   * calls; ask once per `ask_every` calls that would be recorded. */
  NPVK_WORK_ELEMENTWISE = 0,
  /* A float sum along the axis memory is contiguous in (npvk_reduce): row
   * sums, or of all elements. It stays on the device with queued work that
   * writes its operand unless that work would run on the host. */
  NPVK_WORK_STREAMED_SUM = 1,
  /* Any other reduction (npvk_reduce), or a scan (npvk_accumulate): the
   * device's workgroup kernels, which the device takes only where it streams
   * memory at least twice as fast as the host. */
  NPVK_WORK_REDUCTION = 2,
  NPVK_WORK_SCAN = 3,
  /* A matrix product (npvk_matmul): the host's BLAS on a CPU device. */
  NPVK_WORK_PRODUCT = 4
} npvk_work_kind;

typedef struct npvk_work_desc {
  uint32_t struct_size; /* set by the caller to sizeof(npvk_work_desc) */
  uint32_t kind;        /* npvk_work_kind */
  /* The inputs' host addresses (managed memory, npvk_managed_enable): queued
   * device work that writes one runs now if the answer is "host". */
  const void *const *operands;
  uint32_t count; /* of operands */
  uint32_t reserved;
  uint64_t bytes; /* of the largest operand */
} npvk_work_desc;

typedef struct npvk_placement {
  uint32_t struct_size; /* set by the caller to sizeof(npvk_placement) */
  uint32_t host;        /* 1: run it with the host loop (NumPy), 0: the device */
  const char *reason;   /* why the host (static text, "cost model"); NULL for the device */
  /* The estimates weighed, in nanoseconds (0 where none were): the device's
   * includes transfer_ns, moving the operands to and from the device (0 where
   * the host reaches them in place: CPU and unified-memory devices). */
  double device_ns;
  double host_ns;
  double transfer_ns;
  uint64_t hold_calls; /* NPVK_WORK_ELEMENTWISE: calls the answer holds for */
  uint32_t ask_every;  /* NPVK_WORK_ELEMENTWISE: recorded calls between questions */
  uint32_t reserved;
} npvk_placement;

/* Where `work` runs: the answer in `out`. An answer of "host" has run the
 * queued work that writes its operands; the caller then runs it with its
 * host loop (NumPy) and does not record it. */
NPVK_API npvk_status npvk_placement_decide(npvk_context ctx, const npvk_work_desc *work,
                                           npvk_placement *out);

typedef struct npvk_failure_stats {
  uint32_t struct_size;     /* sizeof(npvk_failure_stats) */
  uint32_t last_status;     /* npvk_status of the last failure; 0 if none */
  uint64_t flush_failures;  /* flushes whose device work failed */
  uint64_t ops_replayed;    /* recorded ops that then ran on the host */
  uint64_t ops_lost;        /* recorded ops of failed flushes that could not */
  uint64_t alloc_failures;  /* device buffers that could not be made (injected) */
  uint64_t faults_injected; /* faults NPVK_FAULT / npvk_fault_inject fired, process-wide */
  char last_message[256];   /* what the last failure said */
} npvk_failure_stats;
NPVK_API npvk_status npvk_context_get_failure_stats(npvk_context ctx, npvk_failure_stats *out);
/* A number that changes whenever any context of the process counts a failure
 * above (never a handle or a lock): a caller that checks for failures after
 * every call may skip npvk_context_get_failure_stats while it has not changed. */
NPVK_API uint64_t npvk_failure_epoch(void);

/* For tests: makes the N-th later event of a kind fail as the real failure
 * would, with NPVK_FAULT's syntax: "kind:N[,kind:N...]", kinds alloc (device
 * buffer creation), compile (building a kernel not in memory), submit and
 * device_lost (a flush's submission). Counts restart; "" or NULL: no faults. */
NPVK_API npvk_status npvk_fault_inject(const char *spec);

typedef enum npvk_sync_reason {
  NPVK_SYNC_FAULT = 1,    /* a host access faulted on device-owned pages */
  NPVK_SYNC_EXPLICIT = 2, /* npvk_managed_sync, npvk_managed_host_access, disable */
  NPVK_SYNC_FORK = 3,
  NPVK_SYNC_EXIT = 4
} npvk_sync_reason;
/* Called on the thread that caused a host sync (pending work ran because the
 * host needed managed memory), after the sync, with npvk's lock held: it must
 * not call npvk. For attributing syncs to the host program's code. NULL
 * removes it. */
typedef void (*npvk_sync_hook)(uint32_t reason, void *user);
NPVK_API npvk_status npvk_managed_set_sync_hook(npvk_sync_hook hook, void *user);

/* Where a flush ran its recorded ops. */
typedef enum npvk_flush_placement {
  NPVK_FLUSH_DEVICE = 1,         /* as kernels on the device */
  NPVK_FLUSH_HOST_COST = 2,      /* through the host loop: the cost model estimated it faster */
  NPVK_FLUSH_HOST_RECOVERED = 3, /* the device failed; the host loop replayed them */
  NPVK_FLUSH_LOST = 4            /* the device failed and the host could not replay them */
} npvk_flush_placement;

typedef struct npvk_flush_info {
  uint32_t struct_size; /* sizeof(npvk_flush_info) as the library knows it */
  uint32_t placement;   /* npvk_flush_placement */
  /* The serials (npvk_context_last_op) of the flush's ops: every op recorded
   * in [first_op, last_op]. */
  uint64_t first_op, last_op;
  /* NPVK_FLUSH_HOST_COST: the cost model's estimates for the flush. */
  double device_ns, host_ns;
} npvk_flush_info;

/* Called after each flush of the context's recorded work, on the flushing
 * thread, with npvk's lock held: it must not call npvk. For attributing
 * where recorded work ran to the host program's code (with
 * npvk_context_last_op). The calibration of the cost model, which records
 * work of its own, does not call it. NULL removes it. */
typedef void (*npvk_flush_hook)(const npvk_flush_info *info, void *user);
NPVK_API npvk_status npvk_context_set_flush_hook(npvk_context ctx, npvk_flush_hook hook,
                                                 void *user);
/* The serial of the op the calling thread last recorded in `ctx` (a row that
 * NumPy's loop merged into a queued op gets that op's serial); 0 if none.
 * Serials start at 1 and count every recorded op of the context. */
NPVK_API npvk_status npvk_context_last_op(npvk_context ctx, uint64_t *serial);
/* The same for the context the calling thread last recorded an op in,
 * whichever it is: no handle lookup, for a caller that records into one
 * context and asks at every call (the NumPy shim notes each call's last op). */
NPVK_API uint64_t npvk_thread_last_op(void);

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_PLACEMENT_H */
