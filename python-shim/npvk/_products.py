"""``np.dot``, ``np.inner`` and ``np.vdot`` on the device, as the matrix
product they are for operands of one or two dimensions: np.matmul, whose loops
npvk replaces (python-shim/src/matmul_loop.cpp). The C functions are taken
over the way ufunc.reduce is (python-shim/src/ufunc_methods.cpp).

What matmul would compute differently goes to NumPy, counted under
``npvk.stats()["ops_fallback"]["dot"]`` and so on: an ``out=`` other than a
C-contiguous ndarray of the result's shape and the operands' one dtype, operands of more
than two dimensions or 0-d, complex values (vdot conjugates), object and
string dtypes, shapes that do not fit (NumPy raises its own error), and
vdot's non-contiguous operands (flattening them would copy on the host).
"""

import numpy as _np

from . import _numpy
from ._assign import _Decline, _method

_NUMERIC = "biuf"


def install(native):
    mod = _numpy.multiarray_umath
    native.patch_method("dot", _method(_dot, "dot"), mod.dot)
    native.patch_method("dot", _method(_dot_method, "dot"))  # ndarray.dot
    native.patch_method("inner", _method(_inner, "inner"), mod.inner)
    native.patch_method("vdot", _method(_vdot, "vdot"), mod.vdot)


def _operands(a, b):
    if type(a) is not _np.ndarray or type(b) is not _np.ndarray:
        raise _Decline("value")
    if a.dtype.kind not in _NUMERIC or b.dtype.kind not in _NUMERIC:
        raise _Decline("dtype")
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        raise _Decline("shape")


def _dot(module, a, b, out=None):
    _operands(a, b)
    if a.shape[-1] != b.shape[0 if b.ndim == 1 else -2]:
        raise _Decline("shape")  # NumPy's "shapes ... not aligned"
    if out is not None:
        # dot(a, b, out) computes what dot(a, b) does (one path for both, so
        # that they agree to the bit): matmul into `out`, where NumPy would
        # accept `out` (its exact type, dtype and shape, C-contiguous); NumPy
        # raises for the rest. An `out` overlapping an operand is matmul's to
        # handle (it copies the operand first, as dot does).
        shape = a.shape[:-1] + b.shape[1:]
        if (type(out) is not _np.ndarray or not shape or out.shape != shape or
                not out.flags.c_contiguous or not out.flags.writeable or
                not (a.dtype == b.dtype == out.dtype)):
            raise _Decline("out")
        return _np.matmul(a, b, out=out)
    return _np.matmul(a, b)


def _dot_method(a, b, out=None):
    return _dot(None, a, b, out)


def _inner(module, a, b):
    _operands(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise _Decline("shape")
    if b.ndim == 1:
        return _np.matmul(a, b)
    if a.ndim == 1:
        return _np.matmul(b, a)
    return _np.matmul(a, b.T)


def _vdot(module, a, b):
    _operands(a, b)
    if a.size != b.size:
        raise _Decline("shape")
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        raise _Decline("order")
    return _np.matmul(a.reshape(-1), b.reshape(-1))
