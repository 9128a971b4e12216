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

/* Statuses, dtypes, opcodes and handles. */
#include "npvk_types.h"
/* Errors, versions, devices and contexts. */
#include "npvk_context.h"
/* Profiles, traces and flush graphs. */
#include "npvk_observe.h"
/* Buffers, views and operations. */
#include "npvk_ops.h"
/* Managed memory. */
#include "npvk_managed.h"
/* Failure handling, the cost model and placement. */
#include "npvk_placement.h"

#endif /* NPVK_NPVK_H */
