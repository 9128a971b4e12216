"""float16 on the device: every float16 loop NumPy 1.24 has, against NumPy.

npvk stores float16 as its bits, computes in float32 and rounds to float16
after every op (docs/architecture.md, "float16"), as NumPy's half loops do.
Unary loops run over all 65536 bit patterns; binary loops over random bit
patterns and every pair of special values; casts both ways with every dtype.
Results must be bit-identical (NaN payloads too, for the ops NumPy computes on
the bits), except the transcendentals: npvk's float32 result and NumPy's may
differ by a float32 ULP or two, which changes the float16 result only where
they straddle a float16 rounding boundary, so by at most 1 float16 ULP.
"""

import json
import warnings
from collections import Counter

import numpy as np
import pytest

import npvk
from npvk import _native
from npvk_testlib import (ACCELERATED_LOOPS, NUMPY2, VERSION_FALLBACKS, StatsDelta, assert_same,
                          npvk_enabled, run_python, split_types, subprocess_env, ulp_tolerance)

ALL_HALVES = np.arange(1 << 16, dtype=np.uint16).view(np.float16)

HALF_LOOPS = [(n, t) for n, t in ACCELERATED_LOOPS if "e" in t]
UNARY = [(n, t) for n, t in HALF_LOOPS if len(split_types(t)[0]) == 1]
BINARY = [(n, t) for n, t in HALF_LOOPS if split_types(t)[0] == ["e", "e"]]

# NumPy computes these on the float16 bits (loops.c.src, npy_half_*), so even
# NaN payloads and signs must match.
# (heaviside, frexp, modf and ldexp go through C functions that return a NaN
# of their own; npvk keeps the input's, as its float32 loops do.)
BIT_EXACT = {"negative", "positive", "absolute", "fabs", "sign", "conjugate", "copysign",
             "nextafter", "spacing", "maximum", "minimum", "fmax", "fmin",
             "sqrt", "square", "rint", "floor", "ceil", "trunc", "reciprocal"}


def _device(fn, *arrays):
    """fn on managed copies with npvk enabled: (result, device ops)."""
    with npvk_enabled(min_bytes=0):
        xs = [np.array(a) for a in arrays]
        delta = StatsDelta()
        result = fn(*xs)
        npvk.sync()
        return result, delta.device_ops


def _as_list(r):
    return list(r) if isinstance(r, tuple) else [r]


def _same_bits(actual, expected, context):
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.dtype == e.dtype, context
    if a.dtype.kind != "f":
        assert_same(a, e, context=context)
        return
    ab, eb = a.view(f"u{a.itemsize}"), e.view(f"u{e.itemsize}")
    bad = ab != eb
    assert not bad.any(), (f"{int(bad.sum())} bit patterns differ ({context}): inputs "
                           f"{np.flatnonzero(bad)[:8]}, npvk {ab[bad][:8]}, numpy {eb[bad][:8]}")


def _ulps(actual, expected):
    """float16 ULPs between finite results (0 where both are NaN)."""
    a = actual.view(np.uint16).astype(np.int64)
    e = expected.view(np.uint16).astype(np.int64)
    key = lambda b: np.where(b & 0x8000, -(b & 0x7FFF), b)  # noqa: E731
    both_nan = np.isnan(actual) & np.isnan(expected)
    return np.where(both_nan, 0, np.abs(key(a) - key(e)))


def _compare(name, types, actual, expected, context):
    tolerance = ulp_tolerance(name, types)
    for k, (a, e) in enumerate(zip(_as_list(actual), _as_list(expected))):
        where = f"{name} {types} output {k}, {context}"
        if name in BIT_EXACT:
            _same_bits(a, e, where)
        else:
            assert_same(a, e, ulps=tolerance, context=where)


@pytest.mark.parametrize("name,types", [pytest.param(n, t, id=f"{n}-{t}") for n, t in UNARY])
def test_unary_loop_over_every_float16(name, types):
    uf = getattr(np, name)
    with np.errstate(all="ignore"):
        expected = uf(ALL_HALVES.copy())
        actual, ops = _device(uf, ALL_HALVES)
    assert ops >= 1, f"{name} {types} did not run on the device"
    _compare(name, types, actual, expected, "all 65536 bit patterns")


# The float16 transcendentals' measured distance from NumPy (exhaustive over
# the inputs on lavapipe): at most 1 float16 ULP, at a handful of inputs each.
TRANSCENDENTAL_UNARY = [(n, t) for n, t in UNARY if ulp_tolerance(n, t) > 0]


def test_transcendentals_within_one_half_ulp_at_few_inputs():
    worst = {}
    for name, types in TRANSCENDENTAL_UNARY:
        uf = getattr(np, name)
        with np.errstate(all="ignore"):
            expected = uf(ALL_HALVES.copy())
            actual, _ = _device(uf, ALL_HALVES)
        d = _ulps(actual, expected)
        worst[name] = (int(d.max()), int((d > 0).sum()))
    assert all(m <= 1 for m, _ in worst.values()), worst
    # A float32 result off by one or two float32 ULPs straddles a float16
    # rounding boundary at a few dozen of the 65536 inputs at most.
    assert all(count <= 64 for _, count in worst.values()), worst


def _binary_operands():
    rng = np.random.default_rng(1601)
    random_bits = rng.integers(0, 1 << 16, size=(2, 30000), dtype=np.uint16).view(np.float16)
    sub = np.float16(2.0 ** -24)
    specials = np.array([0.0, -0.0, sub, -sub, 3 * sub, 1023 * sub, 2.0 ** -14, -(2.0 ** -14),
                         np.inf, -np.inf, np.nan, 65504.0, -65504.0, 60000.0, 2048.0, 2049.0,
                         1.0, -1.0, 1.0 + 2.0 ** -10, 0.5, 1.5, -2.5, 3.0, 0.1, 1 / 3, 1000.0,
                         7.0, -7.0, 256.0, 0.000977], dtype=np.float16)
    a = np.repeat(specials, specials.size)
    b = np.tile(specials, specials.size)
    return np.concatenate([a, random_bits[0]]), np.concatenate([b, random_bits[1]])


@pytest.mark.parametrize("name,types", [pytest.param(n, t, id=f"{n}-{t}") for n, t in BINARY])
def test_binary_loop_on_random_and_special_values(name, types):
    uf = getattr(np, name)
    a, b = _binary_operands()
    with np.errstate(all="ignore"):
        expected = uf(a.copy(), b.copy())
        actual, ops = _device(uf, a, b)
    if (name, types) in VERSION_FALLBACKS:
        assert ops == 0, f"{name} {types} ran on the device under NumPy {np.__version__}"
    else:
        assert ops >= 1, f"{name} {types} did not run on the device"
    _compare(name, types, actual, expected, "random bits and special pairs")


def test_ldexp_with_int32_and_int64_exponents():
    x = np.tile(ALL_HALVES[::7], 3)
    for dt in (np.int32, np.int64):
        n = np.resize(np.array([0, 1, -1, 5, -5, 14, -14, 24, -24, 25, -25, 40, -40, 2 ** 31 - 1,
                                -(2 ** 31)], dt), x.size)
        with np.errstate(all="ignore"):
            expected = np.ldexp(x.copy(), n.copy())
            actual, ops = _device(np.ldexp, x, n)
        assert ops >= 1
        assert_same(actual, expected, context=f"ldexp with {np.dtype(dt)} exponents")


def test_broadcasting_scalars_and_in_place():
    rng = np.random.default_rng(7)
    # b is more than 1 KiB: NumPy keeps smaller blocks in a cache of its own,
    # which npvk does not manage.
    a0 = rng.standard_normal((300, 600)).astype(np.float16) * np.float16(30)
    b0 = rng.standard_normal(600).astype(np.float16)

    def fn(a, b):
        out = [a + b, a * np.float16(3.3), 2.5 - a, a / 7, np.maximum(a, 0.5), a[:, :1] ** b,
               # NumPy 1.x's value-based casting makes these float32 (NEP 50,
               # NumPy 2: float16, with inf for a + 70000.0).
               a + 70000.0, a - 300]
        c = a.copy()
        c += b
        c *= np.float16(1.1)
        c /= b
        out.append(c)
        return out

    with np.errstate(all="ignore"):
        expected = fn(a0.copy(), b0.copy())
        actual, ops = _device(fn, a0, b0)
    assert ops >= 8
    for k, (x, y) in enumerate(zip(actual, expected)):
        assert x.dtype == (np.float32 if k in (6, 7) and not NUMPY2 else np.float16)
        assert_same(x, y, ulps=1 if k == 5 else 0, context=f"expression {k}")


def test_fused_chain_rounds_after_every_op():
    # 2048 + 1 is a tie in float16 and rounds to 2048, so (a + 1) - a is 0 in
    # NumPy; without a rounding between the ops it would be 1.
    n = 100000
    a0 = np.full(n, 2048.0, np.float16)
    a0[1::3] = 1.0
    a0[2::3] = np.float16(0.1)
    b0 = np.linspace(-4, 4, n).astype(np.float16)

    def fn(a, b):
        return np.sqrt(np.abs(((a + 1) - a) * b + a / 3 - b * b)) - np.float16(0.3) * a

    expected = fn(a0.copy(), b0.copy())
    with npvk_enabled(min_bytes=0):
        a, b = np.array(a0), np.array(b0)
        delta = StatsDelta()
        actual = fn(a, b)
        npvk.sync()
        ops, dispatches = delta.device_ops, delta.get("dispatches")
    assert ops >= 9
    assert dispatches < ops, "the chain should fuse"
    assert (((a0[::3] + np.float16(1)) - a0[::3]) == 0).all()  # the premise
    assert_same(actual, expected)


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
        npvk.sync()
    return result, Counter((w.category.__name__, str(w.message)) for w in caught)


def _h(*values, dtype=np.float16):
    return np.resize(np.array(values, dtype), 4096)


def _in_place_then(values, step, then):
    # `a += step` stores into a, then `then(a)` reads it in the same kernel:
    # its flags come from the classes of the values (the tainted path).
    a = _h(*values)
    a += np.float16(step)
    return then(a)


FP_CASES = {
    # Finite in float32, infinite in float16: NumPy's conversion reports it.
    "overflow_multiply": lambda: _h(60000.0, 1.0) * _h(2.0),
    "overflow_add": lambda: _h(65504.0) + _h(16.0, 0.0),
    "overflow_exp": lambda: np.exp(_h(12.0, 1.0)),
    "no_overflow_below_the_tie": lambda: _h(65504.0) + _h(15.0),
    "divide_by_zero": lambda: _h(1.0, 2.0) / _h(0.0),
    "log_of_zero": lambda: np.log(_h(0.0, 1.0)),
    "invalid_zero_by_zero": lambda: _h(0.0) / _h(0.0, 1.0),
    "invalid_sqrt": lambda: np.sqrt(_h(-1.0, 4.0)),
    "invalid_inf_minus_inf": lambda: _h(np.inf) - _h(np.inf, 1.0),
    "nan_input_is_quiet": lambda: _h(np.nan, 1.0) * _h(2.0),
    "nextafter_overflow": lambda: np.nextafter(_h(65504.0, 1.0), _h(np.inf)),
    "nextafter_toward_nan_is_quiet": lambda: np.nextafter(_h(1.0, 65504.0), _h(np.nan)),
    "nextafter_float32_overflow": lambda: np.nextafter(
        _h(np.finfo(np.float32).max, 1.0, dtype=np.float32), _h(np.inf, dtype=np.float32)),
    "nextafter_float64_overflow": lambda: np.nextafter(
        _h(np.finfo(np.float64).max, 1.0, dtype=np.float64), _h(np.inf, dtype=np.float64)),
    "in_place_then_nextafter_overflow": lambda: _in_place_then(
        (65472.0, 1.0), 32.0, lambda a: np.nextafter(a, _h(np.inf))),
    "in_place_then_nextafter_toward_nan_is_quiet": lambda: _in_place_then(
        (65472.0, 1.0), 32.0, lambda a: np.nextafter(a, _h(np.nan))),
    "in_place_then_spacing_of_nan": lambda: _in_place_then(
        (np.nan, 1.0), 1.0, np.spacing),
    "in_place_overflow": lambda: _in_place_then((65504.0, 1.0), 16.0, lambda a: a * 1),
    "spacing_of_inf_and_nan_is_invalid": lambda: np.spacing(_h(np.inf, np.nan, 1.0)),
    "spacing_overflow": lambda: np.spacing(_h(65504.0, 2.0)),
    "chain_overflow_then_invalid": lambda: (_h(40000.0) * _h(2.0)) - _h(np.inf),
}


@pytest.mark.parametrize("case", list(FP_CASES))
def test_fp_warnings_like_numpy(case):
    fn = FP_CASES[case]
    expected, expected_warnings = _record(fn)
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual, actual_warnings = _record(fn)
        assert delta.device_ops > 0
    assert_same(actual, expected)
    assert actual_warnings == expected_warnings


OTHER_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float32", "float64"]


def _values_to_half(dt):
    dt = np.dtype(dt)
    rng = np.random.default_rng(dt.num)
    if dt == np.bool_:
        return np.array([False, True] * 50)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        # Ties of float16 (2049 lies between 2048 and 2050), its largest value
        # and the overflow threshold 65520, the ends of the range.
        special = [0, 1, 2047, 2048, 2049, 2050, 2051, 4097, 4098, 4099, 65504, 65505, 65519,
                   65520, 65535, 70000, 2 ** 24 + 1, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 53 + 1,
                   2 ** 63 - 1, 2 ** 64 - 1, -1, -2049, -65520, -(2 ** 31), -(2 ** 63)]
        special = [v for v in special if info.min <= v <= info.max]
        wide = np.uint64 if dt == np.uint64 else np.int64
        rand = rng.integers(info.min, info.max, size=20000, endpoint=True, dtype=wide)
        small = rng.integers(max(info.min, -70000), min(info.max, 70000), size=20000,
                             endpoint=True, dtype=wide)
        return np.concatenate([np.array(special, dt), rand.astype(dt), small.astype(dt)])
    # Floats: every float16 value, the ties between neighbours (and just off
    # them), the overflow threshold, subnormals, random bits.
    halves = ALL_HALVES[np.isfinite(ALL_HALVES)].astype(np.float64)
    with np.errstate(all="ignore"):
        up = np.nextafter(halves.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    ties = (halves + up) / 2
    nudge = np.abs(ties) * 2.0 ** -40 + 2.0 ** -60
    extra = np.array([65520.0, 65519.99, -65520.0, 1e10, -1e10, 1e300, 2.0 ** -25,
                      2.0 ** -25 + 2.0 ** -50, 3 * 2.0 ** -25, 2.0 ** -26, 1e-45, np.inf,
                      -np.inf, np.nan, 1.0 + 2.0 ** -11 + 2.0 ** -40])
    with np.errstate(all="ignore"):
        if dt == np.float32:
            bits = rng.integers(0, 1 << 32, size=50000, dtype=np.uint64).astype(np.uint32)
            rand = bits.view(np.float32).astype(np.float64)
        else:
            bits = rng.integers(0, 1 << 63, size=50000, dtype=np.uint64)
            rand = bits.view(np.float64) * np.where(rng.random(50000) < 0.5, -1, 1)
            rand = np.concatenate([rand, rng.uniform(-70000, 70000, 20000)])
        return np.concatenate([halves, ties, ties + nudge, ties - nudge, extra, rand]).astype(dt)


def _device_cast(src0, dst_dt):
    with npvk_enabled(min_bytes=0):
        src = np.array(src0)
        dst = np.empty(src.shape, dst_dt)
        delta = StatsDelta()
        reason = _native.copy(src, npvk._dtype_code(src.dtype), dst, npvk._dtype_code(dst.dtype))
        npvk.sync()
        ops = delta.device_ops
    assert reason is None, reason
    assert ops == 1
    return dst


@pytest.mark.parametrize("dt", OTHER_DTYPES + ["float16"])
def test_cast_from_float16(dt):
    src = ALL_HALVES
    if np.dtype(dt).kind in "iu":
        # C leaves float-to-integer conversion of NaN, inf and values out of
        # the target's range undefined; the shim leaves these casts (which
        # NumPy checks for errors) to NumPy anyway.
        info = np.iinfo(dt)
        with np.errstate(all="ignore"):
            t = np.trunc(src.astype(np.float64))
        src = src[np.isfinite(src) & (t >= info.min) & (t <= info.max)]
    with np.errstate(all="ignore"):
        expected = src.astype(dt)
    actual = _device_cast(src, dt)
    if np.dtype(dt).kind == "f":
        _same_bits(actual, expected, f"float16 to {dt}")
    else:
        assert_same(actual, expected, context=f"float16 to {dt}")


@pytest.mark.parametrize("dt", OTHER_DTYPES)
def test_cast_to_float16(dt):
    src = _values_to_half(dt)
    with np.errstate(all="ignore"):
        expected = src.astype(np.float16)
    actual = _device_cast(src, np.float16)
    _same_bits(actual, expected, f"{dt} to float16")


def test_astype_to_float16_on_the_device_where_numpy_checks_nothing():
    src0 = np.arange(-30000, 30000, dtype=np.int16)
    expected = src0.astype(np.float16)
    with npvk_enabled(min_bytes=0):
        src = np.array(src0)
        delta = StatsDelta()
        actual = src.astype(np.float16)
        npvk.sync()
        assert delta.device_ops == 1
    _same_bits(actual, expected, "int16 astype float16")


@pytest.mark.parametrize("src_dt", ["int32", "uint16", "float32", "float64"])
def test_checked_casts_to_float16_stay_with_numpy(src_dt):
    # NumPy reports overflow in these casts; npvk leaves them to NumPy.
    src0 = np.array([1.0, 70000.0] * 1000).astype(src_dt)
    expected, expected_warnings = _record(lambda: src0.copy().astype(np.float16))
    with npvk_enabled(min_bytes=0):
        src = np.array(src0)
        delta = StatsDelta()
        actual, actual_warnings = _record(lambda: src.astype(np.float16))
        assert delta.device_ops == 0
    _same_bits(actual, expected, f"{src_dt} astype float16")
    assert actual_warnings == expected_warnings


@pytest.mark.parametrize("method", ["reduce", "accumulate"])
def test_reductions_and_scans_of_float16_stay_with_numpy(method):
    x0 = (np.arange(50000) % 97).astype(np.float16) * np.float16(0.001)
    fn = getattr(np.add, method)
    expected = fn(x0.copy())
    with npvk_enabled(min_bytes=0):
        x = np.array(x0)
        delta = StatsDelta()
        actual = fn(x)
        npvk.sync()
        assert delta.device_ops == 0
        assert delta.fallbacks(ufunc="add") >= 1
    _same_bits(actual, expected, f"add.{method}")


def test_matmul_of_float16_stays_with_numpy():
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal((64, 64)).astype(np.float16)
    expected = a0 @ a0
    with npvk_enabled(min_bytes=0):
        a = np.array(a0)
        delta = StatsDelta()
        actual = a @ a
        npvk.sync()
        assert delta.device_ops == 0
    _same_bits(actual, expected, "matmul")


REPLAY_SCRIPT = """
import json, warnings
import numpy as np
import npvk

def program():
    # No ufunc before the float16 work: npvk.sync() is the first flush.
    a = np.array([i % 3001 / 1.1 for i in range(50_000)], dtype=np.float16)
    b = a.astype(np.float32) - np.float32(1)           # a cast on the device
    c = np.sqrt(a) * a - np.float16(0.5)               # overflows past 65504
    d = np.nextafter(np.minimum(c, a), np.float16(np.inf))
    e, f = np.divmod(d, np.float16(7))
    g = np.ldexp(a, 3)
    h = np.isinf(c)
    return [b, c, d, e, f, g, h]

def run():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = program()
        npvk.sync()
        digest = [r.tobytes().hex() for r in out]
    return digest, sorted(str(w.message) for w in caught if not str(w.message).startswith("npvk"))

ref = run()
npvk.enable(min_bytes=0)
got = run()
s = npvk.stats()
print(json.dumps({"same": got[0] == ref[0], "fp": got[1], "ref_fp": ref[1],
                  "replayed": s.get("ops_replayed_on_host"), "lost": s.get("ops_lost")}))
"""


@pytest.mark.parametrize("fault", ["submit:1", "device_lost:1"])
def test_failed_flush_replays_float16_with_numpys_loops(fault):
    proc = run_python(["-c", REPLAY_SCRIPT], env=subprocess_env(NPVK_FAULT=fault), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["same"] and r["fp"] == r["ref_fp"], r
    assert r["replayed"] >= 5 and r["lost"] == 0, r
