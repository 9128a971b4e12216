"""Loops over shrinking row slices, the way Gaussian elimination and LU
decomposition are written by hand: each step makes a temporary a few pages
smaller than the last, subtracts it in place (`a[k+1:, k:] -= ...`, which
Python follows with an assignment of the view onto itself), writes a column,
and may read one element. Results are NumPy's bits; what npvk does on the way
is what NumPy does: no op for the self-assignment, NumPy's copy for a
column write that waits for nothing, and a reused block for the shrinking
temporary."""

from operator import setitem

import numpy as np
import pytest

import npvk
from npvk_testlib import StatsDelta, npvk_enabled, run_python

N = 160  # 160 x 160 float64: 200 KiB, managed and "large" at either threshold below
# The cost model is on only with a threshold (min_bytes 0 is forced mode).
COST_MODEL_MIN_BYTES = 1 << 16


def _matrix():
    rng = np.random.default_rng(3)
    return rng.random((N, N)) + N * np.eye(N)


def _gauss(a, read):
    for k in range(N - 1):
        f = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= f[:, None] * a[k, k:]
        if read:
            float(a[k + 1, k + 1])
    return a


def _lu(a, read):
    lower, upper = np.eye(N), a.copy()
    for k in range(N - 1):
        lower[k + 1:, k] = upper[k + 1:, k] / upper[k, k]
        upper[k + 1:, k:] -= lower[k + 1:, k, None] * upper[k, k:]
        if read:
            float(upper[k + 1, k + 1])
    return lower, upper


@pytest.fixture(params=["forced", "cost model"])
def min_bytes(request, monkeypatch):
    monkeypatch.setenv("NPVK_COST_MODEL", "1")
    return 0 if request.param == "forced" else COST_MODEL_MIN_BYTES


@pytest.mark.parametrize("read", [False, True], ids=["no read", "read each step"])
def test_gaussian_elimination_and_lu_by_rows_give_numpys_bits(min_bytes, read):
    expected_gauss = _gauss(_matrix(), read)
    expected_lu = _lu(_matrix(), read)
    with npvk_enabled(min_bytes):
        got_gauss = _gauss(np.array(_matrix()), read)
        got_lu = _lu(np.array(_matrix()), read)
        npvk.sync()
    np.testing.assert_array_equal(got_gauss, expected_gauss)
    for got, expected in zip(got_lu, expected_lu):
        np.testing.assert_array_equal(got, expected)


def test_assigning_a_view_onto_itself_records_nothing():
    """`a[i:j] -= x` is one op: the assignment Python makes after the
    in-place subtract copies nothing, as in NumPy (PyArray_AssignArray skips
    a copy of a view onto itself)."""
    b = np.arange(20_000.0)
    expected = np.arange(20_000.0).reshape(100, 200)
    expected[10:90, 5:] -= b[:80 * 195].reshape(80, 195)
    with npvk_enabled():
        a = np.arange(20_000.0).reshape(100, 200)
        x = np.array(b[:80 * 195].reshape(80, 195))
        npvk.sync()
        delta = StatsDelta()
        a[10:90, 5:] -= x
        ops = delta.device_ops
        npvk.sync()
        got = np.array(a)
    np.testing.assert_array_equal(got, expected)
    assert ops == 1, "the subtract, and no copy of the view onto itself"
    assert delta.fallbacks("setitem") == 0


def test_assigning_a_different_view_still_copies():
    """Same data pointer, other strides: a real copy (the check is exact)."""
    expected = np.arange(400.0).reshape(20, 20)
    setitem(expected, (slice(0, 10), slice(None)), expected[0:20:2].copy())
    with npvk_enabled():
        a = np.arange(400.0).reshape(20, 20)
        setitem(a, (slice(0, 10), slice(None)), a[0:20:2])
        npvk.sync()
        got = np.array(a)
    np.testing.assert_array_equal(got, expected)


def test_with_the_cost_model_a_host_assignment_is_numpys(monkeypatch):
    """With the cost model on, `a[index] = value` that waits for no queued
    work is NumPy's own copy: nothing recorded, nothing counted as a
    fallback, no page left for a later fault to flush."""
    monkeypatch.setenv("NPVK_COST_MODEL", "1")
    with npvk_enabled(COST_MODEL_MIN_BYTES):
        a = np.zeros((N, N))
        column = np.arange(N - 1, dtype=np.float64)
        npvk.sync()
        delta = StatsDelta()
        a[1:, 0] = column
        a[2:, 3:] = 1.5
        ops = delta.device_ops
        got = np.array(a)
    expected = np.zeros((N, N))
    expected[1:, 0] = column
    expected[2:, 3:] = 1.5
    np.testing.assert_array_equal(got, expected)
    assert ops == 0
    assert delta.fallbacks("setitem") == 0


_SHRINKING_CHILD = """
import numpy as np, npvk
npvk.enable()
first = np.empty(40_000)  # 320 KB: managed
address = first.__array_interface__["data"][0]
del first
second = np.empty(39_000)  # 8 KB less
reused = second.__array_interface__["data"][0] == address
del second
third = np.empty(20_000)  # half: fresh pages rather than waste half a block
not_reused = third.__array_interface__["data"][0] != address
print(npvk.stats()["managed_allocations"] > 0, reused, not_reused)
"""


def test_a_shrinking_temporary_reuses_the_block_just_freed():
    """A block freed at most a quarter larger than the next request serves
    it (no fresh pages to fault in and zero), as the C heap's does for
    NumPy. In a process of its own: a spare that an earlier test left between
    the two sizes would serve the request instead (the smallest larger one)."""
    proc = run_python(["-c", _SHRINKING_CHILD])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "True"]
