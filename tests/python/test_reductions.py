"""ufunc.reduce on the device (sum, prod, max, min, any, all, mean, var, std)
against plain NumPy in the same test.

Tolerances:
- integers, bool, maximum/minimum/fmax/fmin: exact (integer add and multiply
  wrap modulo 2**bits whatever the order, so even overflowing results match);
- float sums in NumPy's order (contiguous arrays, a whole array or any axes
  that merge into one run or leave a kept axis innermost): bit-identical
  (docs/accuracy.md; tests/python/test_sum_order.py covers the orders);
- other float sums (strided views, axis=(0, 2)): |npvk - numpy| <=
  (2*log2(n) + 16) * eps * sum(|x|). NumPy's pairwise summation is within
  about (log2(n) + 8) * eps * sum(|x|) of the exact sum; npvk compensates each
  invocation's run (Neumaier, 2 eps) and adds the runs pairwise (log2 of the
  lanes and partials), so both lie within that distance of the exact sum;
- float products: relative 2 * n * eps (each product rounds once, in a
  different order than NumPy's).
"""

import math
import warnings

import numpy as np
import pytest

import npvk
from npvk_testlib import StatsDelta, assert_same, npvk_enabled, run_both_counted

BIG = 200_000  # a full reduction this long takes the workgroup kernel and a partials pass


def values(dtype, shape, seed=0, near_one=False):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        if near_one:
            return (1 + (rng.random(shape) - 0.5) * 1e-3).astype(dt)
        return (rng.standard_normal(shape) * 100).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


def run_both(fn, *arrays):
    actual, expected, fallbacks, _ = run_both_counted(fn, *arrays)
    return actual, expected, fallbacks


def check(actual, expected, ufunc, x, numpy_order=False):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if numpy_order and ufunc == "add":
        assert_same(actual, expected)
        return
    if actual.dtype.kind != "f" or ufunc in ("maximum", "minimum", "fmax", "fmin"):
        assert_same(actual, expected, signed_zeros=False)
        return
    eps = np.finfo(actual.dtype).eps
    n = x.size // max(actual.size, 1)
    if ufunc == "add":
        scale = np.add.reduce(np.abs(x.astype(np.float64)), axis=None)
        bound = (2 * math.log2(max(n, 2)) + 16) * eps * scale
        err = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
    else:
        bound = 2 * n * eps
        err = np.max(np.abs(actual.astype(np.float64) / expected.astype(np.float64) - 1))
    assert err <= bound, f"{ufunc}: error {err} above {bound}"


ALL = ["?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]
CASES = ([("add", d) for d in ALL] + [("maximum", d) for d in ALL] +
         [("multiply", d) for d in ("?", "i4", "u1", "i8", "f4", "f8")] +
         [("minimum", d) for d in ("i2", "u8", "f4", "f8")] +
         [("fmax", "f8"), ("fmin", "f4")] +
         [("logical_or", d) for d in ("?", "f8", "i4")] +
         [("logical_and", d) for d in ("?", "u2")] +
         [("bitwise_or", d) for d in ("?", "i1", "u8")] +
         [("bitwise_and", "i4"), ("bitwise_xor", "u4")])


@pytest.mark.parametrize("ufunc,dtype", CASES)
def test_full_reduction_matches_numpy(ufunc, dtype):
    x = values(dtype, BIG, seed=len(ufunc), near_one=ufunc == "multiply")
    fn = getattr(np, ufunc).reduce
    actual, expected, fallbacks = run_both(lambda a: fn(a, axis=None), x)
    assert not fallbacks, fallbacks
    assert type(actual) is type(expected)  # a NumPy scalar, as NumPy returns
    check(actual, expected, ufunc, x, numpy_order=True)


AXES = [0, 1, -1, (0, 2), (1, 2), (0, 1, 2), None]


@pytest.mark.parametrize("dtype", ["f8", "i4", "f4"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_axes_match_numpy(dtype, axis, keepdims):
    x = values(dtype, (30, 40, 50), seed=2)
    ufunc = "maximum" if dtype == "f4" else "add"
    fn = getattr(np, ufunc).reduce
    actual, expected, fallbacks = run_both(lambda a: fn(a, axis=axis, keepdims=keepdims), x)
    assert not fallbacks, fallbacks
    # Axes 0 and 2 neither merge into one run nor leave a kept axis innermost.
    check(actual, expected, ufunc, x, numpy_order=axis != (0, 2))


@pytest.mark.parametrize("layout", ["transposed", "strided", "reversed", "slice"])
def test_views_match_numpy(layout):
    x = values("f8", (300, 400), seed=3)
    view = {"transposed": lambda a: a.T, "strided": lambda a: a[::3, 1::2],
            "reversed": lambda a: a[::-1, ::-2], "slice": lambda a: a[1:-1, 2:-2]}[layout]
    for axis in (None, 0, 1):
        actual, expected, fallbacks = run_both(lambda a: view(a).sum(axis=axis), x)
        assert not fallbacks, fallbacks
        check(actual, expected, "add", view(x))


def test_many_short_rows():
    # Many results: an invocation per result.
    x = values("i8", (50_000, 7), seed=4)
    actual, expected, _ = run_both(lambda a: a.sum(axis=1), x)
    assert_same(actual, expected)


@pytest.mark.parametrize("method", ["sum", "prod", "max", "min", "any", "all", "mean", "var",
                                    "std"])
def test_array_methods(method):
    x = values("f8", (400, 300), seed=5, near_one=method == "prod")
    for axis in (None, 0, 1):
        actual, expected, _ = run_both(lambda a: getattr(a, method)(axis=axis), x)
        if method == "mean":
            assert_same(actual, expected)  # a sum in NumPy's order, divided
        elif method in ("var", "std"):
            np.testing.assert_allclose(actual, expected, rtol=1e-12)
        else:
            check(actual, expected, {"sum": "add", "prod": "multiply"}.get(method, "maximum"),
                  x, numpy_order=True)


def test_nan_propagation():
    x = values("f8", BIG, seed=6)
    x[12345] = np.nan
    for ufunc in ("maximum", "minimum", "fmax", "fmin", "add"):
        fn = getattr(np, ufunc).reduce
        actual, expected, _ = run_both(fn, x)
        assert_same(np.asarray(actual), np.asarray(expected), signed_zeros=False)


def test_dtype_and_initial():
    x = values("i1", BIG, seed=7)
    for kwargs in ({"dtype": "f8"}, {"dtype": "i1"}, {"initial": 5}, {"dtype": "u2", "initial": 3}):
        actual, expected, fallbacks = run_both(lambda a: np.add.reduce(a, **kwargs), x)
        assert not fallbacks, (kwargs, fallbacks)
        assert_same(np.asarray(actual), np.asarray(expected))
    f = values("f8", BIG, seed=8)
    actual, expected, _ = run_both(lambda a: np.maximum.reduce(a, initial=1e6), f)
    assert actual == expected == 1e6


def warnings_of(fn, x, enabled):
    """fn(x)'s result and the messages of the warnings it raised, with npvk on
    (x copied into managed memory; pending errors reported by a later ufunc
    call, as a program would see them) or off."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if not enabled:
            result = fn(x)
        else:
            with npvk_enabled(min_bytes=0):
                y = np.array(x)
                result = fn(y)
                npvk.sync()
                np.add(y[:1], 1.0)
    return result, [str(w.message) for w in caught]


def test_overflow_warns_like_numpy():
    x = np.full(BIG, 1e305)
    expected, plain = warnings_of(np.add.reduce, x, enabled=False)
    actual, device = warnings_of(np.add.reduce, x, enabled=True)
    assert actual == expected == np.inf
    assert device == plain == ["overflow encountered in reduce"]


def test_what_npvk_leaves_to_numpy_is_counted_and_equal():
    x = values("f8", (200, 300), seed=9)
    mask = x > 0
    cases = [
        ("where", lambda a: np.add.reduce(a, axis=0, where=mask)),
        ("out", lambda a: np.add.reduce(a, axis=0, out=np.empty(300))),
        ("empty", lambda a: np.add.reduce(a[:0], axis=0)),
    ]
    for reason, fn in cases:
        actual, expected, fallbacks = run_both(fn, x)
        assert_same(actual, expected)
        assert fallbacks.get("add.reduce", {}).get(reason) == 1, (reason, fallbacks)
    # NumPy's own errors, in NumPy's words.
    with npvk_enabled(min_bytes=0):
        y = np.array(x)
        with pytest.raises(getattr(np, "exceptions", np).AxisError):  # np.exceptions: 1.25+
            y.sum(axis=5)
        with pytest.raises(ValueError):
            np.maximum.reduce(y[:, :0], axis=1)


def test_results_stay_on_the_device():
    # An axis reduction's result is read lazily: a chain of reductions and
    # elementwise ops syncs once, when the host reads the end result.
    x = values("f8", (500, 400), seed=10)
    with npvk_enabled(min_bytes=0):
        y = np.array(x)
        npvk.sync()
        before = npvk.stats()["host_syncs"]
        col = y.sum(axis=0)
        scaled = col * 2.0
        total = scaled.max()
        after = npvk.stats()["host_syncs"]
    assert total == (x.sum(axis=0) * 2.0).max() or abs(total - (x.sum(axis=0) * 2).max()) < 1e-9
    synced = sum(after.values()) - sum(before.values())
    assert synced == 1, (before, after)


# ---------------------------------------------------------------------------
# ufunc.accumulate: each line is scanned in order, so every result, float
# ones included, equals NumPy's bit for bit.

SCANS = ([("add", d) for d in ("?", "i1", "u2", "i4", "i8", "u8", "f4", "f8")] +
         [("multiply", d) for d in ("i4", "f8")] +
         [("maximum", d) for d in ("i2", "f4", "f8")] +
         [("minimum", "u1"), ("fmin", "f8"), ("logical_or", "?"), ("bitwise_xor", "u4")])


@pytest.mark.parametrize("ufunc,dtype", SCANS)
def test_accumulate_matches_numpy(ufunc, dtype):
    # 70 000 elements: longer than one lavapipe loop may run, so the line is
    # scanned by several dispatches in turn.
    x = values(dtype, 70_000, seed=11, near_one=ufunc == "multiply")
    fn = getattr(np, ufunc).accumulate
    actual, expected, fallbacks = run_both(fn, x)
    assert not fallbacks, fallbacks
    assert_same(actual, expected)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_accumulate_axes_and_methods(axis):
    x = values("f8", (20, 30, 40), seed=12)
    for fn in (lambda a: np.add.accumulate(a, axis=axis), lambda a: a.cumsum(axis=axis),
               lambda a: np.cumprod(a[:, ::-2] * 1e-2, axis=axis),
               lambda a: np.maximum.accumulate(a.T, axis=axis)):
        actual, expected, _ = run_both(fn, x)
        assert_same(actual, expected)
    actual, expected, _ = run_both(lambda a: a.cumsum(), x)  # flattened
    assert_same(actual, expected)


def test_accumulate_dtypes_and_warnings():
    x = values("i1", 5000, seed=13)
    for fn in (np.cumsum, lambda a: np.add.accumulate(a), lambda a: np.cumsum(a, dtype="f4"),
               lambda a: np.add.accumulate(a, dtype="i1")):
        actual, expected, fallbacks = run_both(fn, x)
        assert not fallbacks, fallbacks
        assert_same(actual, expected)
    big = np.full(5000, 1e305)
    expected, plain = warnings_of(np.add.accumulate, big, enabled=False)
    actual, device = warnings_of(np.add.accumulate, big, enabled=True)
    assert_same(actual, expected)
    assert device == plain == ["overflow encountered in accumulate"]
