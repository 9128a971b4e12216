"""A time step's small updates stay on the device (python-shim/src/
ufunc_call.cpp): a call whose operands the host would have to wait for runs
on the device whatever its size, and small host arrays in a large broadcast
are uploaded. With the default NPVK_MIN_BYTES (1 MiB), arrays from one page
up are managed (python-shim/src/allocator.cpp), so an N-body step, whose
pairwise arrays are large and whose state vectors are a few KB, syncs
nothing until the program reads a result.

Tolerance: the accelerations are row sums of n terms. npvk's sums are within
(2 log2 n + 16) eps sum|x| of the exact value (docs/accuracy.md) and NumPy's
pairwise sums within about log2 n eps sum|x|; every other op is correctly
rounded on both sides. For n = 600 that is under 40 eps of each sum's scale
per step; five steps propagate it through position and velocity updates
that multiply by dt = 1e-3, so 1e-12 relative (4500 eps) bounds the
difference with a wide margin, while a wrong op would miss by far more.
"""

import numpy as np

import npvk
from npvk_testlib import npvk_enabled

N = 600  # pairwise arrays 2.9 MB (above the 1 MiB threshold); vectors 4.8 KB
DEFAULT_MIN_BYTES = 1 << 20


def nbody_steps(x, v, m, steps):
    for _ in range(steps):
        dx = x[None, :] - x[:, None]
        inv_r3 = 1.0 / ((dx * dx + 1e-3) * np.sqrt(dx * dx + 1e-3))
        a = np.sum((inv_r3 * m[None, :]) * dx, axis=1)
        v += a * 1e-3
        x += v * 1e-3


def initial():
    rng = np.random.default_rng(7)
    return rng.standard_normal(N), 0.1 * rng.standard_normal(N), rng.uniform(0.5, 1.5, N) / N


def test_nbody_steps_sync_nothing_until_the_result_is_read():
    x0, v0, m0 = initial()
    x_ref, v_ref = x0.copy(), v0.copy()
    nbody_steps(x_ref, v_ref, m0.copy(), 5)
    with npvk_enabled(min_bytes=DEFAULT_MIN_BYTES):
        x, v, m = x0.copy(), v0.copy(), m0.copy()
        start = npvk.stats()
        nbody_steps(x, v, m, 5)
        during = npvk.stats()
        x_got, v_got = x.copy(), v.copy()  # reading the state: one sync here
    assert sum(during["host_syncs"].values()) == sum(start["host_syncs"].values())
    assert during["ops_on_device"] - start["ops_on_device"] >= 5 * 8
    np.testing.assert_allclose(x_got, x_ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(v_got, v_ref, rtol=1e-12, atol=1e-15)


def test_small_op_on_a_pending_result_runs_on_the_device():
    big = np.linspace(0.0, 1.0, 300_000)
    expected = np.sum(big.reshape(600, 500), axis=1) * 2.0 + 1.0
    with npvk_enabled(min_bytes=DEFAULT_MIN_BYTES):
        b = np.array(big)
        start = npvk.stats()
        rows = np.sum(b.reshape(600, 500), axis=1)  # 4.8 KB, written by the device
        scaled = rows * 2.0 + 1.0  # small, but waiting would sync: on the device
        mid = npvk.stats()
        got = scaled.copy()
    assert sum(mid["host_syncs"].values()) == sum(start["host_syncs"].values())
    assert mid["ops_on_device"] - start["ops_on_device"] == 3
    # Row sums of 500 positive terms: (2 log2 500 + 16) eps = 34 eps relative.
    np.testing.assert_allclose(got, expected, rtol=40 * np.finfo(float).eps, atol=0)


def test_small_host_arrays_of_a_large_broadcast_are_uploaded():
    rng = np.random.default_rng(3)
    col, row = rng.standard_normal((2000, 1)), rng.standard_normal(2000)
    expected = col - row  # 32 MB from two 16 KB vectors
    with npvk_enabled(min_bytes=DEFAULT_MIN_BYTES):
        c, r = col.copy(), row.copy()
        start = npvk.stats()
        got = c - r
        mid = npvk.stats()
        np.testing.assert_array_equal(got, expected)
    assert mid["ops_on_device"] - start["ops_on_device"] == 1
    assert mid["ops_fallback_total"] == start["ops_fallback_total"]
