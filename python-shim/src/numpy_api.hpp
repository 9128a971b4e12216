// NumPy's C API as the shim uses it, and the few places where NumPy 1.x and
// 2.x differ. The same source builds against NumPy 1.22-2.x headers. Built
// against 2.x headers it targets the 1.22 API, so that one binary runs on
// NumPy 1.22-2.x (NumPy 2's npy_2_compat.h picks each runtime's layout).
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL npvk_shim_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL npvk_shim_UFUNC_API
#ifndef NPVK_SHIM_IMPORTS_API
#define NO_IMPORT_ARRAY
#define NO_IMPORT_UFUNC
#endif
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#if NPY_ABI_VERSION < 0x02000000
// NumPy 1.x headers: the accessors NumPy 2 introduced, on 1.x's layout.
inline PyArray_ArrFuncs *PyDataType_GetArrFuncs(const PyArray_Descr *descr) {
  return descr->f;
}
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

namespace npvk_shim {

struct CallSite;  // warning_sites.cpp

// NumPy's element cast from `from` to type number `to` (what 1.x's
// PyArray_GetCastFunc returned): the legacy cast table, then the
// descriptor's castdict, which holds the float16 casts. NumPy 2 keeps only
// the casts to object and strings there, so this finds no numeric cast under
// NumPy 2 (element_casts.hpp has them). Null, with no exception set, where
// there is none. Called with the GIL.
PyArray_VectorUnaryFunc *numpy_cast_function(PyArray_Descr *from, int to);

// NumPy's float64 to float16 conversion (npymath's npy_double_to_half).
uint16_t double_to_half_bits(double x);

// Reports the FP errors `flags` (NPY_FPE_*) of ufunc `name` under NumPy's
// error state, as NumPy does after a loop: warn, print, call, log, or raise
// (returns -1 with FloatingPointError set). NumPy 1.x's PyUFunc_GetPyValues
// and PyUFunc_handlefperr are gone in 2.0, and 2.0's
// PyUFunc_GiveFloatingpointErrors is missing before it, so the error state is
// read through numpy.geterr() and geterrcall(), which both have.
// A warning names `site`, the call that recorded the op (warning_sites.cpp),
// or with null the current Python frame, as NumPy's does.
int give_fp_errors(const char *name, int flags, const CallSite *site = nullptr);
// PyErr_WarnEx(RuntimeWarning, message, 1) as if from `site`'s frame (null:
// the current frame); warning_sites.cpp.
int warn_at(const CallSite *site, const char *message);

}  // namespace npvk_shim
