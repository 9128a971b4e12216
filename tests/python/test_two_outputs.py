"""divmod, modf and frexp, NumPy's two-output ufuncs, on the device: every
dtype against plain NumPy, bit for bit (signed zeros, NaN, infinities,
subnormals, integer MIN and -1, zero divisors), with NumPy's warnings, in
contiguous, strided and out= layouts, fused with their neighbours, and
replayed through NumPy's loops when a flush fails."""

import json
import warnings
from collections import Counter

import numpy as np
import pytest

import npvk
from npvk_testlib import (StatsDelta, assert_same, npvk_enabled, run_both_stats, run_python,
                          subprocess_env)

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]


def _float_edges(dt):
    fi = np.finfo(dt)
    sub = [fi.tiny / 2, fi.tiny / 3, fi.tiny * (1 - fi.eps), np.nextafter(dt(0), dt(1))]
    v = [0.0, 1.0, 0.5, 1.5, 2.5, 3.0, 7.0, 0.1, 1e10, 1e30, fi.max, fi.tiny, np.inf,
         1 - fi.eps / 2, 1 + fi.eps, 2.0 ** (fi.nmant - 1) + 0.5, 2.0 ** fi.nmant] + sub
    v = np.array(v, dt)
    return np.concatenate([v, -v, np.array([np.nan, -np.nan], dt)])


def _int_edges(dt):
    info = np.iinfo(dt)
    v = [0, 1, 2, 3, 5, 7, 13, info.max, info.max - 1, info.max // 2]
    if info.min < 0:
        v += [-1, -2, -3, -7, -13, info.min, info.min + 1, info.min // 2]
    return np.array(v, dt)


def _edges(dtype):
    dt = np.dtype(dtype).type
    return _float_edges(dt) if np.dtype(dtype).kind == "f" else _int_edges(dt)


def _random(dtype, n, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)
        return x.astype(dt)
    info = np.iinfo(dt)
    wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64 if info.min else np.uint64)
    small = rng.integers(-20 if info.min else 0, 20, n)
    return np.where(rng.random(n) < 0.3, small, wide).astype(dt)


def _pairs(dtype, n=3000):
    e = _edges(dtype)
    a = np.concatenate([np.repeat(e, e.size), _random(dtype, n, 1)])
    b = np.concatenate([np.tile(e, e.size), _random(dtype, n, 2)])
    return a, b


def _unary(dtype, n=3000):
    return np.concatenate([_edges(dtype), _random(dtype, n, 3)])


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
        npvk.sync()
    return result, Counter((w.category.__name__, str(w.message)) for w in caught)


def _check(fn, *inputs):
    expected, expected_warnings = _record(fn, *[x.copy() for x in inputs])
    with npvk_enabled(min_bytes=0):
        managed = [np.array(x) for x in inputs]
        delta = StatsDelta()
        actual, actual_warnings = _record(fn, *managed)
        assert delta.device_ops > 0, delta.fallback_table()
        assert delta.fallback_table() == {}
    assert len(actual) == len(expected) == 2
    for k, (got, want) in enumerate(zip(actual, expected)):
        assert_same(got, want, context=f"output {k}")
    assert actual_warnings == expected_warnings


def _on_both(program, *arrays):
    """run_both_stats, with every result compared bit for bit."""
    actual, expected, counted = run_both_stats(program, *arrays)
    for got, want in zip(actual, expected):
        assert_same(got, want)
    return counted


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_divmod(dtype):
    _check(np.divmod, *_pairs(dtype))


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_divmod_operator_and_scalar_divisor(dtype):
    a, _ = _pairs(dtype)
    d = np.array(-7 if np.dtype(dtype).kind != "u" else 7, dtype)
    _check(lambda x: divmod(x, d), a)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["modf", "frexp"])
def test_modf_frexp(name, dtype):
    _check(getattr(np, name), _unary(dtype))


@pytest.mark.parametrize("name", ["divmod", "modf", "frexp"])
def test_strided_and_out(name):
    uf = getattr(np, name)
    x = _unary("float64", 4000)
    y = np.where(x == 0, 3.0, x[::-1])
    out_types = [np.float64, np.int32 if name == "frexp" else np.float64]

    def run(x, y):
        outs = tuple(np.full(x.size // 2 * 3, 7, t)[1::3] for t in out_types)
        with np.errstate(all="ignore"):
            uf(*((x[::2], y[1::2]) if uf.nin == 2 else (x[::2],)), out=outs)
        return outs

    counted = _on_both(run, x, y)
    assert counted["device_ops"] > 0 and name not in counted["fallbacks"], counted


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_fused_chain_with_both_outputs(dtype):
    """q, r = divmod(a + 1, b); q * b + r: the second output is forwarded in a
    register to a later op of the same kernel."""
    a, b = _pairs(dtype, 200_000)
    b = np.where(b == 0, np.asarray(3, b.dtype), b)

    def chain(a, b):
        with np.errstate(all="ignore"):
            q, r = np.divmod(a + np.asarray(1, a.dtype), b)
            return q * b + r, q

    counted = _on_both(chain, a, b)
    assert counted["device_ops"] == 4 and counted["fallbacks"] == {}, counted
    assert counted["dispatches"] == 1, counted  # one fused kernel


REPLAY = """
import json, warnings
import numpy as np, npvk
a = np.linspace(-5, 5, 100_000)
b = np.where(np.arange(a.size) % 2, 0.7, 0.0)
i = np.arange(a.size, dtype=np.int32) - 7
def run(a, b, i):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = np.divmod(a, b) + np.frexp(a) + np.modf(a) + np.divmod(i, np.int32(-3))
        npvk.sync()
    return r, sorted(str(x.message) for x in w)
expected, expected_warnings = run(a, b, i)
npvk.enable(min_bytes=0)
actual, actual_warnings = run(np.array(a), np.array(b), np.array(i))
same = all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(actual, expected))
s = npvk.stats()
print(json.dumps({"same": same, "replayed": s.get("ops_replayed_on_host", 0),
                  "warnings": [w for w in actual_warnings if not w.startswith("npvk:")],
                  "expected_warnings": expected_warnings}))
"""


def test_failed_flush_replays_two_output_ops_with_numpy_loops():
    """A kernel that does not compile (NPVK_FAULT): the batch's two-output ops
    run through NumPy's own loops, both outputs, with NumPy's warnings."""
    proc = run_python(["-c", REPLAY], env=subprocess_env(NPVK_FAULT="compile:1"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["same"] and r["replayed"] == 4, r
    assert r["warnings"] == r["expected_warnings"], r


def test_whole_nd_calls_on_strided_views():
    """N-d strided views, which NumPy would copy into buffers of its own: the
    whole call runs on the device, both outputs allocated (or given as out=,
    keyword or positional) in managed memory."""
    g = np.linspace(-5, 5, 300 * 400).reshape(300, 400)
    h = np.where(g == 0, 1.0, g)[::-1].copy()

    def program(g, h):
        with np.errstate(all="ignore"):
            r = (np.divmod(g[1:-1, 1:-1], h[2:, :-2]) + np.modf(g[:-2, 2:]) +
                 np.frexp(g[1:-1, ::2]))
            q, m = np.empty((298, 398)), np.empty((298, 398))
            np.divmod(g[1:-1, 1:-1], 0.3, out=(q, m))
            q2, m2 = np.empty((298, 398)), np.empty((298, 398))
            np.divmod(g[1:-1, 1:-1], 0.3, q2, m2)
        return r + (q, m, q2, m2)

    counted = _on_both(program, g, h)
    assert counted["device_ops"] == 5, counted
    assert not {"divmod", "modf", "frexp"} & set(counted["fallbacks"]), counted
