"""np.where(c, x, y) through npvk's where ufunc, and fused chains seen from
Python: results equal plain NumPy's (values, dtype, shape, memory order),
and the work stays on the device in few kernels."""

import numpy as np
import pytest

import npvk
from npvk_testlib import (StatsDelta, assert_raises_like_numpy, assert_same, npvk_enabled,
                          numpy_error)

N = 5000


def run_both(fn, *arrays):
    """fn(*arrays) with npvk off (on copies) and on; returns (actual, expected)."""
    # order="K": the copies keep the layouts np.array gives the managed ones.
    expected = fn(*[a.copy(order="K") if isinstance(a, np.ndarray) else a for a in arrays])
    with npvk_enabled(min_bytes=0):
        device_arrays = [np.array(a) if isinstance(a, np.ndarray) else a for a in arrays]
        actual = fn(*device_arrays)
        npvk.sync()
    return actual, expected


@pytest.mark.parametrize("dtype", ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8",
                                   "f4", "f8"])
def test_where_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    cond = rng.integers(0, 2, N).astype(bool)
    x = (rng.integers(0, 100, N)).astype(dtype)
    y = (rng.integers(0, 100, N)).astype(dtype)
    actual, expected = run_both(np.where, cond, x, y)
    assert_same(actual, expected)


@pytest.mark.parametrize("case", ["float_condition", "int_condition", "broadcast", "scalars",
                                  "mixed_types", "python_int_promotion", "fortran_order",
                                  "reversed_views"])
def test_where_semantics(case):
    rng = np.random.default_rng(3)
    f = rng.standard_normal(N)
    f[::7] = np.nan
    f[::11] = 0.0
    i = rng.integers(-3, 3, N)
    m = rng.standard_normal((60, 70))
    cases = {
        "float_condition": (lambda a, b: np.where(a, b, -b), f, f * 2),  # NaN is true
        "int_condition": (lambda a, b: np.where(a, b, 0.5), i, f),
        "broadcast": (lambda a, b: np.where(a[:, None] > 0, b, b[:1]), m[:, 0].copy(), m),
        "scalars": (lambda a, b: np.where(a > 0, 1.0, -1.0), f, f),
        "mixed_types": (lambda a, b: np.where(a > 0, a.astype(np.float32), b), f, i),
        # NumPy 1.x: int16; NumPy 2.0-2.4 (NEP 50): int8, 1000 wrapped by
        # NumPy's where; NumPy 2.5 raises OverflowError.
        "python_int_promotion": (lambda a, b: np.where(a > 0, a.astype(np.int8), 1000), i, i),
        "fortran_order": (lambda a, b: np.where(a > 0, a, b), np.asfortranarray(m),
                          np.asfortranarray(m * 3)),
        "reversed_views": (lambda a, b: np.where(a[::-1] > 0, a, b[::-1]), f, f * 5),
    }
    fn, a, b = cases[case]
    error = numpy_error(fn, a, b)  # NumPy 2.5 raises for 1000 as int8
    if error is not None:
        assert case == "python_int_promotion", error
        assert_raises_like_numpy(error, fn, a, b)
        return
    actual, expected = run_both(fn, a, b)
    assert_same(actual, expected)
    assert actual.flags.c_contiguous == expected.flags.c_contiguous
    assert actual.flags.f_contiguous == expected.flags.f_contiguous


def test_where_keeps_numpy_behaviour_elsewhere():
    with npvk_enabled(min_bytes=0):
        assert type(np.where(True, 1, 2)) is np.ndarray  # 0-d stays an array
        assert np.where(True, 1, 2).shape == ()
        idx = np.where(np.array([0, 3, 0, 4]))  # one argument: indices
        assert [list(a) for a in idx] == [[1, 3]]
        obj = np.where(np.array([True, False]), np.array(["a", "b"], dtype=object), "z")
        assert list(obj) == ["a", "z"]
        with pytest.raises(ValueError):
            np.where(np.array([True]), np.array([1]))


def test_where_stays_on_the_device_in_a_fused_chain():
    rng = np.random.default_rng(11)
    d = rng.standard_normal(200_000)

    def cnd_like(d):
        k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        w = np.exp(-0.5 * d * d) * k
        return np.where(d > 0, w * 2.0, w)  # no cancellation: the 1-ULP exp bound holds

    expected = cnd_like(d.copy())
    with npvk_enabled(min_bytes=0):
        dd = np.array(d)
        npvk.sync()
        delta = StatsDelta()
        actual = cnd_like(dd)
        npvk.sync()
        now = delta.now()
        dispatches = now["dispatches"] - delta.start["dispatches"]
        syncs = now["host_syncs"]["fault"] - delta.start["host_syncs"]["fault"]
        fallbacks = delta.fallbacks()
    # npvk's exp is within 0.53 ULP of the exact value, NumPy's (SIMD) within
    # a few; the two multiplications after it each round the difference once.
    assert_same(actual, expected, ulps=4)
    assert fallbacks == 0
    assert syncs == 0, "np.where read its operands on the host"
    assert dispatches == 1, "the chain, np.where included, is one fused kernel"
