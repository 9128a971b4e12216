// Lazy device binding. npvk.enable() installs the allocator and npvk's hooks
// at once, but the process's context (its device) is created at the first
// managed allocation or device op: NPVK_DEVICE and the launcher's local-rank
// variables set after `import numpy` with NPVK=1 still count, and a program
// that never makes a large array pays nothing for a device
// (docs/architecture.md, "Device binding and many devices").
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

std::atomic<uint64_t> g_ctx_id{0};
// Binding runs with the GIL held and never releases it, so the GIL alone
// orders binders; the mutex also covers threads that bind from C without a
// Python thread state of their own.
std::mutex g_bind_mutex;
std::string g_selector;   // enable(device=...); empty: NPVK_DEVICE at binding
std::string g_failure;    // why the last binding failed; empty: none failed
std::string g_graph_dir;  // NPVK_GRAPH, applied once the context exists
bool g_graph_dir_set = false;

// A loop replacement asked for before binding: it needs the device's
// capabilities (shaderFloat64), so it runs when the device is known.
struct DeferredLoop {
  PyObject *ufunc = nullptr;  // a strong reference
  bool matmul = false;
  npvk_op op = NPVK_OP_COUNT;
  int count = 0;
  int type_nums[4] = {};
  npvk_dtype dtypes[4] = {};
};
std::vector<DeferredLoop> g_deferred;

// A preparation waits out its delay (prepare_binding); the first large
// array ends the wait, unless binding took the device first.
std::atomic<bool> g_preparation_delayed{false};

void run_deferred_loops() {
  std::vector<DeferredLoop> loops;
  loops.swap(g_deferred);
  for (DeferredLoop &d : loops) {
    std::string error;
    if (d.matmul)
      replace_matmul_loop(d.ufunc, d.type_nums[0], d.dtypes[0]);
    else
      replace_loop(d.ufunc, d.op, d.type_nums, d.dtypes, d.count, &error);
    // At enable() such an error raised; here no caller can take it, and the
    // ufunc keeps NumPy's loop, which is correct.
    if (!error.empty())
      std::fprintf(stderr, "npvk: %s keeps NumPy's loop: %s\n",
                   reinterpret_cast<PyUFuncObject *>(d.ufunc)->name, error.c_str());
    Py_DECREF(d.ufunc);
  }
}

// The interpreter's thread states (every thread that ever ran Python code
// and still exists); the GIL is held.
int python_threads() {
  int n = 0;
  for (PyThreadState *t =
           PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(PyThreadState_Get()));
       t; t = PyThreadState_Next(t))
    ++n;
  return n;
}

// Creates the context; the GIL is held. False with g_failure set when no
// device can be had.
bool bind_locked() {
  if (g_ctx_id.load()) return true;
  if (!g_failure.empty()) return false;
  npvk_context_options options{};
  options.struct_size = sizeof options;
  options.device = g_selector.empty() ? nullptr : g_selector.c_str();
  npvk_context ctx{0};
  // With one Python thread, the others are library pools (OpenBLAS's) that
  // run only inside the calls this thread makes.
  if (python_threads() == 1) npvk_managed_threads_are_pools();
  const npvk_status st = npvk_managed_enable(&options, &ctx);
  if (st != NPVK_SUCCESS) {
    g_failure = std::string(npvk_status_string(st)) + ": " + npvk_last_error_message();
    return false;
  }
  g_ctx_id = ctx.id;  // from here on context() returns it: no recursion
  // Binding took the prepared device (or freed it): a large array must not
  // start another. npvk.device() before the first array did, and the second
  // device's driver threads made the program look threaded, so every array
  // got shared mappings without huge pages (a first flush 4x slower).
  g_preparation_delayed.store(false, std::memory_order_relaxed);
  install_host_loop();
  install_flush_hook();
  if (g_graph_dir_set)
    npvk_context_set_graph_dir(ctx, g_graph_dir.empty() ? nullptr : g_graph_dir.c_str());
  run_deferred_loops();
  return true;
}

// `announce`: say on stderr why binding failed (the allocator and the loops
// cannot raise; an explicit bind raises instead).
bool bind_with_gil(bool announce) {
  PyGILState_STATE gil = PyGILState_Ensure();
  bool bound;
  bool report = false;
  {
    std::lock_guard<std::mutex> lock(g_bind_mutex);
    const bool failed_before = !g_failure.empty();
    bound = bind_locked();
    report = !bound && !failed_before;
  }
  if (report) {
    // npvk steps aside, as an enable() that fails at import does, and NumPy
    // runs everything.
    settings().enabled = false;
    if (announce) std::fprintf(stderr, "npvk: not enabled: %s\n", g_failure.c_str());
  }
  PyGILState_Release(gil);
  return bound;
}

PyObject *raise_failure() {
  PyErr_Format(PyExc_RuntimeError, "npvk: %s", g_failure.c_str());
  return nullptr;
}

}  // namespace

npvk_context context() {
  uint64_t id = g_ctx_id.load();
  if (!id && settings().enabled && bind_with_gil(true)) id = g_ctx_id.load();
  return npvk_context{id};
}

npvk_context bound_context() {
  return npvk_context{g_ctx_id.load()};
}

bool device_bound() {
  return g_ctx_id.load() != 0;
}

int set_device_selector(const char *selector) {
  std::lock_guard<std::mutex> lock(g_bind_mutex);
  if (g_ctx_id.load()) return 0;  // npvk.enable() compares it with the bound device
  g_failure.clear();              // a new enable() tries again
  if (!selector) return 0;
  // Checked now, so that a wrong selector raises at enable(), where it was
  // given (this enumerates the devices, but creates none).
  uint32_t index = 0;
  const npvk_status st = npvk_device_select(selector, &index);
  if (st != NPVK_SUCCESS) {
    PyErr_Format(PyExc_RuntimeError, "npvk: %s: %s", npvk_status_string(st),
                 npvk_last_error_message());
    return -1;
  }
  g_selector = selector;
  return 0;
}

// Long enough for an import-only process (python -c "import numpy") to end
// first; short enough that a program importing more libraries after NumPy
// (pandas: 0.15 s) hides the driver's start-up (30-40 ms) behind them.
constexpr uint32_t kPrepareDelayMs = 50;

void prepare_binding() {
  std::lock_guard<std::mutex> lock(g_bind_mutex);
  if (g_ctx_id.load() || !g_failure.empty()) return;
  // The device binding would create now, made on a thread of its own while
  // the program goes on (its imports, typically); binding takes it over if
  // it still chooses that device. A failure here is binding's to report.
  npvk_context_options options{};
  options.struct_size = sizeof options;
  options.device = g_selector.empty() ? nullptr : g_selector.c_str();
  if (npvk_device_prepare_after(&options, kPrepareDelayMs) == NPVK_SUCCESS)
    g_preparation_delayed.store(true, std::memory_order_relaxed);
}

void prepare_binding_now() {
  if (!g_preparation_delayed.load(std::memory_order_relaxed) ||
      !g_preparation_delayed.exchange(false, std::memory_order_relaxed))
    return;
  npvk_context_options options{};
  options.struct_size = sizeof options;
  npvk_device_prepare(&options);  // ends the delay of the one under way
}

bool replace_or_defer_loop(PyObject *ufunc, npvk_op op, const int *type_nums,
                           const npvk_dtype *dtypes, int count, std::string *error) {
  if (device_bound()) return replace_loop(ufunc, op, type_nums, dtypes, count, error);
  // What replace_loop would decline on any device, declined now, so that the
  // count of loops to replace is the count binding replaces.
  int has_loop = 0;
  if (npvk_op_has_loop(op, dtypes, uint32_t(count), &has_loop) != NPVK_SUCCESS || !has_loop)
    return false;
  DeferredLoop d;
  Py_INCREF(ufunc);
  d.ufunc = ufunc;
  d.op = op;
  d.count = count;
  for (int k = 0; k < count && k < 4; ++k) {
    d.type_nums[k] = type_nums[k];
    d.dtypes[k] = dtypes[k];
  }
  g_deferred.push_back(d);
  return true;
}

bool replace_or_defer_matmul_loop(PyObject *ufunc, int type_num, npvk_dtype dtype) {
  if (device_bound()) return replace_matmul_loop(ufunc, type_num, dtype);
  const npvk_dtype loop[3] = {dtype, dtype, dtype};
  int has_loop = 0;
  if (npvk_op_has_loop(NPVK_OP_MULTIPLY, loop, 3, &has_loop) != NPVK_SUCCESS || !has_loop)
    return false;
  DeferredLoop d;
  Py_INCREF(ufunc);
  d.ufunc = ufunc;
  d.matmul = true;
  d.type_nums[0] = type_num;
  d.dtypes[0] = dtype;
  g_deferred.push_back(d);
  return true;
}

int deferred_loop_count() {
  // As replaced_loop_count: the ufunc loops, not matmul's.
  int count = 0;
  for (const DeferredLoop &d : g_deferred) count += d.matmul ? 0 : 1;
  return count;
}

void drop_deferred_loops() {
  for (DeferredLoop &d : g_deferred) Py_DECREF(d.ufunc);
  g_deferred.clear();
}

npvk_status set_graph_dir_when_bound(const char *dir) {
  if (!device_bound()) {
    g_graph_dir = dir ? dir : "";
    g_graph_dir_set = true;
    return NPVK_SUCCESS;
  }
  return npvk_context_set_graph_dir(bound_context(), dir);
}

PyObject *py_bind(PyObject *, PyObject *) {
  if (device_bound()) Py_RETURN_NONE;
  if (!g_failure.empty()) return raise_failure();  // why npvk stepped aside
  if (!settings().enabled) {
    PyErr_SetString(PyExc_RuntimeError, "npvk: not enabled");
    return nullptr;
  }
  if (!bind_with_gil(false)) return raise_failure();
  Py_RETURN_NONE;
}

PyObject *py_select_device(PyObject *, PyObject *args) {
  const char *selector = nullptr;
  if (!PyArg_ParseTuple(args, "s", &selector)) return nullptr;
  if (set_device_selector(selector) < 0) return nullptr;
  Py_RETURN_NONE;
}

PyObject *py_check_fault_handler(PyObject *, PyObject *) {
  if (device_bound()) npvk_managed_check_fault_handler();  // before binding: binding installs it
  Py_RETURN_NONE;
}

// The context binds before its device is made where an earlier process
// stored the device's description (Context::create's device_when_needed):
// npvk.device() makes it, since the answer names the device in use.
PyObject *py_make_device(PyObject *, PyObject *) {
  if (!device_bound()) Py_RETURN_NONE;
  const npvk_status st = npvk_context_make_device(bound_context());
  if (st != NPVK_SUCCESS) {
    PyErr_Format(PyExc_RuntimeError, "npvk: %s: %s", npvk_status_string(st),
                 npvk_last_error_message());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject *py_bound(PyObject *, PyObject *) {
  return PyBool_FromLong(device_bound());
}

}  // namespace npvk_shim
