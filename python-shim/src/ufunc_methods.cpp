// ufunc.reduce and .accumulate, ndarray.copy and .astype, np.copyto,
// np.concatenate, np.dot, np.inner and np.vdot: whole calls on the device.
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
#include <initializer_list>
#include <utility>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

// Whose method it is, which says where the array the call works on is.
enum class Owner {
  Ufunc,     // ufunc.reduce(array, ...): the first argument
  Ndarray,   // ndarray.copy(...): self
  Function,  // a NumPy C function, np.copyto(dst, ...): the first argument
  Sequence,  // a NumPy C function of a sequence, np.concatenate((a, ...)): its first item
};

struct Patched {
  Owner owner;
  const char *name;
  const char *array_keyword;  // the array's keyword name, if it has one
  PyMethodDef *def = nullptr;
  PyCFunction original = nullptr;
  PyObject *handler = nullptr;  // handler(self, args, kwargs) -> result or NotImplemented
};

Patched g_methods[] = {
    {Owner::Ufunc, "reduce", "array"},   {Owner::Ufunc, "accumulate", "array"},
    {Owner::Ndarray, "copy", nullptr},   {Owner::Ndarray, "astype", nullptr},
    {Owner::Function, "copyto", "dst"},  {Owner::Sequence, "concatenate", nullptr},
    {Owner::Function, "dot", "a"},       {Owner::Ndarray, "dot", nullptr},
    {Owner::Function, "inner", nullptr}, {Owner::Function, "vdot", "a"}};
constexpr int kMethods = int(sizeof g_methods / sizeof g_methods[0]);

// Only an exact ndarray in managed memory, at least NPVK_MIN_BYTES large, is
// worth the Python handler's time; everything else goes straight to NumPy.
// Under an error state or warnings filter that deferred reports cannot honour
// such a call is NumPy's, counted like the loops' (reason "errstate").
bool candidate(const Patched &p, PyObject *array) {
  if (!p.handler || !settings().enabled) return false;
  if (!array || !PyArray_CheckExact(array)) return false;
  void *data = PyArray_DATA(reinterpret_cast<PyArrayObject *>(array));
  int found = 0;
  void *base = nullptr;
  uint64_t size = 0;
  const bool worth = data && npvk_managed_lookup(data, &found, &base, &size) == NPVK_SUCCESS &&
                     found && size >= settings().min_bytes;
  if (worth && strict_errors()) {
    count_fallback(p.name, "errstate");
    return false;
  }
  return worth;
}

// The handler's answer, or null when NumPy should run the call.
PyObject *ask_handler(const Patched &p, PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *result =
      PyObject_CallFunctionObjArgs(p.handler, self, args, kwargs ? kwargs : Py_None, nullptr);
  if (result != Py_NotImplemented) return result ? result : reinterpret_cast<PyObject *>(-1);
  Py_DECREF(result);
  return nullptr;
}

// The array the call works on, from its first argument.
PyObject *array_of(const Patched &p, PyObject *first) {
  if (p.owner != Owner::Sequence || !first) return first;
  if (PyTuple_Check(first)) return PyTuple_GET_SIZE(first) ? PyTuple_GET_ITEM(first, 0) : nullptr;
  if (PyList_Check(first)) return PyList_GET_SIZE(first) ? PyList_GET_ITEM(first, 0) : nullptr;
  return nullptr;
}

template <int I>
PyObject *with_keywords(PyObject *self, PyObject *args, PyObject *kwargs) {
  const Patched &p = g_methods[I];
  PyObject *first = p.owner == Owner::Ndarray    ? self
                    : PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0)
                    : kwargs && p.array_keyword  ? PyDict_GetItemString(kwargs, p.array_keyword)
                                                 : nullptr;
  if (candidate(p, array_of(p, first))) {
    PyObject *r = ask_handler(p, self, args, kwargs);
    if (r == reinterpret_cast<PyObject *>(-1)) return nullptr;
    if (r) return r;
  }
  if (!(p.def->ml_flags & METH_KEYWORDS)) return p.original(self, args);
  return reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void (*)(void)>(p.original))(
      self, args, kwargs);
}

// A function without keyword arguments (np.inner's C function).
template <int I>
PyObject *positional(PyObject *self, PyObject *args) {
  return with_keywords<I>(self, args, nullptr);
}

template <int I>
PyObject *fastcall(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  const Patched &p = g_methods[I];
  auto original =
      reinterpret_cast<_PyCFunctionFastWithKeywords>(reinterpret_cast<void (*)(void)>(p.original));
  PyObject *first = p.owner == Owner::Ndarray ? self : nargs > 0 ? args[0] : nullptr;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; !first && p.array_keyword && k < nkw; ++k)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), p.array_keyword) == 0)
      first = args[nargs + k];
  if (!candidate(p, array_of(p, first))) return original(self, args, nargs, kwnames);
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

// Plain METH_FASTCALL, without keywords (np.inner and np.vdot since NumPy 1.25).
template <int I>
PyObject *fastcall_positional(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  const Patched &p = g_methods[I];
  PyObject *first = p.owner == Owner::Ndarray ? self : nargs > 0 ? args[0] : nullptr;
  if (candidate(p, array_of(p, first))) {
    PyObject *tuple = PyTuple_New(nargs);
    if (!tuple) return nullptr;
    for (Py_ssize_t k = 0; k < nargs; ++k) {
      Py_INCREF(args[k]);
      PyTuple_SET_ITEM(tuple, k, args[k]);
    }
    PyObject *r = ask_handler(p, self, tuple, nullptr);
    Py_DECREF(tuple);
    if (r == reinterpret_cast<PyObject *>(-1)) return nullptr;
    if (r) return r;
  }
  return reinterpret_cast<_PyCFunctionFast>(reinterpret_cast<void (*)(void)>(p.original))(
      self, args, nargs);
}

template <int I>
PyCFunction trampoline(int flags) {
  if (flags == METH_FASTCALL)
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&fastcall_positional<I>));
  if (flags & METH_FASTCALL)
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&fastcall<I>));
  if (!(flags & METH_KEYWORDS)) return &positional<I>;
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&with_keywords<I>));
}

template <int... I>
PyCFunction trampoline_for(int index, int flags, std::integer_sequence<int, I...>) {
  PyCFunction found = nullptr;
  ((found = index == I ? trampoline<I>(flags) : found), ...);
  return found;
}

PyCFunction trampoline_for(int index, int flags) {
  return trampoline_for(index, flags, std::make_integer_sequence<int, kMethods>());
}

PyMethodDef *find_def(const Patched &p, PyObject *function) {
  PyMethodDef *table = p.owner == Owner::Ufunc     ? PyUFunc_Type.tp_methods
                       : p.owner == Owner::Ndarray ? PyArray_Type.tp_methods
                                                   : nullptr;
  for (PyMethodDef *def = table; def && def->ml_name; ++def)
    if (std::strcmp(def->ml_name, p.name) == 0) return def;
  if ((p.owner == Owner::Function || p.owner == Owner::Sequence) && function &&
      PyCFunction_Check(function))
    return reinterpret_cast<PyCFunctionObject *>(function)->m_ml;
  return nullptr;
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

bool patch_method(const char *name, PyObject *handler, PyObject *function) {
  for (int i = 0; i < kMethods; ++i) {
    Patched &p = g_methods[i];
    // A function object names a module function; without one, a method.
    const bool is_function = p.owner == Owner::Function || p.owner == Owner::Sequence;
    if (std::strcmp(p.name, name) != 0 || is_function != (function != nullptr)) continue;
    if (!p.def) {
      p.def = find_def(p, function);
      // Calling conventions the trampolines know: with keywords (varargs or
      // fastcall), or plain varargs or fastcall.
      const int flags = p.def ? p.def->ml_flags : 0;
      const bool known =
          (flags & ~(METH_VARARGS | METH_KEYWORDS | METH_FASTCALL)) == 0 &&
          ((flags & METH_KEYWORDS) || flags == METH_VARARGS || flags == METH_FASTCALL);
      if (!p.def || !known || std::strcmp(p.def->ml_name, name) != 0) {
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

void unpatch_methods() {
  for (Patched &p : g_methods) {
    if (p.def && p.original) set_method(p.def, p.original);
    Py_CLEAR(p.handler);
  }
}

}  // namespace npvk_shim

namespace npvk_shim {
namespace {

// Views of the input and the result, or the reason there are none.
const char *operand_views(PyObject *array, int in_code, PyObject *result, int out_code,
                          npvk_view *in, npvk_view *out) {
  npvk_status st = managed_array_view(array, npvk_dtype(in_code), in);
  if (st == NPVK_SUCCESS) st = managed_array_view(result, npvk_dtype(out_code), out);
  return view_reason(st);
}

}  // namespace

const char *status_reason(npvk_status st) {
  if (st == NPVK_SUCCESS) return nullptr;
  if (st == NPVK_ERR_DEVICE_LOST || st == NPVK_ERR_OUT_OF_DEVICE_MEMORY) note_possible_failure();
  if (st == NPVK_ERR_DEVICE_LOST) return "device lost";
  if (st == NPVK_ERR_OUT_OF_DEVICE_MEMORY) return "out of device memory";
  return st == NPVK_ERR_BAD_DTYPE || st == NPVK_ERR_UNSUPPORTED ? "dtype" : "device error";
}

const char *view_reason(npvk_status st) {
  return st == NPVK_ERR_INVALID_ARGUMENT ? "unmanaged operand" : status_reason(st);
}

PyObject *op_result(const char *reason, std::initializer_list<npvk_view> views) {
  for (npvk_view v : views)
    if (v.id) npvk_view_release(v);
  if (!reason) {
    count_device_op();
    if (report_at_the_op() < 0) return nullptr;
    Py_RETURN_NONE;
  }
  return PyUnicode_FromString(reason);
}

// A view of an ndarray whose data lies in managed memory.
npvk_status managed_array_view(PyObject *array, npvk_dtype dtype, npvk_view *out) {
  PyArrayObject *a = reinterpret_cast<PyArrayObject *>(array);
  const int nd = PyArray_NDIM(a);
  int64_t shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  for (int d = 0; d < nd; ++d) {
    shape[d] = PyArray_DIMS(a)[d];
    strides[d] = PyArray_STRIDES(a)[d];
  }
  return npvk_managed_view(PyArray_DATA(a), dtype, uint32_t(nd), shape, strides, out);
}

PyObject *py_device_reduce(PyObject *, PyObject *args) {
  int op = 0, in_code = 0, out_code = 0;
  PyObject *array = nullptr, *result = nullptr, *axes = nullptr, *initial = nullptr;
  long long sum_block = 0;
  if (!PyArg_ParseTuple(args, "iO!iO!iO!OL", &op, &PyArray_Type, &array, &in_code, &PyArray_Type,
                        &result, &out_code, &PyTuple_Type, &axes, &initial, &sum_block))
    return nullptr;
  uint32_t axis_list[NPY_MAXDIMS];
  const Py_ssize_t naxes = PyTuple_GET_SIZE(axes);
  if (naxes > NPY_MAXDIMS) return PyUnicode_FromString("axes");
  for (Py_ssize_t k = 0; k < naxes; ++k)
    axis_list[k] = uint32_t(PyLong_AsUnsignedLong(PyTuple_GET_ITEM(axes, k)));
  if (PyErr_Occurred()) return nullptr;
  npvk_view in{0}, out{0}, init{0};
  const char *reason = operand_views(array, in_code, result, out_code, &in, &out);
  if (!reason && initial != Py_None) {
    if (!PyBytes_Check(initial) ||
        npvk_view_create_scalar(context(), npvk_dtype(out_code), PyBytes_AS_STRING(initial),
                                &init) != NPVK_SUCCESS)
      reason = "initial";
  }
  if (!reason)
    reason = status_reason(npvk_reduce_blocked(context(), npvk_op(op), in, uint32_t(naxes),
                                               axis_list, init, out, int64_t(sum_block)));
  return op_result(reason, {in, out, init});
}

PyObject *py_device_accumulate(PyObject *, PyObject *args) {
  int op = 0, in_code = 0, out_code = 0;
  unsigned axis = 0;
  PyObject *array = nullptr, *result = nullptr;
  if (!PyArg_ParseTuple(args, "iO!iO!iI", &op, &PyArray_Type, &array, &in_code, &PyArray_Type,
                        &result, &out_code, &axis))
    return nullptr;
  npvk_view in{0}, out{0};
  const char *reason = operand_views(array, in_code, result, out_code, &in, &out);
  if (!reason) reason = status_reason(npvk_accumulate(context(), npvk_op(op), in, axis, out));
  return op_result(reason, {in, out});
}

}  // namespace npvk_shim
