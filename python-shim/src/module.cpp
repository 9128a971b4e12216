// npvk._native: the CPython extension under the `npvk` package.
#define NPVK_SHIM_IMPORTS_API  // this file defines NumPy's API tables
#include <cfenv>
#include <cstdio>
#include <cstring>
#include <string>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

PyObject *g_previous_handler = nullptr;  // NumPy's allocator while ours is set
// Ops queued by the last sync: with it equal to ops_queued(),
// report_pending has nothing to run.
std::atomic<uint64_t> g_ops_synced{0};
const char *g_ufunc_names[NPVK_OP_COUNT] = {};  // NumPy's name of each replaced op

PyObject *raise_npvk(npvk_status status) {
  PyErr_Format(PyExc_RuntimeError, "npvk: %s: %s", npvk_status_string(status),
               npvk_last_error_message());
  return nullptr;
}

// Installs the allocator and records the device to bind; the device itself
// is bound later (device_binding.cpp), or again at once where it already is.
PyObject *py_enable(PyObject *, PyObject *args) {
  unsigned long long min_bytes = 0;
  const char *device = nullptr;
  int prepare = 0;  // make the device ahead (NPVK_PREPARE_DEVICE=1, npvk/__init__.py)
  if (!PyArg_ParseTuple(args, "Kz|p", &min_bytes, &device, &prepare)) return nullptr;
  if (set_device_selector(device) < 0) return nullptr;
  if (device_bound()) {
    npvk_context_options options{};
    options.struct_size = sizeof options;
    npvk_context ctx{0};
    npvk_status st = npvk_managed_enable(&options, &ctx);
    if (st != NPVK_SUCCESS) return raise_npvk(st);
    install_host_loop();
  }
  settings().min_bytes = min_bytes;
  if (!g_previous_handler) {
    PyObject *capsule = make_allocator_capsule();
    if (!capsule) return nullptr;
    g_previous_handler = PyDataMem_SetHandler(capsule);
    Py_DECREF(capsule);
    if (!g_previous_handler) return nullptr;
  }
  patch_buffer_access();
  settings().enabled = true;
  if (prepare && !device_bound()) prepare_binding();
  Py_RETURN_NONE;
}

// At interpreter exit (Python's atexit, before the C library's exit handlers
// run the driver's): the device made ahead of binding is finished, and freed
// if binding never took it (npvk_device_prepare_end).
PyObject *py_end_device_preparation(PyObject *, PyObject *) {
  npvk_status st;
  Py_BEGIN_ALLOW_THREADS st = npvk_device_prepare_end();
  Py_END_ALLOW_THREADS if (st != NPVK_SUCCESS) return raise_npvk(st);
  Py_RETURN_NONE;
}

// Installs the allocator in the calling thread's context (threads start
// with NumPy's default).
PyObject *py_install_allocator(PyObject *, PyObject *) {
  if (!settings().enabled) Py_RETURN_NONE;
  PyObject *capsule = make_allocator_capsule();
  if (!capsule) return nullptr;
  PyObject *old = PyDataMem_SetHandler(capsule);
  Py_DECREF(capsule);
  if (!old) return nullptr;
  Py_DECREF(old);
  Py_RETURN_NONE;
}

PyObject *py_disable(PyObject *, PyObject *) {
  settings().enabled = false;
  restore_loops();
  restore_matmul_loops();
  drop_deferred_loops();
  unpatch_buffer_access();
  if (g_previous_handler) {
    PyObject *ours = PyDataMem_SetHandler(g_previous_handler);
    Py_XDECREF(ours);
    Py_CLEAR(g_previous_handler);
  }
  npvk_status st = npvk_managed_disable();
  if (st != NPVK_SUCCESS) return raise_npvk(st);
  Py_RETURN_NONE;
}

PyObject *py_replace_loop(PyObject *, PyObject *args) {
  PyObject *ufunc = nullptr, *nums = nullptr, *dtypes = nullptr;
  int op = 0;
  if (!PyArg_ParseTuple(args, "O!iOO", &PyUFunc_Type, &ufunc, &op, &nums, &dtypes)) return nullptr;
  int type_nums[4] = {0}, count = int(PySequence_Size(nums));
  npvk_dtype dts[4] = {};
  if (count < 1 || count > 4 || PySequence_Size(dtypes) != count) {
    PyErr_SetString(PyExc_ValueError, "1 to 4 operands expected");
    return nullptr;
  }
  for (int k = 0; k < count; ++k) {
    PyObject *n = PySequence_GetItem(nums, k), *d = PySequence_GetItem(dtypes, k);
    type_nums[k] = int(PyLong_AsLong(n));
    dts[k] = npvk_dtype(PyLong_AsLong(d));
    Py_XDECREF(n);
    Py_XDECREF(d);
  }
  if (PyErr_Occurred()) return nullptr;
  std::string error;
  bool done = replace_or_defer_loop(ufunc, npvk_op(op), type_nums, dts, count, &error);
  if (!error.empty()) {
    PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  return PyBool_FromLong(done);
}

}  // namespace

PyObject *sync_and_report(bool only_if_queued) {
  const uint64_t queued = ops_queued();
  if (!only_if_queued || queued != g_ops_synced.load()) {
    npvk_status st;
    // npvk.sync() opens every page; a report only needs the work run.
    Py_BEGIN_ALLOW_THREADS st = only_if_queued ? npvk_managed_flush() : npvk_managed_sync();
    Py_END_ALLOW_THREADS if (st != NPVK_SUCCESS) return raise_npvk(st);
    g_ops_synced = queued;
  }
  if (report_fp_errors() < 0) return nullptr;
  Py_RETURN_NONE;
}

namespace {

PyObject *py_sync(PyObject *, PyObject *) {
  return sync_and_report(false);
}

// Before the error state or the warnings filters change, and where recorded
// warnings are read: the work queued so far runs and its FP errors are
// reported under the state it was queued in. Costs nothing when the shim
// queued nothing since the last time.
PyObject *py_report_pending(PyObject *, PyObject *) {
  return sync_and_report(true);
}

PyObject *py_set_min_bytes(PyObject *, PyObject *arg) {
  unsigned long long v = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return nullptr;
  settings().min_bytes = v;
  Py_RETURN_NONE;
}

PyObject *py_set_strict_errors(PyObject *, PyObject *args) {
  int strict = 0, sync = 0;
  if (!PyArg_ParseTuple(args, "pp", &strict, &sync)) return nullptr;
  set_strict_errors(strict != 0, sync != 0);
  Py_RETURN_NONE;
}

PyObject *py_set_promotion(PyObject *, PyObject *arg) {
  const char *state = PyUnicode_AsUTF8(arg);
  if (!state) return nullptr;
  using Promotion = Settings::Promotion;
  if (std::strcmp(state, "legacy") == 0) {
    settings().promotion = Promotion::Legacy;
  } else if (std::strcmp(state, "weak") == 0) {
    settings().promotion = Promotion::Weak;
  } else if (std::strcmp(state, "weak_and_warn") == 0) {
    settings().promotion = Promotion::WeakAndWarn;
  } else {
    PyErr_Format(PyExc_ValueError, "unknown NumPy promotion state '%s'", state);
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject *py_set_power_half_is_sqrt(PyObject *, PyObject *args) {
  int f4 = 0, f8 = 0;
  if (!PyArg_ParseTuple(args, "pp", &f4, &f8)) return nullptr;
  settings().power_half_is_sqrt_f4 = f4 != 0;
  settings().power_half_is_sqrt_f8 = f8 != 0;
  Py_RETURN_NONE;
}

PyObject *py_set_numpy_version(PyObject *, PyObject *args) {
  int major = 0, minor = 0;
  if (!PyArg_ParseTuple(args, "ii", &major, &minor)) return nullptr;
  settings().clip_scalar_bounds_keep_zeros = major > 2 || (major == 2 && minor >= 1);
  settings().half_nextafter_returns_y = major > 2 || (major == 2 && minor >= 5);
  Py_RETURN_NONE;
}

PyObject *py_op_table(PyObject *, PyObject *) {
  PyObject *list = PyList_New(0);
  for (int op = 0; op < NPVK_OP_COUNT; ++op) {
    npvk_op_info info{};
    info.struct_size = sizeof info;
    if (npvk_op_get_info(npvk_op(op), &info) != NPVK_SUCCESS) continue;
    PyObject *row =
        Py_BuildValue("(isIIi)", op, info.name, info.nin, info.nout, int(info.implemented));
    PyList_Append(list, row);
    Py_DECREF(row);
  }
  return list;
}

// The bound device, or None before binding (npvk.device() binds first).
PyObject *py_device_info(PyObject *, PyObject *) {
  const npvk_context ctx = bound_context();
  if (!ctx.id) Py_RETURN_NONE;
  npvk_device_info info{};
  info.struct_size = sizeof info;
  npvk_status st = npvk_context_device_info(ctx, &info);
  if (st != NPVK_SUCCESS) return raise_npvk(st);
  char uuid[33];
  for (int i = 0; i < 16; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", info.driver_uuid[i]);
  // driver_info tells driver builds apart that name and UUID do not (every
  // lavapipe: "llvmpipe", "Mesa 22.3.6 (LLVM 15.0.6)" against 25.0.7).
  return Py_BuildValue("{s:i,s:s,s:s,s:s,s:s,s:i,s:i}", "index", int(info.index), "name", info.name,
                       "driver", info.driver_name, "driver_info", info.driver_info, "driver_uuid",
                       uuid, "float64", int(info.float64), "type", int(info.type));
}

PyObject *py_active(PyObject *, PyObject *) {
  // Before binding, managed memory does not exist yet: enabled is the answer.
  int active = 1;
  if (device_bound()) npvk_managed_active(&active);
  return PyBool_FromLong(active && settings().enabled);
}

PyMethodDef g_methods[] = {
    {"enable", py_enable, METH_VARARGS,
     "enable(min_bytes, device, prepare): managed memory and allocator"},
    {"end_device_preparation", py_end_device_preparation, METH_NOARGS,
     "end_device_preparation(): waits for the device made ahead of binding; frees it if untaken"},
    {"disable", py_disable, METH_NOARGS, "restore NumPy's loops and allocator"},
    {"install_allocator", py_install_allocator, METH_NOARGS,
     "use npvk's allocator in the calling thread"},
    {"replace_loop", py_replace_loop, METH_VARARGS,
     "replace_loop(ufunc, op, type_nums, npvk_dtypes) -> bool"},
    {"sync", py_sync, METH_NOARGS, "run all pending device work"},
    {"report_pending", py_report_pending, METH_NOARGS,
     "run queued device work, if any, and report its FP errors now"},
    {"set_min_bytes", py_set_min_bytes, METH_O, "set NPVK_MIN_BYTES"},
    {"error_state_setup", py_error_state_setup, METH_VARARGS,
     "error_state_setup(geterrobj, error_mask, warnings, hook_testing, acting_codes): how the "
     "shim reads the error state"},
    {"update_error_state", py_update_error_state, METH_NOARGS,
     "read the error state and the warnings filters of now"},
    {"change_error_state", reinterpret_cast<PyCFunction>(py_change_error_state),
     METH_VARARGS | METH_KEYWORDS,
     "change_error_state(change, *args, **kwargs): report queued work's FP errors, apply the "
     "change, read the state again"},
    {"set_strict_errors", py_set_strict_errors, METH_VARARGS,
     "set_strict_errors(numpy_loops, at_the_op): the error state or warnings filters need "
     "NumPy's own loops, or each op's errors at the op"},
    {"set_power_half_is_sqrt", py_set_power_half_is_sqrt, METH_VARARGS,
     "set_power_half_is_sqrt(float32, float64): whether NumPy's power(x, 0.5) loop is sqrt(x)"},
    {"set_numpy_version", py_set_numpy_version, METH_VARARGS,
     "set_numpy_version(major, minor): the NumPy whose loops npvk stands in for"},
    {"set_promotion", py_set_promotion, METH_O,
     "NumPy's promotion state: 'legacy', 'weak' or 'weak_and_warn'"},
    {"stats", py_stats, METH_NOARGS, "statistics as a dict"},
    {"set_cost_model", py_set_cost_model, METH_O, "turn the cost model on or off"},
    {"cost_model", py_cost_model, METH_O, "cost_model(measure) -> dict of its figures"},
    {"reduce_stays_on_host", py_reduce_stays_on_host, METH_VARARGS,
     "reduce_stays_on_host(array, streamed_sum) -> the reason NumPy reduces it faster, or "
     "None"},
    {"reset_stats", py_reset_stats, METH_NOARGS, "zero the statistics"},
    {"op_table", py_op_table, METH_NOARGS, "[(opcode, name, nin, nout, implemented)]"},
    {"device_info", py_device_info, METH_NOARGS, "the device in use"},
    {"active", py_active, METH_NOARGS, "whether arrays go to the device in this process"},
    {"reduce", py_device_reduce, METH_VARARGS,
     "reduce(op, array, in_dtype, result, out_dtype, axes, initial) -> None or reason"},
    {"replace_matmul_loop",
     [](PyObject *, PyObject *args) -> PyObject * {
       PyObject *ufunc = nullptr;
       int type_num = 0, code = 0;
       if (!PyArg_ParseTuple(args, "Oii", &ufunc, &type_num, &code)) return nullptr;
       return PyBool_FromLong(replace_or_defer_matmul_loop(ufunc, type_num, npvk_dtype(code)));
     },
     METH_VARARGS, "replace_matmul_loop(np.matmul, type_num, npvk_dtype) -> bool"},
    {"copy", py_device_copy, METH_VARARGS,
     "copy(src, src_dtype, dst, dst_dtype) -> None or reason"},
    {"fill", py_device_fill, METH_VARARGS,
     "fill(dst, dst_dtype, value_bytes, value_dtype) -> None or reason"},
    {"patch_assignment",
     [](PyObject *, PyObject *handler) -> PyObject * {
       patch_assignment(handler);
       Py_RETURN_NONE;
     },
     METH_O, "route a[index] = value through handler(a, index, value) first"},
    {"unpatch_assignment",
     [](PyObject *, PyObject *) -> PyObject * {
       unpatch_assignment();
       Py_RETURN_NONE;
     },
     METH_NOARGS, "give slice assignment back to NumPy"},
    {"accumulate", py_device_accumulate, METH_VARARGS,
     "accumulate(op, array, in_dtype, result, out_dtype, axis) -> None or reason"},
    {"patch_method",
     [](PyObject *, PyObject *args) -> PyObject * {
       const char *name = nullptr;
       PyObject *handler = nullptr, *function = nullptr;
       if (!PyArg_ParseTuple(args, "sO|O", &name, &handler, &function)) return nullptr;
       return PyBool_FromLong(patch_method(name, handler, function));
     },
     METH_VARARGS, "patch_method(name, handler[, function]) -> bool"},
    {"unpatch_methods",
     [](PyObject *, PyObject *) -> PyObject * {
       unpatch_methods();
       Py_RETURN_NONE;
     },
     METH_NOARGS, "give the patched methods back to NumPy"},
    {"force_managed",
     [](PyObject *, PyObject *on) -> PyObject * {
       return PyBool_FromLong(force_managed(PyObject_IsTrue(on) == 1));
     },
     METH_O, "force_managed(bool) -> previous: managed allocations in this thread"},
    {"count_fallback",
     [](PyObject *, PyObject *args) -> PyObject * {
       const char *name = nullptr, *reason = nullptr;
       if (!PyArg_ParseTuple(args, "ss", &name, &reason)) return nullptr;
       count_fallback(name, reason);
       Py_RETURN_NONE;
     },
     METH_VARARGS, "count_fallback(name, reason)"},
    {"host_waits",
     [](PyObject *, PyObject *args) -> PyObject * {
       PyObject *array = nullptr;
       int write = 0;
       if (!PyArg_ParseTuple(args, "O!p", &PyArray_Type, &array, &write)) return nullptr;
       return PyBool_FromLong(host_waits(reinterpret_cast<PyArrayObject *>(array), write));
     },
     METH_VARARGS,
     "host_waits(array, write) -> whether a host read or write would wait for queued device work"},
    {"threads_starting",
     [](PyObject *, PyObject *) -> PyObject * {
       npvk_managed_threads_starting();  // best effort: a failure leaves one mapping
       Py_RETURN_NONE;
     },
     METH_NOARGS, "threads_starting(): another thread is about to start"},
    {"where_ufunc", [](PyObject *, PyObject *) { return where_ufunc(); }, METH_NOARGS,
     "np.where(c, x, y) as a ufunc"},
    {"bind", py_bind, METH_NOARGS, "bind the device now (it is bound at the first array)"},
    {"bound", py_bound, METH_NOARGS, "whether the device is bound"},
    {"make_device", py_make_device, METH_NOARGS,
     "make the bound context's device now (it is made when work first needs it)"},
    {"select_device", py_select_device, METH_VARARGS,
     "select_device(selector): the device to bind (before the first array)"},
    {"check_fault_handler", py_check_fault_handler, METH_NOARGS,
     "put npvk's SIGSEGV/SIGBUS handler back in front if another replaced it"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "npvk._native", "npvk's NumPy shim", -1, g_methods};

}  // namespace

void remember_ufunc_name(npvk_op op, const char *name) {
  if (op >= 0 && op < NPVK_OP_COUNT) g_ufunc_names[op] = name;
}

const char *remembered_ufunc_name(uint32_t op) {
  return op < NPVK_OP_COUNT ? g_ufunc_names[op] : nullptr;
}

// Only the errors of ops this thread recorded: NumPy's error state is per
// thread, and each op's errors belong under the state its thread was in.
int report_fp_errors() {
  if (warn_failures() < 0) return -1;
  take_fp_errors_of_thread();
  return report_taken_fp_errors();
}

void report_fp_errors_from_loop() {
  // Taken without the GIL; only a report needs it.
  if (!take_fp_errors_of_thread() && !failures_unreported()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  if (warn_failures() < 0 || report_taken_fp_errors() < 0) {
    // A loop cannot return an exception; the FP status is NumPy's channel for
    // it, checked when the loop returns.
    PyErr_Clear();
    std::feraiseexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID);
  }
  PyGILState_Release(gil);
}

namespace {

// The flush before an op's report; the caller may hold the GIL (a method) or
// not (NumPy runs some loops without it), and the flush must not hold it.
npvk_status flush_for_report() {
  PyThreadState *saved = PyGILState_Check() ? PyEval_SaveThread() : nullptr;
  const npvk_status st = npvk_managed_flush();
  if (saved) PyEval_RestoreThread(saved);
  return st;
}

}  // namespace

int report_at_the_op() {
  if (!sync_errors()) return 0;
  const npvk_status st = flush_for_report();
  if (st != NPVK_SUCCESS) {
    raise_npvk(st);
    return -1;
  }
  note_pending_call_site();
  return report_fp_errors();
}

void report_at_the_op_from_loop() {
  if (!sync_errors()) return;
  if (flush_for_report() != NPVK_SUCCESS) note_possible_failure();
  const uint32_t flags = take_all_fp_flags();
  // NumPy then handles them itself, under the thread's error state and
  // filters, named after this ufunc: its exception exactly.
  int raised = 0;
  if (flags & NPVK_FP_DIVIDE_BY_ZERO) raised |= FE_DIVBYZERO;
  if (flags & NPVK_FP_OVERFLOW) raised |= FE_OVERFLOW;
  if (flags & NPVK_FP_INVALID) raised |= FE_INVALID;
  if (raised) std::feraiseexcept(raised);
}

bool clip_needs_numpy(double low, double high) {
  return settings().clip_scalar_bounds_keep_zeros && (low == 0.0 || high == 0.0);
}

bool strict_errors() {
  return settings().strict_errors.load(std::memory_order_relaxed);
}

bool sync_errors() {
  return settings().sync_errors.load(std::memory_order_relaxed);
}

void set_strict_errors(bool numpy_loops, bool at_the_op) {
  settings().strict_errors = numpy_loops;
  settings().sync_errors = at_the_op;
}

}  // namespace npvk_shim

PyMODINIT_FUNC PyInit__native(void) {
  import_array();
  import_umath();
  PyObject *module = PyModule_Create(&npvk_shim::g_module);
  if (module && npvk_shim::add_observe_functions(module) < 0) Py_CLEAR(module);
  return module;
}
