"""A device without shaderFloat64 or shaderInt64, shown on one that has them:
NPVK_DISABLE_FEATURES (read when the context is created) masks the features.

Without float64, every loop that needs it (float64 operands, float32
transcendentals and float32 floor_divide/remainder/divmod, which compute in
float64) runs NumPy's own loop and is counted as a fallback; float32 add and
divide and integer ops stay on the device; reductions, scans, matmul, casts
and slice assignment of float64 give NumPy's results too. The validation
layer (on in this suite) would report any kernel that used a double on the
device created without it.
Without int64 npvk has no usable device (every kernel addresses memory with
64-bit integers): enabling fails with a reason, and NumPy runs everything.
Each case runs in a fresh process, since the context is made once."""

import json
import textwrap

from npvk_testlib import run_python, subprocess_env

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import npvk

    OPS = {
        "add_f8": lambda x, i, f: x + 1.5,
        "exp_f8": lambda x, i, f: np.exp(x),
        "divmod_f8": lambda x, i, f: np.divmod(x, 0.7),
        "sin_f4": lambda x, i, f: np.sin(f),
        "remainder_f4": lambda x, i, f: np.remainder(f, np.float32(0.7)),
        "sqrt_f8": lambda x, i, f: np.sqrt(x),
        "add_f4": lambda x, i, f: f + np.float32(1.5),
        "true_divide_f4": lambda x, i, f: f / np.float32(0.7),
        "multiply_i8": lambda x, i, f: i * 3,
        "floor_divide_i8": lambda x, i, f: i // 7,
        "divmod_i8": lambda x, i, f: np.divmod(i, 7),
        # Not ufunc loops: reductions, scans, products, casts, slice assignment.
        "sum_f8": lambda x, i, f: x.sum(axis=0, keepdims=True),
        "cumsum_f8": lambda x, i, f: np.cumsum(x),
        "matmul_f8": lambda x, i, f: x[:40_000].reshape(200, 200) @ x[:40_000].reshape(200, 200),
        "astype_f4_f8": lambda x, i, f: f.astype(np.float64),
        "setitem_f8": lambda x, i, f: (x.__setitem__(slice(10, 20), x[:10]), x)[1],
    }

    def operands():
        n = 50_000
        x = np.linspace(-3.0, 3.0, n)
        return x, np.arange(n, dtype=np.int64) - n // 2, x.astype(np.float32)

    def stats():
        return npvk.stats() if enabled is True else {}

    def fallbacks(before, after):
        out = {}
        for name, reasons in after.get("ops_fallback", {}).items():
            for why, count in reasons.items():
                d = count - before.get("ops_fallback", {}).get(name, {}).get(why, 0)
                if d:
                    out.setdefault(name, {})[why] = d
        return out

    enabled = False
    expected = {k: op(*operands()) for k, op in OPS.items()}
    try:
        npvk.enable(min_bytes=0)
        npvk.device()  # binds the device, which enable() leaves to the first array
    except Exception as exc:
        enabled = str(exc)
    else:
        enabled = True
    report = {}
    for k, op in OPS.items():
        args = operands()
        before = stats()
        got = op(*args)
        if enabled is True:
            npvk.sync()
        after = stats()
        a, e = (got, expected[k]) if isinstance(got, tuple) else ((got,), (expected[k],))
        same = all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, e))
        close = all(np.allclose(x, y, rtol=1e-6, equal_nan=True) for x, y in zip(a, e))
        report[k] = {"same": same, "close": close, "fallbacks": fallbacks(before, after),
                     "device_ops": after.get("ops_on_device", 0) - before.get("ops_on_device", 0)}
    print(json.dumps({"enabled": enabled, "ops": report,
                      "validation": stats().get("validation_messages", 0),
                      "device": npvk.device() if enabled is True else None}))
""")


def _run(features):
    proc = run_python(["-c", SCRIPT], env=subprocess_env(NPVK_DISABLE_FEATURES=features),
                      timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Vulkan validation" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


LACKS = "device lacks shaderFloat64"


def test_without_float64_the_loops_that_need_it_fall_back():
    r, _ = _run("float64")
    assert r["enabled"] is True
    assert r["device"]["float64"] == 0
    assert r["validation"] == 0
    ops = r["ops"]
    assert all(op["same"] for op in ops.values()), ops
    # float64 operands, and float32 loops that compute in float64: NumPy's
    # loop, counted under the ufunc's name.
    for key, ufunc in [("add_f8", "add"), ("exp_f8", "exp"), ("divmod_f8", "divmod"),
                       ("sin_f4", "sin"), ("remainder_f4", "remainder"),
                       ("sqrt_f8", "sqrt")]:
        assert ops[key]["fallbacks"].get(ufunc, {}).get(LACKS, 0) >= 1, (key, ops[key])
        assert ops[key]["device_ops"] == 0, (key, ops[key])
    # float32 add and the integer loops need no float64: on the device.
    for key in ("add_f4", "true_divide_f4", "multiply_i8", "floor_divide_i8", "divmod_i8"):
        assert ops[key]["device_ops"] >= 1, (key, ops[key])
        assert ops[key]["fallbacks"] == {}, (key, ops[key])


def test_with_every_feature_nothing_falls_back_for_lack_of_one():
    r, _ = _run("")
    assert r["enabled"] is True and r["device"]["float64"] == 1
    for key, op in r["ops"].items():
        # exp, sin, sums and products on the device are within a few ULP of NumPy's
        # (docs/ops.md, docs/accuracy.md).
        inexact = ("exp_f8", "sin_f4", "sum_f8", "matmul_f8")
        assert (op["close"] if key in inexact else op["same"]), (key, op)
        # Slice assignment is recorded as a cast but not counted as a ufunc op.
        assert op["device_ops"] >= 1 or key == "setitem_f8", (key, op)
        assert not any(LACKS in reasons for reasons in op["fallbacks"].values()), (key, op)


def test_without_int64_there_is_no_device_and_numpy_runs_everything():
    r, _ = _run("int64")
    assert r["enabled"] is not True
    assert "shaderInt64" in r["enabled"], r["enabled"]
    assert all(op["same"] for op in r["ops"].values()), r["ops"]


def test_unknown_feature_names_are_reported_and_ignored():
    r, err = _run("float64,bogus")
    assert "unknown feature 'bogus'" in err
    assert r["enabled"] is True and all(op["same"] for op in r["ops"].values())
