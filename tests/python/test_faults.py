"""Injected device failures (NPVK_FAULT) under a NumPy program: out of device
memory, a kernel that does not compile, a failed submission, device loss.

In every case the program's results and floating-point warnings are plain
NumPy's: a failed flush's recorded ops run on the host through NumPy's own
loops, a failed allocation leaves the op on NumPy's path, and a lost device
sends every later op there. npvk says so once, as a RuntimeWarning, and
counts it in npvk.stats(). Each case runs in a fresh process, since the fault
counts are per process and a lost device stays lost."""

import json
import textwrap

import pytest

from npvk_testlib import run_python, subprocess_env

SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    import npvk

    def program():
        rng = np.random.default_rng(7)
        n = 40_000
        a = rng.random(n)
        b = rng.random(n) + 0.5
        i = rng.integers(-100, 100, n)
        c = np.sqrt(a) * b + 1.0
        d = np.where(a > 0.5, c, -c)
        peek = [float(d[10])]         # a host read: a flush
        e = (i * 3) // 7 - i
        peek.append(int(e[5]))
        f = np.sqrt(a - 0.25)         # invalid value (correctly rounded, unlike log)
        g = a / (b - b)               # divide by zero
        h = np.maximum(c, d) ** 2
        peek.append(float(h[3]))
        for _ in range(3):
            c = c * 0.5 + d
        x = a.copy()
        x += b                        # in place
        x *= 2.0
        q = (a * 70000.0).astype(np.float16)      # NumPy's cast (overflow to inf)
        r = np.sqrt(q) * q - np.float16(0.5)      # float16, overflowing again
        return [c, d, e, f, g, h, x, (c > 1.0) & (d < 0.5), r, np.array(peek)]

    def run():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = program()
            npvk.sync()
            digest = [r.tobytes().hex() for r in out]
        fp = sorted({str(w.message) for w in caught if not str(w.message).startswith("npvk")})
        ours = [str(w.message) for w in caught if str(w.message).startswith("npvk")]
        return digest, fp, ours

    ref, ref_fp, _ = run()             # plain NumPy: npvk is not enabled yet
    npvk.enable(min_bytes=0)
    got, got_fp, ours = run()
    s = npvk.stats()
    print(json.dumps({
        "same": got == ref,
        "fp_same": got_fp == ref_fp, "fp": got_fp, "ref_fp": ref_fp,
        "npvk_warnings": ours,
        "ops_on_device": s["ops_on_device"],
        "fallback": s["ops_fallback"],
        "failures": {k: s.get(k) for k in ("flush_failures", "ops_replayed_on_host", "ops_lost",
                                           "alloc_failures", "faults_injected")},
    }))
""")


def run_with_fault(fault, **env):
    proc = run_python(["-c", SCRIPT], env=subprocess_env(NPVK_FAULT=fault, **env), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("fault", ["compile:1", "compile:4", "submit:1", "submit:3",
                                   "device_lost:1", "device_lost:3"])
def test_failed_flush_gives_numpy_results(fault):
    r = run_with_fault(fault)
    assert r["same"], r
    assert r["fp_same"], r
    f = r["failures"]
    assert f["faults_injected"] == 1 and f["flush_failures"] == 1, r
    assert f["ops_lost"] == 0 and f["ops_replayed_on_host"] >= 1, r
    assert len(r["npvk_warnings"]) == 1, r
    assert "ran with NumPy's own loops" in r["npvk_warnings"][0], r
    if fault.startswith("device_lost"):
        # Everything after the loss took NumPy's path, counted by reason.
        lost = sum(v.get("device lost", 0) for v in r["fallback"].values())
        assert lost > 0, r


@pytest.mark.parametrize("fault", ["alloc:1", "alloc:5"])
def test_failed_allocation_falls_back(fault):
    r = run_with_fault(fault)
    assert r["same"], r
    assert r["fp_same"], r
    assert r["failures"]["alloc_failures"] == 1, r
    assert r["ops_on_device"] > 0, r
    oom = sum(v.get("out of device memory", 0) for v in r["fallback"].values())
    assert oom >= 1, r
    assert len(r["npvk_warnings"]) == 1, r
    # The warning names the failure (up to 2861ec4 it read "NPVK_SUCCESS: ").
    assert "NPVK_ERR_OUT_OF_DEVICE_MEMORY: out of device memory" in r["npvk_warnings"][0], r


def test_no_fault_no_warning():
    r = run_with_fault("")
    assert r["same"] and r["fp_same"], r
    assert r["npvk_warnings"] == [] and r["failures"]["flush_failures"] == 0, r


@pytest.mark.parametrize("fault", ["compile:2", "device_lost:1"])
def test_mirrored_memory(fault):
    # Discrete GPUs' mode: the device copy is the newer one, and after a loss
    # the host still reads it where it can be mapped.
    r = run_with_fault(fault, NPVK_ZERO_COPY="0")
    assert r["same"] and r["fp_same"], r
    assert r["failures"]["ops_replayed_on_host"] >= 1 and len(r["npvk_warnings"]) == 1, r


STANDALONE_SCRIPT = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import npvk

    def inputs():
        rng = np.random.default_rng(3)
        return rng.random((300, 400)), rng.random((400, 50)), rng.integers(-50, 50, (300, 400))

    def program(a, b, i):
        t = a * 2.0 + 1.0
        return {
            "sum0": t.sum(axis=0), "max1": t.max(axis=1), "min_all": np.minimum.reduce(t, axis=None, keepdims=True),
            "prod": np.prod(a[:10] + 0.5, axis=1), "isum": i.sum(axis=1),
            "cumsum": np.cumsum(i, axis=1),
            "fcumsum": np.cumsum(t, axis=0), "matmul": a @ b, "imatmul": i[:, :20] @ i[:20, :30],
            "overflow": np.sum(np.full(2000, 1e308), keepdims=True),
        }

    def run(a, b, i):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = program(a, b, i)
            npvk.sync()
            out = {k: np.array(v) for k, v in out.items()}
        fp = sorted({str(w.message) for w in caught if not str(w.message).startswith("npvk")})
        ours = [str(w.message) for w in caught if str(w.message).startswith("npvk")]
        return out, fp, ours

    ref, ref_fp, _ = run(*inputs())
    npvk.enable(min_bytes=0)
    operands = [np.array(x) for x in inputs()]  # managed
    npvk.sync()
    # The fault counts start now: the program's one flush (at npvk.sync()) fails.
    import ctypes
    libnpvk = next(l.split()[-1] for l in open("/proc/self/maps") if "/libnpvk.so" in l)
    assert ctypes.CDLL(libnpvk).npvk_fault_inject(b"{fault}") == 0
    got, got_fp, ours = run(*operands)
    s = npvk.stats()
    np.savez("{out}", **{"ref_" + k: v for k, v in ref.items()}, **{"got_" + k: v for k, v in got.items()})
    print(json.dumps({"fp_same": got_fp == ref_fp, "fp": got_fp, "ref_fp": ref_fp,
                      "npvk_warnings": ours, "replayed": s.get("ops_replayed_on_host"),
                      "lost": s.get("ops_lost")}))
""")


@pytest.mark.parametrize("fault", ["submit:1", "device_lost:1"])
def test_failed_flush_replays_reductions_scans_and_products(fault, tmp_path):
    """Reductions, scans and matrix products of a failed flush run on the host
    too (runtime/replay.cpp). Tolerances: integers, max/min and scans
    exact (the replay folds with NumPy's own loops, a scan in NumPy's order);
    float sums and products within (2 log2 n + 16) eps sum|x| and 2 n eps
    (docs/accuracy.md: the folding order may differ from NumPy's); the
    matrix product within 2 k eps sum|a||b|."""
    import numpy as np
    out = tmp_path / "r.npz"
    script = STANDALONE_SCRIPT.replace("{out}", str(out)).replace("{fault}", fault)
    proc = run_python(["-c", script], env=subprocess_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["lost"] == 0 and r["replayed"] >= 10, r
    assert r["fp_same"] and "overflow encountered in reduce" in r["fp"], r
    assert len(r["npvk_warnings"]) == 1, r
    data = np.load(out)
    eps = np.finfo(np.float64).eps
    for key in ("max1", "min_all", "isum", "cumsum", "imatmul", "fcumsum", "overflow"):
        np.testing.assert_array_equal(data["got_" + key], data["ref_" + key], err_msg=key)
    np.testing.assert_allclose(data["got_sum0"], data["ref_sum0"],
                               rtol=(2 * np.log2(300) + 16) * eps)  # positive terms
    np.testing.assert_allclose(data["got_prod"], data["ref_prod"], rtol=2 * 400 * eps)
    np.testing.assert_allclose(data["got_matmul"], data["ref_matmul"], rtol=2 * 400 * eps)


CASTS_SCRIPT = """
import json, warnings
import numpy as np
import npvk

TYPES = ["?", "b", "h", "i", "q", "B", "H", "I", "Q", "e", "f", "d"]

def values(src, dst):
    # In every target's range: NumPy leaves float to integer out of range
    # undefined (as C does), and so does npvk.
    v = [0, 1, 2, 3.5, 7.25, 100.75, 42, 0.5, 65.0, 99.99]
    if np.dtype(src).kind in "if" and np.dtype(dst).kind in "ifb":
        v += [-1, -7.5, -100.25, -0.0]
    if np.dtype(src).kind == "i" and np.dtype(dst).kind == "u":
        v += [-1, -7, -100]  # integer to unsigned wraps, in C and in NumPy
    if np.dtype(src).kind == "f":
        v += [np.nan] if np.dtype(dst).kind in "fb" else []
        v += [np.inf, -np.inf] if np.dtype(dst).kind in "fb" else []
        v += [1e-7, 3.14159265358979, 2049.0] if np.dtype(dst).kind == "f" else []
    with np.errstate(all="ignore"):
        return np.resize(np.array(v).astype(src), 20_000)

pairs = [(s, d) for s in TYPES for d in TYPES if s != d]
inputs = {p: values(*p) for p in pairs}
with np.errstate(all="ignore"):
    expected = {p: inputs[p].astype(p[1]) for p in pairs}
npvk.enable(min_bytes=0)
managed = {p: np.array(inputs[p]) for p in pairs}
npvk.sync()
import ctypes
libnpvk = next(l.split()[-1] for l in open("/proc/self/maps") if "/libnpvk.so" in l)
assert ctypes.CDLL(libnpvk).npvk_fault_inject(b"submit:1") == 0
with warnings.catch_warnings(record=True), np.errstate(all="ignore"):
    warnings.simplefilter("always")
    got, on_device = {}, []
    for p in pairs:
        before = npvk.stats()["ops_on_device"]
        got[p] = managed[p].astype(p[1])
        if npvk.stats()["ops_on_device"] > before:
            on_device.append(f"{p[0]}->{p[1]}")
    npvk.sync()
s = npvk.stats()
bad = [f"{p[0]}->{p[1]}" for p in pairs if got[p].tobytes() != expected[p].tobytes()]
print(json.dumps({"bad": bad, "on_device": on_device, "replayed": s.get("ops_replayed_on_host"),
                  "lost": s.get("ops_lost")}))
"""


def test_failed_flush_replays_every_cast_like_numpy():
    """Casts between all of npvk's dtypes, replayed on the host after a
    failed flush: NumPy's cast functions under NumPy 1.x, npvk's own C
    conversions under NumPy 2 (which hands out none); NumPy's bits either way."""
    proc = run_python(["-c", CASTS_SCRIPT], env=subprocess_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["bad"] == [] and r["lost"] == 0, r
    # Every cast the device took was replayed: all but those whose FP errors
    # NumPy checks (float to integer or narrower, integer to float16), which
    # astype leaves to NumPy (npvk/_assign.py).
    assert r["replayed"] == len(r["on_device"]) and len(r["on_device"]) >= 90, r
