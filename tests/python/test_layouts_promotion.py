"""Memory layouts, dtypes and kernels where npvk once differed from NumPy
(issue 39): results of np.where, reductions and scans keep the memory order
NumPy gives them (order 'K': a Fortran-ordered input gives a Fortran-ordered
result, which np.save writes into its header); np.where promotes as the
running NumPy does, NPY_PROMOTION_STATE=weak on NumPy 1.x included; a flush
that mixes signed and unsigned integers of one width compiles; and an output
that partly overlaps an input gives NumPy's result, whichever op family."""

import io
import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import npvk
from npvk_testlib import (NPVK_PYTHON_DIR, NUMPY2, StatsDelta, assert_same, npvk_enabled)


_BASE = np.random.default_rng(5).standard_normal((6, 7, 8))


def _layouts():
    """Views of a 3-d C-ordered array in every axis order, plain, reversed
    and strided: (name, view maker)."""
    for perm in itertools.permutations(range(3)):
        for name, index in (("", (slice(None),) * 3),
                            ("reversed", (slice(None, None, -1), slice(None), slice(None))),
                            ("strided", (slice(None), slice(None, None, 2), slice(None)))):
            yield f"{perm}{name}", (lambda a, perm=perm, index=index: a.transpose(perm)[index])


def _both(fn, view, base):
    """fn(view(base)) plain, on a copy, and with npvk in forced mode, on a
    managed copy (the view then has the same strides)."""
    expected = fn(view(base.copy()))
    with npvk_enabled(min_bytes=0):
        actual = fn(view(np.array(base)))
        npvk.sync()
    return actual, expected


def assert_same_layout(actual, expected, context):
    assert_same(actual, expected, context=context)
    assert actual.strides == expected.strides, f"{context}: {actual.strides} != {expected.strides}"


@pytest.mark.parametrize("name,view", list(_layouts()), ids=[n for n, _ in _layouts()])
def test_reduction_and_scan_results_keep_numpy_layout(name, view):
    ints = np.rint(_BASE * 100).astype(np.int64)  # exact sums, whatever the order
    for axis in (0, 1, 2, (0, 1), (1, 2)):
        for keepdims in (False, True):
            actual, expected = _both(lambda a: np.sum(a, axis=axis, keepdims=keepdims), view,
                                     ints)
            assert_same_layout(actual, expected, f"{name} sum axis={axis} keepdims={keepdims}")
        actual, expected = _both(lambda a: np.max(a, axis=axis), view, _BASE)
        assert_same_layout(actual, expected, f"{name} max axis={axis}")
    for axis in range(3):
        actual, expected = _both(lambda a: np.cumsum(a, axis=axis), view, ints)
        assert_same_layout(actual, expected, f"{name} cumsum axis={axis}")


def test_fortran_cumsum_and_where_save_as_numpy():
    b = np.asfortranarray(np.random.default_rng(2).random((300, 200)))

    def saved(a):
        out = io.BytesIO()
        np.save(out, a)
        return out.getvalue()

    for fn in (lambda a: np.cumsum(a, axis=1), lambda a: np.where(a > 0.5, a, 0.0)):
        expected = fn(b.copy(order="F"))
        for min_bytes in (0, None):  # forced mode, and the default threshold
            with npvk_enabled(**({} if min_bytes is None else {"min_bytes": min_bytes})):
                actual = fn(b.copy(order="F"))
                assert actual.flags.f_contiguous and not actual.flags.c_contiguous
                assert saved(actual) == saved(expected)


@pytest.mark.parametrize("name,view", list(_layouts()), ids=[n for n, _ in _layouts()])
def test_where_result_keeps_numpy_layout(name, view):
    actual, expected = _both(lambda a: np.where(a > 0, a, -a), view, _BASE)
    assert_same_layout(actual, expected, name)
    # Operands of two layouts: NumPy's iterator decides.
    c = np.ascontiguousarray(view(_BASE))
    expected = np.where(c > 0, view(_BASE.copy()), 0.0)
    with npvk_enabled(min_bytes=0):
        actual = np.where(np.array(c) > 0, view(np.array(_BASE)), 0.0)
        npvk.sync()
    assert_same_layout(actual, expected, name + " mixed")


_WEAK_WHERE = """
import numpy as np, npvk
c = np.arange(50_000) % 3 == 0
f = np.arange(50_000, dtype=np.float32)
i = np.arange(50_000, dtype=np.int8)
def cases():
    return [np.where(c, f, 1.5), np.where(c, 1.5, f), np.where(c, f, np.float64(1.5)),
            np.where(c, i, 3), np.where(c, f, 2)]
expected = [(r.dtype.str, r.tobytes()) for r in cases()]
npvk.enable(min_bytes=0)
c, f, i = np.array(c), np.array(f), np.array(i)
actual = [(r.dtype.str, r.tobytes()) for r in cases()]
npvk.disable()
print([e[0] for e in expected], [a[0] for a in actual])
assert actual == expected
"""


@pytest.mark.parametrize("state", ["legacy", "weak"])
def test_where_promotes_as_the_running_numpy(state):
    if NUMPY2 and state == "legacy":
        pytest.skip("NumPy 2 has only NEP 50's promotion")
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR)
    env.pop("NPVK", None)
    if not NUMPY2:
        env["NPY_PROMOTION_STATE"] = state
    done = subprocess.run([sys.executable, "-c", _WEAK_WHERE], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_signed_and_unsigned_of_one_width_in_one_flush():
    n = 20_000
    with npvk_enabled(min_bytes=0):
        i = np.arange(n, dtype=np.int64) - 7
        u = np.arange(n, dtype=np.uint64) * np.uint64(3)
        k = np.arange(n, dtype=np.int32) - 9
        w = np.arange(n, dtype=np.uint32) * np.uint32(5)
        delta = StatsDelta()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the failed compile warned
            r = [i + 1, u + np.uint64(1), np.gcd(i, 6), np.gcd(u, np.uint64(10)),
                 np.lcm(k, 4), np.gcd(w, np.uint32(15))]
            npvk.sync()
        delta.stop()
        assert delta.get("flush_failures") == 0
        assert delta.device_ops >= len(r)
        got = [np.array(a) for a in r]
    i, u = np.arange(n, dtype=np.int64) - 7, np.arange(n, dtype=np.uint64) * np.uint64(3)
    k, w = np.arange(n, dtype=np.int32) - 9, np.arange(n, dtype=np.uint32) * np.uint32(5)
    want = [i + 1, u + np.uint64(1), np.gcd(i, 6), np.gcd(u, np.uint64(10)), np.lcm(k, 4),
            np.gcd(w, np.uint32(15))]
    for a, e in zip(got, want):
        assert_same(a, e)


# Outputs that overlap an input without being the same elements: NumPy (1.13
# on) behaves as if the inputs were copied first. Integer values, so every
# path (device, NumPy's loops) computes exactly the same numbers.
_OVERLAPS = {
    "add shifted out": lambda x: np.add(x[:-1], x[1:], out=x[1:]),
    "multiply reversed out": lambda x: np.multiply(x, 3, out=x[::-1]),
    "negative strided out": lambda x: np.negative(x[::2], out=x[: (len(x) + 1) // 2]),
    "slice assignment shifted": lambda x: x.__setitem__(slice(1, None), x[:-1]),
    "slice assignment expression": lambda x: x.__setitem__(slice(2, None), x[:-2] + x[1:-1]),
    "in-place shifted": lambda x: x[1:].__iadd__(x[:-1]),
    "copyto shifted": lambda x: np.copyto(x[3:], x[:-3]),
    "accumulate out shifted": lambda x: np.add.accumulate(x[:-1], out=x[1:]),
    "reduce out inside": lambda x: np.add.reduce(x.reshape(10, -1), axis=0,
                                                 out=x[: x.size // 10]),
    "where shifted out": lambda x: np.where(x[1:] > 0, x[:-1], x[1:] * 2),
    "matmul out overlaps": lambda x: np.matmul(x[:64].reshape(8, 8), x[:64].reshape(8, 8),
                                               out=x[8:72].reshape(8, 8)),
}


@pytest.mark.parametrize("case", sorted(_OVERLAPS))
@pytest.mark.parametrize("dtype", ["i8", "f8"])
def test_overlapping_output_behaves_as_if_inputs_were_copied(case, dtype):
    fn = _OVERLAPS[case]
    x = (np.arange(6000) % 17 - 8).astype(dtype)
    expected = x.copy()
    expected_result = fn(expected)
    with npvk_enabled(min_bytes=0):
        y = np.array(x)
        npvk.sync()  # y on the device's side, as in a time loop
        y += 0
        actual_result = fn(y)
        npvk.sync()
    assert_same(y, expected, context=case)
    if isinstance(expected_result, np.ndarray):
        assert_same(actual_result, expected_result, context=case)


@pytest.mark.parametrize("fn", [np.sin, np.cos, np.exp, np.log1p])
@pytest.mark.parametrize("dtype", ["f4", "f8"])
@pytest.mark.parametrize("stride", [-1, 2, 5])
def test_overlapping_call_computes_as_the_same_call_without_overlap(fn, dtype, stride):
    """NumPy's test_sincos_overlaps: f(x[::s], out=x[:m]) equals f(x[::s]).
    The overlapping call is recorded on copies of its inputs, so it runs
    where the other does (the device), not with NumPy's loop, whose last bit
    may differ from the device's."""
    n = 1000
    m = n // abs(stride)
    with npvk_enabled(min_bytes=0):
        x = np.abs(np.random.default_rng(42).standard_normal(n)).astype(dtype)
        delta = StatsDelta()
        y = fn(x[::stride])
        fn(x[::stride], out=x[:m])
        npvk.sync()
        delta.stop()
        assert delta.fallback_table() == {}
        assert_same(x[:m], y)
