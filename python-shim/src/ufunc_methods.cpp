// ufunc.reduce (and other ufunc methods) as a whole on the device.
//
// NumPy runs a reduction through the ufunc's inner loop in chunks (8192
// elements before NumPy 2.3) that accumulate into one output element: no loop
// call sees the whole reduction. So npvk takes over the method itself. Its
// PyMethodDef is shared by the method descriptor and by every bound method
// made from it (numpy.core._methods keeps `umr_sum = np.add.reduce` from
// import time), so the shim swaps the function pointer in that PyMethodDef:
// every path to ufunc.reduce then reaches npvk first. A call that npvk cannot
// run (npvk/_reduce.py decides, and counts why) goes to NumPy's original.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

struct Patched {
  const char *name;
  PyMethodDef *def = nullptr;
  PyCFunction original = nullptr;
  PyObject *handler = nullptr;  // handler(ufunc, args, kwargs) -> result or NotImplemented
};

Patched g_methods[] = {{"reduce"}, {"accumulate"}};
constexpr int kMethods = int(sizeof g_methods / sizeof g_methods[0]);

// Only an exact ndarray in managed memory, at least NPVK_MIN_BYTES large, is
// worth the Python handler's time; everything else goes straight to NumPy.
bool candidate(const Patched &p, PyObject *array) {
  if (!p.handler || !settings().enabled || settings().strict_errors) return false;
  if (!array || !PyArray_CheckExact(array)) return false;
  void *data = PyArray_DATA(reinterpret_cast<PyArrayObject *>(array));
  int found = 0;
  void *base = nullptr;
  uint64_t size = 0;
  return data && npvk_managed_lookup(data, &found, &base, &size) == NPVK_SUCCESS && found &&
         size >= settings().min_bytes;
}

// The handler's answer, or null when NumPy should run the call.
PyObject *ask_handler(const Patched &p, PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *result =
      PyObject_CallFunctionObjArgs(p.handler, self, args, kwargs ? kwargs : Py_None, nullptr);
  if (result != Py_NotImplemented) return result ? result : reinterpret_cast<PyObject *>(-1);
  Py_DECREF(result);
  return nullptr;
}

template <int I>
PyObject *with_keywords(PyObject *self, PyObject *args, PyObject *kwargs) {
  const Patched &p = g_methods[I];
  PyObject *first = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0)
                    : kwargs                   ? PyDict_GetItemString(kwargs, "array")
                                               : nullptr;
  if (candidate(p, first)) {
    PyObject *r = ask_handler(p, self, args, kwargs);
    if (r == reinterpret_cast<PyObject *>(-1)) return nullptr;
    if (r) return r;
  }
  return reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)(void)>(p.original))(
      self, args, kwargs);
}

template <int I>
PyObject *fastcall(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  const Patched &p = g_methods[I];
  auto original =
      reinterpret_cast<_PyCFunctionFastWithKeywords>(reinterpret_cast<void (*)(void)>(p.original));
  PyObject *first = nargs > 0 ? args[0] : nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; !first && k < nkw; ++k)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "array") == 0)
      first = args[nargs + k];
  if (!candidate(p, first)) return original(self, args, nargs, kwnames);
  PyObject *tuple = PyTuple_New(nargs);
  PyObject *dict = nkw ? PyDict_New() : nullptr;
  if (!tuple || (nkw && !dict)) {
    Py_XDECREF(tuple);
    Py_XDECREF(dict);
    return nullptr;
  }
  for (Py_ssize_t k = 0; k < nargs; ++k) {
    Py_INCREF(args[k]);
    PyTuple_SET_ITEM(tuple, k, args[k]);
  }
  for (Py_ssize_t k = 0; k < nkw; ++k)
    PyDict_SetItem(dict, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]);
  PyObject *r = ask_handler(p, self, tuple, dict);
  Py_DECREF(tuple);
  Py_XDECREF(dict);
  if (r == reinterpret_cast<PyObject *>(-1)) return nullptr;
  if (r) return r;
  return original(self, args, nargs, kwnames);
}

template <int I>
PyCFunction trampoline(int flags) {
  if (flags & METH_FASTCALL)
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&fastcall<I>));
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&with_keywords<I>));
}

PyCFunction trampoline_for(int index, int flags) {
  return index == 0 ? trampoline<0>(flags) : trampoline<1>(flags);
}

// NumPy's method table is static data; make sure its page is writable.
bool set_method(PyMethodDef *def, PyCFunction fn) {
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t start = reinterpret_cast<uintptr_t>(def) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(def + 1);
  if (mprotect(reinterpret_cast<void *>(start), end - start, PROT_READ | PROT_WRITE) != 0)
    return false;
  def->ml_meth = fn;
  return true;
}

}  // namespace

bool patch_ufunc_method(const char *name, PyObject *handler) {
  for (int i = 0; i < kMethods; ++i) {
    Patched &p = g_methods[i];
    if (std::strcmp(p.name, name) != 0) continue;
    if (!p.def) {
      for (PyMethodDef *def = PyUFunc_Type.tp_methods; def && def->ml_name; ++def)
        if (std::strcmp(def->ml_name, name) == 0) p.def = def;
      if (!p.def || !(p.def->ml_flags & METH_KEYWORDS)) {
        p.def = nullptr;
        return false;
      }
      p.original = p.def->ml_meth;
    }
    if (!set_method(p.def, trampoline_for(i, p.def->ml_flags))) return false;
    Py_XINCREF(handler);
    Py_XSETREF(p.handler, handler);
    return true;
  }
  return false;
}

void unpatch_ufunc_methods() {
  for (Patched &p : g_methods) {
    if (p.def && p.original) set_method(p.def, p.original);
    Py_CLEAR(p.handler);
  }
}

}  // namespace npvk_shim

namespace npvk_shim {
namespace {

// A view of an ndarray whose data lies in managed memory.
npvk_status array_view(PyArrayObject *a, npvk_dtype dtype, npvk_view *out) {
  const int nd = PyArray_NDIM(a);
  int64_t shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  for (int d = 0; d < nd; ++d) {
    shape[d] = PyArray_DIMS(a)[d];
    strides[d] = PyArray_STRIDES(a)[d];
  }
  return npvk_managed_view(PyArray_DATA(a), dtype, uint32_t(nd), shape, strides, out);
}

}  // namespace

PyObject *py_device_reduce(PyObject *, PyObject *args) {
  int op = 0, in_code = 0, out_code = 0;
  PyObject *array = nullptr, *result = nullptr, *axes = nullptr, *initial = nullptr;
  if (!PyArg_ParseTuple(args, "iO!iO!iO!O", &op, &PyArray_Type, &array, &in_code, &PyArray_Type,
                        &result, &out_code, &PyTuple_Type, &axes, &initial))
    return nullptr;
  uint32_t axis_list[NPY_MAXDIMS];
  const Py_ssize_t naxes = PyTuple_GET_SIZE(axes);
  if (naxes > NPY_MAXDIMS) return PyUnicode_FromString("axes");
  for (Py_ssize_t k = 0; k < naxes; ++k)
    axis_list[k] = uint32_t(PyLong_AsUnsignedLong(PyTuple_GET_ITEM(axes, k)));
  if (PyErr_Occurred()) return nullptr;
  npvk_view in{0}, out{0}, init{0};
  const char *reason = nullptr;
  if (array_view(reinterpret_cast<PyArrayObject *>(array), npvk_dtype(in_code), &in) !=
          NPVK_SUCCESS ||
      array_view(reinterpret_cast<PyArrayObject *>(result), npvk_dtype(out_code), &out) !=
          NPVK_SUCCESS)
    reason = "unmanaged operand";
  if (!reason && initial != Py_None) {
    if (!PyBytes_Check(initial) ||
        npvk_view_create_scalar(context(), npvk_dtype(out_code), PyBytes_AS_STRING(initial),
                                &init) != NPVK_SUCCESS)
      reason = "initial";
  }
  if (!reason) {
    npvk_status st = npvk_reduce(context(), npvk_op(op), in, uint32_t(naxes), axis_list, init, out);
    if (st == NPVK_ERR_BAD_DTYPE || st == NPVK_ERR_UNSUPPORTED)
      reason = "dtype";
    else if (st != NPVK_SUCCESS)
      reason = "device error";
  }
  for (npvk_view v : {in, out, init})
    if (v.id) npvk_view_release(v);
  if (!reason) {
    count_device_op();
    Py_RETURN_NONE;
  }
  return PyUnicode_FromString(reason);
}

}  // namespace npvk_shim
