// np.where(condition, x, y) as a ufunc, so that it reaches the device like
// any elementwise op: NumPy's where is a C function of its own, which would
// read its operands on the host and so end every fused chain that uses it.
// The Python wrapper (npvk/_where.py) sends only the cases whose results
// equal np.where's here; its host loop is the fallback for small arrays.
#include <cstdint>
#include <cstring>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

// x or y by the condition, for any itemsize (the loop's data).
void where_loop(char **args, const npy_intp *dims, const npy_intp *steps, void *data) {
  const size_t item = size_t(reinterpret_cast<uintptr_t>(data));
  char *c = args[0], *x = args[1], *y = args[2], *o = args[3];
  for (npy_intp i = 0; i < dims[0]; ++i) {
    std::memcpy(o, *reinterpret_cast<const npy_bool *>(c) ? x : y, item);
    c += steps[0];
    x += steps[1];
    y += steps[2];
    o += steps[3];
  }
}

// The types npvk has a dtype for.
constexpr int kTypes[] = {NPY_BOOL,      NPY_BYTE,  NPY_UBYTE, NPY_SHORT, NPY_USHORT,
                          NPY_INT,       NPY_UINT,  NPY_LONG,  NPY_ULONG, NPY_LONGLONG,
                          NPY_ULONGLONG, NPY_FLOAT, NPY_DOUBLE};
constexpr int kLoops = int(sizeof kTypes / sizeof kTypes[0]);
PyUFuncGenericFunction g_funcs[kLoops];
void *g_data[kLoops];
char g_signatures[kLoops * 4];
PyObject *g_where = nullptr;

}  // namespace

PyObject *where_ufunc() {
  if (!g_where) {
    for (int i = 0; i < kLoops; ++i) {
      PyArray_Descr *d = PyArray_DescrFromType(kTypes[i]);
      g_funcs[i] = where_loop;
      g_data[i] = reinterpret_cast<void *>(uintptr_t(PyDataType_ELSIZE(d)));
      Py_DECREF(d);
      g_signatures[4 * i] = char(NPY_BOOL);
      g_signatures[4 * i + 1] = g_signatures[4 * i + 2] = g_signatures[4 * i + 3] = char(kTypes[i]);
    }
    g_where =
        PyUFunc_FromFuncAndData(g_funcs, g_data, g_signatures, kLoops, 3, 1, PyUFunc_None, "where",
                                "npvk's np.where(condition, x, y) as an elementwise ufunc", 0);
    if (!g_where) return nullptr;
  }
  Py_INCREF(g_where);
  return g_where;
}

}  // namespace npvk_shim
