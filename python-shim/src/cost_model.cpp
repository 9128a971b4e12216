// The cost model from Python: npvk.enable() turns it on (NPVK_COST_MODEL,
// not in forced mode, NPVK_MIN_BYTES=0), npvk-info and npvk.cost_model()
// show its figures. The decision itself is the runtime's, at each flush
// (runtime/cost_model.hpp): recorded elementwise work that NumPy's own loops
// run faster runs through them (src/host_replay.cpp's host loop).
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {

PyObject *py_set_cost_model(PyObject *, PyObject *on) {
  const int truth = PyObject_IsTrue(on);
  if (truth < 0) return nullptr;
  if (context().id) npvk_context_set_cost_model(context(), truth);
  Py_RETURN_NONE;
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
  return Py_BuildValue("{s:O,s:O,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "enabled",
                       m.enabled ? Py_True : Py_False, "measured", m.measured ? Py_True : Py_False,
                       "device_flush_ns", m.device_flush_ns, "device_ns_per_byte",
                       m.device_ns_per_byte, "device_math_ns", m.device_math_ns, "device_pow_ns",
                       m.device_pow_ns, "host_ns_per_byte", m.host_ns_per_byte, "host_math_ns",
                       m.host_math_ns, "host_pow_ns", m.host_pow_ns, "last_device_ns",
                       m.last_device_ns, "last_host_ns", m.last_host_ns);
}

}  // namespace npvk_shim
