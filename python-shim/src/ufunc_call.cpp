// Whole N-d ufunc calls on the device: the calls NumPy would cut into
// buffered chunks, and every other N-d call, so that chains over one N-d
// shape fuse.
//
// An elementwise op on strided N-d views (a stencil's `g[:-2, 1:-1] +
// g[2:, 1:-1]`) cannot be coalesced into one inner loop; NumPy's iterator then
// copies 8192-element chunks into buffers of its own and calls the loop on
// those, so the replaced loop sees unmanaged memory and every chunk falls
// back, reading the device's pages on the host. Such calls are taken whole
// here, before NumPy's iterator runs: the output is allocated like NumPy's
// and one npvk operation covers the full N-d views.
//
// Calls whose operands the host would have to wait for (an input that
// queued work writes, an output that queued work uses) are taken too, of
// any size: running them on the device keeps a time step's small updates
// (N-body's `v += a * dt`) from syncing every step. Small host arrays in a
// call that is taken are copied into managed memory first (an upload), as
// N-body's `x[None, :] - x[:, None]` needs.
//
// Only calls whose result NumPy would type and lay out in exactly the same
// way are taken: float16, float32 or float64 arrays of one dtype (native
// order, no negative strides), Python or NumPy float scalars that keep that
// dtype (scalar_keeps_dtype), no
// keyword but out= (None, an array, or a tuple of them), and a loop of
// exactly that dtype found first by NumPy's own search order; one or two
// outputs (divmod, modf, frexp). Scalars follow NumPy's promotion rules of
// the running version (value-based, or NEP 50). Everything else goes to NumPy
// unchanged.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

constexpr int kMaxInputs = 3;
constexpr int kMaxOutputs = 2;  // divmod, modf, frexp

bool c_ordered(PyArrayObject *a) {
  npy_intp last = NPY_MAX_INTP;
  for (int d = 0; d < PyArray_NDIM(a); ++d) {
    if (PyArray_DIM(a, d) == 1) continue;
    const npy_intp s = PyArray_STRIDE(a, d);
    if (s < 0 || s > last) return false;
    last = s;
  }
  return true;
}

// The first loop NumPy's default type resolution would pick for inputs of
// type `t`, if it is exactly (t, ..., t) -> out[0], ...
bool exact_first_loop(PyUFuncObject *uf, int t, int *out) {
  const int nargs = uf->nin + uf->nout;
  for (int i = 0; i < uf->ntypes; ++i) {
    const char *types = uf->types + i * nargs;
    bool all_safe = true, exact = true;
    for (int k = 0; k < uf->nin; ++k) {
      all_safe = all_safe && PyArray_CanCastSafely(t, types[k]);
      exact = exact && types[k] == t;
    }
    if (!all_safe) continue;
    for (int k = 0; exact && k < uf->nout; ++k) out[k] = types[uf->nin + k];
    return exact;
  }
  return false;
}

// The device op for a whole call of `uf` on inputs of NumPy type `t`, and its
// output types: NumPy's first loop for them must be exactly (t, ..., t) ->
// outs (for a logical op with a Python scalar, the TT->? loop), and replaced.
// Remembered per ufunc and type until loops are replaced or restored: the
// search casts `t` to each loop's types in turn and scans every replaced
// loop, hundreds of nanoseconds for a small array's call.
struct WholeCallLoop {
  bool exists = false;
  npvk_op op = NPVK_OP_ADD;
  int out_types[kMaxOutputs] = {};
};

WholeCallLoop find_whole_call_loop(PyUFuncObject *uf, int t, bool logical) {
  WholeCallLoop found;
  if (logical) found.out_types[0] = NPY_BOOL;
  found.exists =
      (logical || exact_first_loop(uf, t, found.out_types)) &&
      device_loop_for(reinterpret_cast<PyObject *>(uf), t, found.out_types, uf->nout, &found.op);
  return found;
}

bool whole_call_loop(PyUFuncObject *uf, int t, bool logical, int *out_types, npvk_op *op) {
  static std::unordered_map<uint64_t, WholeCallLoop> known;  // used with the GIL held
  static uint64_t known_at = 0;
  if (known_at != replaced_loops_generation()) {
    known.clear();
    known_at = replaced_loops_generation();
  }
  WholeCallLoop found;
  if (t < 0 || t >= 32) {
    found = find_whole_call_loop(uf, t, logical);
  } else {
    // Type numbers of npvk's dtypes are below 32; objects lie below 2^48.
    const uint64_t key =
        (uint64_t(reinterpret_cast<uintptr_t>(uf)) << 6) | (uint64_t(t) << 1) | (logical ? 1 : 0);
    auto it = known.find(key);
    if (it == known.end()) it = known.emplace(key, find_whole_call_loop(uf, t, logical)).first;
    found = it->second;
  }
  std::copy(found.out_types, found.out_types + kMaxOutputs, out_types);
  *op = found.op;
  return found.exists;
}

// npvk's dtype of a NumPy type number; false for types npvk lacks.
bool npvk_dtype_for(int type, npvk_dtype *out) {
  switch (type) {
    case NPY_BOOL:
      *out = NPVK_BOOL;
      return true;
    case NPY_BYTE:
      *out = NPVK_INT8;
      return true;
    case NPY_SHORT:
      *out = NPVK_INT16;
      return true;
    case NPY_INT:
      *out = NPVK_INT32;
      return true;
    case NPY_LONG:
    case NPY_LONGLONG:
      *out = NPVK_INT64;
      return true;
    case NPY_UBYTE:
      *out = NPVK_UINT8;
      return true;
    case NPY_USHORT:
      *out = NPVK_UINT16;
      return true;
    case NPY_UINT:
      *out = NPVK_UINT32;
      return true;
    case NPY_ULONG:
    case NPY_ULONGLONG:
      *out = NPVK_UINT64;
      return true;
    case NPY_HALF:
      *out = NPVK_FLOAT16;
      return true;
    case NPY_FLOAT:
      *out = NPVK_FLOAT32;
      return true;
    case NPY_DOUBLE:
      *out = NPVK_FLOAT64;
      return true;
    default:
      return false;
  }
}

npvk_dtype npvk_dtype_of(int type) {
  npvk_dtype d = NPVK_FLOAT64;
  npvk_dtype_for(type, &d);
  return d;
}

// logical_and, logical_or, logical_xor.
bool is_logical_binary(const PyUFuncObject *uf) {
  return uf->nin == 2 && uf->name &&
         (std::strcmp(uf->name, "logical_and") == 0 || std::strcmp(uf->name, "logical_or") == 0 ||
          std::strcmp(uf->name, "logical_xor") == 0);
}

// The truth of a Python bool, int or float, as a logical op reads it.
bool python_truth(PyObject *v, bool *truth) {
  if (!PyBool_Check(v) && !PyLong_CheckExact(v) && !PyFloat_CheckExact(v)) return false;
  const int t = PyObject_IsTrue(v);
  if (t < 0) {
    PyErr_Clear();
    return false;
  }
  *truth = t == 1;
  return true;
}

// Whether NumPy's promotion gives a call of a float array of `type` with the
// Python or NumPy scalar `v` that dtype, with `v` converted to it exactly as
// here (its value in `*x`).
// - Value-based casting (NumPy 1.x): floats that the dtype holds (for
//   float16: magnitudes below 65000, and inf, NaN) and integers that it holds
//   exactly (for float16: those that fit int8 or uint8).
// - NEP 50 (NumPy 2): Python floats and ints are weak and take the array's
//   dtype whatever their value; taken where it holds them, finite values
//   finite. A NumPy scalar is strong: its dtype promotes with the array's, so
//   np.float64(1.5) makes a float32 call float64 (left to NumPy).
bool scalar_keeps_dtype(PyObject *v, int type, double *x) {
  using Promotion = Settings::Promotion;
  const Promotion promotion = settings().promotion;
  // Only NumPy's own type resolution gives 'weak_and_warn''s warnings.
  if (promotion == Promotion::WeakAndWarn) return false;
  const bool python = PyFloat_CheckExact(v) || PyLong_CheckExact(v);
  if (!python && (!PyArray_IsScalar(v, Floating) || PyArray_IsScalar(v, LongDouble))) return false;
  *x = PyFloat_AsDouble(v);
  if (*x == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  const double most = type == NPY_HALF    ? 65504.0
                      : type == NPY_FLOAT ? double(std::numeric_limits<float>::max())
                                          : std::numeric_limits<double>::max();
  const double exact_ints = type == NPY_HALF    ? 2048.0
                            : type == NPY_FLOAT ? 16777216.0
                                                : 9007199254740992.0;
  if (std::isfinite(*x) && std::fabs(*x) > most) return false;
  if (PyLong_CheckExact(v) && std::fabs(*x) > exact_ints) return false;
  if (promotion == Promotion::Weak) {
    if (python) return true;
    PyArray_Descr *d = PyArray_DescrFromScalar(v);
    if (!d) {
      PyErr_Clear();
      return false;
    }
    const bool promotes_to_array = PyArray_CanCastSafely(d->type_num, type);
    Py_DECREF(d);
    return promotes_to_array;
  }
  if (type != NPY_HALF) return true;
  if (PyLong_CheckExact(v)) return *x >= -128.0 && *x <= 255.0;
  return !std::isfinite(*x) || std::fabs(*x) < 65000.0;
}

// 1 or 0 in dtype `d`'s bits.
uint64_t scalar_bits_of_truth(npvk_dtype d, bool truth) {
  if (!truth) return 0;
  if (d == NPVK_FLOAT16) return 0x3C00;
  if (d == NPVK_FLOAT32) {
    const float one = 1.0f;
    uint32_t bits = 0;
    std::memcpy(&bits, &one, sizeof bits);
    return bits;
  }
  if (d == NPVK_FLOAT64) {
    const double one = 1.0;
    uint64_t bits = 0;
    std::memcpy(&bits, &one, sizeof bits);
    return bits;
  }
  return 1;
}

}  // namespace

PyObject *try_whole_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                         PyObject *kwnames, bool *taken) {
  *taken = false;
  PyUFuncObject *uf = reinterpret_cast<PyUFuncObject *>(callable);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const int nout = uf->nout;
  if (nout < 1 || nout > kMaxOutputs) return nullptr;
  // Outputs may come as the last positional arguments (NumPy's temporary
  // elision turns `t + x`, for a temporary t, into add(t, x, t)) or as the
  // only keyword, `out=` (an array, or a tuple of one per output).
  PyObject *outs[kMaxOutputs] = {};
  bool given = nargs == uf->nin + nout;
  if (given)
    for (int k = 0; k < nout; ++k) outs[k] = args[uf->nin + k];
  if (kwnames) {
    if (PyTuple_GET_SIZE(kwnames) != 1 || nargs != uf->nin ||
        PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "out") != 0)
      return nullptr;
    PyObject *out = args[nargs];
    if (PyTuple_CheckExact(out)) {
      if (PyTuple_GET_SIZE(out) != nout) return nullptr;
      for (int k = 0; k < nout; ++k) outs[k] = PyTuple_GET_ITEM(out, k);
      given = true;
    } else if (out != Py_None) {  // np.clip passes out=None
      if (nout != 1) return nullptr;
      outs[0] = out;
      given = true;
    }
  }
  if (!settings().enabled || (nargs != uf->nin && !given) || uf->nin > kMaxInputs ||
      uf->core_enabled)
    return nullptr;
  bool pending = false;
  for (int k = 0; given && k < nout; ++k) {
    if (!PyArray_CheckExact(outs[k]) ||
        !PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject *>(outs[k])))
      return nullptr;
    pending = pending || host_waits(reinterpret_cast<PyArrayObject *>(outs[k]), true);
  }
  // NEP 50 makes NumPy 2 resolve a logical op of an array and a Python scalar
  // to its bool loop, casting the array to bool through buffers, so the
  // loop sees no managed memory. The op reads only each operand's truth:
  // taken here with the scalar's truth in the array's dtype, on the array's
  // own loop (TT->?), which gives the same bools.
  // (The name comparisons last: they ran on every call.)
  const bool logical_scalar =
      settings().promotion == Settings::Promotion::Weak && uf->nin == 2 && nargs >= 2 &&
      PyArray_CheckExact(args[0]) != PyArray_CheckExact(args[1]) && is_logical_binary(uf);
  bool upload[kMaxInputs] = {};
  // Which arrays there are, their common dtype, and whether NumPy would
  // need its buffers: some array is N-d and not contiguous, or shapes differ.
  int type = -1, ndim = 0;
  // NumPy's iterator cuts calls with three inputs (clip) into buffer-sized
  // chunks even when every operand is contiguous: one op instead.
  bool needs_whole = uf->nin > 2 || logical_scalar;
  uint64_t largest = 0;
  PyArrayObject *first = nullptr;
  const Py_ssize_t nin = uf->nin;
  for (Py_ssize_t k = 0; k < nin; ++k) {
    if (!PyArray_CheckExact(args[k])) continue;
    PyArrayObject *a = reinterpret_cast<PyArrayObject *>(args[k]);
    const int t = PyArray_TYPE(a);
    uint64_t size = 0;
    npvk_dtype unused;
    const bool known = logical_scalar ? npvk_dtype_for(t, &unused)
                                      : t == NPY_HALF || t == NPY_FLOAT || t == NPY_DOUBLE;
    if (!known || (type >= 0 && t != type) || !PyArray_ISNBO(PyArray_DESCR(a)->byteorder) ||
        !PyArray_ISALIGNED(a) || !c_ordered(a))
      return nullptr;
    if (!managed(a, &size)) {
      if (PyArray_NBYTES(a) > kMaxUpload) return nullptr;
      upload[k] = true;
    } else {
      pending = pending || host_waits(a, false);
    }
    type = t;
    largest = std::max(largest, size);
    // Any N-d call, contiguous or not: NumPy would buffer the strided ones,
    // and recording every N-d op with its own shape (rather than a 1-d view
    // of a contiguous one) lets a chain such as a stencil's fuse.
    if (PyArray_NDIM(a) > 1) needs_whole = true;
    if (first && !PyArray_SAMESHAPE(first, a)) needs_whole = true;
    // A small view of a large managed array (a grid's boundary column): its
    // result would be too small for managed memory, so the loop would fall
    // back and read the grid on the host. Taken whole, with a managed result.
    if (uint64_t(PyArray_NBYTES(a)) < settings().min_bytes && PyArray_NDIM(a) > 0)
      needs_whole = true;
    if (!first || PyArray_NDIM(a) > ndim) first = a;
    ndim = std::max(ndim, PyArray_NDIM(a));
  }
  if (type < 0 || ndim < 1) return nullptr;
  // The broadcast shape, as NumPy aligns shapes at the last dimension.
  npy_intp shape[NPY_MAXDIMS];
  for (int d = 0; d < ndim; ++d) shape[d] = 1;
  for (Py_ssize_t k = 0; k < nin; ++k) {
    if (!PyArray_CheckExact(args[k])) continue;
    PyArrayObject *a = reinterpret_cast<PyArrayObject *>(args[k]);
    for (int j = 0; j < PyArray_NDIM(a); ++j) {
      const int d = ndim - PyArray_NDIM(a) + j;
      const npy_intp e = PyArray_DIM(a, j);
      if (e == shape[d] || e == 1) continue;
      if (shape[d] != 1) return nullptr;  // NumPy raises its own error
      shape[d] = e;
    }
  }
  npy_intp elements = 1;
  for (int d = 0; d < ndim; ++d) elements *= shape[d];
  // Most calls are small and touch nothing managed: decided before the
  // scalars and the loop are looked at (no result is wider than 8 bytes).
  if (!pending && std::max<uint64_t>(largest, uint64_t(elements) * 8) < settings().min_bytes)
    return nullptr;
  // Scalars that leave the array's dtype as NumPy types the call.
  double scalar[kMaxInputs] = {};
  for (Py_ssize_t k = 0; k < nin; ++k) {
    if (PyArray_CheckExact(args[k])) continue;
    bool truth = false;
    if (logical_scalar ? !python_truth(args[k], &truth)
                       : !scalar_keeps_dtype(args[k], type, &scalar[k]))
      return nullptr;
    if (logical_scalar) scalar[k] = truth ? 1.0 : 0.0;
  }
  // NumPy 2.1+'s own loop for scalar clip bounds (Settings).
  if (nin == 3 && (type == NPY_FLOAT || type == NPY_DOUBLE) && !PyArray_CheckExact(args[1]) &&
      !PyArray_CheckExact(args[2]) && std::strcmp(uf->name, "clip") == 0 &&
      clip_needs_numpy(scalar[1], scalar[2]))
    return nullptr;
  int out_types[kMaxOutputs] = {};
  npvk_op op = NPVK_OP_ADD;
  // A logical op's TT->? loops all give the same bools: the exact one is taken
  // even where NumPy's search order would find another first (int64 arrays
  // typed 'q' meet the 'l' loop first).
  if (!whole_call_loop(uf, type, logical_scalar, out_types, &op)) return nullptr;
  if (op == NPVK_OP_NEXTAFTER && type == NPY_HALF && settings().half_nextafter_returns_y)
    return nullptr;  // NumPy's loop, counted there (Settings)

  // Worth the device: a large managed operand or result, or a host wait saved.
  const npy_intp result_bytes = elements * (out_types[0] == NPY_BOOL    ? 1
                                            : out_types[0] == NPY_HALF  ? 2
                                            : out_types[0] == NPY_FLOAT ? 4
                                                                        : 8);
  const bool large = std::max<uint64_t>(largest, uint64_t(result_bytes)) >= settings().min_bytes;
  if (!pending && !(needs_whole && large)) return nullptr;
  if (strict_errors()) return nullptr;
  // Left to NumPy, whose loop calls are then counted (each takes one call
  // off the bypass too).
  if (elementwise_cost_reason()) return nullptr;
  for (int k = 0; given && k < nout; ++k) {
    // NumPy's rules for a given output: exactly the broadcast shape here
    // (anything else: NumPy decides), the loop's dtype, managed memory.
    PyArrayObject *o = reinterpret_cast<PyArrayObject *>(outs[k]);
    uint64_t size = 0;
    if (PyArray_NDIM(o) != ndim || PyArray_TYPE(o) != out_types[k] || !PyArray_ISALIGNED(o) ||
        !managed(o, &size))
      return nullptr;
    for (int d = 0; d < ndim; ++d)
      if (PyArray_DIM(o, d) != shape[d]) return nullptr;
  }
  bool ok = true;
  for (int k = 0; k < nout; ++k) {
    const int t = out_types[k];
    ok =
        ok && (t == NPY_BOOL || t == NPY_HALF || t == NPY_FLOAT || t == NPY_DOUBLE || t == NPY_INT);
  }
  if (!ok) return nullptr;
  report_fp_errors_from_loop();
  PyObject *results[kMaxOutputs] = {};
  for (int k = 0; k < nout; ++k) {
    if (given) {
      Py_INCREF(outs[k]);
      results[k] = outs[k];
      continue;
    }
    const bool saved = force_managed(true);
    results[k] = PyArray_SimpleNew(ndim, shape, out_types[k]);
    force_managed(saved);
    if (!results[k]) {  // *taken is false: NumPy tries (and reports) itself
      for (PyObject *r : results) Py_XDECREF(r);
      return nullptr;
    }
  }

  npvk_dtype dt = NPVK_FLOAT64;
  npvk_dtype_for(type, &dt);
  npvk_view views[kMaxInputs + kMaxOutputs] = {};
  PyObject *uploaded[kMaxInputs] = {};
  for (Py_ssize_t k = 0; ok && k < nin; ++k) {
    if (upload[k]) {
      const bool saved = force_managed(true);
      uploaded[k] = PyArray_NewCopy(reinterpret_cast<PyArrayObject *>(args[k]), NPY_CORDER);
      force_managed(saved);
      ok = uploaded[k] && managed_array_view(uploaded[k], dt, &views[k]) == NPVK_SUCCESS;
      if (!uploaded[k]) PyErr_Clear();
    } else if (PyArray_CheckExact(args[k])) {
      ok = managed_array_view(args[k], dt, &views[k]) == NPVK_SUCCESS;
    } else {
      uint64_t bits = 0;
      if (logical_scalar) {
        bits = scalar_bits_of_truth(dt, scalar[k] != 0.0);
      } else if (dt == NPVK_FLOAT16) {
        bits = double_to_half_bits(scalar[k]);
      } else if (dt == NPVK_FLOAT32) {
        const float f = float(scalar[k]);
        std::memcpy(&bits, &f, sizeof f);
      } else {
        std::memcpy(&bits, &scalar[k], sizeof(double));
      }
      ok = ok && npvk_view_create_scalar(context(), dt, &bits, &views[k]) == NPVK_SUCCESS;
    }
  }
  for (int k = 0; ok && k < nout; ++k)
    ok = managed_array_view(results[k], npvk_dtype_of(out_types[k]), &views[nin + k]) ==
         NPVK_SUCCESS;
  if (ok) {
    const npvk_status st =
        npvk_apply(context(), op, uint32_t(nin), views, uint32_t(nout), &views[nin]);
    ok = st == NPVK_SUCCESS;
    // Out of device memory or a lost device: counted here; NumPy's path
    // then runs the call (its loops fall back, or retry, on their own).
    if (st == NPVK_ERR_OUT_OF_DEVICE_MEMORY || st == NPVK_ERR_DEVICE_LOST)
      count_fallback(uf->name, status_reason(st));
  }
  for (npvk_view v : views)
    if (v.id) npvk_view_release(v);
  for (PyObject *copy : uploaded) Py_XDECREF(copy);
  if (!ok) {
    for (PyObject *r : results) Py_XDECREF(r);
    return nullptr;
  }
  count_device_op();
  if (observing().any.load(std::memory_order_relaxed))
    note_loop(uf->name, nullptr,
              int64_t(PyArray_SIZE(reinterpret_cast<PyArrayObject *>(results[0]))));
  *taken = true;
  if (report_at_the_op() < 0) {
    for (PyObject *r : results) Py_XDECREF(r);
    return nullptr;  // NumPy's exception for the op's FP errors
  }
  if (nout == 1) return results[0];
  PyObject *tuple = PyTuple_New(nout);
  if (!tuple) {
    for (PyObject *r : results) Py_XDECREF(r);
    return nullptr;  // the exception is set; the work is recorded, NumPy's path is not taken
  }
  for (int k = 0; k < nout; ++k) PyTuple_SET_ITEM(tuple, k, results[k]);
  return tuple;
}

}  // namespace npvk_shim
