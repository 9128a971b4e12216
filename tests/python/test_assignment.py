"""Slice assignment on the device (``a[index] = value``), against plain NumPy
in the same test: results bit-identical (a copy or a cast rounds exactly as
NumPy's), overlapping source and destination as if copied first, and the
destination's pages never handed back to the host on the way."""

from operator import setitem  # a[index] = value (a.__setitem__ would bypass the slot)

import numpy as np
import pytest

import npvk
from npvk_testlib import (StatsDelta, assert_raises_like_numpy, assert_same, npvk_enabled,
                          numpy_error, run_both_counted)

N = 200_000


def run_both(scenario):
    expected = scenario()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual = scenario()
        npvk.sync()
        fallbacks = delta.fallback_table()
        faults = delta.now()["host_syncs"]["fault"] - delta.start["host_syncs"]["fault"]
    return actual, expected, fallbacks, faults


CASES = {
    "slice_from_array": lambda a, b: setitem(a, slice(10, -10), b[20:]),
    "strided": lambda a, b: setitem(a, slice(None, None, 3), b[: (N + 2) // 3]),
    "reversed": lambda a, b: setitem(a, slice(None, None, -1), b),
    "scalar_float": lambda a, b: setitem(a, slice(5, 100), 2.5),
    "scalar_int": lambda a, b: setitem(a, Ellipsis, 7),
    "numpy_scalar": lambda a, b: setitem(a, slice(None), np.float32(1.25)),
    "overlap_right": lambda a, b: setitem(a, slice(1, None), a[:-1]),
    "overlap_left": lambda a, b: setitem(a, slice(None, -1), a[1:]),
    "cast_int_to_float": lambda a, b: setitem(a, slice(None), b.astype(np.int32)),
    "small_host_value": lambda a, b: setitem(a, slice(0, 50), np.arange(50.0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_1d_assignment_matches_numpy(case):
    def scenario():
        a = np.arange(N, dtype=np.float64) * 0.5
        b = np.sqrt(np.arange(N, dtype=np.float64))
        CASES[case](a, b)
        return a

    actual, expected, fallbacks, faults = run_both(scenario)
    assert_same(actual, expected)
    assert set(fallbacks) <= {"astype"}, fallbacks  # float64 to int32: NumPy's cast
    assert faults <= 1  # reading the result at the end, nothing before


def test_2d_stencil_matches_numpy():
    def scenario():
        g = np.arange(400 * 500, dtype=np.float64).reshape(400, 500) % 17
        for _ in range(3):
            g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
            g[0, :] = 1.0
            g[:, -1] = g[:, -2]
        return g

    actual, expected, fallbacks, _ = run_both(scenario)
    assert_same(actual, expected)
    assert "setitem" not in fallbacks, fallbacks


@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "i4", "u8", "f4", "f8"])
def test_dtypes(dtype):
    def scenario():
        a = np.zeros(N, dtype=dtype)
        src = (np.arange(N) % 100).astype(dtype)
        a[::2] = src[::2]
        a[1::4] = 1
        return a

    actual, expected, fallbacks, _ = run_both(scenario)
    assert_same(actual, expected)
    assert "setitem" not in fallbacks, fallbacks


def test_what_numpy_keeps_is_counted_and_equal():
    cases = {
        "cast": lambda a: setitem(a, slice(None), np.full(N, 2.7)),  # float to int checks FP
        "range": lambda a: setitem(a, slice(None), 2 ** 40),  # NumPy's own overflow rules
        "value": lambda a: setitem(a, slice(0, 3), [1, 2, 3]),  # a list
    }
    for reason, fn in cases.items():
        def scenario():
            a = np.zeros(N, dtype=np.int32)
            with np.testing.suppress_warnings() as sup:
                sup.filter(DeprecationWarning)
                try:
                    fn(a)
                except OverflowError as exc:
                    return type(exc)
            return a

        actual, expected, fallbacks, _ = run_both(scenario)
        if isinstance(expected, np.ndarray):
            assert_same(actual, expected)
        else:
            assert actual is expected
        if reason != "value":
            assert fallbacks.get("setitem", {}).get(reason) == 1, (reason, fallbacks)


def test_errors_are_numpys():
    with npvk_enabled(min_bytes=0):
        a = np.zeros(N)
        with pytest.raises(ValueError):
            a[:10] = np.ones(11)
        with pytest.raises(IndexError):
            a[:, 1] = 0.0
        a[3] = 4.0  # one element: NumPy's path
        assert a[3] == 4.0


# ---------------------------------------------------------------------------
# Whole N-d ufunc calls (python-shim/src/ufunc_call.cpp): elementwise work on
# strided N-d views, which NumPy would copy through its own buffers, runs on
# the device as one operation with NumPy's result dtype and layout.

ND_CASES = {
    "strided_views": lambda g: g[:-2, 1:-1] + g[2:, 1:-1],
    "elided_temporary": lambda g: g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2],
    "python_scalar": lambda g: 0.25 * g[::2, 1:],
    "int_scalar": lambda g: g[1:, ::3] - 3,
    "broadcast_row": lambda g: g[1:, 1:] * g[0, 1:],
    "broadcast_column": lambda g: g[1:, 1:] / g[1:, :1],
    "comparison": lambda g: g[1:, :-1] < g[:-1, 1:],
    "unary": lambda g: np.sqrt(g[::3, ::2]),
    "float32": lambda g: g.astype(np.float32)[1:, 1:] * 0.5,
    "float32_big_scalar": lambda g: g.astype(np.float32)[1:, 1:] * 1e300,  # NumPy: float64
    "transposed": lambda g: g.T[1:, 1:] + g.T[:-1, :-1],  # left to NumPy's layout rules
    "out_keyword": lambda g: (lambda o: (np.add(g[:-2, 1:-1], g[2:, 1:-1], out=o[1:-1, 1:-1]),
                                         o)[1])(np.zeros_like(g)),
    "out_tuple": lambda g: (lambda o: (np.multiply(g[1:, 1:], 3.0, out=(o,)), o)[1])(
        np.zeros((299, 399))),
}


@pytest.mark.parametrize("case", sorted(ND_CASES))
def test_nd_strided_calls_match_numpy(case):
    def scenario():
        g = (np.arange(300 * 400, dtype=np.float64).reshape(300, 400) % 23) + 1.0
        return ND_CASES[case](g)

    with np.errstate(over="ignore"):
        actual, expected, fallbacks, _ = run_both(scenario)
    assert_same(actual, expected)
    assert actual.strides == expected.strides
    fallbacks.pop("astype", None)  # float64 to float32: NumPy's cast
    if case not in ("transposed", "float32_big_scalar"):  # NumPy's own path, by design
        assert not fallbacks, fallbacks


def test_stencil_time_loop_stays_on_the_device():
    def scenario():
        g = np.arange(500 * 600, dtype=np.float64).reshape(500, 600) % 29
        npvk.sync() if npvk.is_enabled() else None
        start = npvk.stats()["host_syncs"] if npvk.is_enabled() else None
        for _ in range(5):
            g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        if npvk.is_enabled():
            assert npvk.stats()["host_syncs"] == start  # nothing synced inside the loop
        return g

    actual, expected, fallbacks, _ = run_both(scenario)
    assert_same(actual, expected)
    assert not fallbacks, fallbacks


# ---------------------------------------------------------------------------
# ndarray.copy, ndarray.astype and np.copyto on the device.

COPY_CASES = {
    "copy": lambda a: a.copy(),
    "copy_of_view": lambda a: a[1::3].copy(),
    "copy_order_k": lambda a: a[::2].copy(order="K"),
    "astype_int_to_float": lambda a: a.astype(np.int32).astype(np.float64),
    "astype_float32_to_64": lambda a: a.astype(np.float32, casting="unsafe").astype(np.float64),
    "astype_bool": lambda a: a.astype(bool),
    "copyto": lambda a: (lambda d: (np.copyto(d, a[::-1]), d)[1])(np.zeros_like(a)),
    "copyto_broadcast": lambda a: (lambda d: (np.copyto(d, a[:1000]), d)[1])(
        np.zeros((50, 1000))),
}


@pytest.mark.parametrize("case", sorted(COPY_CASES))
def test_copies_match_numpy(case):
    def scenario():
        a = np.arange(N, dtype=np.float64) * 0.75 - 1000.0
        return COPY_CASES[case](a)

    actual, expected, fallbacks, _ = run_both(scenario)
    assert_same(actual, expected)
    assert actual.strides == expected.strides
    # float64 to int32 and to float32 are NumPy's (its casts check FP errors).
    assert set(fallbacks) <= {"astype"}, fallbacks
    assert sum(fallbacks.get("astype", {}).values()) <= 1


def test_copy_is_lazy():
    with npvk_enabled(min_bytes=0):
        a = np.arange(N, dtype=np.float64) * 2.0
        npvk.sync()
        before = npvk.stats()["host_syncs"]["fault"]
        b = a.copy()
        b[10:20] = 1.0
        c = b.astype(np.float64) + a
        assert npvk.stats()["host_syncs"]["fault"] == before
        assert c[15] == 1.0 + 30.0


def test_boundary_columns_of_a_large_grid_stay_on_the_device():
    """With the default NPVK_MIN_BYTES, a 1-d column of a large managed grid
    is itself small: its negation is taken whole with a managed result, so
    updating the grid's boundary syncs nothing (shallow water's boundaries)."""
    def scenario():
        g = np.arange(600 * 700, dtype=np.float64).reshape(600, 700) * 0.5
        for _ in range(3):
            g[:, 0] = -g[:, 1]
            g[0, :] = g[1, :] * 2.0
            g[1:-1, 1:-1] = g[1:-1, 1:-1] + 1.0
        return g

    expected = scenario()
    with npvk_enabled(min_bytes=None):  # the default threshold
        delta = StatsDelta()
        actual = scenario()
        npvk.sync()
        syncs = sum(delta.now()["host_syncs"].values()) - sum(delta.start["host_syncs"].values())
        fallbacks = delta.fallback_table()
    assert_same(actual, expected)
    assert syncs == 1, (syncs, fallbacks)  # npvk.sync() only
    assert not fallbacks, fallbacks


FULL_CASES = {
    "ones_float64": lambda: np.ones(N),
    "ones_int8": lambda: np.ones(N, dtype=np.int8),
    "ones_bool": lambda: np.ones(N, dtype=bool),
    "full_float32": lambda: np.full(N, 2.5, dtype=np.float32),
    "full_uint64_max": lambda: np.full(N, 2 ** 64 - 1, dtype=np.uint64),
    "full_numpy_scalar": lambda: np.full((100, N // 100), np.float32(-0.0)),
    "full_nan": lambda: np.full(N, np.nan),
    "ones_like": lambda: np.ones_like(np.zeros(N, dtype=np.int16)),
}


@pytest.mark.parametrize("case", sorted(FULL_CASES))
def test_ones_and_full_are_not_fallbacks(case):
    """np.ones and np.full end in copyto(new, value, casting="unsafe"). A new
    array's pages are the host's, so NumPy fills them, uncounted, as calloc
    does np.zeros' (counted as copyto fallbacks up to 2861ec4)."""
    actual, expected, fallbacks, device_ops = run_both_counted(FULL_CASES[case])
    assert_same(actual, expected)
    assert not fallbacks, fallbacks
    assert device_ops == 0


@pytest.mark.parametrize("dtype", [np.float64, np.int8, np.uint32, bool])
def test_copyto_of_a_scalar_into_an_array_in_use_is_queued(dtype):
    """A fill of an array that queued work still writes: queued after it on
    the device, not a sync."""
    def scenario():
        a = np.arange(N).astype(dtype)
        b = a * a                    # queued: writes b
        np.copyto(b, dtype(1), casting="unsafe")
        return b + a

    actual, expected, fallbacks, device_ops = run_both_counted(scenario)
    assert_same(actual, expected)
    assert not fallbacks, fallbacks
    with npvk_enabled(min_bytes=0):
        a = np.arange(N).astype(dtype)
        b = a * a
        delta = StatsDelta()
        np.copyto(b, dtype(1), casting="unsafe")
        assert delta.device_ops == 1 and delta.get("host_syncs", "fault") == 0
        assert b[7] == 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("value,dtype", [(300, np.int8), (2.7, np.int32), (1e300, np.float32)])
def test_fill_values_numpy_converts_itself_are_counted(value, dtype):
    """Out-of-range and float-to-int fill values of an array in use keep
    NumPy's own conversion (its wrap-around, warnings and errors), counted
    as copyto fallbacks."""
    def scenario():
        b = np.arange(N).astype(dtype) * dtype(3)   # queued: writes b
        # (Not in a catch_warnings block: entering one reports, so runs,
        # the queued work, and b would be the host's again.)
        np.copyto(b, value, casting="unsafe")
        return b

    error = numpy_error(scenario)  # NumPy 2.1+ raises for 300 into int8 (NEP 50)
    if error is not None:
        assert_raises_like_numpy(error, scenario)
        return

    actual, expected, fallbacks, _ = run_both_counted(scenario)
    assert_same(actual, expected)
    assert sum(fallbacks.get("copyto", {}).values()) == 1, fallbacks


def test_strict_error_state_counts_assignment_and_copies():
    """Under an error state that needs NumPy's loops (underflow reported),
    assignments and copies of managed arrays are NumPy's, counted as
    "errstate" like the loops (they were skipped silently up to 2861ec4)."""
    with npvk_enabled(min_bytes=0):
        a = np.arange(N, dtype=np.float64)
        npvk.sync()
        delta = StatsDelta()
        with np.errstate(under="warn"):
            a[10:20] = 1.5
            b = a.copy()
        assert delta.fallbacks(ufunc="setitem", reason="errstate") == 1
        assert delta.fallbacks(ufunc="copy", reason="errstate") == 1
        assert delta.device_ops == 0
    expected = np.arange(N, dtype=np.float64)
    expected[10:20] = 1.5
    assert_same(b, expected)
