// Slice assignment (`a[i:j] = b`, `a[...] = 0`) on the device.
//
// NumPy copies into a view with its own dtype-transfer loops, not a ufunc, so
// the host would write the destination's pages: a fault and a flush per
// assignment, every time step of a stencil code. The shim takes over the
// ndarray type's mp_ass_subscript slot (what `a[index] = value` calls) for
// exact ndarrays in managed memory with a basic index (slices, Ellipsis,
// integers, None); npvk/_assign.py records the copy, or declines and NumPy
// assigns as always.
#include <cstring>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

objobjargproc g_original_assign = nullptr;
PyObject *g_assign_handler = nullptr;  // handler(array, index, value) -> bool

bool basic_item(PyObject *item) {
  return PySlice_Check(item) || item == Py_Ellipsis || item == Py_None || PyLong_CheckExact(item);
}

// An index that selects a view of more than one element without copying.
bool basic_index(PyObject *index, int ndim) {
  if (PySlice_Check(index) || index == Py_Ellipsis) return true;
  if (PyLong_CheckExact(index)) return ndim > 1;  // a row
  if (!PyTuple_CheckExact(index)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(index);
  Py_ssize_t ints = 0;
  for (Py_ssize_t k = 0; k < n; ++k) {
    PyObject *item = PyTuple_GET_ITEM(index, k);
    if (!basic_item(item)) return false;
    ints += PyLong_CheckExact(item);
  }
  return ints < ndim;  // all axes fixed: one element, NumPy's business
}

bool managed_and_large(PyObject *obj) {
  if (!PyArray_CheckExact(obj)) return false;
  void *data = PyArray_DATA(reinterpret_cast<PyArrayObject *>(obj));
  int found = 0;
  void *base = nullptr;
  uint64_t size = 0;
  return data && npvk_managed_lookup(data, &found, &base, &size) == NPVK_SUCCESS && found &&
         size >= settings().min_bytes;
}

// Whether `self[index] = value` assigns a view onto itself: `a[i:j] -= x`
// subtracts in place, then assigns the result, the same elements, back.
// NumPy skips that copy (PyArray_AssignArray); recording it made an op, and
// a host flush at the next touch, of every row step of Gaussian elimination.
bool assigns_onto_itself(PyObject *self, PyObject *index, PyObject *value) {
  if (!PyArray_CheckExact(value)) return false;
  PyArrayObject *src = reinterpret_cast<PyArrayObject *>(value);
  PyObject *view_obj = PyObject_GetItem(self, index);
  if (!view_obj) {
    PyErr_Clear();  // NumPy's assignment raises its own error
    return false;
  }
  bool same = PyArray_CheckExact(view_obj);
  if (same) {
    PyArrayObject *view = reinterpret_cast<PyArrayObject *>(view_obj);
    same = PyArray_DATA(view) == PyArray_DATA(src) && PyArray_NDIM(view) == PyArray_NDIM(src) &&
           PyArray_EquivTypes(PyArray_DESCR(view), PyArray_DESCR(src));
    for (int d = 0; same && d < PyArray_NDIM(view); ++d)
      same = PyArray_DIM(view, d) == PyArray_DIM(src, d) &&
             (PyArray_DIM(view, d) == 1 || PyArray_STRIDE(view, d) == PyArray_STRIDE(src, d));
  }
  Py_DECREF(view_obj);
  return same;
}

// Whether NumPy's own copy is the better path: with the cost model on, an
// assignment that waits for no queued work (neither the destination's
// writes nor the value's reads) is host work on host pages, as np.copyto of
// a fill is (npvk/_assign.py). Recorded, it became an op that the next host
// touch flushed on the host (LU by rows: two such flushes and faults a step,
// 1.7x NumPy's time).
bool numpy_assigns_best(PyObject *self, PyObject *value) {
  if (!cost_model_on() || host_waits(reinterpret_cast<PyArrayObject *>(self), true)) return false;
  return !PyArray_Check(value) || !host_waits(reinterpret_cast<PyArrayObject *>(value), false);
}

int assign_subscript(PyObject *self, PyObject *index, PyObject *value) {
  if (value && g_assign_handler && settings().enabled && managed_and_large(self) &&
      basic_index(index, PyArray_NDIM(reinterpret_cast<PyArrayObject *>(self)))) {
    if (assigns_onto_itself(self, index, value)) return 0;
    if (numpy_assigns_best(self, value)) return g_original_assign(self, index, value);
    // Counted like the loops: NumPy's path under an error state or warnings
    // filter that deferred reports cannot honour.
    if (strict_errors()) {
      count_fallback("setitem", "errstate");
      return g_original_assign(self, index, value);
    }
    PyObject *done = PyObject_CallFunctionObjArgs(g_assign_handler, self, index, value, nullptr);
    if (!done) return -1;
    const bool recorded = done == Py_True;
    Py_DECREF(done);
    if (recorded) return 0;
  }
  return g_original_assign(self, index, value);
}

// Records dst = cast(src) and releases both views: None, or the reason not.
PyObject *record_cast(npvk_view src, npvk_view dst, const char *reason) {
  if (!reason) {
    npvk_status st = npvk_unary(context(), NPVK_OP_CAST, src, dst);
    reason = st == NPVK_ERR_INVALID_ARGUMENT ? "overlap" : status_reason(st);
  }
  return op_result(reason, {src, dst});
}

}  // namespace

void patch_assignment(PyObject *handler) {
  PyMappingMethods *mapping = PyArray_Type.tp_as_mapping;
  if (!mapping) return;
  if (!g_original_assign) g_original_assign = mapping->mp_ass_subscript;
  mapping->mp_ass_subscript = assign_subscript;
  Py_XINCREF(handler);
  Py_XSETREF(g_assign_handler, handler);
}

void unpatch_assignment() {
  if (g_original_assign) PyArray_Type.tp_as_mapping->mp_ass_subscript = g_original_assign;
  Py_CLEAR(g_assign_handler);
}

PyObject *py_device_copy(PyObject *, PyObject *args) {
  PyObject *src = nullptr, *dst = nullptr;
  int src_code = 0, dst_code = 0;
  if (!PyArg_ParseTuple(args, "O!iO!i", &PyArray_Type, &src, &src_code, &PyArray_Type, &dst,
                        &dst_code))
    return nullptr;
  npvk_view in{0}, out{0};
  npvk_status st = managed_array_view(src, npvk_dtype(src_code), &in);
  if (st == NPVK_SUCCESS) st = managed_array_view(dst, npvk_dtype(dst_code), &out);
  return record_cast(in, out, view_reason(st));
}

PyObject *py_device_fill(PyObject *, PyObject *args) {
  PyObject *dst = nullptr;
  int dst_code = 0, value_code = 0;
  const char *bytes = nullptr;
  Py_ssize_t length = 0;
  if (!PyArg_ParseTuple(args, "O!iy#i", &PyArray_Type, &dst, &dst_code, &bytes, &length,
                        &value_code))
    return nullptr;
  npvk_view in{0}, out{0};
  const char *reason = nullptr;
  uint64_t value = 0;
  std::memcpy(&value, bytes, size_t(std::min<Py_ssize_t>(length, 8)));
  if (npvk_view_create_scalar(context(), npvk_dtype(value_code), &value, &in) != NPVK_SUCCESS)
    reason = "scalar";
  else
    reason = view_reason(managed_array_view(dst, npvk_dtype(dst_code), &out));
  return record_cast(in, out, reason);
}

}  // namespace npvk_shim
