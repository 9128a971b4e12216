// np.matmul (and `@`) on the device: the shim replaces matmul's gufunc loops.
// NumPy calls the loop once for a whole batch, with the outer count and the
// three core extents in `dims` and the operands' outer and core strides in
// `steps`, so one npvk_matmul covers the call. Work on memory npvk does not
// manage, or below NPVK_MIN_BYTES, runs NumPy's loop (BLAS), counted.
#include <array>
#include <cstring>
#include <utility>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

constexpr int kMaxMatmulLoops = 16;

struct MatmulSlot {
  PyObject *ufunc = nullptr;
  int type_num = 0;
  npvk_dtype dtype = NPVK_FLOAT64;
  int64_t itemsize = 8;
  PyUFuncGenericFunction original = nullptr;
};

std::array<MatmulSlot, kMaxMatmulLoops> g_loops;
int g_count = 0;

const char *try_matmul(const MatmulSlot &s, char **args, const npy_intp *dims,
                       const npy_intp *steps) {
  if (!settings().enabled) return "disabled";
  uint64_t largest = 0;
  for (int k = 0; k < 3; ++k) {
    int found = 0;
    void *base = nullptr;
    uint64_t size = 0;
    if (npvk_managed_lookup(args[k], &found, &base, &size) != NPVK_SUCCESS || !found)
      return "unmanaged operand";
    largest = std::max(largest, size);
  }
  if (largest < settings().min_bytes) return "small";
  if (strict_errors()) return "errstate";
  const void *operands[2] = {args[0], args[1]};
  if (const char *why = cost_model_reason(operands, 2, largest, CostedWork::Product)) return why;
  // Outer count, then A (rows, inner), B (inner, columns), C (rows, columns).
  const int64_t extent[3][2] = {{dims[1], dims[2]}, {dims[2], dims[3]}, {dims[1], dims[3]}};
  npvk_view views[3] = {};
  const char *reason = nullptr;
  for (int k = 0; k < 3 && !reason; ++k) {
    int64_t shape[3] = {dims[0], extent[k][0], extent[k][1]};
    int64_t strides[3] = {steps[k], steps[3 + 2 * k], steps[4 + 2 * k]};
    for (int64_t st : strides)
      if (st % s.itemsize != 0) reason = "unaligned";
    if (!reason &&
        npvk_managed_view(args[k], s.dtype, 3, shape, strides, &views[k]) != NPVK_SUCCESS)
      reason = "view";
  }
  if (!reason) {
    npvk_status st = npvk_matmul(context(), views[0], views[1], views[2]);
    reason = st == NPVK_ERR_INVALID_ARGUMENT ? "overlap" : status_reason(st);
  }
  for (npvk_view v : views)
    if (v.id) npvk_view_release(v);
  return reason;
}

void run_matmul(int slot, char **args, const npy_intp *dims, const npy_intp *steps, void *data) {
  const MatmulSlot &s = g_loops[size_t(slot)];
  report_fp_errors_from_loop();
  const char *reason = try_matmul(s, args, dims, steps);
  // Elements of the results: outer loop x the (n, m) core dimensions.
  if (observing().any.load(std::memory_order_relaxed))
    note_loop("matmul", reason, int64_t(dims[0] * dims[1] * dims[3]));
  if (!reason) {
    count_device_op();
    report_at_the_op_from_loop();
    return;
  }
  count_fallback("matmul", reason);
  s.original(args, dims, steps, data);
}

template <int Slot>
void matmul_loop(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {
  run_matmul(Slot, args, dims, steps, data);
}

template <int... I>
constexpr std::array<PyUFuncGenericFunction, sizeof...(I)> make_loops(
    std::integer_sequence<int, I...>) {
  return {reinterpret_cast<PyUFuncGenericFunction>(&matmul_loop<I>)...};
}

const auto g_functions = make_loops(std::make_integer_sequence<int, kMaxMatmulLoops>{});

}  // namespace

bool replace_matmul_loop(PyObject *ufunc, int type_num, npvk_dtype dtype) {
  if (g_count >= kMaxMatmulLoops) return false;
  int supported = 0;
  const npvk_dtype loop[3] = {dtype, dtype, dtype};
  if (npvk_op_supported(context(), NPVK_OP_MULTIPLY, loop, 3, &supported) != NPVK_SUCCESS ||
      !supported)
    return false;
  MatmulSlot &s = g_loops[size_t(g_count)];
  s = MatmulSlot{};
  s.type_num = type_num;
  s.dtype = dtype;
  uint32_t itemsize = 0;
  npvk_dtype_info(dtype, nullptr, &itemsize);
  s.itemsize = itemsize;
  int sig[3] = {type_num, type_num, type_num};
  if (PyUFunc_ReplaceLoopBySignature(reinterpret_cast<PyUFuncObject *>(ufunc),
                                     g_functions[size_t(g_count)], sig, &s.original) != 0 ||
      !s.original)
    return false;
  Py_INCREF(ufunc);
  s.ufunc = ufunc;
  ++g_count;
  return true;
}

void restore_matmul_loops() {
  for (int i = g_count - 1; i >= 0; --i) {
    MatmulSlot &s = g_loops[size_t(i)];
    PyUFuncGenericFunction replaced = nullptr;
    int sig[3] = {s.type_num, s.type_num, s.type_num};
    PyUFunc_ReplaceLoopBySignature(reinterpret_cast<PyUFuncObject *>(s.ufunc), s.original, sig,
                                   &replaced);
    Py_CLEAR(s.ufunc);
  }
  g_count = 0;
}

}  // namespace npvk_shim
