// The cost model from Python: npvk.enable() turns it on (NPVK_COST_MODEL,
// not in forced mode, NPVK_MIN_BYTES=0), and npvk.cost_model() shows its
// figures. Where work runs is the runtime's decision (its placement,
// npvk_placement_decide): elementwise work at each flush, where it sees what
// fusion gains; reductions, scans and matrix products when they are called,
// asked here, since the host runs them only as NumPy does (its summation
// order, its BLAS): with NumPy itself, a fallback counted with the reason
// the answer gives ("cost model").
#include <atomic>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

// Calls are asked about from ufunc loops too, which NumPy may run without
// the GIL: nothing here touches Python.
std::atomic<bool> g_on{false};
// An answer of "host" for an elementwise loop call holds for the calls it
// names (npvk_placement.hold_calls): counted down here, without the lock.
std::atomic<int64_t> g_bypass_left{0};
// Calls that would be recorded, and how many of them pass between questions
// (npvk_placement.ask_every; each takes the context's lock). Counted from the
// first call, bound or not; until the first answer, at the rate the answer
// gives today, so that questions fall on the same calls as they did when
// this rule lived here.
std::atomic<uint32_t> g_since_check{0};
std::atomic<uint32_t> g_ask_every{16};

npvk_placement decide(npvk_context ctx, npvk_work_kind kind, const void *const *operands, int count,
                      uint64_t bytes) {
  npvk_work_desc work{};
  work.struct_size = sizeof work;
  work.kind = uint32_t(kind);
  work.operands = operands;
  work.count = uint32_t(count);
  work.bytes = bytes;
  npvk_placement answer{};
  answer.struct_size = sizeof answer;
  if (npvk_placement_decide(ctx, &work, &answer) != NPVK_SUCCESS) answer.host = 0;
  return answer;
}

}  // namespace

const char *cost_model_reason(const void *const *operands, int count, uint64_t bytes,
                              CostedWork work) {
  if (!g_on.load(std::memory_order_relaxed)) return nullptr;
  const npvk_placement answer = decide(context(), npvk_work_kind(work), operands, count, bytes);
  return answer.host ? answer.reason : nullptr;
}

const char *cost_model_bypassing() {
  if (g_bypass_left.load(std::memory_order_relaxed) <= 0) return nullptr;
  g_bypass_left.fetch_sub(1, std::memory_order_relaxed);
  return "cost model";
}

const char *elementwise_cost_reason() {
  if (!g_on.load(std::memory_order_relaxed)) return nullptr;
  if (const char *reason = cost_model_bypassing()) return reason;
  if (g_since_check.fetch_add(1, std::memory_order_relaxed) %
          g_ask_every.load(std::memory_order_relaxed) !=
      0)
    return nullptr;
  if (!device_bound()) return nullptr;  // asking must not bind it
  const npvk_placement answer = decide(context(), NPVK_WORK_ELEMENTWISE, nullptr, 0, 0);
  if (answer.ask_every) g_ask_every.store(answer.ask_every, std::memory_order_relaxed);
  if (!answer.host) return nullptr;
  g_bypass_left = int64_t(answer.hold_calls);
  return answer.reason;
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
