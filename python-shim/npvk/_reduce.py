"""ufunc.reduce on the device: sum, prod, max, min, any, all, and mean/var/std,
which NumPy builds on them.

The shim routes every ``ufunc.reduce`` call on a large managed ndarray here
first (python-shim/src/ufunc_methods.cpp). ``handle`` either records one
``npvk_reduce`` and returns NumPy's result object, or returns NotImplemented,
and NumPy runs the call itself; each such fallback is counted with its reason
in ``npvk.stats()["ops_fallback"]["<ufunc>.reduce"]``.

The result dtype follows NumPy: add and multiply reduce bool and integers
narrower than 64 bits in int64 (uint64 for unsigned), the logical ops give
bool, the rest keep the input's dtype; ``dtype=`` overrides, with NumPy's
unsafe cast of each input element. A full reduction returns a NumPy scalar,
read back at once (one sync); an axis reduction's result stays on the device
until the host touches it.

Float sums follow NumPy's summation order where it is plain (see
``_sum_block``), so they give NumPy's bits there.
"""

import operator as _operator

import numpy as _np
from ._numpy import multiarray as _multiarray

_normalize_axis_index = _multiarray.normalize_axis_index

from . import _observe

_native = None
_codes = None  # dtype -> npvk dtype code, or None
_ops = {}  # ufunc -> npvk opcode
_NO_VALUE = _np._NoValue

# NumPy's default accumulator for add/multiply of small integers and bool.
_WIDE = {"b": _np.dtype(_np.int_), "i": _np.dtype(_np.int_), "u": _np.dtype(_np.uint)}
_LOGICAL = ("logical_and", "logical_or", "logical_xor")
_REDUCIBLE = ("add", "multiply", "maximum", "minimum", "fmax", "fmin", "bitwise_and",
              "bitwise_or", "bitwise_xor") + _LOGICAL


class _Decline(Exception):
    """NumPy runs this call; the message is the counted reason."""


def install(native, op_table, dtype_code):
    global _native, _codes
    _native = native
    _codes = dtype_code
    _ops.clear()
    for opcode, name, _nin, _nout, implemented in op_table:
        if implemented and name in _REDUCIBLE:
            _ops[getattr(_np, name)] = opcode
    return (native.patch_method("reduce", handle) and
            native.patch_method("accumulate", handle_accumulate))


def uninstall():
    if _native is not None:
        _native.unpatch_methods()


def _result_dtype(ufunc, dt, dtype):
    if dtype is not None:
        if ufunc.__name__ in _LOGICAL:
            # NumPy 2's np.any/np.all pass dtype=bool: the same result as the
            # logical reduction of the input itself (each element's truth value).
            if _np.dtype(dtype) != _np.dtype(bool):
                raise _Decline("dtype")
            return _np.dtype(bool)
        return _np.dtype(dtype)
    if ufunc.__name__ in _LOGICAL:
        return _np.dtype(bool)
    if ufunc in (_np.add, _np.multiply) and dt.kind in _WIDE and dt.itemsize < 8:
        return _WIDE[dt.kind]
    return dt


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, tuple):
        axis = (axis,)
    try:
        axes = tuple(_normalize_axis_index(_operator.index(a), ndim) for a in axis)
    except Exception:
        raise _Decline("axis") from None
    if len(set(axes)) != len(axes):
        raise _Decline("axis")
    return axes


def _check_operands(ufunc, array, dtype, out):
    """The opcode and the npvk dtype codes of the input and the result."""
    opcode = _ops.get(ufunc)
    if opcode is None:
        raise _Decline("ufunc")
    if out is not None:
        raise _Decline("out")
    if array.ndim == 0 or array.size == 0:
        raise _Decline("empty" if array.ndim else "0-d")
    try:
        res_dt = _result_dtype(ufunc, array.dtype, dtype)
    except TypeError:
        raise _Decline("dtype") from None
    in_code, out_code = _codes(array.dtype), _codes(res_dt)
    if in_code is None or out_code is None or res_dt.byteorder not in "=|" or \
            array.dtype.byteorder not in "=|":
        raise _Decline("dtype")
    return opcode, in_code, res_dt, out_code


# NumPy 2.3 and later hand an uncast reduction's loop the whole run; earlier
# versions, and any version when the input is cast, a buffer at a time.
_WHOLE_RUNS = tuple(int(p) for p in _np.__version__.split(".")[:2]) >= (2, 3)


def _sum_block(array_dtype, res_dt):
    """The blocks NumPy's pairwise float sum works in (0: the whole run)."""
    if _WHOLE_RUNS and array_dtype == res_dt:
        return 0
    return int(_np.getbufsize())


def _streamed_sum(ufunc, array, axes):
    """Whether the device sums this pairwise, streaming its input: a float
    add that folds the axis along which memory is contiguous (row sums, or
    all elements). Other reductions run as workgroup kernels, which the cost
    model weighs apart (src/cost_model.cpp)."""
    if ufunc is not _np.add or array.dtype.kind != "f":
        return False
    if array.ndim < 2:
        return True
    inner = min(range(array.ndim), key=lambda d: (abs(array.strides[d]) if array.shape[d] > 1
                                                  else float("inf"), -d))
    return inner in axes


def _managed_result(array, shape, dtype):
    """An uninitialised result laid out as NumPy lays out a reduction's or an
    accumulation's: in the input's memory order (order 'K'), over `shape` (the
    input's, with reduced axes 1), so that a Fortran-ordered input gives a
    Fortran-ordered result. Managed even when small, so that the device writes
    it in place."""
    saved = _native.force_managed(True)
    try:
        return _np.empty_like(array, dtype=dtype, shape=shape, subok=False)
    finally:
        _native.force_managed(saved)


def _accumulate(ufunc, array, axis=0, dtype=None, out=None):
    opcode, in_code, res_dt, out_code = _check_operands(ufunc, array, dtype, out)
    if axis is None:
        if array.ndim != 1:
            raise _Decline("axis")
        axis = 0
    (axis,) = _axes(axis, array.ndim)
    # Weighed as a reduction of the same bytes: a scan is no cheaper on the
    # device (more passes), and NumPy's loop is one pass. sklearn's k-means++
    # cumsum of 1e5 doubles took 2.1 ms as 4 dispatches against NumPy's 0.2.
    why = _native.reduce_stays_on_host(array, False)  # a scan: several passes
    if why is not None:
        raise _Decline(why)
    result = _managed_result(array, array.shape, res_dt)
    reason = _native.accumulate(opcode, array, in_code, result, out_code, axis)
    if reason is not None:
        raise _Decline(reason)
    return result


def handle_accumulate(ufunc, args, kwargs):
    return _run("accumulate", _accumulate, ufunc, args, kwargs)


def _reduce(ufunc, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
            where=True):
    if where is not True:
        raise _Decline("where")
    opcode, in_code, res_dt, out_code = _check_operands(ufunc, array, dtype, out)
    axes = _axes(axis, array.ndim)
    init_bytes = None
    if initial is not _NO_VALUE and initial is not None:
        if not isinstance(initial, (bool, int, float, _np.generic)):
            raise _Decline("initial")
        try:
            init_bytes = res_dt.type(initial).tobytes()  # a scalar: no device work
        except (TypeError, ValueError, OverflowError):
            raise _Decline("initial") from None
    why = _native.reduce_stays_on_host(array, _streamed_sum(ufunc, array, axes))
    if why is not None:
        raise _Decline(why)
    keep_shape = tuple(1 if d in axes else n for d, n in enumerate(array.shape))
    result = _managed_result(array, keep_shape, res_dt)
    reason = _native.reduce(opcode, array, in_code, result, out_code, axes, init_bytes,
                            _sum_block(array.dtype, res_dt))
    if reason is not None:
        raise _Decline(reason)
    if keepdims:
        return result
    shape = tuple(n for d, n in enumerate(array.shape) if d not in axes)
    result = result.reshape(shape)
    if shape == ():
        value = result[()]
        # NumPy warns about a reduction's FP errors when it returns.
        _native.report_pending()
        return value
    return result


def handle(ufunc, args, kwargs):
    return _run("reduce", _reduce, ufunc, args, kwargs)


def _run(method, fn, ufunc, args, kwargs):
    """fn's result, or NotImplemented (counted) when NumPy should run the call."""
    name = f"{ufunc.__name__}.{method}"
    try:
        result = fn(ufunc, *args, **(kwargs or {}))
    except _Decline as why:
        _native.count_fallback(name, str(why))
        if _observe.watching:
            _observe.note(name, str(why), args)
        return NotImplemented
    except TypeError:
        # Arguments NumPy itself rejects: let NumPy say so, in its words.
        return NotImplemented
    if _observe.watching:
        _observe.note(name, None, args)
    return result
