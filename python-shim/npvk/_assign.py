"""Slice assignment on the device: ``a[index] = value`` for a large managed
ndarray ``a`` and a basic index (python-shim/src/assign.cpp routes it here).

The copy is recorded as a cast into the view ``a[index]`` (which NumPy makes
without touching the data), so the destination's pages stay on the device and
the copy fuses with the computation of ``value``. Overlapping source and
destination (``a[1:] = a[:-1]``) go through a temporary, as NumPy's copy
semantics require. Casts that NumPy checks for floating-point errors (float to
integer, float64 to float32) and values NumPy converts with its own checks
(out-of-range Python integers, lists) are left to NumPy, counted under
``npvk.stats()["ops_fallback"]["setitem"]``.
"""

import numpy as _np

_native = None
_codes = None
_MAX_UPLOAD = 1 << 20  # unmanaged values up to this size are copied into managed memory first
_F4_MAX = float(_np.finfo(_np.float32).max)


class _Decline(Exception):
    pass


def install(native, dtype_code):
    global _native, _codes
    _native = native
    _codes = dtype_code
    native.patch_assignment(setitem)


def uninstall():
    if _native is not None:
        _native.unpatch_assignment()


def _checked_cast(src, dst):
    """Whether NumPy casts src to dst without checking for FP errors."""
    if src == dst:
        return
    if src.kind == "f" and (dst.kind in "iu" or dst.itemsize < src.itemsize):
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
    reason = _native.fill(view, code, _np.asarray(value).astype(dst).tobytes(), code)
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
        elif isinstance(value, (bool, int, float, _np.bool_, _np.integer, _np.floating)):
            _fill(value, view)
        else:
            raise _Decline("value")
        return True
    except _Decline as why:
        _native.count_fallback("setitem", str(why))
        return False
    except (TypeError, ValueError, IndexError):
        return False  # NumPy raises its own error for the same assignment
