"""The NumPy npvk runs under: its version, its private core modules, and its
promotion rules. The one place that knows how NumPy 1.x and 2.x differ on
the Python side.

NumPy 2 moved numpy.core to numpy._core and left numpy.core as a deprecated
alias whose import warns; npvk imports _core where it exists, so importing
npvk is silent under -W error.
"""

import numpy as _np

VERSION = tuple(int(part) for part in _np.__version__.split(".")[:2])
NUMPY2 = VERSION >= (2, 0)

if NUMPY2:
    from numpy._core import _multiarray_umath as multiarray_umath  # noqa: F401
    from numpy._core import _ufunc_config as ufunc_config  # noqa: F401
    from numpy._core import multiarray, umath  # noqa: F401
else:
    from numpy.core import _multiarray_umath as multiarray_umath  # noqa: F401
    from numpy.core import _ufunc_config as ufunc_config  # noqa: F401
    from numpy.core import multiarray, umath  # noqa: F401


def _power_half_is_sqrt(dtype):
    """Whether NumPy's float loop of power computes x**0.5 (a scalar
    exponent) as sqrt(x): NumPy 2.1 and later do on CPUs with AVX-512, where
    power(-inf, 0.5) is nan, not C's pow result inf. Asked of NumPy itself,
    at import (before npvk replaces any loop)."""
    with _np.errstate(all="ignore"):
        x = _np.full(16, -_np.inf, dtype=dtype)
        return bool(_np.isnan(_np.power(x, dtype(0.5))).all())


POWER_HALF_IS_SQRT = (_power_half_is_sqrt(_np.float32), _power_half_is_sqrt(_np.float64))


def promotion_state():
    """'legacy' (value-based casting: NumPy 1.x's default), 'weak' (NEP 50:
    NumPy 2, or NPY_PROMOTION_STATE=weak on 1.24-1.26) or 'weak_and_warn'."""
    get = getattr(_np, "_get_promotion_state", None)
    if get is not None:
        return get()
    return "weak" if NUMPY2 else "legacy"


_installed = []  # (module, original _set_promotion_state) to restore


def install(native):
    """Tells the shim NumPy's version, and its promotion state now and
    whenever np._set_promotion_state (NumPy 1.24-2.1) changes it."""
    native.set_numpy_version(*VERSION)
    native.set_power_half_is_sqrt(*POWER_HALF_IS_SQRT)
    native.set_promotion(promotion_state())
    setter = getattr(_np, "_set_promotion_state", None)
    if setter is None or getattr(setter, "_npvk", False):
        return

    def _set_promotion_state(state):
        setter(state)
        native.set_promotion(promotion_state())

    _set_promotion_state._npvk = True
    _set_promotion_state.__wrapped__ = setter
    import sys

    for name, module in list(sys.modules.items()):
        if (name == "numpy" or name.startswith("numpy.")) and \
                vars(module).get("_set_promotion_state") is setter:
            module._set_promotion_state = _set_promotion_state
            _installed.append((module, setter))


def uninstall():
    while _installed:
        module, setter = _installed.pop()
        module._set_promotion_state = setter
