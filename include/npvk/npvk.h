/*
 * npvk.h - the stable C ABI of the npvk runtime.
 *
 * Conventions (one everywhere, after ArrayFire's):
 *   - Every function returns an npvk_status; results come back through the last
 *     pointer arguments (`out`). On failure nothing is written to `out`, and
 *     npvk_last_error_message() explains the failure on the calling thread.
 *   - Handles are opaque 64-bit values. A handle that was released, never
 *     created, or belongs to another kind of object is reported as
 *     NPVK_ERR_INVALID_HANDLE; it never crashes. Handle values are never reused.
 *   - Only plain C types cross the boundary. Structs that may grow carry their
 *     own size in `struct_size`, so old callers keep working.
 *   - All functions are thread-safe. Work on one context is serialised.
 *
 * Semantics follow NumPy: an opcode with its operand dtypes names one NumPy
 * ufunc inner loop (for example NPVK_OP_ADD on two float64 views is NumPy's
 * "dd->d" loop of np.add), and produces the same bits NumPy's loop produces,
 * within the tolerances documented in docs/ops.md.
 *
 * Work is lazy: npvk_apply records an operation and returns. Recorded work runs
 * at a flush: npvk_sync, npvk_buffer_sync, npvk_buffer_read, or when the queue
 * is long. Errors of the recorded work itself (device lost, out of device
 * memory) are reported by the call that flushes.
 */
#ifndef NPVK_NPVK_H
#define NPVK_NPVK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define NPVK_API __declspec(dllexport)
#else
#define NPVK_API __attribute__((visibility("default")))
#endif

/* The enums that callers pass in are int-sized in C; in C++ they get int as
 * their fixed underlying type, so that any value a C caller passes (a bad
 * dtype, an unknown op) is a valid value to check rather than undefined
 * behaviour. The layout is the same either way. */
#if defined(__cplusplus)
#define NPVK_ENUM_INT : int
#else
#define NPVK_ENUM_INT
#endif

/* Bumped only on an incompatible change; additions keep the version. */
#define NPVK_ABI_VERSION 1
/* The largest rank a view may have (NumPy 1.x's NPY_MAXDIMS). */
#define NPVK_MAX_DIMS 32

typedef enum npvk_status NPVK_ENUM_INT {
  NPVK_SUCCESS = 0,
  NPVK_ERR_INVALID_ARGUMENT = 1, /* a null pointer, a bad flag, an unaligned view */
  NPVK_ERR_INVALID_HANDLE = 2,   /* released, unknown or wrong kind of handle */
  NPVK_ERR_BAD_DTYPE = 3,        /* not a dtype, or no loop of the op for these dtypes */
  NPVK_ERR_SHAPE_MISMATCH = 4,   /* operands do not broadcast to the output shape */
  NPVK_ERR_OUT_OF_BOUNDS = 5,    /* a view reaches outside its buffer */
  NPVK_ERR_UNSUPPORTED = 6,      /* declared but not implemented, or the device lacks it */
  NPVK_ERR_NO_DEVICE = 7,        /* no Vulkan driver, or no device matches NPVK_DEVICE */
  NPVK_ERR_OUT_OF_HOST_MEMORY = 8,
  NPVK_ERR_OUT_OF_DEVICE_MEMORY = 9,
  NPVK_ERR_DEVICE_LOST = 10, /* the context is unusable; release it and create another */
  NPVK_ERR_COMPILE = 11,     /* a kernel failed to compile (a bug in npvk: please report) */
  NPVK_ERR_VULKAN = 12,      /* another Vulkan failure; the message names the call */
  NPVK_ERR_INTERNAL = 13     /* a bug in npvk; the message says where */
} npvk_status;

typedef enum npvk_dtype NPVK_ENUM_INT {
  NPVK_BOOL = 0, /* one byte, 0 or 1, like NumPy's bool_ */
  NPVK_INT8 = 1,
  NPVK_INT16 = 2,
  NPVK_INT32 = 3,
  NPVK_INT64 = 4,
  NPVK_UINT8 = 5,
  NPVK_UINT16 = 6,
  NPVK_UINT32 = 7,
  NPVK_UINT64 = 8,
  NPVK_FLOAT16 = 9, /* elementwise ops and casts; reductions, scans and matmul are unsupported */
  NPVK_FLOAT32 = 10,
  NPVK_FLOAT64 = 11,
  NPVK_DTYPE_COUNT = 12
} npvk_dtype;

/*
 * One opcode per NumPy elementwise ufunc, plus WHERE (np.where) and CAST
 * (astype with casting='unsafe', C conversion rules). Values are stable.
 * npvk_op_info() tells the arity; npvk_op_supported() whether a loop exists.
 */
typedef enum npvk_op NPVK_ENUM_INT {
  /* arithmetic */
  NPVK_OP_ADD = 0,
  NPVK_OP_SUBTRACT = 1,
  NPVK_OP_MULTIPLY = 2,
  NPVK_OP_TRUE_DIVIDE = 3,
  NPVK_OP_FLOOR_DIVIDE = 4,
  NPVK_OP_REMAINDER = 5,
  NPVK_OP_FMOD = 6,
  NPVK_OP_DIVMOD = 7, /* two outputs */
  NPVK_OP_NEGATIVE = 8,
  NPVK_OP_POSITIVE = 9,
  NPVK_OP_ABSOLUTE = 10,
  NPVK_OP_FABS = 11,
  NPVK_OP_SIGN = 12,
  NPVK_OP_HEAVISIDE = 13,
  NPVK_OP_RECIPROCAL = 14,
  NPVK_OP_SQUARE = 15,
  NPVK_OP_SQRT = 16,
  NPVK_OP_CBRT = 17,
  NPVK_OP_POWER = 18,
  NPVK_OP_FLOAT_POWER = 19,
  NPVK_OP_CONJUGATE = 20,
  /* exponentials and logarithms */
  NPVK_OP_EXP = 21,
  NPVK_OP_EXP2 = 22,
  NPVK_OP_EXPM1 = 23,
  NPVK_OP_LOG = 24,
  NPVK_OP_LOG2 = 25,
  NPVK_OP_LOG10 = 26,
  NPVK_OP_LOG1P = 27,
  NPVK_OP_LOGADDEXP = 28,
  NPVK_OP_LOGADDEXP2 = 29,
  /* trigonometric and hyperbolic */
  NPVK_OP_SIN = 30,
  NPVK_OP_COS = 31,
  NPVK_OP_TAN = 32,
  NPVK_OP_ARCSIN = 33,
  NPVK_OP_ARCCOS = 34,
  NPVK_OP_ARCTAN = 35,
  NPVK_OP_ARCTAN2 = 36,
  NPVK_OP_HYPOT = 37,
  NPVK_OP_SINH = 38,
  NPVK_OP_COSH = 39,
  NPVK_OP_TANH = 40,
  NPVK_OP_ARCSINH = 41,
  NPVK_OP_ARCCOSH = 42,
  NPVK_OP_ARCTANH = 43,
  NPVK_OP_DEG2RAD = 44,
  NPVK_OP_RAD2DEG = 45,
  /* rounding and floating-point functions */
  NPVK_OP_RINT = 46,
  NPVK_OP_FLOOR = 47,
  NPVK_OP_CEIL = 48,
  NPVK_OP_TRUNC = 49,
  NPVK_OP_COPYSIGN = 50,
  NPVK_OP_NEXTAFTER = 51,
  NPVK_OP_SPACING = 52,
  NPVK_OP_LDEXP = 53,
  NPVK_OP_FREXP = 54, /* two outputs */
  NPVK_OP_MODF = 55,  /* two outputs */
  NPVK_OP_ISNAN = 56,
  NPVK_OP_ISINF = 57,
  NPVK_OP_ISFINITE = 58,
  NPVK_OP_SIGNBIT = 59,
  /* integer functions */
  NPVK_OP_GCD = 60,
  NPVK_OP_LCM = 61,
  NPVK_OP_LEFT_SHIFT = 62,
  NPVK_OP_RIGHT_SHIFT = 63,
  NPVK_OP_BITWISE_AND = 64,
  NPVK_OP_BITWISE_OR = 65,
  NPVK_OP_BITWISE_XOR = 66,
  NPVK_OP_INVERT = 67,
  /* logical */
  NPVK_OP_LOGICAL_AND = 68,
  NPVK_OP_LOGICAL_OR = 69,
  NPVK_OP_LOGICAL_XOR = 70,
  NPVK_OP_LOGICAL_NOT = 71,
  /* comparison */
  NPVK_OP_EQUAL = 72,
  NPVK_OP_NOT_EQUAL = 73,
  NPVK_OP_LESS = 74,
  NPVK_OP_LESS_EQUAL = 75,
  NPVK_OP_GREATER = 76,
  NPVK_OP_GREATER_EQUAL = 77,
  NPVK_OP_MAXIMUM = 78,
  NPVK_OP_MINIMUM = 79,
  NPVK_OP_FMAX = 80,
  NPVK_OP_FMIN = 81,
  NPVK_OP_CLIP = 82, /* three inputs: x, lo, hi */
  /* not ufuncs */
  NPVK_OP_WHERE = 83, /* three inputs: condition (bool), x, y */
  NPVK_OP_CAST = 84,  /* one input of any dtype; output of any dtype */
  NPVK_OP_COUNT = 85
} npvk_op;

/* Opaque handles. Zero is never a valid handle. */
typedef struct npvk_context {
  uint64_t id;
} npvk_context;
typedef struct npvk_buffer {
  uint64_t id;
} npvk_buffer;
typedef struct npvk_view {
  uint64_t id;
} npvk_view;

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

/* Observability (docs/observability.md). The environment turns the same on for
 * every context: NPVK_PROFILE=1 prints a report on stderr when a context is
 * released (NPVK_PROFILE=file.json writes it as JSON), NPVK_TRACE=file.json
 * traces from creation to release, NPVK_GRAPH=dir writes each flush as DOT. */

/* Where the context's time went, host wall time in seconds. The first nine
 * fields exclude one another (a flush inside a host sync counts as flush, not
 * as sync), so they add up to accounted_seconds, the time spent inside npvk. */
typedef struct npvk_profile {
  uint32_t struct_size; /* sizeof(npvk_profile) */
  uint32_t reserved;
  double record_seconds;    /* validating and queueing operations */
  double plan_seconds;      /* the fusion planner */
  double compile_seconds;   /* GLSL, shaderc or the disk cache, pipeline creation */
  double execute_seconds;   /* command recording, submission, waiting for the device */
  double flush_seconds;     /* the rest of flushes: kernel arguments, page protection */
  double to_device_seconds; /* host-to-device copies */
  double to_host_seconds;   /* device-to-host copies */
  double sync_seconds;      /* managed memory's host syncs, less the flushes they ran */
  double accounted_seconds;
  /* host syncs by reason, their flushes and copies included */
  double sync_fault_seconds;
  double sync_explicit_seconds;
  double sync_fork_seconds;
  double sync_exit_seconds;
} npvk_profile;

NPVK_API npvk_status npvk_context_get_profile(npvk_context ctx, npvk_profile *out);
/* The profile and statistics as JSON in the file `path`; NULL prints the text
 * report on stderr instead. */
NPVK_API npvk_status npvk_context_write_profile(npvk_context ctx, const char *path);
/* Starts recording a Chrome/Perfetto trace (again, if one was running): host
 * spans (record, flush, plan, compile, execute, transfers, syncs) and one span
 * per device dispatch from timestamp queries, on separate tracks. */
NPVK_API npvk_status npvk_context_trace_begin(npvk_context ctx);
/* Stops tracing and writes the trace (catapult JSON) to `path`; NULL discards it. */
NPVK_API npvk_status npvk_context_trace_end(npvk_context ctx, const char *path);
/* Writes every later flush as Graphviz DOT, `dir`/flush-NNNNNN.dot; NULL or ""
 * stops. The directory must exist. */
NPVK_API npvk_status npvk_context_set_graph_dir(npvk_context ctx, const char *dir);
/* The GLSL of the last kernel the last flush ran, and a text description of
 * that kernel's fused graph (slots and steps). Copies at most capacity - 1
 * bytes and a NUL into `out` (which may be NULL when capacity is 0); `length`
 * receives the full length. Empty before the first flush. */
NPVK_API npvk_status npvk_context_last_kernel_source(npvk_context ctx, char *out, size_t capacity,
                                                     size_t *length);
NPVK_API npvk_status npvk_context_last_kernel_graph(npvk_context ctx, char *out, size_t capacity,
                                                    size_t *length);

/* ---- buffers ----------------------------------------------------------- */

/* Device memory of `size` bytes (device-local on a discrete GPU), zero-filled. */
NPVK_API npvk_status npvk_buffer_create(npvk_context ctx, uint64_t size, npvk_buffer *out);
/*
 * Use `size` bytes of host memory at `host` as a buffer's storage. Where the
 * device can import host memory (VK_EXT_external_memory_host) and `host` and
 * `size` meet its alignment, the device works on those pages directly
 * (zero-copy; see npvk_buffer_is_zero_copy). Otherwise npvk keeps a device copy
 * and transfers through the host pages.
 * Contract: between recording an operation on the buffer and the next
 * npvk_buffer_sync (or npvk_sync), the host must not touch the memory. After a
 * host write outside that window, call npvk_buffer_host_modified.
 * The memory must outlive the buffer and every view of it.
 */
NPVK_API npvk_status npvk_buffer_wrap_host(npvk_context ctx, void *host, uint64_t size,
                                           npvk_buffer *out);
/* Drops the handle. The memory lives on until no view and no pending
 * operation uses it. */
NPVK_API npvk_status npvk_buffer_release(npvk_buffer buf);
NPVK_API npvk_status npvk_buffer_size(npvk_buffer buf, uint64_t *out);
NPVK_API npvk_status npvk_buffer_is_zero_copy(npvk_buffer buf, int *out);
/* Copy host bytes in. Ordered after recorded work that uses the buffer. */
NPVK_API npvk_status npvk_buffer_write(npvk_buffer buf, uint64_t offset, const void *src,
                                       uint64_t size);
/* Runs the work that the buffer depends on, then copies bytes out. */
NPVK_API npvk_status npvk_buffer_read(npvk_buffer buf, uint64_t offset, void *dst, uint64_t size);
/* Runs the work the buffer depends on; a wrapped buffer's host memory is then
 * current. */
NPVK_API npvk_status npvk_buffer_sync(npvk_buffer buf);
/* A wrapped buffer's host memory was written by the host. */
NPVK_API npvk_status npvk_buffer_host_modified(npvk_buffer buf);

/* ---- views ------------------------------------------------------------- */

/*
 * A strided view of a buffer, as a NumPy array describes its data: the element
 * at index (i0, ..., i[ndim-1]) starts at byte
 *   offset + i0*strides[0] + ... + i[ndim-1]*strides[ndim-1].
 * Strides are in bytes and may be negative or zero; offset and strides must be
 * multiples of the itemsize. `strides` NULL means C-contiguous. ndim 0 is a
 * single element. Every element must lie inside the buffer.
 * The view keeps the buffer's memory alive.
 */
NPVK_API npvk_status npvk_view_create(npvk_buffer buf, uint64_t offset, npvk_dtype dtype,
                                      uint32_t ndim, const int64_t *shape, const int64_t *strides,
                                      npvk_view *out);
/* A 0-d view holding `value` (itemsize bytes of `dtype`) itself, not in a
 * buffer. As an input it broadcasts like a NumPy scalar and costs no memory
 * traffic. It cannot be an output. */
NPVK_API npvk_status npvk_view_create_scalar(npvk_context ctx, npvk_dtype dtype, const void *value,
                                             npvk_view *out);
NPVK_API npvk_status npvk_view_release(npvk_view view);

/* ---- operations -------------------------------------------------------- */

typedef struct npvk_op_info {
  uint32_t struct_size; /* sizeof(npvk_op_info) */
  uint32_t nin;
  uint32_t nout;
  uint32_t implemented; /* 0: recording it returns NPVK_ERR_UNSUPPORTED */
  const char *name;     /* NumPy's name: "add", "true_divide", "where", "cast" */
} npvk_op_info;

NPVK_API npvk_status npvk_op_get_info(npvk_op op, npvk_op_info *out);
/* 1 in `out` when npvk has a device loop of `op` for these dtypes on this
 * context's device, 0 otherwise. `dtypes` lists the inputs, then the outputs. */
NPVK_API npvk_status npvk_op_supported(npvk_context ctx, npvk_op op, const npvk_dtype *dtypes,
                                       uint32_t count, int *out);
/* 1 in `out` when npvk has a loop of `op` for these dtypes on a device with
 * every capability it uses (shaderFloat64 for float64 and for float32
 * transcendentals), whatever the device at hand: with npvk_op_supported, it
 * tells a loop the device lacks a feature for from one npvk does not have. */
NPVK_API npvk_status npvk_op_has_loop(npvk_op op, const npvk_dtype *dtypes, uint32_t count,
                                      int *out);

/*
 * Record `op` on inputs and outputs. Inputs broadcast to the output shape as in
 * NumPy (aligned at the last dimension; size-1 and missing dimensions repeat);
 * all outputs have the same shape. Dtypes must form one of the op's loops,
 * exactly (no implicit casts: use NPVK_OP_CAST). An output may alias an input
 * exactly (in place) but must not otherwise overlap one.
 */
NPVK_API npvk_status npvk_apply(npvk_context ctx, npvk_op op, uint32_t nin, const npvk_view *inputs,
                                uint32_t nout, const npvk_view *outputs);
/* Shorthands of npvk_apply. */
NPVK_API npvk_status npvk_unary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view out);
NPVK_API npvk_status npvk_binary(npvk_context ctx, npvk_op op, npvk_view a, npvk_view b,
                                 npvk_view out);

/*
 * Reduce `in` along the `naxes` axes listed in `axes` with a binary op, as
 * NumPy's ufunc.reduce does: add, multiply, maximum, minimum, fmax, fmin,
 * logical_and, logical_or, logical_xor, bitwise_and, bitwise_or, bitwise_xor.
 * `out` has in's rank, extent 1 on each reduced axis and in's extent on the
 * others (NumPy's keepdims=True layout; any strides). The op must have a
 * (T, T) -> T loop for out's dtype T; each input element is cast to T first,
 * like reduce(..., dtype=T). `initial` (a scalar view of dtype T, or a zero
 * handle for none) is combined into every result, which it also is when no
 * element is reduced; without it a zero-size reduction takes the op's
 * identity, and is NPVK_ERR_INVALID_ARGUMENT for ops without one (maximum).
 * Integer results are exact. Float sums add in NumPy's order where NumPy's
 * loops make it plain, and give NumPy's bits there: a contiguous innermost
 * reduced run is summed by NumPy's pairwise_sum (whole here: NumPy 2.3 and
 * later without a cast; see npvk_reduce_blocked for blocks), and a reduction
 * whose innermost axis is kept adds the elements one by one in index order.
 * Other float sums are compensated, at least as accurate as NumPy's
 * (docs/accuracy.md). Float products are evaluated in a different order than
 * NumPy's. `out` must not overlap `in`.
 */
NPVK_API npvk_status npvk_reduce(npvk_context ctx, npvk_op op, npvk_view in, uint32_t naxes,
                                 const uint32_t *axes, npvk_view initial, npvk_view out);

/*
 * npvk_reduce, with a float sum's pairwise sums taken over blocks of
 * `sum_block` elements of each result's run, added in order to `initial`:
 * NumPy's order when its iterator hands the loop buffers of that size (NumPy
 * before 2.3, and every NumPy when the reduction casts; np.getbufsize() is
 * 8192 by default). 0: one pairwise sum over the whole run (npvk_reduce).
 */
NPVK_API npvk_status npvk_reduce_blocked(npvk_context ctx, npvk_op op, npvk_view in, uint32_t naxes,
                                         const uint32_t *axes, npvk_view initial, npvk_view out,
                                         int64_t sum_block);

/*
 * Accumulate `in` along `axis` with a binary op into `out`, as NumPy's
 * ufunc.accumulate does: out[..., 0, ...] = in[..., 0, ...] and each later
 * element combines the previous result with the next input. The ops and
 * dtypes are those of npvk_reduce; `out` has in's shape (any strides) and
 * may be `in` itself (same view) but must not otherwise overlap it. Each line
 * is scanned in order, so every result, float ones included, equals NumPy's.
 */
NPVK_API npvk_status npvk_accumulate(npvk_context ctx, npvk_op op, npvk_view in, uint32_t axis,
                                     npvk_view out);

/*
 * C = A @ B, as np.matmul: A is (..., m, k), B (..., k, n), C (..., m, n),
 * each of rank 2 or more (give a vector a size-1 dimension); A's and B's
 * batch dimensions broadcast to C's (aligned at the last). One dtype for all
 * three: int8-uint64, float32 or float64. Each element of C is a sum over k
 * in order (integers wrap, exactly as NumPy's); float results differ from a
 * BLAS's in rounding (within 2 k eps sum|a||b|). C must not overlap A or B.
 */
NPVK_API npvk_status npvk_matmul(npvk_context ctx, npvk_view a, npvk_view b, npvk_view c);

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

#endif /* NPVK_NPVK_H */
