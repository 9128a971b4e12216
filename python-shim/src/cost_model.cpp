// The cost model from Python: npvk.enable() turns it on (NPVK_COST_MODEL,
// not in forced mode, NPVK_MIN_BYTES=0), and npvk.cost_model() shows its
// figures. Elementwise work is decided by the runtime at each flush
// (runtime/cost_model.hpp), where it sees what fusion gains. Reductions and
// matrix products are decided here, when they are called, since the host
// runs them only as NumPy does (its summation order, its BLAS): with NumPy
// itself, a fallback counted with the reason "cost model".
#include <atomic>
#include <mutex>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

std::atomic<bool> g_on{false};
// The figures, fetched at the first decision (measured then if need be).
// Decisions are made in ufunc loops too, which NumPy may run without the
// GIL: nothing here touches Python.
std::once_flag g_fetched;
npvk_cost_model g_figures{};
bool g_cpu_device = false;

// What is left of the cost of making the device (npvk_cost_model's
// device_make_ns), which the device's side of a decision carries until it is
// made; asked again at each decision until then.
std::atomic<bool> g_device_made{false};

double device_make_ns() {
  if (g_device_made.load(std::memory_order_relaxed)) return 0;
  npvk_cost_model m{};
  m.struct_size = sizeof m;
  if (npvk_context_get_cost_model(context(), 0, &m) != NPVK_SUCCESS) return 0;
  if (m.device_made) g_device_made.store(true, std::memory_order_relaxed);
  return m.device_make_ns;
}

bool figures() {
  std::call_once(g_fetched, [] {
    npvk_device_info info{};
    info.struct_size = sizeof info;
    if (npvk_context_device_info(context(), &info) == NPVK_SUCCESS)
      g_cpu_device = info.type == NPVK_DEVICE_CPU;
    g_figures.struct_size = sizeof g_figures;
    if (npvk_context_get_cost_model(context(), 1, &g_figures) != NPVK_SUCCESS)
      g_figures.measured = 0;
  });
  return g_figures.measured;
}

// Whether queued device work writes `data`.
bool pending_write(const void *data) {
  int read_waits = 0, write_waits = 0;
  return npvk_managed_pending(data, &read_waits, &write_waits) == NPVK_SUCCESS && read_waits;
}

// Elementwise work is weighed per flush, after it was recorded. Where the
// model sends flush after flush to the host (a slow device: Mesa 22.3's
// lavapipe streams memory 30x slower than NumPy), recording is pure cost:
// the replay ran SOR 1.4x slower than NumPy, its temporaries all distinct and
// cold instead of NumPy's one warm block, and each array's pages protected
// at its op and faulted open at its host use. After kHostStreak such flushes in a
// row, the next kBypassCalls loop calls run with NumPy at once; then
// recording resumes until the model decides another flush, and the streak
// it leaves decides whether to bypass again.
constexpr uint64_t kHostStreak = 2;
constexpr int64_t kBypassCalls = 8192;
constexpr uint32_t kCheckEvery = 16;  // recorded calls between looks at the streak
std::atomic<int64_t> g_bypass_left{0};
std::atomic<uint32_t> g_since_check{0};
std::atomic<uint64_t> g_weighed_at_bypass{0};

}  // namespace

// Column sums, logical and extremum reductions and scans run as workgroup
// kernels; the device takes them only where it streams this much faster than
// the host. Lavapipe on Mesa 25 streams 0.028-0.029 ns/B against NumPy's
// 0.032-0.034, yet its workgroup kernels ran column sums (sklearn's
// StandardScaler, 1e5 x 50 along axis 0) in 9-23 ms against NumPy's 3-4, and
// isnan(X).any() over 5e6 elements in 14 ms against about 3.
constexpr double kOthersNeedDeviceFaster = 2.0;

const char *cost_model_reason(const void *const *operands, int count, uint64_t bytes,
                              CostedWork work) {
  if (!g_on.load(std::memory_order_relaxed) || !figures()) return nullptr;
  const bool product = work == CostedWork::Product;
  const double device_speedup = g_figures.host_ns_per_byte / g_figures.device_ns_per_byte;
  // No GLSL product beats a CPU's BLAS on the same cores, and where the host
  // streams memory faster than the device, no reduction does either; nor
  // does a workgroup reduction where the device streams less than twice as
  // fast (below: lavapipe's column sums ran 3-5x slower than NumPy's).
  const bool host_faster =
      product ? g_cpu_device
              : (work == CostedWork::OtherReduction && device_speedup < kOthersNeedDeviceFaster) ||
                    double(bytes) * g_figures.host_ns_per_byte <
                        g_figures.device_flush_ns + double(bytes) * g_figures.device_ns_per_byte +
                            device_make_ns();
  if (!host_faster) return nullptr;
  // An operand that queued work writes: that work runs now (where its own
  // flush's estimate says), rather than with this call on the device.
  // - A streamed sum stays on the device with its producer where the device
  //   streams faster than the host and the producer's flush would run there:
  //   N-body's row sums of a fused chain (2-3x NumPy at medium size on Mesa
  //   25, 0.93x when they went to NumPy). Where the producer would run on
  //   the host, the sum runs there after it: scikit-learn's k-means++ chain
  //   (5 ops over (8, 1e5), in place, and its row sums) took 2.1-2.4 ms per
  //   flush on lavapipe, NumPy 0.86, and the chain's own flush is weighed by
  //   what it measured (FlushHistory), which the sum's flush then learns.
  // - Any other reduction only where the device streams at least twice as
  //   fast (a GPU; kOthersNeedDeviceFaster).
  // - A product never: no producer fuses into it, and on a CPU device BLAS
  //   wins whoever streams faster (sklearn's PCA transform, 1e5 x 50 @ 50 x
  //   10, took 170 ms as a GLSL product against NumPy's 5).
  bool pending = false;
  for (int k = 0; k < count; ++k) pending = pending || pending_write(operands[k]);
  if (pending) {
    int producer_on_host = 0;
    if (work == CostedWork::StreamedSum && device_speedup >= 1.0 &&
        (npvk_context_pending_on_host(context(), &producer_on_host) != NPVK_SUCCESS ||
         !producer_on_host))
      return nullptr;
    if (work == CostedWork::OtherReduction && device_speedup >= kOthersNeedDeviceFaster)
      return nullptr;
    if (npvk_sync(context()) != NPVK_SUCCESS) return nullptr;  // the device path reports it
  }
  return "cost model";
}

const char *cost_model_bypassing() {
  if (g_bypass_left.load(std::memory_order_relaxed) <= 0) return nullptr;
  g_bypass_left.fetch_sub(1, std::memory_order_relaxed);
  return "cost model";
}

const char *elementwise_cost_reason() {
  if (!g_on.load(std::memory_order_relaxed)) return nullptr;
  if (const char *reason = cost_model_bypassing()) return reason;
  if (g_since_check.fetch_add(1, std::memory_order_relaxed) % kCheckEvery != 0) return nullptr;
  if (!device_bound()) return nullptr;  // asking must not bind it
  npvk_cost_model m{};
  m.struct_size = sizeof m;
  if (npvk_context_get_cost_model(context(), 0, &m) != NPVK_SUCCESS) return nullptr;
  // Another bypass only after the model decided a flush recorded since.
  if (m.host_streak < kHostStreak || m.flushes_weighed <= g_weighed_at_bypass.load())
    return nullptr;
  // What was recorded since that flush is weighed first, whole. Without it
  // the first bypassed call read the last recorded ops' results, a flush of
  // those few ops that the host wins by the device's fixed cost alone, and
  // the streak fed itself: SOR, whose fused sweeps the device runs 1.8x
  // faster than NumPy, ran a one-op flush per sweep on the host (0.79x NumPy
  // at medium size). Where that work goes to the device the streak ends.
  if (npvk_managed_flush() != NPVK_SUCCESS ||
      npvk_context_get_cost_model(context(), 0, &m) != NPVK_SUCCESS || m.host_streak < kHostStreak)
    return nullptr;
  g_weighed_at_bypass = m.flushes_weighed;
  g_bypass_left = kBypassCalls;
  return "cost model";
}

bool cost_model_on() {
  return g_on.load(std::memory_order_relaxed);
}

void apply_cost_model() {
  if (device_bound()) npvk_context_set_cost_model(context(), g_on.load());
}

PyObject *py_set_cost_model(PyObject *, PyObject *on) {
  const int truth = PyObject_IsTrue(on);
  if (truth < 0) return nullptr;
  g_on = truth != 0;
  g_bypass_left = 0;   // enable() starts afresh (the context's streak too)
  apply_cost_model();  // else when the device is bound (install_host_loop)
  Py_RETURN_NONE;
}

PyObject *py_reduce_stays_on_host(PyObject *, PyObject *args) {
  PyObject *array = nullptr;
  int streamed_sum = 0;
  if (!PyArg_ParseTuple(args, "Op", &array, &streamed_sum)) return nullptr;
  if (!PyArray_Check(array)) return PyErr_Format(PyExc_TypeError, "an ndarray is needed");
  PyArrayObject *a = reinterpret_cast<PyArrayObject *>(array);
  const void *data = PyArray_DATA(a);
  const char *reason =
      cost_model_reason(&data, 1, uint64_t(PyArray_NBYTES(a)),
                        streamed_sum ? CostedWork::StreamedSum : CostedWork::OtherReduction);
  if (!reason) Py_RETURN_NONE;
  return PyUnicode_FromString(reason);
}

PyObject *py_cost_model(PyObject *, PyObject *measure) {
  const int truth = PyObject_IsTrue(measure);
  if (truth < 0) return nullptr;
  npvk_cost_model m{};
  m.struct_size = sizeof m;
  npvk_status st = NPVK_ERR_INVALID_HANDLE;
  if (context().id) {
    Py_BEGIN_ALLOW_THREADS st = npvk_context_get_cost_model(context(), truth, &m);
    Py_END_ALLOW_THREADS
  }
  if (st != NPVK_SUCCESS) Py_RETURN_NONE;
  return Py_BuildValue(
      "{s:O,s:O,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:K,s:O,s:d,s:K,s:I}",
      "enabled", m.enabled ? Py_True : Py_False, "measured", m.measured ? Py_True : Py_False,
      "device_flush_ns", m.device_flush_ns, "device_ns_per_byte", m.device_ns_per_byte,
      "device_math_ns", m.device_math_ns, "device_pow_ns", m.device_pow_ns, "device_narrow_ns",
      m.device_narrow_ns, "device_dispatch_ns", m.device_dispatch_ns, "host_ns_per_byte",
      m.host_ns_per_byte, "host_math_ns", m.host_math_ns, "host_pow_ns", m.host_pow_ns,
      "last_device_ns", m.last_device_ns, "last_host_ns", m.last_host_ns, "flushes_weighed",
      (unsigned long long)m.flushes_weighed, "host_streak", (unsigned long long)m.host_streak,
      "measured_estimates", (unsigned long long)m.measured_estimates, "device_made",
      m.device_made ? Py_True : Py_False, "device_make_ns", m.device_make_ns,
      "flushes_awaiting_device", (unsigned long long)m.flushes_awaiting_device, "host_threads",
      (unsigned int)m.host_threads);
}

}  // namespace npvk_shim
