"""np.matmul / `@` on the device (python-shim/src/matmul_loop.cpp), against
plain NumPy in the same test.

Tolerance: integers exact (the loop wraps like NumPy's, which accumulates in
the type itself). Floats: each element of C is a dot product of length k
summed in order; NumPy's BLAS blocks and may fuse multiply-adds, so both are
within k * eps * sum|a||b| of the exact value (the standard dot-product bound)
and the test allows 2 k eps sum|a||b| between them.
"""

import numpy as np
import pytest

import npvk
from npvk_testlib import assert_same, npvk_enabled, run_both_counted


run_both = run_both_counted


def check(actual, expected, a, b):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind != "f":
        assert_same(actual, expected)
        return
    k = a.shape[-1]
    eps = np.finfo(actual.dtype).eps
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    bound = 2 * k * eps * scale + np.finfo(actual.dtype).tiny
    assert np.all(np.abs(actual.astype(np.float64) - expected) <= bound)


SHAPES = {
    "square": ((64, 64), (64, 64)),
    "not_tile_multiples": ((37, 29), (29, 21)),
    "batched": ((3, 20, 30), (3, 30, 10)),
    "broadcast_batch": ((4, 1, 17, 9), (5, 9, 11)),
    "vector_right": ((40, 33), (33,)),
    "vector_left": ((33,), (33, 40)),
}


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4", "u1"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_matmul_matches_numpy(dtype, shape):
    rng = np.random.default_rng(len(shape))
    sa, sb = SHAPES[shape]
    if dtype[0] == "f":
        a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    else:
        a = rng.integers(-100, 100, sa).astype(dtype)
        b = rng.integers(-100, 100, sb).astype(dtype)
    actual, expected, fallbacks, device_ops = run_both(lambda x, y: x @ y, a, b)
    check(actual, expected, a, b)
    assert "matmul" not in fallbacks, fallbacks
    assert device_ops >= 1


def test_strided_operands():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((80, 60))
    b = rng.standard_normal((70, 50))
    fn = lambda x, y: np.matmul(x[::2, 1:31], y[5:35, ::-2])  # noqa: E731
    actual, expected, fallbacks, _ = run_both(fn, a, b)
    check(actual, expected, a[::2, 1:31], b[5:35, ::-2])
    assert "matmul" not in fallbacks, fallbacks


def test_result_feeds_device_work_lazily():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((100, 100))
    with npvk_enabled(min_bytes=0):
        x = np.array(a)
        npvk.sync()
        faults = npvk.stats()["host_syncs"]["fault"]
        y = (x @ x) * 2.0 + 1.0
        assert npvk.stats()["host_syncs"]["fault"] == faults
        got = np.array(y)
    check(got, (a @ a) * 2.0 + 1.0, a, a * 2)
