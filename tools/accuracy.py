#!/usr/bin/env python3
"""Measure npvk's float math on the device against correctly rounded results.

Runs each ufunc of the float64 math library through npvk (NumPy with npvk
enabled, so the kernels are the ones the runtime generates) on float32 and
float64 inputs: special values, a dense sweep of each function's main range,
random bit patterns over all exponents and the function's hard region. Each
result is compared with the correctly rounded value from mpmath (120 bits,
rounded once to the dtype) and with NumPy's own host result.

    PYTHONPATH=build/python /usr/bin/python3 tools/accuracy.py [--points N] [--write docs/accuracy.md]

Needs python3-mpmath. --points is the sweep size per (function, dtype).
Without --write it prints the table.
"""
import argparse
import math
import os
import sys
import time

import mpmath
import numpy as np

import mdblock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

mp = mpmath.mp
mp.prec = 120


def _mp_logaddexp(x, y, base2):
    # log(e^x + e^y) (base 2: log2(2^x + 2^y)), exactly; NumPy's special cases.
    if mpmath.isnan(x) or mpmath.isnan(y):
        return mpmath.nan
    if x == y:
        return x + (1 if base2 else mpmath.log(2))
    hi, lo = max(x, y), min(x, y)
    if mpmath.isinf(hi) or mpmath.isinf(lo):
        return hi
    if base2:
        return hi + mpmath.log1p(mpmath.power(2, lo - hi)) / mpmath.log(2)
    return hi + mpmath.log1p(mpmath.exp(lo - hi))


def _mp_atan2(y, x):
    # zeros and infinities: correctly_rounded takes C99's values from math.atan2
    return mpmath.atan2(y, x)


def _mp_hypot(x, y):
    if mpmath.isinf(x) or mpmath.isinf(y):
        return mpmath.inf
    return mpmath.hypot(x, y)


def _domain(fn, lo=None, hi=None, open_lo=False):
    # Wraps fn so values outside [lo, hi] give NaN (as C99 does) and infinities
    # take the limits mpmath gives.
    def f(x):
        if mpmath.isnan(x):
            return mpmath.nan
        if (lo is not None and (x < lo or (open_lo and x == lo))) or (hi is not None and x > hi):
            return mpmath.nan
        return fn(x)
    return f


def _log_at_zero(fn):
    def f(x):
        if x == 0:
            return -mpmath.inf
        return fn(x)
    return f


def _atanh(x):
    if abs(x) == 1:
        return mpmath.inf if x > 0 else -mpmath.inf
    return mpmath.atanh(x)


def _trig(fn):
    def f(x):
        if mpmath.isinf(x) or mpmath.isnan(x):
            return mpmath.nan
        if x == 0:
            return fn(x)
        # enough bits for the argument reduction of |x| up to 2^1024
        with mpmath.workprec(mp.prec + max(0, int(mpmath.log(abs(x) + 1, 2))) + 10):
            return +fn(x)
    return f


def _sinh(x):
    return mpmath.sinh(x)


# ufunc name -> (arity, mpmath reference, main range, hard region generator, ULP target)
FUNCS = {
    "sin": (1, _trig(mpmath.sin), (-10, 10), "trig", 2),
    "cos": (1, _trig(mpmath.cos), (-10, 10), "trig", 2),
    "tan": (1, _trig(mpmath.tan), (-10, 10), "trig", 2),
    "arcsin": (1, _domain(mpmath.asin, -1, 1), (-1, 1), "unit", 2),
    "arccos": (1, _domain(mpmath.acos, -1, 1), (-1, 1), "unit", 2),
    "arctan": (1, mpmath.atan, (-10, 10), "zero", 2),
    "arctan2": (2, _mp_atan2, (-10, 10), None, 2),
    "hypot": (2, _mp_hypot, (-1e3, 1e3), None, 2),
    "sinh": (1, _sinh, (-20, 20), "zero", 2),
    "cosh": (1, mpmath.cosh, (-20, 20), "zero", 2),
    "tanh": (1, mpmath.tanh, (-20, 20), "zero", 2),
    "arcsinh": (1, mpmath.asinh, (-100, 100), "zero", 2),
    "arccosh": (1, _domain(mpmath.acosh, 1), (1, 100), "one", 2),
    "arctanh": (1, _domain(_atanh, -1, 1), (-1, 1), "unit", 2),
    "exp2": (1, lambda x: mpmath.power(2, x), (-30, 30), "zero", 1),
    "expm1": (1, mpmath.expm1, (-5, 5), "zero", 1),
    "log2": (1, _domain(_log_at_zero(lambda x: mpmath.log(x, 2)), 0), (0, 10), "one", 1),
    "log10": (1, _domain(_log_at_zero(mpmath.log10), 0), (0, 10), "one", 1),
    "log1p": (1, _domain(lambda x: -mpmath.inf if x == -1 else mpmath.log1p(x), -1), (-1, 10), "zero", 1),
    "cbrt": (1, lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), (-100, 100), "zero", 1),
    "logaddexp": (2, lambda x, y: _mp_logaddexp(x, y, False), (-50, 50), None, 2),
    "logaddexp2": (2, lambda x, y: _mp_logaddexp(x, y, True), (-50, 50), None, 2),
    "exp": (1, mpmath.exp, (-700, 700), "zero", 1),
    "log": (1, _domain(_log_at_zero(mpmath.log), 0), (0, 10), "one", 1),
}

SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
           3.0, 10.0, -10.0, 1e-300, 1e300, -1e300, 1.7976931348623157e308,
           -1.7976931348623157e308, math.inf, -math.inf, math.nan, 1e-8, -1e-8, 0.1, 100.0, 709.0,
           710.0, -745.0, 1e22, -1e22, 1.5707963267948966, 3.141592653589793, 6381956970095103 * 2.0**797,
           1e15, 1048576.0, 0.9999999999999999, 1.0000000000000002, -0.9999999999999999]


def inputs(name, dtype, n, rng):
    arity, _, (lo, hi), hard, _ = FUNCS[name]
    f32 = dtype == np.float32
    finfo = np.finfo(dtype)
    sp = np.array(SPECIAL, dtype=np.float64)
    if f32:
        with np.errstate(over="ignore"):
            sp = sp.astype(np.float32).astype(np.float64)
    parts = []
    if arity == 2:
        a, b = np.meshgrid(sp, sp)
        parts.append((a.ravel(), b.ravel()))
        u = rng.uniform(lo, hi, (2, n))
        parts.append((u[0], u[1]))
        m = rng.uniform(1, 2, (2, n)) * np.exp2(rng.integers(-60, 60, (2, n)))
        m *= rng.choice([-1.0, 1.0], (2, n))
        parts.append((m[0], m[1]))
        c = rng.uniform(lo, hi, n)
        parts.append((c, c * rng.uniform(0.9, 1.1, n)))
        x = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        return x.astype(dtype), y.astype(dtype)
    parts.append(sp)
    parts.append(rng.uniform(lo, hi, n))
    # random bits over every exponent (float32: its own range)
    bits = rng.integers(0, 2**63, n, dtype=np.int64)
    if f32:
        parts.append(rng.integers(0, 2**31, n, dtype=np.int64).astype(np.uint32).view(np.float32)
                     .astype(np.float64) * rng.choice([-1.0, 1.0], n))
    else:
        parts.append(bits.view(np.float64) * rng.choice([-1.0, 1.0], n))
    k = rng.integers(1, 24 if f32 else 53, n)
    u = rng.uniform(0, 1, n)
    s = rng.choice([-1.0, 1.0], n)
    if hard == "trig":
        kk = np.floor(np.exp(rng.uniform(0, np.log(2e6), n)))
        parts.append(s * kk * (np.pi / 2))
        parts.append(rng.uniform(-1e22, 1e22, n // 4))
    elif hard == "unit":
        parts.append(s * (1 - np.ldexp(u, -k)))
    elif hard == "one":
        parts.append(1 + np.ldexp(u, -k))
    elif hard == "zero":
        parts.append(s * np.ldexp(u, -k))
    x = np.concatenate(parts)
    with np.errstate(over="ignore", invalid="ignore"):
        x = x.astype(dtype)
    x = x[~np.isnan(x) | (np.arange(x.size) < len(sp))]
    return (x,)


def correctly_rounded(name, args, dtype):
    fn = FUNCS[name][1]
    out = np.empty(args[0].size, dtype=np.float64)
    prec = 24 if dtype == np.float32 else 53
    for i in range(args[0].size):
        xs = [float(a[i]) for a in args]
        if name == "arctan2" and any(v == 0 or math.isinf(v) for v in xs):
            out[i] = math.atan2(*xs)    # C99's exact cases, signed zeros included
            continue
        v = fn(*(mpmath.mpf(v) for v in xs))
        if mpmath.isnan(v) or mpmath.isinf(v):
            out[i] = float(v)
            continue
        with mpmath.workprec(prec):
            r = +v                      # rounded once to the dtype's significand
        out[i] = float(r)
    with np.errstate(over="ignore"):
        return out.astype(dtype)


def ulps(a, b, dtype):
    """|a - b| in ULPs; NaN == NaN; inf (or a NaN mismatch) where a and b differ in kind."""
    it = np.int32 if dtype == np.float32 else np.int64
    ia = a.view(it).astype(np.int64)
    ib = b.view(it).astype(np.int64)
    mag = np.int64(np.iinfo(it).max)
    oa = np.where(ia < 0, -(ia & mag), ia)       # -0.0 and +0.0 both map to 0
    ob = np.where(ib < 0, -(ib & mag), ib)
    same = (oa >= 0) == (ob >= 0)
    d = np.where(same, np.abs(oa - np.where(same, ob, 0)).astype(np.float64),
                 np.abs(oa.astype(np.float64)) + np.abs(ob.astype(np.float64)))
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0
    d[na != nb] = np.inf
    d[np.isinf(a) != np.isinf(b)] = np.inf
    # a float32 subnormal flushed to zero by the driver (docs/ops.md) is not counted
    if dtype == np.float32:
        tiny = np.finfo(np.float32).tiny
        d[(np.abs(b) < tiny) & (a == 0)] = 0
    return d


def measure(npvk, names, n, seed):
    rows = []
    for name in names:
        uf = getattr(np, name)
        for dtype in (np.float32, np.float64):
            rng = np.random.default_rng(seed)
            args = inputs(name, dtype, n, rng)
            npvk.enable(min_bytes=0)
            npvk.reset_stats()
            dev_args = [np.array(a) for a in args]      # managed copies
            with np.errstate(all="ignore"):
                got = np.array(uf(*dev_args))
            npvk.sync()
            st = npvk.stats()
            npvk.disable()
            fallbacks = sum(st.get("ops_fallback", {}).get(name, {}).values())
            if st.get("ops_on_device", 0) == 0 or fallbacks:
                raise SystemExit(f"{name} {np.dtype(dtype).name} did not run on the device: {st}")
            with np.errstate(all="ignore"):
                host = uf(*args)
            ref = correctly_rounded(name, args, dtype)
            d = ulps(got, ref, dtype)
            note = ""
            if name in ("logaddexp", "logaddexp2"):
                # Where the result cancels (much smaller than the operands), the bound is
                # absolute: 2^-64 max(|a|, |b|) (docs/accuracy.md). Those points are reported
                # apart from the ULP maximum.
                big = np.maximum(np.abs(args[0]), np.abs(args[1])).astype(np.float64)
                with np.errstate(all="ignore"):
                    cancel = (np.isfinite(ref) & np.isfinite(big) & (np.abs(ref) < big / 256) &
                              (d > FUNCS[name][4]))
                    err = np.abs(got.astype(np.float64) - ref.astype(np.float64)) / (big * 2.0**-64)
                if cancel.any():
                    worst_abs = float(np.nanmax(np.where(cancel, err, 0)))
                    note = (f"{int(cancel.sum())} points over the ULP target where the result cancels "
                            f"(below max(|a|, |b|)/256): max error {worst_abs:.3g} * 2^-64 max(|a|, |b|), "
                            f"max {float(np.max(np.where(cancel, ulps(got, ref, dtype), 0))):g} ULP")
                    d = np.where(cancel, 0, d)
            dn = ulps(got, host, dtype)
            worst = int(np.argmax(d))
            rows.append({"fn": name, "dtype": np.dtype(dtype).name, "points": int(args[0].size),
                         "max_cr": float(d.max()), "max_numpy": float(dn.max()),
                         "frac_exact": float(np.mean(d == 0)), "target": FUNCS[name][4], "note": note,
                         "worst": tuple(float(a[worst]) for a in args)})
            print(f"{name:11s} {np.dtype(dtype).name:8s} n={args[0].size:7d} max ulp vs CR={d.max():g} "
                  f"vs NumPy={dn.max():g} worst at {rows[-1]['worst']}: device {got[worst]!r} "
                  f"correctly rounded {ref[worst]!r}", flush=True)
    return rows


def table(rows, device, n, seed, secs):
    out = []
    out.append("| function | dtype | max ULP vs correctly rounded | target | correctly rounded | "
               "max ULP vs NumPy | points |")
    out.append("|---|---|---|---|---|---|---|")
    for r in rows:
        ok = "" if r["max_cr"] <= r["target"] else " **over target**"
        out.append(f"| {r['fn']} | {r['dtype']} | {r['max_cr']:g}{ok} | {r['target']} | "
                   f"{100 * r['frac_exact']:.2f} % | {r['max_numpy']:g} | {r['points']} |")
    notes = [f"- {r['fn']} {r['dtype']}: {r['note']}" for r in rows if r.get("note")]
    if notes:
        out.append("")
        out.extend(notes)
    head = (f"Measured on: {device}, {len(rows)} (function, dtype) pairs, {n} sweep points each, "
            f"seed {seed}, {secs:.0f} s.\n\n")
    return head + "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--write", help="rewrite the generated table in this Markdown file")
    ap.add_argument("functions", nargs="*", help="default: all")
    opts = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import npvk
    names = opts.functions or list(FUNCS)
    t0 = time.time()
    npvk.enable(min_bytes=0)
    dev = npvk.device()
    npvk.disable()
    device = f"{dev['name']} ({dev['driver']})" if isinstance(dev, dict) else str(dev)
    rows = measure(npvk, names, opts.points, opts.seed)
    text = table(rows, device, opts.points, opts.seed, time.time() - t0)
    mdblock.emit(text, opts.write, "accuracy.py")


if __name__ == "__main__":
    main()
