// ufunc(..., where=mask) calls. NumPy's masked iterator calls the inner loop
// once per run of true mask values: `np.add(a, b, out=out, where=a > 0.5)`
// on 2e5 random float64 makes about 5e4 loop calls of two elements each.
// Through the replaced loops each of them was looked up, recorded as a
// device op of its own, or counted as a fallback: 135 ms a call, against
// NumPy's 1.2 ms, and 3 s in forced mode (a flush of 5e4 tiny ops).
//
// So a masked call is decided here, whole, before NumPy's iterator runs:
// - On the device where the rest of the chain is (an operand, the mask or
//   the output waits for queued work), or wherever the cost model is off
//   (forced mode) and the work is large: recorded as
//     x' = where(mask, x, one) for each array input x,
//     r  = op(x', ...)           (the whole-call path, ufunc_call.cpp),
//     out = where(mask, r, out),
//   which fuse into one kernel. Masked-out elements reach the op only as
//   `one`, a value at which every ufunc npvk has is exact (no FP exception),
//   so the device raises nothing for them, as NumPy's loop, never called
//   there, raises nothing; out keeps its old values there. Without out=,
//   NumPy leaves those elements uninitialised: they hold op(one, ...).
// - Otherwise NumPy runs the call, and the replaced loop hands each run
//   straight to NumPy's original loop (in_masked_host_call): the host skips
//   the masked-out elements, which the device would compute, and the cost
//   model does not weigh where-chains. Counted once per call as a fallback
//   ("where= mask").
#include <cstring>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

constexpr int kMaxInputs = 3;

// The value masked-out elements reach the op as: 1 is exact for every ufunc
// npvk has (1/1, log(1), arccosh(1), 1**1, ...) but arctanh, whose pole it is.
double neutral_input(const char *ufunc) {
  return std::strcmp(ufunc, "arctanh") == 0 ? 0.0 : 1.0;
}

// Whether op(one, s) and op(s, one) raise nothing whatever the scalar s:
// a scalar operand is not masked (it reaches every element, as in NumPy's
// loop), so masked-out elements compute op with it. 1 + s, 1 - s and 1 * s
// are exact or round without an exception for every s (1 + DBL_MAX rounds to
// DBL_MAX); 1 / 0.0, 1 ** -1e308 and the like raise, where NumPy, which never
// calls its loop there, raises nothing.
bool scalar_safe_with_one(const char *ufunc) {
  return std::strcmp(ufunc, "add") == 0 || std::strcmp(ufunc, "subtract") == 0 ||
         std::strcmp(ufunc, "multiply") == 0;
}

bool float_scalar_bits(int type, double v, uint64_t *bits) {
  *bits = 0;
  if (type == NPY_HALF) {
    *bits = double_to_half_bits(v);
  } else if (type == NPY_FLOAT) {
    const float f = float(v);
    std::memcpy(bits, &f, sizeof f);
  } else if (type == NPY_DOUBLE) {
    std::memcpy(bits, &v, sizeof v);
  } else {
    return false;
  }
  return true;
}

npvk_dtype float_dtype(int type) {
  return type == NPY_HALF ? NPVK_FLOAT16 : type == NPY_FLOAT ? NPVK_FLOAT32 : NPVK_FLOAT64;
}

// A managed array of `a`'s contents: `a` itself, or a copy of a small host
// array (an upload, as a whole call makes). New reference, or null.
PyObject *managed_or_copy(PyObject *a) {
  PyArrayObject *arr = reinterpret_cast<PyArrayObject *>(a);
  if (managed(arr)) {
    Py_INCREF(a);
    return a;
  }
  if (PyArray_NBYTES(arr) > kMaxUpload) return nullptr;
  const bool saved = force_managed(true);
  PyObject *copy = PyArray_NewCopy(arr, NPY_CORDER);
  force_managed(saved);
  if (!copy) PyErr_Clear();
  return copy;
}

npvk_status apply_where(npvk_view mask, npvk_view x, npvk_view y, npvk_view out) {
  npvk_view in[3] = {mask, x, y};
  return npvk_apply(context(), NPVK_OP_WHERE, 3, in, 1, &out);
}

// The device path; null with *taken false where NumPy should run the call.
PyObject *masked_on_device(PyUFuncObject *uf, PyObject *const *inputs, PyObject *out,
                           PyObject *where, bool *taken) {
  const int nin = uf->nin;
  if (uf->nout != 1 || nin > kMaxInputs || uf->core_enabled || strict_errors()) return nullptr;
  PyArrayObject *mask = reinterpret_cast<PyArrayObject *>(where);
  if (PyArray_TYPE(mask) != NPY_BOOL || !PyArray_ISNBO(PyArray_DESCR(mask)->byteorder))
    return nullptr;
  // Without out= the masked-out elements are uninitialised, and NumPy 2.2+
  // warns so ("'where' used without 'out'"): NumPy's call, which does.
  if (!out) return nullptr;
  PyArrayObject *o = reinterpret_cast<PyArrayObject *>(out);
  if (o && (!PyArray_CheckExact(out) || !PyArray_ISWRITEABLE(o) || !PyArray_ISALIGNED(o)))
    return nullptr;
  // One float dtype for every array, and the broadcast shape of the inputs.
  int type = -1, ndim = 0;
  npy_intp shape[NPY_MAXDIMS];
  bool pending = host_waits(mask, false) || (o && host_waits(o, true)), large = false;
  for (int k = 0; k < nin; ++k) {
    if (!PyArray_CheckExact(inputs[k])) {
      if (!scalar_safe_with_one(uf->name)) return nullptr;
      continue;
    }
    PyArrayObject *a = reinterpret_cast<PyArrayObject *>(inputs[k]);
    const int t = PyArray_TYPE(a);
    if ((t != NPY_HALF && t != NPY_FLOAT && t != NPY_DOUBLE) || (type >= 0 && t != type) ||
        !PyArray_ISNBO(PyArray_DESCR(a)->byteorder) || !PyArray_ISALIGNED(a))
      return nullptr;
    type = t;
    pending = pending || host_waits(a, false);
    large = large || uint64_t(PyArray_NBYTES(a)) >= settings().min_bytes;
    const int nd = PyArray_NDIM(a);
    for (int d = ndim; d < nd; ++d) shape[d] = 1;  // aligned at the last dimension below
    if (nd > ndim) {
      std::memmove(shape + (nd - ndim), shape, size_t(ndim) * sizeof(npy_intp));
      for (int d = 0; d < nd - ndim; ++d) shape[d] = 1;
      ndim = nd;
    }
    for (int j = 0; j < nd; ++j) {
      npy_intp &s = shape[ndim - nd + j];
      const npy_intp e = PyArray_DIM(a, j);
      if (e == s || e == 1) continue;
      if (s != 1) return nullptr;  // NumPy raises its own error
      s = e;
    }
  }
  if (type < 0 || ndim < 1 || (o && PyArray_TYPE(o) != type)) return nullptr;
  // The mask broadcasts into that shape; a given output has exactly it.
  if (PyArray_NDIM(mask) > ndim) return nullptr;
  for (int j = 0; j < PyArray_NDIM(mask); ++j) {
    const npy_intp e = PyArray_DIM(mask, j);
    if (e != 1 && e != shape[ndim - PyArray_NDIM(mask) + j]) return nullptr;
  }
  if (o) {
    if (PyArray_NDIM(o) != ndim) return nullptr;
    for (int d = 0; d < ndim; ++d)
      if (PyArray_DIM(o, d) != shape[d]) return nullptr;
    large = large || uint64_t(PyArray_NBYTES(o)) >= settings().min_bytes;
    if (!managed(o)) return nullptr;
  }
  // Where the rest of the chain is, or in forced mode. With the cost model
  // on and nothing queued, NumPy's masked loop (the caller) is the faster.
  if (!pending && (cost_model_on() || !large)) return nullptr;
  // While the cost model bypasses recording, NumPy's masked loop.
  if (elementwise_cost_reason()) return nullptr;

  const npvk_dtype dt = float_dtype(type);
  uint64_t one_bits = 0;
  float_scalar_bits(type, neutral_input(uf->name), &one_bits);
  npvk_view mask_view{}, one{};
  PyObject *mask_array = managed_or_copy(where);
  bool ok = mask_array && managed_array_view(mask_array, NPVK_BOOL, &mask_view) == NPVK_SUCCESS &&
            npvk_view_create_scalar(context(), dt, &one_bits, &one) == NPVK_SUCCESS;
  // x' = where(mask, x, one) for each array input, into a managed temporary
  // of the broadcast shape (freed once recorded: fusion keeps it in registers).
  PyObject *selected[kMaxInputs] = {};
  for (int k = 0; ok && k < nin; ++k) {
    if (!PyArray_CheckExact(inputs[k])) {
      Py_INCREF(inputs[k]);  // a scalar reaches every element, as in NumPy's loop
      selected[k] = inputs[k];
      continue;
    }
    PyObject *x = managed_or_copy(inputs[k]);
    const bool saved = force_managed(true);
    selected[k] = PyArray_SimpleNew(ndim, shape, type);
    force_managed(saved);
    npvk_view xv{}, sv{};
    ok = x && selected[k] && managed_array_view(x, dt, &xv) == NPVK_SUCCESS &&
         managed_array_view(selected[k], dt, &sv) == NPVK_SUCCESS &&
         apply_where(mask_view, xv, one, sv) == NPVK_SUCCESS;
    if (ok) count_device_op();
    if (xv.id) npvk_view_release(xv);
    if (sv.id) npvk_view_release(sv);
    Py_XDECREF(x);
    if (!selected[k]) PyErr_Clear();
  }
  // r = op(x', ...), typed and checked as any whole call.
  PyObject *result = nullptr;
  bool whole = false;
  if (ok) {
    result =
        try_whole_call(reinterpret_cast<PyObject *>(uf), selected, size_t(nin), nullptr, &whole);
    if (!whole) {
      ok = false;
    } else if (!result) {
      // The op was recorded and its FP errors raised at the op (an error
      // state of 'raise'): NumPy's exception, as for any whole call.
      *taken = true;
    } else if (!PyArray_CheckExact(result) ||
               PyArray_TYPE(reinterpret_cast<PyArrayObject *>(result)) != type) {
      ok = false;  // another result type: NumPy casts it by its own rules
      Py_CLEAR(result);
    }
  }
  // out = where(mask, r, out): masked-out elements keep their value.
  if (ok && result && o) {
    npvk_view rv{}, ov{};
    ok = managed_array_view(result, dt, &rv) == NPVK_SUCCESS &&
         managed_array_view(out, dt, &ov) == NPVK_SUCCESS &&
         apply_where(mask_view, rv, ov, ov) == NPVK_SUCCESS;
    if (rv.id) npvk_view_release(rv);
    if (ov.id) npvk_view_release(ov);
    Py_CLEAR(result);
    if (ok) {
      count_device_op();
      Py_INCREF(out);
      result = out;
    }
  }
  for (PyObject *s : selected) Py_XDECREF(s);
  if (mask_view.id) npvk_view_release(mask_view);
  if (one.id) npvk_view_release(one);
  Py_XDECREF(mask_array);
  if (*taken || !ok) {
    // Recorded selects (and r) only fill temporaries: harmless when NumPy
    // runs the call after all.
    Py_XDECREF(result);
    return nullptr;
  }
  *taken = true;
  if (report_at_the_op() < 0) {
    Py_DECREF(result);
    return nullptr;
  }
  return result;
}

}  // namespace

PyObject *masked_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                      vectorcallfunc numpy_call) {
  PyUFuncObject *uf = reinterpret_cast<PyUFuncObject *>(callable);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
  PyObject *where = nullptr, *out = nullptr;
  Py_ssize_t where_at = -1;
  bool other_keywords = false;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, k);
    if (PyUnicode_CompareWithASCIIString(name, "where") == 0) {
      where = args[nargs + k];
      where_at = k;
    } else if (PyUnicode_CompareWithASCIIString(name, "out") == 0) {
      out = args[nargs + k];
    } else {
      other_keywords = true;
    }
  }
  // where=True is NumPy's default: the call without it, so that it takes
  // the unmasked paths (a whole call, the loops).
  if (where == Py_True && nkw <= 8) {
    PyObject *rest_args[NPY_MAXARGS + 8];
    PyObject *rest_names = PyTuple_New(nkw - 1);
    if (!rest_names) return nullptr;
    for (Py_ssize_t k = 0; k < nargs; ++k) rest_args[k] = args[k];
    for (Py_ssize_t k = 0, j = 0; k < nkw; ++k) {
      if (k == where_at) continue;
      rest_args[nargs + j] = args[nargs + k];
      PyObject *name = PyTuple_GET_ITEM(kwnames, k);
      Py_INCREF(name);
      PyTuple_SET_ITEM(rest_names, j++, name);
    }
    PyObject *result =
        PyObject_Vectorcall(callable, rest_args, size_t(nargs), nkw > 1 ? rest_names : nullptr);
    Py_DECREF(rest_names);
    return result;
  }
  if (settings().enabled && !other_keywords && where && PyArray_CheckExact(where) &&
      nargs <= uf->nin + 1 && nargs >= uf->nin && !(out && nargs > uf->nin)) {
    if (nargs > uf->nin) out = args[uf->nin];
    if (out && PyTuple_CheckExact(out))
      out = PyTuple_GET_SIZE(out) == 1 ? PyTuple_GET_ITEM(out, 0) : nullptr;
    if (out == Py_None) out = nullptr;
    bool taken = false;
    if (!out || PyArray_CheckExact(out)) {
      PyObject *result = masked_on_device(uf, args, out, where, &taken);
      if (taken) return result;
    }
  }
  // Without the cost model (NPVK_COST_MODEL=0: every supported op to the
  // device), a call the device path above did not take (integers, a scalar
  // that is not safe with `one`) is left to the loops, which record each run
  // of true mask values: slow, but on the device, as that setting asks.
  if (!settings().enabled || !cost_model_on()) return numpy_call(callable, args, nargsf, kwnames);
  // NumPy's masked loop, run by NumPy's original loops (in_masked_host_call),
  // which leave the FP errors of earlier device work to this report.
  if (report_fp_errors() < 0) return nullptr;
  void *self = __builtin_thread_pointer();
  void *expected = nullptr;
  const bool marked = g_masked_host_thread.compare_exchange_strong(expected, self);
  PyObject *result = numpy_call(callable, args, nargsf, kwnames);
  if (marked) g_masked_host_thread.store(nullptr, std::memory_order_release);
  if (uf->name) count_fallback(uf->name, "where= mask");
  return result;
}

}  // namespace npvk_shim
