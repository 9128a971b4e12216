"""Rounding to integers (rint, trunc, fix, floor, ceil, modf) gives NumPy's
bits on the values where a driver's own rounding can go wrong: halfway cases,
magnitudes past 2^31 and up to 2^53, signed zeros, the smallest subnormals,
infinities and NaN. llvmpipe on CPUs without AVX-512 rounds float64 vectors
through 32-bit integers, so npvk rounds on the bits (shaders/ops_float.glsl).
Exact: these functions return representable values, so 0 ULPs."""

import numpy as np
import pytest

from npvk_testlib import assert_same, run_both_stats

FUNCTIONS = ["rint", "trunc", "fix", "floor", "ceil"]


def _values(dtype):
    finfo = np.finfo(dtype)
    mant = finfo.nmant
    vals = [0.0, 0.3, 0.5, 1.5, 2.5, 3.5, 3.7, 0.49999999999999994, np.inf, np.nan,
            float(finfo.smallest_subnormal), float(finfo.tiny), float(finfo.max)]
    for e in (20, 23, 24, 31, 32, 40, 51, 52, 53):
        if e > mant + 1:
            continue
        for d in (0.5, 0.25, 0.75, 1.5):
            vals += [2.0**e - d, 2.0**e + d]
    vals = np.array(vals, dtype=np.float64)
    vals = np.concatenate([vals, -vals])
    # Enough elements that the device runs full vectors, with every value in
    # every lane position.
    return np.resize(vals.astype(dtype), 4096 * 3 + 5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_rounding_matches_numpy_bits(name, dtype):
    x = _values(dtype)
    fn = getattr(np, name)
    actual, expected, counted = run_both_stats(fn, x)
    assert counted["device_ops"] > 0, "the rounding did not run on the device"
    assert_same(actual, expected, context=f"{name} {np.dtype(dtype).name}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_modf_matches_numpy_bits(dtype):
    x = _values(dtype)
    actual, expected, counted = run_both_stats(np.modf, x)
    assert counted["device_ops"] > 0
    for part, (a, e) in enumerate(zip(actual, expected)):
        assert_same(a, e, context=f"modf part {part}")
