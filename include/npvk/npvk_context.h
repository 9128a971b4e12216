/*
 * npvk_context.h - errors and versions, devices, and contexts (with their
 * statistics and floating-point errors).
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_CONTEXT_H
#define NPVK_NPVK_CONTEXT_H

#include "npvk_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors and versions ---------------------------------------------- */

/* NPVK_ABI_VERSION of the library that is loaded. */
NPVK_API uint32_t npvk_abi_version(void);
/* "MAJOR.MINOR.PATCH" of the library that is loaded. */
NPVK_API const char *npvk_version_string(void);
/* The message of the last failed call on this thread ("" if none). The pointer
 * stays valid until the next npvk call on this thread. */
NPVK_API const char *npvk_last_error_message(void);
/* A short constant name for a status, e.g. "NPVK_ERR_BAD_DTYPE". */
NPVK_API const char *npvk_status_string(npvk_status status);
/* A dtype's NumPy name ("float64") and size in bytes. */
NPVK_API npvk_status npvk_dtype_info(npvk_dtype dtype, const char **name, uint32_t *itemsize);

/* ---- devices ----------------------------------------------------------- */

typedef enum npvk_device_type {
  NPVK_DEVICE_OTHER = 0,
  NPVK_DEVICE_INTEGRATED_GPU = 1,
  NPVK_DEVICE_DISCRETE_GPU = 2,
  NPVK_DEVICE_VIRTUAL_GPU = 3,
  NPVK_DEVICE_CPU = 4
} npvk_device_type;

typedef struct npvk_device_info {
  uint32_t struct_size; /* set by the caller to sizeof(npvk_device_info) */
  uint32_t index;
  char name[256];
  char driver_name[256];
  char driver_info[256];
  uint32_t type; /* npvk_device_type */
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t api_version; /* VK_MAKE_API_VERSION packing */
  uint8_t driver_uuid[16];
  /* capabilities npvk uses; 1 = present */
  uint8_t usable; /* has everything npvk needs (Vulkan 1.2, buffer device address, int64) */
  uint8_t float64;
  uint8_t float16;
  uint8_t int64;
  uint8_t int16;
  uint8_t int8;
  uint8_t storage8;
  uint8_t storage16;
  uint8_t buffer_device_address;
  uint8_t host_memory_import;
  uint8_t timestamps;
  uint8_t unified_memory; /* every device-local heap is host-visible */
  uint32_t max_push_constants_size;
  uint32_t max_workgroup_invocations;
  uint32_t max_workgroup_count_x;
  uint32_t subgroup_size;
  uint64_t max_memory_allocation_size;
  uint64_t min_imported_host_pointer_alignment;
  uint64_t device_local_bytes; /* size of the largest device-local heap */
  double timestamp_period_ns;
  char unusable_reason[256]; /* when usable == 0 */
} npvk_device_info;

/* Number of Vulkan physical devices. 0 (with NPVK_SUCCESS) when a loader exists
 * but no driver; NPVK_ERR_NO_DEVICE when there is no Vulkan loader at all. */
NPVK_API npvk_status npvk_device_count(uint32_t *out);
NPVK_API npvk_status npvk_device_get_info(uint32_t index, npvk_device_info *out);
/* The device a context would use: `selector` is an index or a case-insensitive
 * name substring; NULL means the NPVK_DEVICE environment variable, and if that
 * is unset: the first usable discrete GPU, then integrated, virtual, CPU. */
NPVK_API npvk_status npvk_device_select(const char *selector, uint32_t *out);
/* The local rank that NPVK_DEVICE=local-rank (the default) uses: the first set
 * of OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID and
 * NPVK_LOCAL_RANK, whose name goes to `variable` (may be NULL). -1 and NULL
 * when none is set; NPVK_ERR_NO_DEVICE when the one set is not a whole number
 * >= 0. */
NPVK_API npvk_status npvk_device_local_rank(int64_t *rank, const char **variable);
/* The device local-rank gives a process of local rank `rank` (< 0: none):
 * among the usable devices of the best type, the one at rank modulo their
 * count. */
NPVK_API npvk_status npvk_device_select_for_rank(int64_t rank, uint32_t *out);

/* ---- contexts ---------------------------------------------------------- */

typedef enum npvk_context_flags {
  /* Enable VK_LAYER_KHRONOS_validation; messages are printed and counted in
   * npvk_stats.validation_messages. NPVK_VALIDATION=1 has the same effect. */
  NPVK_CONTEXT_VALIDATION = 1u << 0,
  /* Neither read nor write the on-disk kernel cache. */
  NPVK_CONTEXT_NO_DISK_CACHE = 1u << 1
} npvk_context_flags;

typedef struct npvk_context_options {
  uint32_t struct_size;  /* sizeof(npvk_context_options) */
  uint32_t flags;        /* npvk_context_flags */
  const char *device;    /* as npvk_device_select's selector; NULL for the default */
  const char *cache_dir; /* NULL: $NPVK_CACHE_DIR, else $XDG_CACHE_HOME/npvk, else ~/.cache/npvk */
} npvk_context_options;

/* `options` may be NULL for all defaults. */
NPVK_API npvk_status npvk_context_create(const npvk_context_options *options, npvk_context *out);
/* Starts loading the Vulkan driver and creating the device that a context
 * with these options (NULL: defaults) would choose now, on a thread of its
 * own, and returns at once. The next context created in this process takes
 * that device over if it would choose the same device with the same
 * settings; otherwise it is left unused. Any failure is left for the context
 * to meet and report. A call while a device so made waits for a context does
 * nothing (one whose start was delayed starts now). Optional: it only
 * hides the driver's start-up (30-40 ms for lavapipe) behind the caller's
 * own work.
 * A process that called it must call npvk_device_prepare_end before exit():
 * the exit handlers of the driver's own libraries would otherwise run while
 * the device may still be in the making. */
NPVK_API npvk_status npvk_device_prepare(const npvk_context_options *options);
/* As npvk_device_prepare, but the thread waits `delay_ms` before it loads the
 * driver: a process that ends sooner (npvk_device_prepare_end cancels the
 * wait) never loads it. npvk_device_prepare, or a context created meanwhile,
 * ends the wait early. */
NPVK_API npvk_status npvk_device_prepare_after(const npvk_context_options *options,
                                               uint32_t delay_ms);
/* Waits for npvk_device_prepare's work to end, and frees the device it made
 * if no context took it. Safe to call at any time, and more than once. */
NPVK_API npvk_status npvk_device_prepare_end(void);
/* Waits for pending work, then frees everything the context owns. Buffers and
 * views of the context become invalid handles. */
NPVK_API npvk_status npvk_context_release(npvk_context ctx);
NPVK_API npvk_status npvk_context_device_info(npvk_context ctx, npvk_device_info *out);
/* Makes the context's device now, where the context started without it (the
 * context of npvk_managed_enable makes it at the first work that needs it,
 * when an earlier process with the same settings stored its description;
 * npvk_context_device_info then reports that description). A program that
 * wants the driver's start-up outside its timed work calls this first. Does
 * nothing where the device exists. */
NPVK_API npvk_status npvk_context_make_device(npvk_context ctx);
/* Runs all recorded work and waits for it. */
NPVK_API npvk_status npvk_sync(npvk_context ctx);

typedef struct npvk_stats {
  uint32_t struct_size; /* sizeof(npvk_stats) */
  uint32_t reserved;
  uint64_t ops_recorded;
  uint64_t flushes; /* submissions */
  uint64_t dispatches;
  uint64_t barriers;           /* pipeline barriers recorded */
  uint64_t kernels_compiled;   /* GLSL compiled to SPIR-V by shaderc */
  uint64_t kernel_cache_hits;  /* kernels found in memory */
  uint64_t disk_cache_hits;    /* SPIR-V found in the disk cache */
  uint64_t disk_cache_rejects; /* disk cache entries found corrupt and rebuilt */
  uint64_t pipelines_created;
  uint64_t bytes_to_device;
  uint64_t bytes_to_host;
  uint64_t validation_messages; /* only with validation enabled */
  double device_seconds;        /* sum of timestamp-measured dispatch time */
  double compile_seconds;       /* shaderc plus pipeline creation, host wall time */
  double flush_seconds;         /* host wall time in flushes, waiting included */
  uint64_t rows_merged;         /* ops folded into the previous one as another row of it */
  uint64_t ops_fused;           /* ops that ran in a kernel together with others */
  uint64_t stores_contracted;   /* outputs never written to memory (dead temporaries) */
  uint64_t bytes_contracted;    /* the bytes those stores would have written */
  /* The device memory budget (NPVK_DEVICE_MEMORY_BUDGET, docs/architecture.md
   * "Memory"): it covers the device copies of mirrored wraps only, so zero-copy
   * buffers and npvk_buffer_create's memory are not in these counts. */
  uint64_t evictions;            /* device copies freed (downloaded first if newer) */
  uint64_t bytes_evicted;        /* the bytes of those copies */
  uint64_t budget_flushes;       /* flushes run early: queued work alone filled the budget */
  uint64_t budget_overruns;      /* ops whose own operands exceed the budget; they ran anyway */
  uint64_t device_bytes_held;    /* device copies held now */
  uint64_t device_bytes_peak;    /* most held at once since creation or the last reset */
  uint64_t device_memory_budget; /* the budget in bytes */
  /* The cost model (npvk_context_set_cost_model): flushes, and the ops in
   * them, that ran through the host loop because it was estimated faster. */
  uint64_t host_flushes;
  uint64_t host_ops;
  /* 1 when the context took the device npvk_device_prepare made ahead. */
  uint64_t device_prepared;
  /* Bytes of the host's runs (host_flushes) left unwritten: the values a
   * fused kernel contracts, kept in a scratch block instead. */
  uint64_t host_bytes_contracted;
  /* Pieces of the host's runs (those, and replays of failed flushes) that
   * npvk's host workers ran beside the flushing thread: NumPy's elementwise
   * loops split over the cores (NPVK_HOST_THREADS; reductions are not split). */
  uint64_t host_parts_on_workers;
} npvk_stats;

NPVK_API npvk_status npvk_context_get_stats(npvk_context ctx, npvk_stats *out);

/* Floating-point exceptions that device work raised, as NumPy's loops would
 * have set them in the host's floating-point status (same bit values as
 * NumPy's NPY_FPE_*). Integer division by zero counts as divide-by-zero, as
 * in NumPy. Underflow is not reported. */
typedef enum npvk_fp_flags {
  NPVK_FP_DIVIDE_BY_ZERO = 1,
  NPVK_FP_OVERFLOW = 2,
  NPVK_FP_UNDERFLOW = 4,
  NPVK_FP_INVALID = 8,
  /* Not an exception: set with the others when they came from a reduction
   * (npvk_reduce), which NumPy reports as "... encountered in reduce". */
  NPVK_FP_IN_REDUCE = 256,
  /* ... from an accumulation (npvk_accumulate): "... encountered in accumulate". */
  NPVK_FP_IN_ACCUMULATE = 512
} npvk_fp_flags;

typedef struct npvk_fp_error {
  uint32_t op;    /* npvk_op */
  uint32_t flags; /* npvk_fp_flags */
} npvk_fp_error;

/* Takes (and forgets) the exceptions raised by work that has run since the
 * last call: at most `capacity` entries, one per op, in the order of first
 * occurrence; `count` receives how many were written. */
NPVK_API npvk_status npvk_context_take_fp_errors(npvk_context ctx, npvk_fp_error *out,
                                                 uint32_t capacity, uint32_t *count);
/* The same for the work that the calling thread recorded only; the other
 * threads' stay until they take them. For callers whose error handling is per
 * thread (NumPy's error state): each thread reports its own ops' errors. */
NPVK_API npvk_status npvk_context_take_thread_fp_errors(npvk_context ctx, npvk_fp_error *out,
                                                        uint32_t capacity, uint32_t *count);
/* One op's exceptions (npvk_context_take_op_fp_errors). */
typedef struct npvk_op_fp_error {
  uint64_t serial; /* the op's serial (npvk_context_last_op); 0 where it was lost */
  uint32_t op;     /* npvk_op */
  uint32_t flags;  /* npvk_fp_flags */
} npvk_op_fp_error;

/* The same per op, of the work the calling thread recorded: one entry per op
 * (and method), in the order the ops ran, at most `capacity` (the others stay
 * for the next call: call again while `count` == `capacity`). For callers that
 * report each op's errors where the op was issued (the NumPy shim: the Python
 * line of the call). `ran_through` (optional) receives the serial up to which
 * every op of `ctx` has run: the errors of those ops have all been noted, so a
 * caller may forget what it kept for them once it has taken them all. Both
 * takes consume the same entries. Where nobody takes them, entries beyond a
 * bound lose their serial (0) and merge per op. */
NPVK_API npvk_status npvk_context_take_op_fp_errors(npvk_context ctx, npvk_op_fp_error *out,
                                                    uint32_t capacity, uint32_t *count,
                                                    uint64_t *ran_through);
/* A number that changes whenever any context of the process notes an FP
 * exception (never a handle or a lock): a caller that takes errors after every
 * call may skip taking them while it has not changed since its last take. */
NPVK_API uint64_t npvk_fp_error_epoch(void);
NPVK_API npvk_status npvk_context_reset_stats(npvk_context ctx);

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_CONTEXT_H */
