// A change of NumPy's error state or of the warnings filters, made through
// npvk's hooks (npvk/_errstate.py says why they exist): the queued work's FP
// errors are reported under the state of before, the change is applied, and
// the state is read again. Programs make these changes by the hundred
// thousand (scikit-learn's ridge tests: 143,000 in 3 s, one np.errstate
// block in every solver call), so this runs here rather than in Python: an
// np.errstate block cost 5.3 us against NumPy's 1.6 with the Python version.
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

struct ErrorStateReaders {
  PyObject *geterrobj = nullptr;     // NumPy 1.x's umath.geterrobj; null on NumPy 2
  PyObject *error_mask = nullptr;    // _errstate._error_mask: NumPy 2's, as 1.x's mask
  PyObject *warnings = nullptr;      // the warnings module, for its filters
  PyObject *hook_testing = nullptr;  // _errstate._hook_testing, until it hooks
  uint32_t acting_codes = 0;         // bit c: mode code c acts at the op
};

ErrorStateReaders g_readers;
// A change made by the change itself (NumPy 1.x's seterr calls seterrobj,
// both hooked) is the outer one's: applied alone.
thread_local int t_depth = 0;

// Whether a filter of `filters` may turn NumPy's RuntimeWarning into an
// exception (conservatively: any "error" filter for it, up to the first
// filter that catches every RuntimeWarning). -1 with an exception set.
int scan_filters(PyObject *filters) {
  PyObject *items = PySequence_Fast(filters, "warnings.filters is not a sequence");
  if (!items) return -1;
  int raises = 0;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *entry = PySequence_Fast_GET_ITEM(items, i);
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 5) continue;
    PyObject *action = PyTuple_GET_ITEM(entry, 0), *message = PyTuple_GET_ITEM(entry, 1),
             *category = PyTuple_GET_ITEM(entry, 2), *module = PyTuple_GET_ITEM(entry, 3),
             *lineno = PyTuple_GET_ITEM(entry, 4);
    const int applies = PyObject_IsSubclass(PyExc_RuntimeWarning, category);
    if (applies < 0) {
      raises = -1;
      break;
    }
    if (!applies) continue;
    if (PyUnicode_Check(action) && PyUnicode_CompareWithASCIIString(action, "error") == 0) {
      raises = 1;
      break;
    }
    int any_message = message == Py_None;
    if (!any_message) {
      PyObject *pattern = PyObject_GetAttrString(message, "pattern");
      if (!pattern) {
        raises = -1;
        break;
      }
      any_message = PyUnicode_Check(pattern) && PyUnicode_GET_LENGTH(pattern) == 0;
      Py_DECREF(pattern);
    }
    const int has_line = PyObject_IsTrue(lineno);
    if (has_line < 0) {
      raises = -1;
      break;
    }
    if (any_message && module == Py_None && !has_line) break;  // catches all: no error
  }
  Py_DECREF(items);
  return raises;
}

// The filters of the last scan, and its answer: the error state changes far
// more often than the filters do (an np.errstate block in every solver call,
// and catch_warnings, which copies the list, 55,000 times in scikit-learn's
// suite), and a scan costs a subclass check and attribute reads per filter
// (dozens under pytest). The entries (tuples) are held, so that none can be
// another's at the same address: the same entries give the same answer.
struct FilterScan {
  PyObject *entries = nullptr;  // a tuple of warnings.filters' entries then
  PyObject *list = nullptr;     // warnings.filters itself then (held)
  int raises = 0;
};
FilterScan g_last_scan;

bool same_filters(PyObject *filters) {
  if (!g_last_scan.entries || !PyList_Check(filters) ||
      PyList_GET_SIZE(filters) != PyTuple_GET_SIZE(g_last_scan.entries))
    return false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(filters); ++i)
    if (PyList_GET_ITEM(filters, i) != PyTuple_GET_ITEM(g_last_scan.entries, i)) return false;
  return true;
}

// scan_filters of warnings.filters now. -1 with an exception set.
int filters_raise_runtime_warning() {
  PyObject *filters = PyObject_GetAttrString(g_readers.warnings, "filters");
  if (!filters) return -1;
  if (same_filters(filters)) {
    Py_XSETREF(g_last_scan.list, filters);
    return g_last_scan.raises;
  }
  const int raises = scan_filters(filters);
  PyObject *entries = raises >= 0 && PyList_Check(filters) ? PyList_AsTuple(filters) : nullptr;
  if (entries) {
    Py_XSETREF(g_last_scan.entries, entries);
    Py_XSETREF(g_last_scan.list, filters);
    g_last_scan.raises = raises;
  } else {
    Py_DECREF(filters);
  }
  if (!entries && raises >= 0) {
    PyErr_Clear();  // not remembered; the answer stands
  }
  return raises;
}

bool acting(long code) {
  return (g_readers.acting_codes >> (code & 7)) & 1;
}

// NumPy's error mask: 3 bits of mode a category (divide 0, over 3, under
// 6, invalid 9), as NumPy 1.x keeps it in its error object [bufsize, mask,
// callback]. -1 with an exception set.
long error_mask() {
  PyObject *obj =
      PyObject_CallNoArgs(g_readers.geterrobj ? g_readers.geterrobj : g_readers.error_mask);
  if (!obj) return -1;
  long mask = -1;
  if (PyLong_Check(obj))
    mask = PyLong_AsLong(obj);
  else if (PyList_Check(obj) && PyList_GET_SIZE(obj) >= 2)
    mask = PyLong_AsLong(PyList_GET_ITEM(obj, 1));
  else
    PyErr_SetString(PyExc_TypeError, "npvk: an error state without a mask");
  Py_DECREF(obj);
  return mask;
}

// Reads the state of now into the shim's settings: NumPy's own loops where
// underflow is reported (the device does not detect it), each op's errors
// at the op where a mode raises or calls back, or a filter may make
// RuntimeWarning an exception. -1 with an exception set.
int update_error_state() {
  const long mask = error_mask();
  if (mask == -1 && PyErr_Occurred()) return -1;
  const bool numpy_loops = ((mask >> 6) & 7) != 0;
  bool at_the_op = acting(mask) || acting(mask >> 3) || acting(mask >> 9);
  if (!at_the_op) {
    const int raises = filters_raise_runtime_warning();
    if (raises < 0) return -1;
    at_the_op = raises != 0;
  }
  set_strict_errors(numpy_loops, at_the_op);
  return 0;
}

}  // namespace

// Where warnings.filters was edited in place, without the hooked functions (a
// library inserting an "error" filter, with or without calling
// warnings._filters_mutated(), which is hooked too): seen at the next call
// that records device work, by the length and the first entry of the list the
// last scan read (two compares); an edit that keeps both (replacing a later
// entry), or a new list assigned to warnings.filters without a hooked
// function, is not.
int refresh_if_filters_edited() {
  PyObject *filters = g_last_scan.list;
  if (!filters || !g_last_scan.entries) return 0;
  const Py_ssize_t n = PyTuple_GET_SIZE(g_last_scan.entries);
  if (PyList_GET_SIZE(filters) == n &&
      (n == 0 || PyList_GET_ITEM(filters, 0) == PyTuple_GET_ITEM(g_last_scan.entries, 0)))
    return 0;
  return update_error_state();
}

namespace {

// What report_pending() of _errstate does: the queued work's errors, and
// numpy.testing's hooks once it has been imported.
PyObject *report_pending() {
  if (g_readers.hook_testing) {
    PyObject *hooked = PyObject_CallNoArgs(g_readers.hook_testing);
    if (!hooked) return nullptr;
    const int done = PyObject_IsTrue(hooked);
    Py_DECREF(hooked);
    if (done > 0) Py_CLEAR(g_readers.hook_testing);
  }
  return sync_and_report(true);
}

PyObject *apply(PyObject *change, PyObject *args, PyObject *kwargs) {
  PyObject *reported = report_pending();
  if (!reported) {
    // The report raised: the change still happens, then the error goes on.
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *result = PyObject_Call(change, args, kwargs);
    Py_XDECREF(result);
    if (!result || update_error_state() < 0) PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return nullptr;
  }
  Py_DECREF(reported);
  PyObject *result = PyObject_Call(change, args, kwargs);
  if (!result) return nullptr;
  if (update_error_state() < 0) {
    Py_DECREF(result);
    return nullptr;
  }
  return result;
}

}  // namespace

PyObject *py_error_state_setup(PyObject *, PyObject *args) {
  PyObject *geterrobj, *error_mask, *warnings, *hook_testing;
  unsigned int acting_codes = 0;
  if (!PyArg_ParseTuple(args, "OOOOI", &geterrobj, &error_mask, &warnings, &hook_testing,
                        &acting_codes))
    return nullptr;
  ErrorStateReaders readers;
  readers.geterrobj = geterrobj == Py_None ? nullptr : geterrobj;
  readers.error_mask = error_mask;
  readers.warnings = warnings;
  readers.hook_testing = hook_testing == Py_None ? nullptr : hook_testing;
  readers.acting_codes = acting_codes;
  for (PyObject *o :
       {readers.geterrobj, readers.error_mask, readers.warnings, readers.hook_testing})
    Py_XINCREF(o);
  for (PyObject *o :
       {g_readers.geterrobj, g_readers.error_mask, g_readers.warnings, g_readers.hook_testing})
    Py_XDECREF(o);
  g_readers = readers;
  Py_RETURN_NONE;
}

PyObject *py_update_error_state(PyObject *, PyObject *) {
  if (!g_readers.error_mask) {
    PyErr_SetString(PyExc_RuntimeError, "update_error_state: error_state_setup was not called");
    return nullptr;
  }
  if (update_error_state() < 0) return nullptr;
  Py_RETURN_NONE;
}

// change_error_state(change, *args, **kwargs): change(*args, **kwargs) as
// a change of the error state (module comment).
PyObject *py_change_error_state(PyObject *, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) < 1) {
    PyErr_SetString(PyExc_TypeError, "change_error_state: the change is missing");
    return nullptr;
  }
  if (!g_readers.error_mask) {
    PyErr_SetString(PyExc_RuntimeError, "change_error_state: error_state_setup was not called");
    return nullptr;
  }
  PyObject *change = PyTuple_GET_ITEM(args, 0);
  PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
  if (!rest) return nullptr;
  PyObject *result;
  if (t_depth) {
    result = PyObject_Call(change, rest, kwargs);
  } else {
    t_depth = 1;
    result = apply(change, rest, kwargs);
    t_depth = 0;
  }
  Py_DECREF(rest);
  return result;
}

}  // namespace npvk_shim
