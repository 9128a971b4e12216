"""Float sums and means in NumPy's summation order: bit for bit NumPy's.

NumPy's reduce loop sums each run its iterator hands it with pairwise_sum
(leaves of at most 128 elements in 8 running sums, split at n/2 rounded down
to a multiple of 8) and adds that to the result: the whole run from NumPy 2.3
on, np.getbufsize() elements at a time before it and whenever the input is
cast. Where a kept axis is innermost it adds the elements one by one. npvk
reproduces both orders, so these tests compare bits (tolerance 0 ULP). The
data span 16 decades, so that any other order (npvk's compensated sum, a
balanced tree, other block sizes) changes the low bits of most results.
"""

import numpy as np
import pytest

from npvk_testlib import assert_same, run_both_counted

LENGTHS = list(range(0, 301)) + [1000, 8191, 8192, 8193, 16384 + 5, 10**6 + 3]


def wide(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape)).astype(dtype)


def same_on_device(fn, x):
    actual, expected, fallbacks, device_ops = run_both_counted(fn, x)
    # The sum runs on the device (NumPy 2's mean may divide on the host).
    assert "add.reduce" not in fallbacks and device_ops > 0
    assert_same(actual, expected)


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_full_sums_and_means(dtype):
    # One array per length, all summed in one device run (each a result).
    arrays = [wide(n, dtype, seed=n) for n in LENGTHS]

    def sums(*xs):
        return [np.add.reduce(x) for x in xs] + [x.mean() for x in xs if x.size]

    actual, expected, fallbacks, _ = run_both_counted(sums, *arrays)
    assert fallbacks == {"add.reduce": {"empty": 1}}  # NumPy sums the length 0
    for a, e, what in zip(actual, expected, [f"sum {n}" for n in LENGTHS] +
                          [f"mean {n}" for n in LENGTHS if n]):
        assert_same(a, e, context=what)


@pytest.mark.parametrize("dtype", ["f4", "f8"])
@pytest.mark.parametrize("shape", [(7, 300), (1000, 1000), (3, 20000), (2, 8192), (2, 3, 9000)])
def test_last_axis_and_whole_arrays(dtype, shape):
    x = wide(shape, dtype, seed=sum(shape))
    same_on_device(lambda a: a.sum(axis=-1), x)
    same_on_device(lambda a: a.mean(axis=-1), x)
    same_on_device(lambda a: a.sum(), x)
    same_on_device(lambda a: a.sum(keepdims=True), x)


@pytest.mark.parametrize("dtype", ["f4", "f8"])
@pytest.mark.parametrize("shape,axis", [((1000, 1000), 0), ((1000, 3), 0), ((3, 1000), 0),
                                        ((300, 5, 7), 1), ((40, 30, 20), (0, 1))])
def test_outer_axes_add_in_order(dtype, shape, axis):
    x = wide(shape, dtype, seed=len(shape))
    same_on_device(lambda a: a.sum(axis=axis), x)
    same_on_device(lambda a: a.mean(axis=axis), x)


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_reversed_outer_axes_add_in_index_order(dtype):
    # NumPy's reduction keeps negative strides (it does not flip the axis to
    # memory order), so a[::-1].sum(0) adds the rows last to first in memory.
    x = wide((500, 300), dtype, seed=11)
    same_on_device(lambda a: a[::-1].sum(axis=0), x)
    same_on_device(lambda a: a[::-2, ::-1].mean(axis=0), x)
    same_on_device(lambda a: a[::-1].reshape(50, 10, 300)[:, ::-1].sum(axis=1), x)


def test_cast_sums_and_views():
    # float32 summed in float64: NumPy casts a buffer at a time, so its blocks
    # are np.getbufsize() long under every version.
    x = wide(50_000, "f4", seed=5)
    same_on_device(lambda a: a.sum(dtype=np.float64), x)
    y = wide((600, 900), "f8", seed=6)
    same_on_device(lambda a: a[:, 100:700].sum(axis=1), y)  # contiguous rows of a view
    same_on_device(lambda a: a[10:590].sum(axis=0), y)


def test_other_block_sizes():
    # np.setbufsize changes NumPy's blocks where it has them: npvk follows.
    x = wide(30_000, "f8", seed=7)
    saved = np.getbufsize()
    try:
        np.setbufsize(4096)
        same_on_device(lambda a: a.sum(dtype=np.float64), x)
        same_on_device(lambda a: a.sum(dtype=np.float64), x.astype(np.float32))
    finally:
        np.setbufsize(saved)


def test_zeros_infinities_and_nans():
    neg = np.full(1000, -0.0)
    same_on_device(lambda a: a.sum(), neg)  # +0: NumPy starts from +0
    same_on_device(lambda a: np.add.reduce(a, initial=-0.0), neg)
    same_on_device(lambda a: np.add.reduce(a[:5], initial=-0.0), neg)
    x = wide(20_000, "f8", seed=8)
    x[1234] = np.inf
    same_on_device(lambda a: a.sum(), x)
    x[777] = np.nan
    same_on_device(lambda a: a.sum(), x)
