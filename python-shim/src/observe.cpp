// npvk._native's observability functions (npvk/_observe.py uses them): the
// core's profile, traces, flush graphs and last kernel, plus what only the
// shim sees: how long NumPy's own loops ran for fallbacks, and how many
// elements went each way.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

std::atomic<uint64_t> g_elements_device{0}, g_elements_fallback{0};
std::atomic<int64_t> g_fallback_ns{0};

PyObject *raise_status(npvk_status status) {
  PyErr_Format(PyExc_RuntimeError, "npvk: %s: %s", npvk_status_string(status),
               npvk_last_error_message());
  return nullptr;
}

double accounted_seconds() {
  npvk_profile p{};
  p.struct_size = sizeof p;
  if (!bound_context().id || npvk_context_get_profile(bound_context(), &p) != NPVK_SUCCESS)
    return 0;
  return p.accounted_seconds;
}

PyObject *py_profile(PyObject *, PyObject *) {
  npvk_profile p{};
  p.struct_size = sizeof p;
  if (bound_context().id) {  // a report does not bind the device
    npvk_status st = npvk_context_get_profile(bound_context(), &p);
    if (st != NPVK_SUCCESS) return raise_status(st);
  }
  return Py_BuildValue(
      "{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:K}", "record",
      p.record_seconds, "plan", p.plan_seconds, "compile", p.compile_seconds, "execute",
      p.execute_seconds, "flush_other", p.flush_seconds, "to_device", p.to_device_seconds,
      "to_host", p.to_host_seconds, "host_sync", p.sync_seconds, "accounted", p.accounted_seconds,
      "sync_fault", p.sync_fault_seconds, "sync_explicit", p.sync_explicit_seconds, "sync_fork",
      p.sync_fork_seconds, "sync_exit", p.sync_exit_seconds, "numpy_fallback_loops",
      double(g_fallback_ns.load()) * 1e-9, "elements_on_device",
      (unsigned long long)g_elements_device.load(), "elements_fallback",
      (unsigned long long)g_elements_fallback.load());
}

PyObject *py_note_op(PyObject *, PyObject *args) {
  const char *op = nullptr, *reason = nullptr;
  long long elements = 0;
  if (!PyArg_ParseTuple(args, "szL", &op, &reason, &elements)) return nullptr;
  if (observing().any.load(std::memory_order_relaxed)) note_loop(op, reason, int64_t(elements));
  Py_RETURN_NONE;
}

PyObject *py_set_timing(PyObject *, PyObject *on) {
  observing().timing = PyObject_IsTrue(on) == 1;
  observing().any = observing().timing || observing().report;
  Py_RETURN_NONE;
}

PyObject *py_reset_observed(PyObject *, PyObject *) {
  g_elements_device = 0;
  g_elements_fallback = 0;
  g_fallback_ns = 0;
  Py_RETURN_NONE;
}

PyObject *py_trace_begin(PyObject *, PyObject *) {
  npvk_status st = npvk_context_trace_begin(context());
  if (st != NPVK_SUCCESS) return raise_status(st);
  Py_RETURN_NONE;
}

PyObject *py_trace_end(PyObject *, PyObject *args) {
  const char *path = nullptr;
  if (!PyArg_ParseTuple(args, "z", &path)) return nullptr;
  npvk_status st;
  Py_BEGIN_ALLOW_THREADS st = npvk_context_trace_end(context(), path);
  Py_END_ALLOW_THREADS if (st != NPVK_SUCCESS) return raise_status(st);
  Py_RETURN_NONE;
}

PyObject *py_set_graph_dir(PyObject *, PyObject *args) {
  const char *dir = nullptr;
  if (!PyArg_ParseTuple(args, "z", &dir)) return nullptr;
  // NPVK_GRAPH is read at enable(): the device may be bound later.
  npvk_status st = set_graph_dir_when_bound(dir);
  if (st != NPVK_SUCCESS) return raise_status(st);
  Py_RETURN_NONE;
}

PyObject *text_of(npvk_status (*get)(npvk_context, char *, size_t, size_t *)) {
  size_t length = 0;
  npvk_status st = get(context(), nullptr, 0, &length);
  if (st != NPVK_SUCCESS) return raise_status(st);
  std::string text(length + 1, '\0');
  st = get(context(), text.data(), text.size(), &length);
  if (st != NPVK_SUCCESS) return raise_status(st);
  return PyUnicode_FromStringAndSize(text.data(), Py_ssize_t(std::min(length, text.size() - 1)));
}

// (GLSL, graph text) of the last kernel the last flush ran.
PyObject *py_last_kernel(PyObject *, PyObject *) {
  if (!bound_context().id) return Py_BuildValue("(ss)", "", "");
  PyObject *source = text_of(npvk_context_last_kernel_source);
  if (!source) return nullptr;
  PyObject *graph = text_of(npvk_context_last_kernel_graph);
  if (!graph) {
    Py_DECREF(source);
    return nullptr;
  }
  return Py_BuildValue("(NN)", source, graph);
}

PyMethodDef g_observe_methods[] = {
    {"profile", py_profile, METH_NOARGS, "the core's time by phase, and the shim's loop counts"},
    {"note_op", py_note_op, METH_VARARGS, "note_op(op, reason or None, elements)"},
    {"set_timing", py_set_timing, METH_O, "time NumPy's loops for fallbacks (NPVK_PROFILE)"},
    {"reset_observed", py_reset_observed, METH_NOARGS, "zero the shim's profile counters"},
    {"trace_begin", py_trace_begin, METH_NOARGS, "start a Chrome/Perfetto trace"},
    {"trace_end", py_trace_end, METH_VARARGS, "trace_end(path or None): stop, write"},
    {"set_graph_dir", py_set_graph_dir, METH_VARARGS, "write each flush as DOT in a directory"},
    {"last_kernel", py_last_kernel, METH_NOARGS, "(GLSL, graph) of the last flushed kernel"},
    {"report_begin", py_report_begin, METH_O,
     "report_begin(skip_prefixes): count loops and syncs by call site"},
    {"report_rows", py_report_rows, METH_NOARGS, "(loop rows, sync rows) by call site"},
    {"report_end", py_report_end, METH_NOARGS, "stop counting by call site"},
    {"report_site", py_report_site, METH_NOARGS, "the caller's site, for the next sync"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void count_elements(bool device, int64_t elements) {
  (device ? g_elements_device : g_elements_fallback) += uint64_t(elements);
}

void run_original(PyUFuncGenericFunction original, char **args, const npy_intp *dims,
                  const npy_intp *steps, void *data) {
  if (!observing().timing.load(std::memory_order_relaxed)) {
    original(args, dims, steps, data);
    return;
  }
  // Time npvk spent inside the loop (a host sync when it touched
  // device-owned pages) is npvk's, not NumPy's.
  const double inside_before = accounted_seconds();
  const auto start = std::chrono::steady_clock::now();
  original(args, dims, steps, data);
  const int64_t elapsed =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  const int64_t inside = int64_t((accounted_seconds() - inside_before) * 1e9);
  g_fallback_ns += std::max<int64_t>(elapsed - inside, 0);
}

int add_observe_functions(PyObject *module) {
  return PyModule_AddFunctions(module, g_observe_methods);
}

}  // namespace npvk_shim
