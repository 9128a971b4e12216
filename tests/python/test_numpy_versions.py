"""What differs between the NumPy versions npvk runs under: scalar promotion
(value-based casting in NumPy 1.x, NEP 50 in NumPy 2 and with
NPY_PROMOTION_STATE=weak on 1.x), the removed numpy.core names, and the loops
only NumPy 2 has. Each case is compared with plain NumPy of the running
version: dtype, values bit for bit, warnings and errors."""


import numpy as np
import pytest

from npvk_testlib import NUMPY2, assert_same, run_both_warned, run_python, subprocess_env

N = 300_000  # 2.4 MB of float64: above NPVK_MIN_BYTES, so the default threshold takes it


def _rng():
    return np.random.default_rng(14)


def _run(fn, *arrays):
    """fn on NumPy's path and with npvk: (actual, expected, device ops,
    fallbacks by ufunc and reason), and the same warnings from both."""
    actual, expected, delta = run_both_warned(fn, *arrays)
    return actual, expected, delta.device_ops, delta.fallback_table()


# (name, function, operand dtype). NEP 50 makes NumPy scalars strong and
# Python scalars weak; value-based casting looks at the value of both.
PROMOTION_CASES = [
    ("f4_2d_times_np_float64", lambda a: a * np.float64(1.5), "float32"),
    ("f4_2d_plus_np_float32", lambda a: a + np.float32(1.5), "float32"),
    ("f4_2d_plus_np_float16", lambda a: a + np.float16(1.5), "float32"),
    ("f4_2d_times_python_float", lambda a: a * 1.5, "float32"),
    ("f4_2d_plus_python_int", lambda a: a + 3, "float32"),
    ("f4_2d_plus_huge_python_float", lambda a: a + 1e300, "float32"),
    ("f2_2d_times_np_float32", lambda a: a * np.float32(2.0), "float16"),
    ("f2_2d_plus_python_float", lambda a: a + 1000.5, "float16"),
    ("f8_2d_minus_np_float32", lambda a: a - np.float32(0.1), "float64"),
    ("i1_plus_python_int", lambda a: a + 100, "int8"),
    ("i1_less_python_int", lambda a: a < 100, "int8"),
    ("i1_less_large_python_int", lambda a: a < 1000, "int8"),
    ("u1_and_python_true", lambda a: np.logical_and(a, True), "uint8"),
    ("i8_or_python_zero", lambda a: np.logical_or(a, 0), "int64"),
    ("f4_xor_python_float", lambda a: np.logical_xor(2.5, a), "float32"),
]


@pytest.mark.parametrize("fn,dtype", [pytest.param(f, d, id=n) for n, f, d in PROMOTION_CASES])
def test_scalar_promotion_matches_numpy(fn, dtype):
    x = (_rng().standard_normal(N) * 50).astype(dtype)
    if dtype.startswith("f"):
        x = x.reshape(600, 500)  # N-d: the whole call is taken before NumPy's iterator
    with np.errstate(all="ignore"):
        actual, expected, ops, fallbacks = _run(fn, x)
    assert_same(actual, expected)
    # On the device, or on NumPy's path and counted: where the promoted loop
    # is not the operand's dtype, NumPy casts it in buffers of its own. (NumPy
    # 2 answers int8 < 1000 without a loop: nothing to count.)
    assert ops > 0 or fallbacks or (NUMPY2 and expected.dtype == np.bool_ and expected.all())


def test_nep50_strong_numpy_scalar_is_float64():
    """The case that was wrong: float32 (2-d) times np.float64(1.5) is
    float64 under NEP 50, float32 under value-based casting."""
    x = _rng().standard_normal((600, 500)).astype(np.float32)
    actual, expected, _, _ = _run(lambda a: a * np.float64(1.5), x)
    assert actual.dtype == expected.dtype == (np.float64 if NUMPY2 else np.float32)
    assert_same(actual, expected)


def test_integer_floor_ceil_trunc_of_numpy2():
    """NumPy 2.1 has bool and integer loops of floor, ceil and trunc (the
    input itself); before, they compute in float64."""
    x = _rng().integers(-1000, 1000, N).astype(np.int32)
    for fn in (np.floor, np.ceil, np.trunc):
        actual, expected, ops, fallbacks = _run(fn, x)
        assert_same(actual, expected)
        if "i->i" in fn.types:  # NumPy 2.1 and later
            assert expected.dtype == np.int32 and ops > 0 and not fallbacks
        else:  # the float64 loop, on an int32 array NumPy casts in buffers
            assert expected.dtype == np.float64 and fallbacks


def test_mixed_int64_uint64_comparisons():
    """NumPy 2's qQ->? and Qq->? loops compare by value: every negative
    int64 is below every uint64."""
    rng = _rng()
    q = rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64)
    u = rng.integers(0, 2**64 - 1, N, dtype=np.uint64)
    q[:4] = [-1, 0, 2**62, -2**63]
    u[:4] = [2**64 - 1, 0, 2**62, 0]
    for op in (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal):
        for a, b in ((q, u), (u, q)):
            actual, expected, ops, _ = _run(op, a, b)
            assert_same(actual, expected)
            if NUMPY2:
                assert ops > 0
            else:  # NumPy 1.x compares int64 with uint64 in float64: its loop
                assert expected.dtype == np.bool_


def test_import_under_warnings_as_errors():
    """numpy.core warns on import under NumPy 2: npvk uses numpy._core, so
    importing and enabling it under -W error raises nothing."""
    proc = run_python(["-W", "error", "-c",
                       "import numpy as np, npvk; npvk.enable(min_bytes=0);"
                       "a = np.arange(100_000.0); print(float((a * 2.0).sum())); npvk.disable()"],
                      env=subprocess_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(float((np.arange(100_000.0) * 2.0).sum()))


WEAK_SCRIPT = """
import json, numpy as np, npvk
x = np.random.default_rng(3).standard_normal((600, 500)).astype(np.float32)
expected = x * np.float64(1.5)
npvk.enable(min_bytes=0)
actual = np.array(x) * np.float64(1.5)
mixed = np.array(x) + 1e300
npvk.sync()
print(json.dumps({"state": np._get_promotion_state(), "dtype": str(actual.dtype),
                  "same": actual.tobytes() == expected.tobytes(), "mixed": str(mixed.dtype)}))
"""


@pytest.mark.skipif(NUMPY2, reason="NPY_PROMOTION_STATE is NumPy 1.x's switch to NEP 50")
@pytest.mark.parametrize("state,dtype,mixed", [("weak", "float64", "float32"),
                                               ("legacy", "float32", "float64")])
def test_promotion_state_of_numpy1(state, dtype, mixed):
    """NumPy 1.24-1.26 with NPY_PROMOTION_STATE=weak promote as NumPy 2."""
    proc = run_python(["-c", WEAK_SCRIPT], env=subprocess_env(NPY_PROMOTION_STATE=state))
    assert proc.returncode == 0, proc.stderr
    import json
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r == {"state": state, "dtype": dtype, "same": True, "mixed": mixed}, r
