"""np.where(condition, x, y) through a ufunc, so that it runs on the device
and fuses with the elementwise work around it (src/where_ufunc.cpp).

Only calls whose result provably equals np.where's take the ufunc: three
positional operands that are exact ndarrays or scalars, a numeric or bool
condition, x and y of a type npvk has, and a result that is not 0-d (a ufunc
would return a scalar there). Everything else, and work smaller than
NPVK_MIN_BYTES, goes to NumPy's own where."""

import numpy as _np

_original = None
_ufunc = None
_min_bytes = None  # callable: the current NPVK_MIN_BYTES
_TYPES = frozenset("?bBhHiIlLqQfd")
_CONDITION_KINDS = frozenset("biuf")
_SCALARS = (bool, int, float, _np.generic)


def _operand(a):
    return type(a) is _np.ndarray or isinstance(a, _SCALARS)


def _python_ints_fit(dtype, *values):
    """Under NEP 50 a Python int keeps an integer array's dtype whatever its
    value; NumPy's where then wraps one out of range, where a ufunc raises
    OverflowError. Such calls stay NumPy's."""
    if dtype.kind not in "iu":
        return True
    info = _np.iinfo(dtype)
    return all(info.min <= v <= info.max for v in values if type(v) is int)


# NumPy 1.x's where converts x and y to arrays before it promotes them, so a
# Python scalar is a 0-d array there: value-based under legacy promotion (as
# the scalar would be), but strong under NPY_PROMOTION_STATE=weak
# (np.where(c, float32_array, 1.5) is float64). NumPy 2's where keeps Python
# scalars weak.
_SCALARS_AS_ARRAYS = int(_np.__version__.split(".")[0]) < 2


def _promoted(x, y):
    """x and y as NumPy's where promotes them."""
    if _SCALARS_AS_ARRAYS:
        return _np.asarray(x), _np.asarray(y)
    return x, y


def where(*args, **kwargs):
    if len(args) == 3 and not kwargs:
        condition, x, y = args
        if _operand(condition) and _operand(x) and _operand(y):
            arrays = [a for a in args if type(a) is _np.ndarray]
            if (arrays and max(a.ndim for a in arrays) > 0
                    and max(a.nbytes for a in arrays) >= _min_bytes()
                    and _np.asarray(condition).dtype.kind in _CONDITION_KINDS):
                try:
                    dtype = _np.result_type(*_promoted(x, y))
                except TypeError:
                    dtype = None
                if (dtype is not None and dtype.char in _TYPES and dtype.isnative
                        and _python_ints_fit(dtype, x, y)):
                    t = dtype.char
                    # 'unsafe' casts only the condition (to its truth value);
                    # x and y cast safely to their result type.
                    # np.where allocates its result in the operands' memory order
                    # (NpyIter's KEEPORDER), as a ufunc's order="K" does.
                    return _ufunc(condition, x, y, signature=("?", t, t, t), casting="unsafe")
    return _original(*args, **kwargs)


where.__doc__ = _np.where.__doc__
where.__wrapped__ = _np.where
# What NumPy's own where shows (NumPy 2.4 gives its C functions a
# __signature__; NumPy's test_c_func_dispatcher_signature looks for it).
for _attr in ("__module__", "__qualname__", "__signature__"):
    if hasattr(_np.where, _attr):
        setattr(where, _attr, getattr(_np.where, _attr))
del _attr


def install(native, min_bytes):
    global _original, _ufunc, _min_bytes
    if _original is not None:
        return
    _ufunc = native.where_ufunc()
    _min_bytes = min_bytes
    _original = _np.where
    _np.where = where


def uninstall():
    global _original
    if _original is not None:
        _np.where = _original
        _original = None
