// When the device fails a flush, its recorded ops run on the host through
// NumPy's own loops (the originals the shim replaced), so the program's
// results are NumPy's; the failure is reported once as a RuntimeWarning and
// counted in npvk.stats(). See docs/architecture.md, "Failure handling".
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "element_casts.hpp"
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

// Failures already warned about; the counters only grow.
std::atomic<uint64_t> g_warned{0};
// Set where the shim sees a failure happen, so that ufunc loops ask npvk
// (under its lock) only then.
std::atomic<bool> g_maybe_failed{false};
// npvk_failure_epoch() at the last look at the counts.
std::atomic<uint64_t> g_epoch_seen{0};

uint64_t failure_count(const npvk_failure_stats &f) {
  return f.flush_failures + f.alloc_failures;
}

bool get_failures(npvk_failure_stats *f) {
  *f = npvk_failure_stats{};
  f->struct_size = sizeof *f;
  return bound_context().id && npvk_context_get_failure_stats(bound_context(), f) == NPVK_SUCCESS;
}

// NumPy's element casts between npvk's dtypes, looked up while the GIL is
// held: copies, astype and slice assignment are recorded as casts. NumPy 2
// hands out none; element_cast computes the same.
PyArray_VectorUnaryFunc *g_casts[NPVK_DTYPE_COUNT][NPVK_DTYPE_COUNT] = {};

// Bytes per element of each npvk_dtype, in its order.
constexpr int64_t kItemsize[NPVK_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
// The most operands a replayed loop has (npvk's kMaxOperands).
constexpr uint32_t kMaxLoopOperands = 8;

int numpy_type(int dtype) {
  static const int types[NPVK_DTYPE_COUNT] = {NPY_BOOL,  NPY_BYTE,  NPY_SHORT,  NPY_INT,
                                              NPY_LONG,  NPY_UBYTE, NPY_USHORT, NPY_UINT,
                                              NPY_ULONG, NPY_HALF,  NPY_FLOAT,  NPY_DOUBLE};
  return types[dtype];
}

// NumPy's legacy loops from bool branch on every element: BOOL_to_DOUBLE
// took 5 ns per element of random bools (a mispredicted jump each), 25 ms
// for 5e6 against 6.6 for NumPy's own astype. element_cast's loop is
// branch-free and gives the same 0 and 1 (float16 aside: it would convert a
// bool byte other than 1 by value).
bool prefer_element_cast(int from, int to) {
  return from == NPVK_BOOL && to != NPVK_BOOL && to != NPVK_FLOAT16;
}

void prepare_casts() {
  for (int from = 0; from < NPVK_DTYPE_COUNT; ++from) {
    PyArray_Descr *descr = PyArray_DescrFromType(numpy_type(from));
    for (int to = 0; descr && to < NPVK_DTYPE_COUNT; ++to)
      if (prefer_element_cast(from, to) ||
          !(g_casts[from][to] = numpy_cast_function(descr, numpy_type(to))))
        g_casts[from][to] = element_cast(npvk_dtype(from), npvk_dtype(to));
    Py_XDECREF(descr);
  }
  PyErr_Clear();
}

template <typename T>
void copy_typed(const char *from, int64_t from_step, char *to, int64_t to_step, int64_t count) {
  constexpr int64_t size = int64_t(sizeof(T));
  if (to_step == size && from_step == size) {
    std::memcpy(to, from, size_t(count * size));
    return;
  }
  if (to_step == size && from_step == 0) {  // a fill: memset where the bits are zero
    T value;
    std::memcpy(&value, from, sizeof value);
    if (value == T(0)) {
      std::memset(to, 0, size_t(count * size));
    } else {
      for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * size, &value, sizeof value);
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i, from += from_step, to += to_step) {
    T value;
    std::memcpy(&value, from, sizeof value);
    std::memcpy(to, &value, sizeof value);
  }
}

// `count` elements of `size` bytes (1, 2, 4 or 8) from one strided run to another.
void copy_elements(int64_t size, const char *from, int64_t from_step, char *to, int64_t to_step,
                   int64_t count) {
  switch (size) {
    case 1:
      return copy_typed<uint8_t>(from, from_step, to, to_step, count);
    case 2:
      return copy_typed<uint16_t>(from, from_step, to, to_step, count);
    case 4:
      return copy_typed<uint32_t>(from, from_step, to, to_step, count);
    default:
      return copy_typed<uint64_t>(from, from_step, to, to_step, count);
  }
}

int host_cast(const npvk_dtype *dtypes, char **args, int64_t count, const int64_t *steps,
              uint32_t *fp_flags) {
  PyArray_VectorUnaryFunc *cast = g_casts[dtypes[0]][dtypes[1]];
  if (!cast) return -1;
  if (!args) return 0;
  // NumPy's cast functions take contiguous runs: one call for a contiguous
  // row; a strided one goes through contiguous blocks, gathered and
  // scattered (one call per element cost 5x NumPy's own strided cast).
  const int64_t in_size = kItemsize[dtypes[0]], out_size = kItemsize[dtypes[1]];
  if (dtypes[0] == dtypes[1]) {
    // A copy, or a fill from a stride-0 scalar (np.zeros_like's copyto(res,
    // 0)): the bits in one pass, as NumPy's own same-type transfer does; the
    // blocked cast below took 8x NumPy's fill.
    copy_elements(in_size, args[0], steps[0], args[1], steps[1], count);
  } else if (steps[0] == 0) {
    // A scalar cast once, then filled in.
    alignas(8) char value[8];
    cast(args[0], value, 1, nullptr, nullptr);
    copy_elements(out_size, value, 0, args[1], steps[1], count);
  } else if (steps[0] == in_size && steps[1] == out_size) {
    cast(args[0], args[1], npy_intp(count), nullptr, nullptr);
  } else {
    constexpr int64_t kBlock = 512;
    alignas(8) char in_block[kBlock * 8], out_block[kBlock * 8];
    for (int64_t done = 0; done < count; done += kBlock) {
      const int64_t n = std::min(kBlock, count - done);
      copy_elements(in_size, args[0] + done * steps[0], steps[0], in_block, in_size, n);
      cast(in_block, out_block, npy_intp(n), nullptr, nullptr);
      copy_elements(out_size, out_block, out_size, args[1] + done * steps[1], steps[1], n);
    }
  }
  *fp_flags = 0;
  return 0;
}

// Whole elements of type T (a copy of the bits, as the device does it):
// args[3][i] = args[0][i] ? args[1][i] : args[2][i]. Typed, not a memcpy of
// the item size per element, which cost 5x NumPy's own np.where.
template <typename T>
void select_elements(char **args, int64_t count, const int64_t *steps) {
  const char *cond = args[0], *x = args[1], *y = args[2];
  char *out = args[3];
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, *reinterpret_cast<const uint8_t *>(cond) ? x : y, sizeof value);
    std::memcpy(out, &value, sizeof value);
    cond += steps[0];
    x += steps[1];
    y += steps[2];
    out += steps[3];
  }
}

// np.where is no ufunc, so NumPy has no loop for it: a select of whole
// elements, as the device does it.
int host_where(const npvk_dtype *dtypes, char **args, int64_t count, const int64_t *steps,
               uint32_t *fp_flags) {
  if (dtypes[0] != NPVK_BOOL || dtypes[1] != dtypes[3] || dtypes[2] != dtypes[3]) return -1;
  if (!args) return 0;
  switch (kItemsize[dtypes[3]]) {
    case 1:
      select_elements<uint8_t>(args, count, steps);
      break;
    case 2:
      select_elements<uint16_t>(args, count, steps);
      break;
    case 4:
      select_elements<uint32_t>(args, count, steps);
      break;
    default:
      select_elements<uint64_t>(args, count, steps);
      break;
  }
  *fp_flags = 0;
  return 0;
}

// Called by npvk inside a failed flush, under its lock, perhaps without the
// GIL: NumPy's numeric inner loops need neither.
int host_loop(void *, npvk_op op, uint32_t nin, uint32_t nout, const npvk_dtype *dtypes,
              char **args, int64_t count, const int64_t *steps, uint32_t *fp_flags) {
  if (op == NPVK_OP_CAST && nin == 1 && nout == 1)
    return host_cast(dtypes, args, count, steps, fp_flags);
  if (op == NPVK_OP_WHERE && nin == 3 && nout == 1)
    return host_where(dtypes, args, count, steps, fp_flags);
  // npvk calls this once per row of an op's iteration space (100,000 times
  // for a (1e5, 10) array less a row), and a fused kernel's replay calls its
  // steps' loops in turn for each block: the loops found last are kept, since
  // the search over every replaced loop cost more than NumPy's loop itself.
  struct Found {
    npvk_op op = NPVK_OP_COUNT;
    uint32_t operands = 0;
    npvk_dtype dtypes[kMaxLoopOperands] = {};
    PyUFuncGenericFunction fn = nullptr;
    void *data = nullptr;
  };
  constexpr size_t kKept = 16;
  thread_local Found kept[kKept];
  thread_local size_t next = 0;  // the entry to replace (round robin)
  const uint32_t operands = nin + nout;
  if (operands > kMaxLoopOperands) return -1;
  const Found *found = nullptr;
  for (const Found &f : kept)
    if (f.op == op && f.operands == operands && std::equal(dtypes, dtypes + operands, f.dtypes)) {
      found = &f;
      break;
    }
  if (!found) {
    Found f;
    if (!original_loop(op, dtypes, int(operands), &f.fn, &f.data)) return -1;
    f.op = op;
    f.operands = operands;
    std::copy(dtypes, dtypes + operands, f.dtypes);
    kept[next] = f;
    found = &kept[next];
    next = (next + 1) % kKept;
  }
  PyUFuncGenericFunction fn = found->fn;
  void *data = found->data;
  if (!args) return 0;
  if (!g_maybe_failed.load(std::memory_order_relaxed)) g_maybe_failed = true;
  npy_intp n = npy_intp(count);
  npy_intp st[kMaxLoopOperands];
  for (uint32_t k = 0; k < operands; ++k) st[k] = npy_intp(steps[k]);
  fn(args, &n, st, data);
  *fp_flags = 0;  // npvk reads the FP status the loop left
  return 0;
}

}  // namespace

void install_host_loop() {
  prepare_casts();
  npvk_context_set_host_loop(context(), host_loop, nullptr);
  apply_cost_model();  // it needs the host loop
}

void note_possible_failure() {
  g_maybe_failed = true;
}
bool failures_unreported() {
  return g_maybe_failed.load(std::memory_order_relaxed);
}

int warn_failures() {
  // Asked at every buffer export and error-state change (a Cython function
  // takes a buffer per array argument): npvk's counts, under its lock, only
  // after a failure was counted or seen since the last look.
  const uint64_t epoch = npvk_failure_epoch();
  if (!g_maybe_failed.exchange(false) && epoch == g_epoch_seen.load(std::memory_order_relaxed))
    return 0;
  g_epoch_seen = epoch;
  npvk_failure_stats f;
  if (!get_failures(&f) || failure_count(f) <= g_warned.load()) return 0;
  g_warned = failure_count(f);
  const char *status = npvk_status_string(npvk_status(f.last_status));
  if (f.ops_lost == 0)
    return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                            "npvk: device work failed (%s: %s); the work ran with NumPy's own "
                            "loops instead (%llu operations so far)",
                            status, f.last_message, (unsigned long long)f.ops_replayed);
  return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                          "npvk: device work failed (%s: %s) and %llu operations could not be "
                          "recomputed on the host",
                          status, f.last_message, (unsigned long long)f.ops_lost);
}

void put_failure_stats(PyObject *dict) {
  npvk_failure_stats f;
  if (!get_failures(&f)) return;
  auto put = [&](const char *key, uint64_t value) {
    PyObject *v = PyLong_FromUnsignedLongLong(value);
    if (v) {
      PyDict_SetItemString(dict, key, v);
      Py_DECREF(v);
    }
  };
  put("flush_failures", f.flush_failures);
  put("ops_replayed_on_host", f.ops_replayed);
  put("ops_lost", f.ops_lost);
  put("alloc_failures", f.alloc_failures);
  put("faults_injected", f.faults_injected);
}

}  // namespace npvk_shim
