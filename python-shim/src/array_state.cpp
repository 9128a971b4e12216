// What the runtime knows of an array's memory, asked by every call path of
// the shim (whole ufunc calls, masked calls, slice assignment): one home for
// these questions and their thresholds.
#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {

bool host_waits(PyArrayObject *a, bool write) {
  int read_waits = 0, write_waits = 0;
  return npvk_managed_pending(PyArray_DATA(a), &read_waits, &write_waits) == NPVK_SUCCESS &&
         (write ? write_waits : read_waits);
}

bool managed(PyArrayObject *a, uint64_t *size) {
  int found = 0;
  void *base = nullptr;
  uint64_t ignored = 0;
  return npvk_managed_lookup(PyArray_DATA(a), &found, &base, size ? size : &ignored) ==
             NPVK_SUCCESS &&
         found;
}

}  // namespace npvk_shim
