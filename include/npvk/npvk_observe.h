/*
 * npvk_observe.h - observability: profiles, traces, flush graphs and the
 * last kernel's source.
 * Part of npvk.h, which includes every part: include <npvk/npvk.h>.
 */
#ifndef NPVK_NPVK_OBSERVE_H
#define NPVK_NPVK_OBSERVE_H

#include "npvk_types.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* NPVK_NPVK_OBSERVE_H */
