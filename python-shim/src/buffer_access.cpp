// System calls cannot fault on device-owned pages: they fail with EFAULT
// instead. Every Python-level route by which array memory reaches the kernel
// (file.write(arr), f.readinto(arr), os.write, socket.send/recv_into,
// memoryview, np.frombuffer) asks for the array's buffer first, so the shim
// wraps ndarray's bf_getbuffer to make the memory current (and writable when
// the consumer will write) before handing it out. ndarray.tofile passes the
// data pointer to fwrite directly, so its method is wrapped as well.
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

getbufferproc g_original_getbuffer = nullptr;
PyCFunction g_original_tofile = nullptr;
PyMethodDef *g_tofile_def = nullptr;

// The bytes an array's elements span, from its lowest to its highest address.
void data_extent(PyArrayObject *arr, char **lo, uint64_t *size) {
  char *low = PyArray_BYTES(arr), *high = low;
  for (int d = 0; d < PyArray_NDIM(arr); ++d) {
    npy_intp span = (PyArray_DIM(arr, d) - 1) * PyArray_STRIDE(arr, d);
    if (PyArray_DIM(arr, d) == 0) {
      *lo = low;
      *size = 0;
      return;
    }
    (span < 0 ? low : high) += span;
  }
  *lo = low;
  *size = uint64_t(high - low) + uint64_t(PyArray_ITEMSIZE(arr));
}

void make_current(PyObject *obj, bool write) {
  if (!PyArray_Check(obj)) return;
  char *lo = nullptr;
  uint64_t size = 0;
  data_extent(reinterpret_cast<PyArrayObject *>(obj), &lo, &size);
  if (size) npvk_managed_host_access(lo, size, write ? 1 : 0);
}

int getbuffer(PyObject *obj, Py_buffer *view, int flags) {
  make_current(obj, (flags & PyBUF_WRITABLE) != 0);
  if (report_fp_errors() < 0) return -1;
  return g_original_getbuffer(obj, view, flags);
}

PyObject *tofile(PyObject *self, PyObject *args, PyObject *kwargs) {
  make_current(self, false);
  return reinterpret_cast<PyCFunctionWithKeywords>(reinterpret_cast<void *>(g_original_tofile))(
      self, args, kwargs);
}

}  // namespace

void patch_buffer_access() {
  PyBufferProcs *procs = PyArray_Type.tp_as_buffer;
  if (procs && !g_original_getbuffer) {
    g_original_getbuffer = procs->bf_getbuffer;
    procs->bf_getbuffer = getbuffer;
  }
  if (!g_tofile_def) {
    for (PyMethodDef *m = PyArray_Type.tp_methods; m && m->ml_name; ++m) {
      if (std::string(m->ml_name) == "tofile" && (m->ml_flags & METH_KEYWORDS)) {
        g_tofile_def = m;
        g_original_tofile = m->ml_meth;
        m->ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(tofile));
        break;
      }
    }
  }
}

void unpatch_buffer_access() {
  if (g_original_getbuffer) {
    PyArray_Type.tp_as_buffer->bf_getbuffer = g_original_getbuffer;
    g_original_getbuffer = nullptr;
  }
  if (g_tofile_def) {
    g_tofile_def->ml_meth = g_original_tofile;
    g_tofile_def = nullptr;
  }
}

}  // namespace npvk_shim
