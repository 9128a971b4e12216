// System calls cannot fault on device-owned pages: they fail with EFAULT
// instead. The syscall guard (interpose/syscall_guard.cpp) makes the memory
// current inside the C library's I/O functions, whoever calls them (arr.tofile
// through fwrite, or a memoryview exported before the device wrote). The
// buffer protocol is still wrapped: it is where pending floating-point errors
// of device work are reported, and making the memory current when the buffer
// is exported (writable when the consumer will write) spares its consumer a
// fault per page.
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

getbufferproc g_original_getbuffer = nullptr;

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

}  // namespace

void patch_buffer_access() {
  PyBufferProcs *procs = PyArray_Type.tp_as_buffer;
  if (procs && !g_original_getbuffer) {
    g_original_getbuffer = procs->bf_getbuffer;
    procs->bf_getbuffer = getbuffer;
  }
}

void unpatch_buffer_access() {
  if (g_original_getbuffer) {
    PyArray_Type.tp_as_buffer->bf_getbuffer = g_original_getbuffer;
    g_original_getbuffer = nullptr;
  }
}

}  // namespace npvk_shim
