"""ufunc(..., where=mask) and in-place updates from threads, against plain
NumPy (python-shim/src/masked_call.cpp; speed is bench/slow-paths' job).

NumPy's masked iterator calls the inner loop once per run of true mask
values; npvk takes the call whole: recorded as where-selects around the op
(forced mode, or operands waiting on the device), or left to NumPy's own
loop, counted once per call."""

import threading
import warnings

import numpy as np
import pytest

import npvk
from npvk_testlib import StatsDelta, npvk_enabled

N = 50_000


def _inputs(dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(N).astype(dtype)
        b = rng.standard_normal(N).astype(dtype)
        b[::5] = 0  # division by zero where the mask is False
    else:
        a = rng.integers(-1000, 1000, N).astype(dtype)
        b = rng.integers(-1000, 1000, N).astype(dtype)
        b[::5] = 0
    return a, b


def _both(fn, arrays, min_bytes=0):
    """fn(*arrays) on NumPy's path and with npvk (on managed copies), each
    with its warnings recorded: ((result, out, warnings) of NumPy's run,
    (result, out, warnings) of npvk's, StatsDelta of npvk's run). fn returns
    (result, out): out is the array it passed as out=, or None."""

    def run(copy):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            result, out = fn(*[copy(a) for a in arrays])
            if npvk.is_enabled():
                npvk.sync()
            result = np.array(result, copy=True) if out is None else result
        return result, out, [str(w.message) for w in seen]

    expected = run(lambda a: a.copy())
    with npvk_enabled(min_bytes=min_bytes):
        delta = StatsDelta()
        actual = run(np.array)
        delta.stop()
    return expected, actual, delta


def _check(expected, actual):
    (e_result, e_out, e_warn), (a_result, a_out, a_warn) = expected, actual
    if e_out is not None:
        assert a_result is a_out, "the result is not the out= array"
        assert e_result is e_out
    assert a_result.dtype == e_result.dtype
    assert a_result.shape == e_result.shape
    np.testing.assert_array_equal(a_result, e_result)
    assert a_warn == e_warn


DTYPES = ["float64", "float32", "float16", "int64", "int32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ufunc", ["add", "subtract", "multiply", "divide", "floor_divide"])
def test_masked_binary_matches_numpy(ufunc, dtype):
    """Values, dtype, out= identity, masked-out elements untouched, and no
    warnings from masked-out elements (b is 0 there)."""
    if ufunc == "divide" and np.dtype(dtype).kind == "i":
        pytest.skip("int / int is float64: no out= of the inputs' dtype")
    f = getattr(np, ufunc)

    def call(a, b):
        out = np.full_like(a, 7)
        return f(a, b, out=out, where=b != 0), out

    expected, actual, _ = _both(call, _inputs(dtype))
    _check(expected, actual)
    assert expected[2] == [], "NumPy warned: the test's mask is wrong"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_divide_idiom_is_one_fused_chain_on_the_device(dtype):
    """np.divide(a, b, out=np.zeros_like(a), where=b != 0) in forced mode:
    a few device ops for the whole call, not one per run of true mask values
    (there are about N / 5 runs), and no fallbacks."""

    def call(a, b):
        out = np.zeros_like(a)
        return np.divide(a, b, out=out, where=b != 0), out

    expected, actual, delta = _both(call, _inputs(dtype))
    _check(expected, actual)
    assert expected[2] == []
    assert delta.device_ops <= 6, delta.device_ops
    assert delta.fallbacks("divide") == 0, delta.fallback_table()


@pytest.mark.parametrize("name, values", [
    ("log", [0.0, -1.0, 2.0, 0.5]),
    ("sqrt", [-1.0, 4.0, -0.5, 9.0]),
    ("arctanh", [1.0, -1.0, 0.5, 2.0]),
    ("reciprocal", [0.0, 2.0, 0.0, 4.0]),
    ("arccosh", [0.5, 1.0, -3.0, 2.0]),
])
def test_masked_unary_raises_nothing_for_masked_out_elements(name, values):
    """Elements that would raise lie where the mask is False; NumPy's loop
    never sees them and warns nothing; nor may the device. The mask keeps
    the values at which the function is defined."""
    f = getattr(np, name)
    x = np.tile(np.array(values), N // len(values))
    with np.errstate(all="ignore"):
        fine = np.isfinite(f(x))

    def call(x, fine):
        out = np.full_like(x, -5.0)
        return f(x, out=out, where=fine), out

    expected, actual, _ = _both(call, (x, fine))
    _check(expected, actual)
    assert expected[2] == []


def test_warnings_of_masked_in_elements_are_numpys():
    """Where the mask lets a division by zero through, both warn alike."""
    a, b = _inputs("float64")
    mask = np.ones(N, dtype=bool)
    mask[1::5] = False

    def call(a, b, mask):
        out = np.zeros_like(a)
        return np.divide(a, b, out=out, where=mask), out

    expected, actual, _ = _both(call, (a, b, mask))
    _check(expected, actual)
    assert expected[2], "NumPy warned nothing: the test's mask is wrong"


@pytest.mark.parametrize("mask_shape", [(200, 1), (250,), (1, 250), (200, 250)])
def test_broadcast_masks(mask_shape):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((200, 250))
    b = rng.standard_normal(250)
    mask = rng.random(mask_shape) > 0.4

    def call(a, b, mask):
        out = np.full_like(a, 3.0)
        return np.multiply(a, b, out=out, where=mask), out

    expected, actual, _ = _both(call, (a, b, mask))
    _check(expected, actual)


@pytest.mark.parametrize("where", [True, False, np.True_, np.False_])
def test_scalar_masks(where):
    a, b = _inputs("float64")

    def call(a, b):
        out = np.full_like(a, 2.0)
        return np.add(a, b, out=out, where=where), out

    expected, actual, _ = _both(call, (a, b))
    _check(expected, actual)


def test_where_true_takes_the_unmasked_path():
    """where=True is NumPy's default: one device op, as without it."""
    a, b = _inputs("float64")

    def call(a, b):
        out = np.empty_like(a)
        return np.add(a, b, out=out, where=True), out

    expected, actual, delta = _both(call, (a, b))
    _check(expected, actual)
    assert delta.device_ops == 1 and delta.fallbacks() == 0, delta.fallback_table()


def test_without_out_masked_in_elements_match():
    """Without out=, NumPy leaves masked-out elements uninitialised: only
    the others compare. NumPy 2.2+ warns about it ("'where' used without
    'out'"), and so must npvk."""
    a, b = _inputs("float64")
    mask = a > 0

    def call(a, b, mask):
        return np.add(a, b, where=mask), None

    expected, actual, _ = _both(call, (a, b, mask))
    assert actual[0].dtype == expected[0].dtype and actual[0].shape == expected[0].shape
    np.testing.assert_array_equal(actual[0][mask], expected[0][mask])
    assert actual[2] == expected[2]


def test_scalar_operand_and_in_place():
    a, _ = _inputs("float32")
    mask = a < 0.25

    def call(a, mask):
        return np.multiply(a, np.float32(3.0), out=a, where=mask), a

    expected, actual, _ = _both(call, (a, mask))
    _check(expected, actual)


@pytest.mark.parametrize("call", ["divide by zero", "zero divided", "power", "arctan2", "add"])
def test_scalar_operands_raise_nothing_for_masked_out_elements(call):
    """A scalar is not masked: a masked-out element must not compute
    op(x, scalar) where NumPy's loop would raise there (1 / 0.0)."""
    a, _ = _inputs("float64")
    calls = {
        "divide by zero": lambda a, m: np.divide(a, 0.0, out=np.ones_like(a), where=m),
        "zero divided": lambda a, m: np.divide(0.0, a - 1.0, out=np.ones_like(a), where=m),
        "power": lambda a, m: np.power(a, -1e308, out=np.ones_like(a), where=m),
        "arctan2": lambda a, m: np.arctan2(a, 0.0, out=np.ones_like(a), where=m),
        "add": lambda a, m: np.add(a, np.finfo(np.float64).max, out=np.ones_like(a), where=m),
    }

    def run(a, mask):
        out = calls[call](a, mask)
        return out, out

    for mask in (np.zeros(N, bool), np.abs(a) > 5.0):  # all false, nearly all false
        expected, actual, _ = _both(run, (a, mask))
        _check(expected, actual)


def test_mixed_dtypes_follow_numpys_casting():
    """float32 inputs into a float64 out=: NumPy's rules (left to NumPy)."""
    a, b = _inputs("float32")

    def call(a, b):
        out = np.full(N, 9.0)
        return np.add(a, b, out=out, where=b > 0), out

    expected, actual, _ = _both(call, (a, b))
    _check(expected, actual)


def test_masked_call_on_queued_operands_stays_on_the_device(monkeypatch):
    """At the default threshold with the cost model on: an operand written
    by queued work keeps the masked call on the device, with no sync."""
    monkeypatch.setenv("NPVK_COST_MODEL", "1")
    rng = np.random.default_rng(2)
    a0 = rng.standard_normal(400_000)
    b0 = rng.standard_normal(400_000)
    expected = np.zeros_like(a0)
    np.divide(a0 * 2.0, b0, out=expected, where=a0 > 0)
    with npvk_enabled(min_bytes=None):
        a = np.array(a0)
        b = np.array(b0)
        out = np.zeros_like(a)
        delta = StatsDelta()
        c = a * 2.0  # queued
        np.divide(c, b, out=out, where=a > 0)
        faults = delta.get("faults")
        device_ops = delta.device_ops
        fallbacks = delta.fallback_table()
        np.testing.assert_array_equal(out, expected)
    assert faults == 0
    assert device_ops <= 8, device_ops
    assert "divide" not in fallbacks, fallbacks


def test_masked_call_left_to_numpy_counts_once(monkeypatch):
    """With the cost model on and nothing queued, NumPy runs the masked call,
    its loop calls (one per run of true values) handed to NumPy's loop and
    counted once per call."""
    monkeypatch.setenv("NPVK_COST_MODEL", "1")
    rng = np.random.default_rng(3)
    a0 = rng.random(400_000)
    b0 = rng.random(400_000)
    expected = np.zeros_like(a0)
    np.add(a0, b0, out=expected, where=a0 > 0.5)
    with npvk_enabled(min_bytes=None):
        a, b = np.array(a0), np.array(b0)
        out = np.zeros_like(a)
        npvk.sync()
        mask = a > 0.5
        npvk.sync()
        delta = StatsDelta()
        for _ in range(3):
            np.add(a, b, out=out, where=mask)
        table = delta.fallback_table()
        np.testing.assert_array_equal(out, expected)
    assert table.get("add") == {"where= mask": 3}, table


def _add_ones(x, times):
    for _ in range(times):
        x += 1.0
    x *= 0.5


@pytest.mark.parametrize("min_bytes", [0, None])
def test_in_place_updates_from_threads(min_bytes, monkeypatch):
    if min_bytes is None:
        monkeypatch.setenv("NPVK_COST_MODEL", "1")
    base = [np.arange(300_000, dtype=np.float64) * k for k in (1.0, 0.5, -2.0)]
    expected = [x.copy() for x in base]
    for x in expected:
        _add_ones(x, 50)
    with npvk_enabled(min_bytes=min_bytes):
        for _ in range(3):
            xs = [np.array(x) for x in base]
            threads = [threading.Thread(target=_add_ones, args=(x, 50)) for x in xs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for x, e in zip(xs, expected):
                np.testing.assert_array_equal(x, e)
