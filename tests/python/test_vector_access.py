"""With NPVK_VECTOR_ACCESS=1 contiguous elementwise kernels read and write
several consecutive elements per invocation through vector types where every
operand is aligned to the vector, and one at a time elsewhere. The checks run
in-process on the default path and in a child process with vectors on. Every way the two paths meet is compared
with plain NumPy bit for bit (0 ULP: the same IEEE operations in the same
order): lengths around the vector width, views starting 1-3 elements into an
array (misaligned, and with shared or differing misalignment), strided
operands beside contiguous ones, in-place updates, every dtype."""

import os

import numpy as np
import pytest

from npvk_testlib import assert_same, run_both_stats, run_python, subprocess_env

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 9, 511, 512, 513, 4099]


def _values(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(n) < 0.5
    if dt.kind == "f":
        return (rng.standard_normal(n) * (4 if dt.itemsize == 2 else 100)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)


def _chain(a, b, c):
    if a.dtype == np.bool_:
        return (a & b) | c
    return a * b + c - a


def _check(fn, *arrays, context):
    actual, expected, counted = run_both_stats(fn, *arrays)
    assert counted["device_ops"] > 0, context
    assert_same(actual, expected, context=context)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lengths_and_offsets(dtype):
    for n in LENGTHS:
        base = [_values(dtype, n + 8, seed) for seed in range(3)]
        # The same offset in every operand (aligned or sharing one
        # misalignment), and offsets that differ between operands.
        for offsets in [(0, 0, 0), (1, 1, 1), (2, 2, 2), (3, 3, 3), (0, 1, 2), (1, 0, 3)]:
            _check(lambda x, y, z: _chain(x[offsets[0]:offsets[0] + n],
                                          y[offsets[1]:offsets[1] + n],
                                          z[offsets[2]:offsets[2] + n]),
                   *base, context=f"{dtype} n={n} offsets={offsets}")


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "float64"])
def test_strided_beside_contiguous(dtype):
    for n in [3, 5, 513, 4099]:
        a, b, c = (_values(dtype, 2 * n + 4, seed) for seed in range(3))
        _check(lambda x, y, z: _chain(x[1:n + 1], y[::2][:n], z[:n]), a, b, c,
               context=f"{dtype} n={n}")


@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float64"])
def test_in_place(dtype):
    for n in [5, 513, 4099]:
        for off in [0, 1]:
            def update(x, y):
                v = x[off:off + n]
                v *= y[:n]
                v += y[:n]
                return x
            _check(update, _values(dtype, n + 4, 1), _values(dtype, n + 4, 2),
                   context=f"{dtype} n={n} off={off}")


def test_with_vector_access():
    """Every check above, in a process where the vector path is on."""
    here = os.path.dirname(os.path.abspath(__file__))
    result = run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not with_vector",
                         os.path.join(here, "test_vector_access.py")],
                        env=subprocess_env(NPVK_VECTOR_ACCESS="1"), timeout=600, cwd=here)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
