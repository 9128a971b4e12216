// npvk.stats() and the shim's counters: ops on the device, fallbacks to
// NumPy's loops by ufunc and reason, and the runtime's own statistics.
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

std::atomic<uint64_t> g_device_ops{0};
// Ops queued in all (never reset): module.cpp's sync_and_report compares it
// with the count at its last sync.
std::atomic<uint64_t> g_ops_queued{0};
std::mutex g_fallback_mutex;
std::map<std::pair<std::string, std::string>, uint64_t> g_fallbacks;
// The ufunc loops' counters, by the addresses of their names and reasons,
// which live as long as the process: a loop call builds no strings and, when
// it counts what the thread's previous call counted, takes no lock. Counters
// are never removed (a reset zeroes them), so their addresses stay valid.
std::deque<LoopCounter> g_loop_counters;
std::unordered_map<const char *, std::unordered_map<const char *, LoopCounter *>> g_loop_index;

// Adds `value` under `key` to `dict`, consuming the reference.
void put(PyObject *dict, const char *key, PyObject *value) {
  if (value) {
    PyDict_SetItemString(dict, key, value);
    Py_DECREF(value);
  }
}

}  // namespace

PyObject *py_stats(PyObject *, PyObject *) {
  PyObject *d = counters_as_dict();
  if (!d) return nullptr;
  npvk_stats s{};
  s.struct_size = sizeof s;
  npvk_managed_stats m{};
  m.struct_size = sizeof m;
  const npvk_context ctx = bound_context();  // a report does not bind
  put(d, "device_bound", PyBool_FromLong(ctx.id != 0));
  if (ctx.id && npvk_context_get_stats(ctx, &s) == NPVK_SUCCESS) {
    put(d, "kernels_compiled", PyLong_FromUnsignedLongLong(s.kernels_compiled));
    put(d, "cache_hits", PyLong_FromUnsignedLongLong(s.kernel_cache_hits + s.disk_cache_hits));
    put(d, "memory_cache_hits", PyLong_FromUnsignedLongLong(s.kernel_cache_hits));
    put(d, "disk_cache_hits", PyLong_FromUnsignedLongLong(s.disk_cache_hits));
    put(d, "flushes", PyLong_FromUnsignedLongLong(s.flushes));
    put(d, "dispatches", PyLong_FromUnsignedLongLong(s.dispatches));
    put(d, "bytes_to_device", PyLong_FromUnsignedLongLong(s.bytes_to_device));
    put(d, "bytes_to_host", PyLong_FromUnsignedLongLong(s.bytes_to_host));
    put(d, "device_seconds", PyFloat_FromDouble(s.device_seconds));
    put(d, "compile_seconds", PyFloat_FromDouble(s.compile_seconds));
    put(d, "validation_messages", PyLong_FromUnsignedLongLong(s.validation_messages));
    put(d, "evictions", PyLong_FromUnsignedLongLong(s.evictions));
    put(d, "bytes_evicted", PyLong_FromUnsignedLongLong(s.bytes_evicted));
    put(d, "budget_flushes", PyLong_FromUnsignedLongLong(s.budget_flushes));
    put(d, "budget_overruns", PyLong_FromUnsignedLongLong(s.budget_overruns));
    put(d, "device_bytes_held", PyLong_FromUnsignedLongLong(s.device_bytes_held));
    put(d, "device_bytes_peak", PyLong_FromUnsignedLongLong(s.device_bytes_peak));
    put(d, "device_memory_budget", PyLong_FromUnsignedLongLong(s.device_memory_budget));
    // Recorded work the cost model ran with NumPy's loops (src/cost_model.cpp).
    put(d, "host_flushes", PyLong_FromUnsignedLongLong(s.host_flushes));
    put(d, "ops_on_host", PyLong_FromUnsignedLongLong(s.host_ops));
    put(d, "host_bytes_contracted", PyLong_FromUnsignedLongLong(s.host_bytes_contracted));
    put(d, "host_parts_on_workers", PyLong_FromUnsignedLongLong(s.host_parts_on_workers));
    // Whether binding took the device made ahead at enable() (prepare_binding).
    put(d, "device_prepared", PyBool_FromLong(s.device_prepared != 0));
    // The runtime's own counts of what it recorded and how it fused (bench/compare).
    PyObject *core = PyDict_New();
    put(core, "ops_recorded", PyLong_FromUnsignedLongLong(s.ops_recorded));
    put(core, "ops_fused", PyLong_FromUnsignedLongLong(s.ops_fused));
    put(core, "stores_contracted", PyLong_FromUnsignedLongLong(s.stores_contracted));
    put(core, "rows_merged", PyLong_FromUnsignedLongLong(s.rows_merged));
    put(core, "barriers", PyLong_FromUnsignedLongLong(s.barriers));
    put(core, "pipelines_created", PyLong_FromUnsignedLongLong(s.pipelines_created));
    put(d, "core", core);
  }
  if (npvk_managed_get_stats(&m) == NPVK_SUCCESS) {
    PyObject *syncs = PyDict_New();
    put(syncs, "fault", PyLong_FromUnsignedLongLong(m.host_syncs_fault));
    put(syncs, "explicit", PyLong_FromUnsignedLongLong(m.host_syncs_explicit));
    put(syncs, "free", PyLong_FromUnsignedLongLong(m.host_syncs_free));
    put(syncs, "fork", PyLong_FromUnsignedLongLong(m.host_syncs_fork));
    put(syncs, "exit", PyLong_FromUnsignedLongLong(m.host_syncs_exit));
    put(d, "host_syncs", syncs);
    put(d, "faults", PyLong_FromUnsignedLongLong(m.faults));
    put(d, "syscalls_guarded", PyLong_FromUnsignedLongLong(m.syscalls_guarded));
    put(d, "managed_allocations", PyLong_FromUnsignedLongLong(m.live_allocations));
    put(d, "managed_bytes", PyLong_FromUnsignedLongLong(m.live_bytes));
  }
  // Before binding: the loops that binding replaces.
  put(d, "loops_replaced", PyLong_FromLong(replaced_loop_count() + deferred_loop_count()));
  put_failure_stats(d);
  return d;
}

PyObject *py_reset_stats(PyObject *, PyObject *) {
  reset_counters();
  if (bound_context().id) npvk_context_reset_stats(bound_context());
  Py_RETURN_NONE;
}

uint64_t ops_queued() {
  return g_ops_queued.load();
}

uint64_t device_ops_counted() {
  return g_device_ops.load(std::memory_order_relaxed);
}

void count_device_op() {
  ++g_device_ops;
  ++g_ops_queued;
  note_recorded_op();
}

void count_fallback(const char *ufunc, const char *reason) {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  ++g_fallbacks[{ufunc, reason}];
}

PyObject *counters_as_dict() {
  PyObject *d = PyDict_New();
  if (!d) return nullptr;
  put(d, "ops_on_device", PyLong_FromUnsignedLongLong(g_device_ops.load()));
  PyObject *fallback = PyDict_New();
  uint64_t total = 0;
  {
    std::lock_guard<std::mutex> lock(g_fallback_mutex);
    std::map<std::pair<std::string, std::string>, uint64_t> all = g_fallbacks;
    for (const LoopCounter &c : g_loop_counters)
      if (uint64_t n = c.count.load(std::memory_order_relaxed)) all[{c.ufunc, c.reason}] += n;
    for (const auto &entry : all) {
      PyObject *by_reason = PyDict_GetItemString(fallback, entry.first.first.c_str());
      if (!by_reason) {
        by_reason = PyDict_New();
        PyDict_SetItemString(fallback, entry.first.first.c_str(), by_reason);
        Py_DECREF(by_reason);
      }
      put(by_reason, entry.first.second.c_str(), PyLong_FromUnsignedLongLong(entry.second));
      total += entry.second;
    }
  }
  put(d, "ops_fallback", fallback);
  put(d, "ops_fallback_total", PyLong_FromUnsignedLongLong(total));
  return d;
}

LoopCounter *loop_fallback_counter(const char *ufunc, const char *reason) {
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  LoopCounter *&counter = g_loop_index[ufunc][reason];
  if (!counter) {
    counter = &g_loop_counters.emplace_back();
    counter->ufunc = ufunc;
    counter->reason = reason;
  }
  return counter;
}

void reset_counters() {
  g_device_ops = 0;
  std::lock_guard<std::mutex> lock(g_fallback_mutex);
  for (LoopCounter &c : g_loop_counters) c.count = 0;
  g_fallbacks.clear();
}

}  // namespace npvk_shim
