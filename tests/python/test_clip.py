"""np.clip and ndarray.clip on the device (NumPy's umath.clip ufunc): the
ways programs call it, against plain NumPy bit for bit. test_ufunc_loops.py
runs every clip loop in the generic layouts (every combination of special
values, NaN and signed zeros among them)."""


import numpy as np
import pytest

from npvk_testlib import (NUMPY2, NUMPY_VERSION, assert_raises_like_numpy, assert_same, np_umath,
                          numpy_error, run_both_warned)

N = 20_000
DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64"]


def _values(dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.standard_normal(N) * 50
        x[::97] = np.nan
        x[1::89] = -0.0
        x[2::83] = np.inf
        return x.astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, N, endpoint=True, dtype=dt)


def _bounds(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return dt.type(-10.5), dt.type(20.25)
    return (dt.type(3), dt.type(100)) if dt.kind == "u" else (dt.type(-20), dt.type(100))


def _run(fn, *arrays):
    """fn on NumPy's path and with npvk: (actual, expected, device ops,
    clip fallbacks, warnings seen with npvk)."""
    actual, expected, delta = run_both_warned(fn, *arrays)
    return actual, expected, delta.device_ops, delta.fallbacks(ufunc="clip")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("form", ["np.clip", "method", "out=self"])
def test_scalar_bounds(dtype, form):
    lo, hi = _bounds(dtype)

    def fn(x):
        if form == "np.clip":
            return np.clip(x, lo, hi)
        if form == "method":
            return x.clip(lo, hi)
        np.clip(x, lo, hi, out=x)
        return x

    actual, expected, ops, fallbacks = _run(fn, _values(dtype))
    assert_same(actual, expected)
    assert ops > 0 and fallbacks == 0


@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
def test_array_bounds_broadcast_and_strided(dtype):
    """Bounds that vary per row and per column, on a strided view. Integer
    N-d calls are still cut into NumPy's buffered chunks, so they take
    NumPy's path, counted (docs/architecture.md, "Known problems")."""
    x = _values(dtype, 1).reshape(100, 200)
    lo = np.nan_to_num(_values(dtype, 2)[:200]) // 4
    hi = (np.abs(np.nan_to_num(_values(dtype, 3)[:100])) // 2).reshape(100, 1)
    actual, expected, ops, fallbacks = _run(lambda a, l, h: np.clip(a[:, ::2], l[::2], h), x, lo,
                                            hi)
    assert_same(actual, expected)
    if dtype == "int16":
        assert fallbacks > 0
    else:
        assert ops > 0 and fallbacks == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", [(np.nan, 1.0), (-1.0, np.nan), (np.nan, np.nan),
                                    (1.0, -1.0), (-0.0, 0.0), (0.0, -0.0), (-np.inf, np.inf)])
def test_float_edge_bounds(dtype, bounds):
    """NaN bounds give NaN everywhere, crossed bounds give hi, and the zero
    picked for signed zeros is NumPy's; no warnings (NumPy's loop clears the
    FP status)."""
    dt = np.dtype(dtype).type
    lo, hi = dt(bounds[0]), dt(bounds[1])
    actual, expected, ops, fallbacks = _run(lambda x: np.clip(x, lo, hi), _values(dtype, 4))
    assert_same(actual, expected)
    if NUMPY_VERSION >= (2, 1) and 0.0 in bounds:
        # NumPy 2.1's loop for scalar bounds keeps x where x and a bound are
        # zeros of opposite sign; the device has the array-bound loop only.
        assert ops == 0 and fallbacks > 0
    else:
        assert ops > 0 and fallbacks == 0


def test_fused_in_a_chain():
    """clip inside an elementwise chain: one kernel with its neighbours."""
    def fn(x):
        y = np.clip(x * 0.5 - 1.0, -3.0, 7.5)
        return np.sqrt(y + 3.0)

    actual, expected, ops, fallbacks = _run(fn, _values("float64", 5))
    assert_same(actual, expected)
    assert ops >= 4 and fallbacks == 0


def test_python_int_bounds_outside_the_dtype():
    """NumPy 1.x picks a wider loop for bounds the dtype cannot hold
    (value-based casting): the result's dtype follows. NumPy casts the input
    in buffers of its own, so that loop takes NumPy's path, counted. NumPy 2
    (NEP 50) keeps the array's dtype and clips the bound into its range: the
    int8 loop, on the device."""
    x = _values("int8", 6)
    fn = lambda a: np.clip(a, -1000, 50)  # noqa: E731
    error = numpy_error(fn, x)  # NumPy 2.0 raises OverflowError; 2.1 clips the bound
    if error is not None:
        assert NUMPY2
        assert_raises_like_numpy(error, fn, x)
        return
    actual, expected, ops, fallbacks = _run(fn, x)
    assert_same(actual, expected)
    if NUMPY2:
        assert actual.dtype == expected.dtype == np.int8
        assert ops > 0 and fallbacks == 0
    else:
        assert actual.dtype == expected.dtype == np.int16
        assert fallbacks > 0


def test_bool():
    rng = np.random.default_rng(7)
    x, lo, hi = (rng.integers(0, 2, N).astype(bool) for _ in range(3))
    actual, expected, ops, fallbacks = _run(np_umath.clip, x, lo, hi)
    assert_same(actual, expected)
    assert ops > 0 and fallbacks == 0
