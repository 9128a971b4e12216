// NumPy's C API as the shim uses it: built against the installed NumPy's
// headers, targeting the 1.22 API, so that one build runs on NumPy 1.22-2.x.
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
