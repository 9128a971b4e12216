"""Copies on the device: slice assignment ``a[index] = value`` for a large
managed ndarray ``a`` and a basic index (python-shim/src/assign.cpp routes it
here), ``ndarray.copy``, ``ndarray.astype``, ``np.copyto`` and
``np.concatenate`` (so ``np.stack``, ``np.vstack`` and ``np.hstack``, which
call it; python-shim/src/ufunc_methods.cpp).

The copy is recorded as a cast into the view ``a[index]`` (which NumPy makes
without touching the data), so the destination's pages stay on the device and
the copy fuses with the computation of ``value``. Overlapping source and
destination (``a[1:] = a[:-1]``) go through a temporary, as NumPy's copy
semantics require. Casts that NumPy checks for floating-point errors (float to
integer, float64 to float32, float to float16, integers that can pass float16's
range to float16) and values NumPy converts with its own checks
(out-of-range Python integers, lists) are left to NumPy, counted under
``npvk.stats()["ops_fallback"]["setitem"]``.
"""

import numpy as _np

from . import _numpy, _observe

_native = None
_codes = None
_SCALARS = (bool, int, float, _np.bool_, _np.integer, _np.floating)
_MAX_UPLOAD = 1 << 20  # unmanaged values up to this size are copied into managed memory first
_F4_MAX = float(_np.finfo(_np.float32).max)


class _Decline(Exception):
    pass


class _HostWork(Exception):
    """NumPy's own path is the better one here, and no fallback: the call
    does host work on pages the host owns (as np.zeros does in calloc)."""


def install(native, dtype_code):
    global _native, _codes
    _native = native
    _codes = dtype_code
    native.patch_assignment(setitem)
    native.patch_method("copy", _method(_copy_method, "copy"))
    native.patch_method("astype", _method(_astype, "astype"))
    native.patch_method("copyto", _method(_copyto, "copyto"), _numpy.multiarray_umath.copyto)
    native.patch_method("concatenate", _method(_concatenate, "concatenate"),
                        _numpy.multiarray_umath.concatenate)


def uninstall():
    if _native is not None:
        _native.unpatch_assignment()


def _method(fn, name):
    """A handler for src/ufunc_methods.cpp: fn(self, *args, **kwargs), or
    NotImplemented (counted) when NumPy should run the call."""
    def handler(self, args, kwargs):
        try:
            result = fn(self, *args, **(kwargs or {}))
        except _HostWork:
            return NotImplemented
        except _Decline as why:
            _native.count_fallback(name, str(why))
            if _observe.watching:
                _observe.note(name, str(why), (self,))
            return NotImplemented
        except (TypeError, ValueError):
            return NotImplemented  # NumPy raises its own error
        if _observe.watching:
            _observe.note(name, None, (self,))
        return result
    return handler


def _c_ordered(a):
    strides = [s for s, n in zip(a.strides, a.shape) if n > 1]
    return all(s > 0 for s in strides) and strides == sorted(strides, reverse=True)


def _copy_into_new(array, dtype, order):
    if array.ndim == 0:
        raise _Decline("0-d")
    # NumPy lays out a 'K' or 'A' copy of a C-ordered array in C order too.
    if order != "C" and not (order in ("K", "A") and _c_ordered(array)):
        raise _Decline("order")
    result = _managed(_np.empty, array.shape, dtype)
    _copy(array, result)
    return result


def _copy_method(array, order="C"):
    return _copy_into_new(array, array.dtype, order)


def _astype(array, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dt = _np.dtype(dtype)
    if not copy and dt == array.dtype:
        raise _Decline("no copy")  # NumPy returns the array itself
    if casting != "unsafe" and not _np.can_cast(array.dtype, dt, casting):
        raise _Decline("casting")  # NumPy raises
    return _copy_into_new(array, dt, order)


def _copyto(module, dst, src, casting="same_kind", where=True):
    if where is not True:
        raise _Decline("where")
    zero_d = type(src) is _np.ndarray and src.ndim == 0
    if type(dst) is _np.ndarray and casting == "unsafe" and (isinstance(src, _SCALARS) or zero_d):
        # np.ones and np.full: copyto(new, value, casting="unsafe") converts
        # the value as an assignment would. A new array's pages are the
        # host's: NumPy fills them at memory speed, and host writes that
        # follow (x[0] = ...) wait for nothing. Where queued work still uses
        # the array, the fill is queued after it.
        if not _native.host_waits(dst, True) and not (zero_d and _native.host_waits(src, False)):
            raise _HostWork()
        if not zero_d:
            _fill(src, dst)
            return
    if type(src) is not _np.ndarray or type(dst) is not _np.ndarray:
        raise _Decline("value")
    if not _np.can_cast(src.dtype, dst.dtype, casting):
        raise _Decline("casting")  # NumPy raises
    _copy(src, dst)


def _concatenate(module, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Each piece copied into its slice of a new managed array. Only what
    NumPy would do the same way: pieces of one dtype and rank, C-ordered (the
    result's layout follows the pieces'), no ``out=``; every check comes
    before the first copy."""
    if out is not None:
        raise _Decline("out")
    if type(arrays) not in (list, tuple) or not arrays or \
            any(type(a) is not _np.ndarray for a in arrays):
        raise _Decline("value")
    first = arrays[0]
    dt, nd = first.dtype, first.ndim
    if any(a.dtype != dt for a in arrays) or (dtype is not None and _np.dtype(dtype) != dt):
        raise _Decline("dtype")
    _code(dt)
    if axis is None or nd == 0 or any(a.ndim != nd for a in arrays) or \
            not -nd <= axis < nd:
        raise _Decline("shape")  # NumPy flattens, or raises its own error
    axis %= nd
    rest = first.shape[:axis] + first.shape[axis + 1:]
    if any(a.shape[:axis] + a.shape[axis + 1:] != rest for a in arrays):
        raise _Decline("shape")
    if not all(a.flags.c_contiguous for a in arrays):
        raise _Decline("order")
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    result = _managed(_np.empty, tuple(shape), dt)
    index = [slice(None)] * nd
    at = 0
    for a in arrays:
        if a.shape[axis]:
            index[axis] = slice(at, at + a.shape[axis])
            _copy(a, result[tuple(index)])
            at += a.shape[axis]
    return result


def _checked_cast(src, dst):
    """Whether NumPy casts src to dst without checking for FP errors."""
    if src == dst:
        return
    if src.kind == "f" and (dst.kind in "iu" or dst.itemsize < src.itemsize):
        raise _Decline("cast")
    # Integers past 65519 overflow float16 to inf, which NumPy's cast reports.
    if dst.kind == "f" and dst.itemsize == 2 and src.kind in "iu" and \
            _np.iinfo(src).max >= 65520:
        raise _Decline("cast")


def _code(dt):
    code = _codes(dt) if dt.byteorder in "=|" else None
    if code is None:
        raise _Decline("dtype")
    return code


def _managed(make, *args):
    saved = _native.force_managed(True)
    try:
        return make(*args)
    finally:
        _native.force_managed(saved)


def _copy(value, view):
    _checked_cast(value.dtype, view.dtype)
    if _np.broadcast_shapes(value.shape, view.shape) != view.shape:
        raise _Decline("shape")
    src_code, dst_code = _code(value.dtype), _code(view.dtype)
    reason = _native.copy(value, src_code, view, dst_code)
    if reason == "unmanaged operand" and value.nbytes <= _MAX_UPLOAD:
        # A small host array: upload it rather than sync the destination.
        value = _managed(_np.array, value)
        reason = _native.copy(value, src_code, view, dst_code)
    elif reason == "overlap":
        tmp = _managed(_np.empty, value.shape, value.dtype)
        reason = _native.copy(value, src_code, tmp, src_code) or \
            _native.copy(tmp, src_code, view, dst_code)
    if reason is not None:
        raise _Decline(reason)


def _fill(value, view):
    dst = view.dtype
    if isinstance(value, _np.generic):
        _checked_cast(value.dtype, dst)
    elif dst.kind in "iu":
        if isinstance(value, float):
            raise _Decline("cast")
        info = _np.iinfo(dst)
        if not info.min <= value <= info.max:
            raise _Decline("range")
    elif dst == _np.float32 and isinstance(value, float) and \
            abs(value) > _F4_MAX and value == value and abs(value) != float("inf"):
        raise _Decline("range")
    code = _code(dst)
    # A NumPy scalar, not a 0-d array: converting one of those would be
    # device work (and a sync) when npvk manages every array.
    reason = _native.fill(view, code, dst.type(value).tobytes(), code)
    if reason is not None:
        raise _Decline(reason)


def setitem(array, index, value):
    """True when the assignment was recorded on the device."""
    try:
        view = array[index]
        if type(view) is not _np.ndarray or view.size == 0:
            return False
        if type(value) is _np.ndarray:
            _copy(value, view)
        elif isinstance(value, _SCALARS):
            _fill(value, view)
        else:
            raise _Decline("value")
        if _observe.watching:
            _observe.note("setitem", None, (view,))
        return True
    except _Decline as why:
        _native.count_fallback("setitem", str(why))
        if _observe.watching:
            _observe.note("setitem", str(why), (array,))
        return False
    except (TypeError, ValueError, IndexError):
        return False  # NumPy raises its own error for the same assignment
