// Device loops in place of NumPy's ufunc inner loops (the mkl_umath approach:
// PyUFunc_ReplaceLoopBySignature, originals kept and restored on disable).
//
// NumPy calls a loop with pointers, a count and byte strides. When every
// operand lies in managed memory (or is a stride-0 scalar input) and the work
// is large enough, the loop records an npvk operation and returns at once;
// otherwise it calls NumPy's original loop, which may fault on device-owned
// pages and so makes them current first.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

constexpr int kMaxSlots = 1024;
constexpr int kMaxOperands = 4;

struct Slot {
  PyObject *ufunc = nullptr;  // strong reference while replaced
  const char *name = "";
  npvk_op op = NPVK_OP_ADD;
  int nin = 0, nout = 0;
  std::array<int, kMaxOperands> type_nums{};
  std::array<npvk_dtype, kMaxOperands> dtypes{};
  std::array<int64_t, kMaxOperands> itemsizes{};
  PyUFuncGenericFunction original = nullptr;
  // What NumPy passes the loop (a C function for generic loops), from the
  // ufunc's table at replacement and again at each first call: the host
  // replay of failed device work needs it.
  std::atomic<void *> data{nullptr};
  std::atomic<bool> called{false};
  // Why every call falls back, for a loop npvk has but this device cannot run
  // (no shaderFloat64): replaced all the same, so that the calls are counted.
  const char *unsupported = nullptr;
  // The counter of the last reason its calls fell back for.
  std::atomic<LoopCounter *> fallbacks{nullptr};
};

std::array<Slot, kMaxSlots> g_slots;
int g_used = 0;
uint64_t g_generation = 0;

// A ufunc called with extobj= handles its FP errors with that error object,
// which only NumPy's own loop (checked right after it runs) can honour; a
// deferred device report would use the thread's error state instead. NumPy
// passes the loop nothing of the call, so the replaced ufuncs' vectorcall
// entry marks the thread while such a call runs.
thread_local int t_extobj_calls = 0;
// Calls with extobj= running on any thread: the thread-local count (a call
// into the dynamic loader from an extension module) is read only while some are.
std::atomic<int> g_extobj_calls{0};

bool in_extobj_call() {
  return g_extobj_calls.load(std::memory_order_relaxed) != 0 && t_extobj_calls > 0;
}
vectorcallfunc g_numpy_vectorcall = nullptr;  // NumPy's, the same for every ufunc

PyObject *numpy_or_whole_call(PyObject *callable, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames) {
  {
    bool taken = false;
    PyObject *result = try_whole_call(callable, args, nargsf, kwnames, &taken);
    if (taken) return result;
  }
  bool extobj = false, where = false;
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); ++k) {
    PyObject *name = PyTuple_GET_ITEM(kwnames, k);
    extobj = extobj || PyUnicode_CompareWithASCIIString(name, "extobj") == 0;
    where = where || PyUnicode_CompareWithASCIIString(name, "where") == 0;
  }
  if (where && !extobj) return masked_call(callable, args, nargsf, kwnames, g_numpy_vectorcall);
  if (!extobj) return g_numpy_vectorcall(callable, args, nargsf, kwnames);
  ++t_extobj_calls;
  g_extobj_calls.fetch_add(1, std::memory_order_relaxed);
  PyObject *result = g_numpy_vectorcall(callable, args, nargsf, kwnames);
  g_extobj_calls.fetch_sub(1, std::memory_order_relaxed);
  --t_extobj_calls;
  return result;
}

// Every call of a replaced ufunc: what it records is noted with its Python
// line when it ends (warning_sites.cpp).
PyObject *ufunc_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                           PyObject *kwnames) {
  begin_ufunc_call();
  PyObject *result = numpy_or_whole_call(callable, args, nargsf, kwnames);
  if (end_ufunc_call() < 0) Py_CLEAR(result);
  return result;
}

void hook_vectorcall(PyUFuncObject *uf) {
  if (!g_numpy_vectorcall) g_numpy_vectorcall = uf->vectorcall;
  if (uf->vectorcall == g_numpy_vectorcall) uf->vectorcall = ufunc_vectorcall;
}

void unhook_vectorcall(PyUFuncObject *uf) {
  if (uf->vectorcall == ufunc_vectorcall) uf->vectorcall = g_numpy_vectorcall;
}

template <typename T>
bool any_negative(const char *p, npy_intp n, npy_intp step) {
  if (step == 0) n = 1;
  for (npy_intp i = 0; i < n; ++i, p += step) {
    T v;
    std::memcpy(&v, p, sizeof v);
    if (v < 0) return true;
  }
  return false;
}

// Float clip with both bounds scalar, one of them zero, under NumPy 2.1+
// (Settings::clip_scalar_bounds_keep_zeros).
bool scalar_zero_clip_bound(const Slot &s, char **args, const npy_intp *steps) {
  if (s.op != NPVK_OP_CLIP || steps[1] != 0 || steps[2] != 0) return false;
  double bound[2] = {};
  for (int k = 1; k < 3; ++k) {
    if (s.dtypes[0] == NPVK_FLOAT64) {
      std::memcpy(&bound[k - 1], args[k], sizeof(double));
    } else if (s.dtypes[0] == NPVK_FLOAT32) {
      float f = 0;
      std::memcpy(&f, args[k], sizeof f);
      bound[k - 1] = f;
    } else {
      return false;  // float16's loop is the same for either kind of bound
    }
  }
  return clip_needs_numpy(bound[0], bound[1]);
}

// np.power(x, 0.5) with a scalar exponent, in a NumPy whose loop computes it
// as sqrt (Settings::power_half_is_sqrt_f4/f8).
bool numpy_power_half_is_sqrt(const Slot &s, char **args, const npy_intp *steps) {
  if (s.op != NPVK_OP_POWER || steps[1] != 0) return false;
  if (s.dtypes[1] == NPVK_FLOAT64 && settings().power_half_is_sqrt_f8) {
    double y = 0;
    std::memcpy(&y, args[1], sizeof y);
    return y == 0.5;
  }
  if (s.dtypes[1] == NPVK_FLOAT32 && settings().power_half_is_sqrt_f4) {
    float y = 0;
    std::memcpy(&y, args[1], sizeof y);
    return y == 0.5f;
  }
  return false;
}

// NumPy's signed integer power loop raises ValueError for a negative
// exponent, which only the original loop can do. Reading the exponents may
// fault on device-owned memory; that is handled.
bool negative_int_exponent(const Slot &s, char **args, npy_intp n, const npy_intp *steps) {
  if (s.op != NPVK_OP_POWER) return false;
  switch (s.dtypes[1]) {
    case NPVK_INT8:
      return any_negative<int8_t>(args[1], n, steps[1]);
    case NPVK_INT16:
      return any_negative<int16_t>(args[1], n, steps[1]);
    case NPVK_INT32:
      return any_negative<int32_t>(args[1], n, steps[1]);
    case NPVK_INT64:
      return any_negative<int64_t>(args[1], n, steps[1]);
    default:
      return false;
  }
}

const char *failure_reason(npvk_status st, const char *otherwise) {
  if (st == NPVK_ERR_DEVICE_LOST || st == NPVK_ERR_OUT_OF_DEVICE_MEMORY) note_possible_failure();
  if (st == NPVK_ERR_DEVICE_LOST) return "device lost";
  if (st == NPVK_ERR_OUT_OF_DEVICE_MEMORY) return "out of device memory";
  return otherwise;
}

// How an input's n elements (from `in`, step si, size ii) meet an output's
// (from `out`, step so, size io) in a loop that runs in index order, as
// NumPy's loops do.
enum class Meeting { Apart, ReadsFirst, Recurrence };
Meeting meeting(const char *in, npy_intp si, int64_t ii, const char *out, npy_intp so, int64_t io,
                npy_intp n) {
  const auto lo = [n](const char *p, npy_intp step) {
    return p + std::min<npy_intp>(0, step * (n - 1));
  };
  const auto hi = [n](const char *p, npy_intp step, int64_t size) {
    return p + std::max<npy_intp>(0, step * (n - 1)) + size;
  };
  if (hi(in, si, ii) <= lo(out, so) || hi(out, so, io) <= lo(in, si)) return Meeting::Apart;
  // Element i is read before any write reaches it when the reads run ahead
  // of the writes, in the loop's direction, at least as fast: every write j
  // < i then lies a whole element behind read i. NumPy's iterator leaves
  // such overlaps to its loops (sin(x[::2], out=x[:50])); the rest it copies
  // first, except where NumPy means a recurrence (accumulate's loop reads
  // the output one element back).
  const int64_t size = std::max(ii, io);
  const bool ahead =
      so > 0 ? in >= out && si >= so && so >= size : so < 0 && in <= out && si <= so && -so >= size;
  return ahead ? Meeting::ReadsFirst : Meeting::Recurrence;
}

// The loop's op on copies of the inputs that share memory with an output
// without being its elements exactly (npvk_apply refused them), where NumPy's
// loop, in index order, would read each such element before writing over it:
// then copying first gives its result. Recorded on the device rather than run
// by NumPy's loop, because the same call without the overlap runs on the
// device and the two must give the same bits (NumPy's test_sincos_overlaps).
// A recurrence (an input behind the output) stays NumPy's: the caller counts
// "overlap". Each copy is a managed block freed at once (unmapped after the
// queued work that reads it has run).
npvk_status apply_on_copies(const Slot &s, char **args, npy_intp n, const npy_intp *steps,
                            npvk_view *views) {
  std::array<npvk_view, kMaxOperands> inputs{};
  std::array<void *, kMaxOperands> copies{};
  npvk_status st = NPVK_SUCCESS;
  bool copied = false;
  for (int k = 0; k < s.nin && st == NPVK_SUCCESS; ++k) {
    inputs[size_t(k)] = views[k];
    if (steps[k] == 0) continue;  // a scalar: a push constant already
    bool meets = false;
    for (int o = s.nin; o < s.nin + s.nout && st == NPVK_SUCCESS; ++o) {
      const Meeting m = meeting(args[k], steps[k], s.itemsizes[size_t(k)], args[o], steps[o],
                                s.itemsizes[size_t(o)], n);
      if (m == Meeting::Recurrence) st = NPVK_ERR_INVALID_ARGUMENT;
      meets = meets || m == Meeting::ReadsFirst;
    }
    if (!meets || st != NPVK_SUCCESS) continue;
    const int64_t bytes = int64_t(n) * s.itemsizes[size_t(k)];
    st = npvk_managed_alloc(uint64_t(bytes), 0, &copies[size_t(k)]);
    npvk_view copy{0};
    int64_t shape = n;
    if (st == NPVK_SUCCESS)
      st = npvk_managed_view(copies[size_t(k)], s.dtypes[size_t(k)], 1, &shape, nullptr, &copy);
    if (st == NPVK_SUCCESS) st = npvk_apply(context(), NPVK_OP_CAST, 1, &views[k], 1, &copy);
    if (copy.id) inputs[size_t(k)] = copy;
    copied = true;
  }
  if (st == NPVK_SUCCESS)
    st = copied ? npvk_apply(context(), s.op, uint32_t(s.nin), inputs.data(), uint32_t(s.nout),
                             views + s.nin)
                : NPVK_ERR_INVALID_ARGUMENT;
  for (int k = 0; k < s.nin; ++k) {
    if (inputs[size_t(k)].id != views[k].id) npvk_view_release(inputs[size_t(k)]);
    if (copies[size_t(k)]) npvk_managed_free(copies[size_t(k)]);
  }
  return st;
}

// Why a loop call is not recorded by its operands' memory: "small" or
// "unmanaged operand" as npvk_managed_apply decides, asked (a lookup per
// operand) only where another reason declines the call first, so that each
// call is counted under the same reason whichever check runs first.
const char *memory_reason(const Slot &s, char **args, npy_intp n, const npy_intp *steps) {
  uint64_t largest = 0;
  for (int k = 0; k < s.nin + s.nout; ++k) {
    if (k < s.nin && steps[k] == 0) continue;
    int found = 0;
    void *base = nullptr;
    uint64_t size = 0;
    if (npvk_managed_lookup(args[k], &found, &base, &size) != NPVK_SUCCESS || !found)
      return int64_t(n) * s.itemsizes[k] < int64_t(settings().min_bytes) ? "small"
                                                                         : "unmanaged operand";
    largest = std::max(largest, size);
  }
  return largest < settings().min_bytes ? "small" : nullptr;
}

// What declines a call whatever its memory: the error state, the cost
// model, and what only NumPy's own loop does.
const char *call_reason(const Slot &s, char **args, npy_intp n, const npy_intp *steps) {
  if (strict_errors()) return "errstate";
  if (const char *reason = elementwise_cost_reason()) return reason;
  if (negative_int_exponent(s, args, n, steps)) return "negative exponent";
  if (scalar_zero_clip_bound(s, args, steps)) return "zero clip bound";
  if (numpy_power_half_is_sqrt(s, args, steps)) return "power 0.5 is sqrt in this NumPy";
  if (s.op == NPVK_OP_NEXTAFTER && s.dtypes[0] == NPVK_FLOAT16 &&
      settings().half_nextafter_returns_y)
    return "float16 nextafter of NumPy 2.5";
  for (int k = 0; k < s.nin + s.nout; ++k)
    if (!(k < s.nin && steps[k] == 0) &&
        (steps[k] % s.itemsizes[k] != 0 ||
         reinterpret_cast<uintptr_t>(args[k]) % uintptr_t(s.itemsizes[k]) != 0))
      return "unaligned";
  return nullptr;
}

// The views npvk_apply takes, for the overlap path (apply_on_copies).
const char *record_with_views(const Slot &s, char **args, npy_intp n, const npy_intp *steps) {
  const int count = s.nin + s.nout;
  std::array<npvk_view, kMaxOperands> views{};
  const char *reason = nullptr;
  int made = 0;
  for (int k = 0; k < count && !reason; ++k) {
    npvk_status st;
    if (k < s.nin && steps[k] == 0) {
      uint64_t value = 0;
      std::memcpy(&value, args[k], size_t(s.itemsizes[k]));
      st = npvk_view_create_scalar(context(), s.dtypes[k], &value, &views[k]);
      if (st != NPVK_SUCCESS) reason = "scalar";
    } else {
      int64_t shape = n, stride = steps[k];
      st = npvk_managed_view(args[k], s.dtypes[k], 1, &shape, &stride, &views[k]);
      if (st != NPVK_SUCCESS) reason = failure_reason(st, "view");
    }
    if (st == NPVK_SUCCESS) made = k + 1;
  }
  if (!reason) {
    npvk_status st = apply_on_copies(s, args, n, steps, views.data());
    if (st == NPVK_ERR_INVALID_ARGUMENT)
      reason = "overlap";
    else if (st != NPVK_SUCCESS)
      reason = failure_reason(st, "device error");
  }
  for (int k = 0; k < made; ++k) npvk_view_release(views[k]);
  return reason;
}

// Records the loop on the device; returns the reason it cannot, or null.
// One crossing into the runtime where it records: npvk_managed_apply finds
// the operands' allocations and makes their views itself.
const char *try_device(const Slot &s, char **args, npy_intp n, const npy_intp *steps) {
  const int count = s.nin + s.nout;
  if (!settings().enabled) return "disabled";
  if (in_extobj_call()) return "extobj";
  if (s.unsupported) return s.unsupported;
  // An accumulating output (stride 0) is NumPy's reduction loop, called once
  // per output element along short axes: decided before any lookup.
  for (int k = s.nin; k < count; ++k)
    if (steps[k] == 0) return "reduction";
  // While the cost model bypasses recording, before the lookups: NumPy's
  // buffered loops over its own small buffers would be left to it anyway.
  if (const char *reason = cost_model_bypassing()) return reason;
  if (const char *reason = call_reason(s, args, n, steps)) {
    const char *memory = memory_reason(s, args, n, steps);
    return memory ? memory : reason;
  }
  // The size that decides is the largest operand's whole array (its managed
  // allocation), not this call's: NumPy hands N-d work over in chunks (rows,
  // or 8192-element buffers), and a comparison's bool output is a fraction of
  // its inputs. Memory below the threshold is not managed by design. NumPy
  // passes scalars as stride-0 inputs; they travel as push constants.
  npvk_managed_operand operands[kMaxOperands] = {};
  int64_t shape = n;
  for (int k = 0; k < count; ++k) {
    operands[k].data = args[k];
    operands[k].dtype = s.dtypes[k];
    operands[k].scalar = k < s.nin && steps[k] == 0;
    operands[k].ndim = 1;
    operands[k].shape = &shape;
    operands[k].strides = &steps[k];
  }
  const char *declined = nullptr;
  const npvk_status st = npvk_managed_apply(s.op, uint32_t(s.nin), uint32_t(s.nout), operands,
                                            settings().min_bytes, &declined);
  if (st == NPVK_SUCCESS) return declined;
  if (st == NPVK_ERR_INVALID_ARGUMENT) return record_with_views(s, args, n, steps);
  return failure_reason(st, "device error");
}

void run_loop(int slot, char **args, const npy_intp *dims, const npy_intp *steps, void *data) {
  Slot &s = g_slots[size_t(slot)];
  if (!s.called.load(std::memory_order_acquire)) {
    s.data.store(data, std::memory_order_relaxed);
    s.called.store(true, std::memory_order_release);
  }
  // One call per run of true mask values of a where= call left to NumPy
  // (masked_call.cpp): NumPy's loop at once; counted, and the device's FP
  // errors reported, once per call there.
  if (in_masked_host_call()) {
    if (observing().timing.load(std::memory_order_relaxed))
      run_original(s.original, args, dims, steps, data);
    else
      s.original(args, dims, steps, data);
    return;
  }
  // FP exceptions of device work that ran since the last report surface here
  // (NumPy cleared the FP status before this call and checks it after).
  report_fp_errors_from_loop();
  const char *reason = try_device(s, args, dims[0], steps);
  if (observing().any.load(std::memory_order_relaxed)) note_loop(s.name, reason, dims[0]);
  if (!reason) {
    count_device_op();
    report_at_the_op_from_loop();
    return;
  }
  LoopCounter *counter = s.fallbacks.load(std::memory_order_acquire);
  if (!counter || counter->reason != reason) {
    counter = loop_fallback_counter(s.name, reason);
    s.fallbacks.store(counter, std::memory_order_release);
  }
  counter->count.fetch_add(1, std::memory_order_relaxed);
  run_original(s.original, args, dims, steps, data);
}

// One distinct function per slot: NumPy tells a loop nothing about which
// ufunc or signature it serves, so the function itself must know.
template <int Slot>
void loop(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {
  run_loop(Slot, args, dims, steps, data);
}

template <int... I>
constexpr std::array<PyUFuncGenericFunction, sizeof...(I)> make_trampolines(
    std::integer_sequence<int, I...>) {
  return {reinterpret_cast<PyUFuncGenericFunction>(&loop<I>)...};
}

const auto g_trampolines = make_trampolines(std::make_integer_sequence<int, kMaxSlots>{});

}  // namespace

bool replace_loop(PyObject *ufunc, npvk_op op, const int *type_nums, const npvk_dtype *dtypes,
                  int count, std::string *error) {
  if (g_used >= kMaxSlots) {
    *error = "out of loop slots";
    return false;
  }
  PyUFuncObject *uf = reinterpret_cast<PyUFuncObject *>(ufunc);
  if (uf->nin + uf->nout != count || count > kMaxOperands) {
    *error = "arity mismatch";
    return false;
  }
  int supported = 0, has_loop = 0;
  if (npvk_op_supported(context(), op, dtypes, uint32_t(count), &supported) != NPVK_SUCCESS ||
      (!supported &&
       (npvk_op_has_loop(op, dtypes, uint32_t(count), &has_loop) != NPVK_SUCCESS || !has_loop)))
    return false;
  Slot &s = g_slots[size_t(g_used)];
  s.unsupported = supported ? nullptr : "device lacks shaderFloat64";
  s.ufunc = nullptr;
  s.op = op;
  s.data = nullptr;
  s.called = false;
  s.nin = uf->nin;
  s.nout = uf->nout;
  s.name = uf->name;
  for (int k = 0; k < count; ++k) {
    s.type_nums[size_t(k)] = type_nums[k];
    s.dtypes[size_t(k)] = dtypes[k];
    uint32_t itemsize = 0;
    npvk_dtype_info(dtypes[k], nullptr, &itemsize);
    s.itemsizes[size_t(k)] = itemsize;
  }
  std::array<int, kMaxOperands> sig = s.type_nums;
  PyUFuncGenericFunction original = nullptr;
  if (PyUFunc_ReplaceLoopBySignature(uf, g_trampolines[size_t(g_used)], sig.data(), &original) !=
          0 ||
      !original) {
    *error = "NumPy has no loop with this signature";
    return false;
  }
  s.original = original;
  // The loop's data, as NumPy will pass it, known now: a call taken whole
  // (ufunc_call.cpp) never calls the loop, and a failed flush may need the
  // original to replay that call on the host.
  for (int j = 0; j < uf->ntypes; ++j) {
    const char *types = uf->types + j * count;
    if (!std::equal(sig.begin(), sig.begin() + count, types,
                    [](int a, char b) { return a == int(b); }))
      continue;
    s.data.store(uf->data ? uf->data[j] : nullptr, std::memory_order_relaxed);
    s.called.store(true, std::memory_order_release);
    break;
  }
  remember_ufunc_name(op, uf->name);
  hook_vectorcall(uf);
  Py_INCREF(ufunc);
  s.ufunc = ufunc;
  ++g_used;
  ++g_generation;
  return true;
}

void restore_loops() {
  for (int i = g_used - 1; i >= 0; --i) {
    Slot &s = g_slots[size_t(i)];
    PyUFuncGenericFunction replaced = nullptr;
    std::array<int, kMaxOperands> sig = s.type_nums;
    PyUFunc_ReplaceLoopBySignature(reinterpret_cast<PyUFuncObject *>(s.ufunc), s.original,
                                   sig.data(), &replaced);
    unhook_vectorcall(reinterpret_cast<PyUFuncObject *>(s.ufunc));
    Py_CLEAR(s.ufunc);
  }
  g_used = 0;
  ++g_generation;
}

uint64_t replaced_loops_generation() {
  return g_generation;
}

int replaced_loop_count() {
  return g_used;
}

bool device_loop_for(PyObject *ufunc, int in_type, const int *out_types, int nout, npvk_op *op) {
  for (int i = 0; i < g_used; ++i) {
    const Slot &s = g_slots[size_t(i)];
    if (s.ufunc != ufunc || s.nout != nout || s.unsupported) continue;
    bool match = true;
    for (int k = 0; k < s.nin; ++k) match = match && s.type_nums[size_t(k)] == in_type;
    for (int k = 0; k < nout; ++k) match = match && s.type_nums[size_t(s.nin + k)] == out_types[k];
    if (match) {
      *op = s.op;
      return true;
    }
  }
  return false;
}

bool original_loop(npvk_op op, const npvk_dtype *dtypes, int count, PyUFuncGenericFunction *fn,
                   void **data) {
  for (int i = 0; i < g_used; ++i) {
    const Slot &s = g_slots[size_t(i)];
    if (s.op != op || s.nin + s.nout != count || !s.called.load(std::memory_order_acquire) ||
        !std::equal(dtypes, dtypes + count, s.dtypes.begin()))
      continue;
    *fn = s.original;
    *data = s.data.load(std::memory_order_relaxed);
    return true;
  }
  return false;
}

}  // namespace npvk_shim
