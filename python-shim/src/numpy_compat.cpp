// The parts of NumPy's C API that differ between NumPy 1.x and 2.x
// (numpy_api.hpp says why each is needed).
#include <numpy/halffloat.h>

#include <cstdio>
#include <cstring>

#include "numpy_api.hpp"

namespace npvk_shim {

PyArray_VectorUnaryFunc *numpy_cast_function(PyArray_Descr *from, int to) {
  PyArray_ArrFuncs *funcs = PyDataType_GetArrFuncs(from);
  if (!funcs) return nullptr;
  if (to >= 0 && to < NPY_NTYPES_ABI_COMPATIBLE) return funcs->cast[to];
  PyObject *castdict = funcs->castdict;
  if (!castdict || !PyDict_Check(castdict)) return nullptr;
  PyObject *key = PyLong_FromLong(to);
  if (!key) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject *capsule = PyDict_GetItemWithError(castdict, key);
  Py_DECREF(key);
  if (!capsule || !PyCapsule_CheckExact(capsule)) {
    PyErr_Clear();
    return nullptr;
  }
  void *f = PyCapsule_GetPointer(capsule, nullptr);
  if (!f) PyErr_Clear();
  return reinterpret_cast<PyArray_VectorUnaryFunc *>(f);
}

uint16_t double_to_half_bits(double x) {
  return npy_double_to_half(x);
}

namespace {

// numpy.<name>(), a new reference.
PyObject *call_numpy(const char *name) {
  PyObject *numpy = PyImport_ImportModule("numpy");
  if (!numpy) return nullptr;
  PyObject *result = PyObject_CallMethod(numpy, name, nullptr);
  Py_DECREF(numpy);
  return result;
}

// One category, as NumPy's _error_handler acts on it.
int act(const char *name, const char *mode, const char *errtype, int flags, bool *first,
        const CallSite *site) {
  char msg[160];
  std::snprintf(msg, sizeof msg, "%s encountered in %s", errtype, name);
  if (std::strcmp(mode, "ignore") == 0) return 0;
  if (std::strcmp(mode, "warn") == 0) return warn_at(site, msg);
  if (std::strcmp(mode, "print") == 0) {
    if (*first) std::fprintf(stderr, "Warning: %s\n", msg);
    *first = false;
    return 0;
  }
  if (std::strcmp(mode, "raise") == 0) {
    PyErr_SetString(PyExc_FloatingPointError, msg);
    return -1;
  }
  // call and log: the callback from np.seterrcall.
  PyObject *callback = call_numpy("geterrcall");
  if (!callback) return -1;
  PyObject *result = nullptr;
  if (callback == Py_None) {
    PyErr_Format(PyExc_NameError,
                 "python callback specified for %s (in  %s) but no function found.", errtype, name);
  } else if (std::strcmp(mode, "call") == 0) {
    result = PyObject_CallFunction(callback, "si", errtype, flags);
  } else {
    result = PyObject_CallMethod(callback, "write", "s", msg);
  }
  Py_DECREF(callback);
  if (!result) return -1;
  Py_DECREF(result);
  return 0;
}

}  // namespace

int give_fp_errors(const char *name, int flags, const CallSite *site) {
  if (!(flags & (NPY_FPE_DIVIDEBYZERO | NPY_FPE_OVERFLOW | NPY_FPE_UNDERFLOW | NPY_FPE_INVALID)))
    return 0;
  PyObject *modes = call_numpy("geterr");
  if (!modes) return -1;
  static const struct {
    int flag;
    const char *key, *errtype;
  } kCategories[] = {{NPY_FPE_DIVIDEBYZERO, "divide", "divide by zero"},
                     {NPY_FPE_OVERFLOW, "over", "overflow"},
                     {NPY_FPE_UNDERFLOW, "under", "underflow"},
                     {NPY_FPE_INVALID, "invalid", "invalid value"}};
  bool first = true;
  int r = 0;
  for (const auto &c : kCategories) {
    if (!(flags & c.flag)) continue;
    PyObject *mode = PyDict_GetItemString(modes, c.key);  // borrowed
    const char *text = mode ? PyUnicode_AsUTF8(mode) : nullptr;
    if (!text) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "numpy.geterr() lacks '%s'", c.key);
      r = -1;
      break;
    }
    if ((r = act(name, text, c.errtype, flags, &first, site)) < 0) break;
  }
  Py_DECREF(modes);
  return r;
}

}  // namespace npvk_shim
