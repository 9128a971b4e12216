"""The cost model (docs/architecture.md, "Cost model"): at each flush of
elementwise work whose memory the host reaches in place, npvk estimates the
device's time and that of NumPy's own loops from figures measured once per
device, and runs the cheaper. Work it keeps on the host runs NumPy's loops on
the same memory, so its results are NumPy's bits (0 ULP), FP warnings
included."""

import csv
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import npvk
from cost_model_testlib import figures_file, run_with_figures, run_with_the_host_free
from npvk_testlib import NPVK_PYTHON_DIR

# Mirrored buffers (NPVK_ZERO_COPY=0) are never run on the host by design.
pytestmark = pytest.mark.skipif(os.environ.get("NPVK_ZERO_COPY") == "0",
                                reason="the cost model needs zero-copy memory")

N = 1 << 20  # 8 MiB of float64: above the default NPVK_MIN_BYTES


@pytest.fixture
def cost_model_on(monkeypatch):
    """Enables npvk with the cost model when called (after the test computed
    NumPy's results), and disables it afterwards."""
    monkeypatch.setenv("NPVK_COST_MODEL", "1")

    def enable():
        npvk.enable()
        npvk.device()  # made now (else the first flushes wait for it): a made device's decisions

    yield enable
    npvk.disable()


def _inputs():
    rng = np.random.default_rng(7)
    return rng.random(N) + 0.5, rng.random(N) + 0.5


def _placed(before, after):
    return after["host_flushes"] - before["host_flushes"], after["flushes"] - before["flushes"]


def test_figures_are_measured_and_positive(cost_model_on):
    cost_model_on()
    figures = npvk.cost_model()
    assert figures["enabled"] and figures["measured"]
    for key in ("device_flush_ns", "device_ns_per_byte", "host_ns_per_byte"):
        assert figures[key] > 0, key


def test_the_cheaper_side_runs_and_gives_numpys_bits(cost_model_on):
    a, b = _inputs()
    expected = np.exp(a) * b
    cost_model_on()
    x, y = np.array(a), np.array(b)
    before = npvk.stats()
    got = np.exp(x) * y
    got[0]  # the host reads it: the flush
    after = npvk.stats()
    figures = npvk.cost_model(measure=False)
    on_host, on_device = _placed(before, after)
    # Exactly one of the two ran the flush, the one with the lower estimate.
    if figures["last_host_ns"] < figures["last_device_ns"]:
        assert (on_host, on_device) == (1, 0)
        assert after["ops_on_host"] - before["ops_on_host"] == 2
        np.testing.assert_array_equal(got, expected)  # NumPy's loops: 0 ULP
    else:
        assert (on_host, on_device) == (0, 1)
        np.testing.assert_array_max_ulp(got, expected, 2)  # exp <= 1 ULP, one rounding
    assert figures["last_device_ns"] > 0 and figures["last_host_ns"] > 0


def _is_cpu_device():
    return "llvmpipe" in npvk.device()["name"]


def test_on_lavapipe_numpys_simd_exp_stays_on_the_host(cost_model_on):
    a, _ = _inputs()
    expected = np.exp(a)
    cost_model_on()
    if not _is_cpu_device():
        pytest.skip("a statement about a CPU device")
    x = np.array(a)
    before = npvk.stats()
    got = np.exp(x)
    got[0]
    after = npvk.stats()
    assert _placed(before, after) == (1, 0)
    np.testing.assert_array_equal(got, expected)


def test_host_runs_raise_numpys_warnings(cost_model_on):
    cost_model_on()
    if not _is_cpu_device():
        pytest.skip("needs a device on which exp runs on the host")
    x = np.full(N, 800.0)
    before = npvk.stats()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = np.exp(x)
        got[0]
        npvk.sync()
    assert npvk.stats()["host_flushes"] > before["host_flushes"]
    assert np.isinf(got).all()
    assert any("overflow" in str(w.message) for w in caught), [str(w.message) for w in caught]


_ROWS_CHILD = textwrap.dedent("""
    import warnings, numpy as np, npvk
    x0 = np.random.default_rng(3).random((100_000, 10)) + 0.5
    x0[50_000, 3] = 1e308
    shift = x0[:10].mean(axis=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = (x0 - shift) * 4.0
    assert any("overflow" in str(w.message) for w in caught)
    npvk.enable()
    x = np.array(x0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = (x - shift) * 4.0
        got[0, 0]
        npvk.sync()
    s = npvk.stats()
    print(s["host_flushes"], s["flushes"], bool(np.array_equal(got, expected)),
          any("overflow" in str(w.message) for w in caught), s["host_parts_on_workers"] > 0)
""")


@pytest.mark.parametrize("threads", [1, 3])
def test_host_runs_of_broadcast_rows_give_numpys_bits_and_warnings(tmp_path, threads):
    """An op over rows (a (1e5, 10) array less its column means: one NumPy
    loop call per row) replays with NumPy's loops, its FP status read once
    after all rows: an overflow in one middle row is still NumPy's warning,
    and the results are NumPy's bits. With 3 host threads the rows are split
    in three, and the overflow is in a worker's third."""
    words = run_with_the_host_free(tmp_path, _ROWS_CHILD, threads)
    assert words == ["1", "0", "True", "True", str(threads > 1)]



_FUSED_CHILD = textwrap.dedent("""
    import warnings, numpy as np, npvk
    rng = np.random.default_rng(5)
    x0 = rng.random((256, 4096)) + 0.5
    row0 = rng.random(4096)
    x0[100, 2000] = 1e300  # overflows in x * x, a temporary the result does not keep
    def work(x, row, flat):
        t = x * x
        u = np.exp(-t)
        v = u * row + x     # a broadcast row: the kernel's loop is 2-d
        w = np.sqrt(v) - 1.0
        f = flat * 2.0      # 1-d, and updated in place while a temporary
        f += 1.0
        return w, np.log(f) * flat
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = work(x0, row0, x0[7])
    assert any("overflow" in str(m.message) for m in caught)
    npvk.enable()
    x, row = np.array(x0), np.array(row0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = work(x, row, x[7])
        got[0][0, 0]
        npvk.sync()
    s = npvk.stats()
    print(s["host_flushes"] > 0, s["host_bytes_contracted"] >= 4 * x0.nbytes,
          all(np.array_equal(g, e) for g, e in zip(got, expected)),
          any("overflow" in str(m.message) for m in caught), s["host_parts_on_workers"] > 0,
          npvk.cost_model(measure=False)["host_threads"])
""")


@pytest.mark.parametrize("threads", [1, 3])
def test_host_runs_of_fused_kernels_write_no_temporaries(tmp_path, threads):
    """A fused kernel run on the host runs its steps block by block and keeps
    the values it contracts in scratch (runtime/fused_replay.cpp): the
    temporaries' bytes are never written, an overflow in one of them is still
    NumPy's warning, and the results are NumPy's bits. With 3 host threads
    the blocks are split in three, each with its scratch; the overflow (row
    100 of 256) is in a worker's third. The cost model reports the threads
    (npvk-info prints them)."""
    words = run_with_the_host_free(tmp_path, _FUSED_CHILD, threads)
    assert words == ["True"] * 4 + [str(threads > 1), str(threads)]


_MEASURED_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    x0 = np.random.default_rng(2).random(1 << 20) + 0.5
    expected = np.exp(x0) * 1.5 + x0
    npvk.enable()
    npvk.device()  # made now (else the first flushes wait for it): a made device's decisions
    x = np.array(x0)
    places, close = [], True
    for i in range(16):
        before = npvk.stats()["flushes"]  # the device's
        y = np.exp(x) * 1.5 + x
        y[0]
        places.append("device" if npvk.stats()["flushes"] > before else "host")
        close = close and np.allclose(y, expected, rtol=1e-15, atol=0)
    m = npvk.cost_model(measure=False)
    print(" ".join(places), m["measured_estimates"] > 0, close,
          "llvmpipe" in npvk.device()["name"])
""")


def test_measured_flushes_correct_the_estimate(tmp_path):
    """Figures that price lavapipe's exp as cheap send the chain to the device
    at first; once the same planned work ran there twice (FlushHistory), the
    faster of those runs is its device estimate, and NumPy's SIMD exp wins.
    (The first run builds the kernel and is not counted. The host streak's
    check flushes a part of the chain now and then, and a part is new work
    that the figures send to the device until it too has run there twice.)"""
    (words,) = run_with_figures(tmp_path, _MEASURED_CHILD, figures_file(1e-3, 1e-2))
    if words[-1] != "True":
        pytest.skip("a statement about a CPU device")
    places = words[:16]
    assert places[0] == "device", places
    assert places[-4:] == ["host"] * 4, places
    assert words[16:18] == ["True", "True"], words


_STRIDED_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    x0 = np.linspace(-2.0, 2.0, 1 << 20).reshape(1024, 1024)
    def work(x):
        # Strided operands: copies of every other column and of the
        # transpose, one into a strided output, and a select (np.where) of
        # every other element.
        a = x[:, ::2].copy()
        b = np.zeros((1024, 2048))
        b[:, ::2] = x.T
        flat = x.ravel()
        c = np.where(flat[::2] > 0.5, flat[::2], flat[1::2])
        d = np.ascontiguousarray((x * 3.0).T)
        return a, b, c, d
    expected = work(x0)
    npvk.enable()
    got = work(np.array(x0))
    same = all(np.array_equal(g, e) and g.dtype == e.dtype for g, e in zip(got, expected))
    s = npvk.stats()
    print(s["host_flushes"] > 0, same, s["host_parts_on_workers"] > 0)
""")


@pytest.mark.parametrize("threads", [1, 2])
def test_host_runs_of_strided_casts_and_selects_give_numpys_bits(tmp_path, threads):
    """Casts and np.where have no NumPy loop to replay with: the host runs
    them itself, strided operands in contiguous blocks (split between the
    host threads where there are two)."""
    words = run_with_the_host_free(tmp_path, _STRIDED_CHILD, threads)
    assert words == ["True", "True", str(threads > 1)]


def test_off_and_forced_mode_keep_everything_on_the_device(monkeypatch):
    a, b = _inputs()
    for setting, min_bytes in (("0", None), ("1", 0)):
        monkeypatch.setenv("NPVK_COST_MODEL", setting)
        npvk.enable(min_bytes=min_bytes)
        try:
            assert not npvk.cost_model(measure=False)["enabled"]
            x = np.array(a)
            before = npvk.stats()
            got = np.exp(x)
            got[0]
            on_host, on_device = _placed(before, npvk.stats())
            assert (on_host, on_device) == (0, 1), setting
        finally:
            npvk.disable()


def _fallbacks(name):
    return npvk.stats()["ops_fallback"].get(name, {}).get("cost model", 0)


def test_on_lavapipe_reductions_scans_and_products_are_numpys(cost_model_on):
    """Reductions, scans and matrix products are decided when called: on a
    CPU device NumPy's own (its summation order, its BLAS) runs them, counted
    with the reason "cost model", also for an input that queued work writes
    (that work runs first). A product with such an input went to the device
    wherever the device streamed memory faster than the host: 34x slower than
    BLAS for sklearn's PCA transform."""
    a, b = _inputs()
    m = a[: 512 * 512].reshape(512, 512)
    expected = (a.sum(), (a * 2.0).sum(), m @ m, (m * 2.0) @ m, np.cumsum(a))
    cost_model_on()
    if not _is_cpu_device():
        pytest.skip("a statement about a CPU device")
    x, y = np.array(a), np.array(m)
    got_sum = x.sum()
    doubled = x * 2.0
    assert npvk._native.host_waits(doubled, False)
    got_pending = doubled.sum()
    got_product = y @ y
    products = _fallbacks("matmul")
    doubled_matrix = y * 2.0
    assert npvk._native.host_waits(doubled_matrix, False)
    got_pending_product = doubled_matrix @ y
    got_scan = np.cumsum(x)
    # The sum of queued work stays on the device with its producer where the
    # device streams memory at least as fast as the host (src/cost_model.cpp).
    # Lavapipe on Mesa 25 measures about even with NumPy on this machine, on
    # either side of 1.0 from one measurement to the next.
    figures = npvk.cost_model(measure=False)
    pending_sum_on_host = figures["host_ns_per_byte"] < figures["device_ns_per_byte"]
    assert _fallbacks("add.reduce") == (2 if pending_sum_on_host else 1), figures
    assert products >= 1
    assert _fallbacks("matmul") == products + 1
    assert _fallbacks("add.accumulate") == 1
    assert got_sum == expected[0] and got_pending == expected[1]
    np.testing.assert_array_equal(got_product, expected[2])
    np.testing.assert_array_equal(got_pending_product, expected[3])
    np.testing.assert_array_equal(got_scan, expected[4])


_BYPASS_CHILD = """
import numpy as np, npvk
rng = np.random.default_rng(7)
a = rng.random(1 << 20) + 0.5
expected = [np.exp(a * (1.0 + k / 64.0)) for k in range(40)]
npvk.enable()
npvk.device()  # made now: a made device's decisions
x = np.array(a)
before = npvk.stats()
got = []
for k in range(40):
    y = np.exp(x * (1.0 + k / 64.0))
    y[0]  # the host reads it: a flush, or nothing to flush
    got.append(y)
after = npvk.stats()
same = all(np.array_equal(g, e) for g, e in zip(got, expected))
print(after["host_flushes"] - before["host_flushes"], after["flushes"] - before["flushes"],
      sum(after["ops_fallback"].get("exp", {}).values()), same)
"""


def test_while_every_flush_runs_on_the_host_calls_are_not_recorded(tmp_path):
    """After flushes in a row that the model ran on the host, elementwise
    calls run with NumPy at once, unrecorded (no page protection, no replay),
    counted with the reason "cost model"; recording resumes after a while to
    look again. The results are NumPy's bits either way. With figures that
    make the host free, so that the decisions do not depend on what the
    machine's load made of a measurement."""
    host_flushes, flushes, exp_fallbacks, same = run_with_the_host_free(tmp_path, _BYPASS_CHILD)
    assert same == "True"
    assert int(host_flushes) >= 2
    assert int(flushes) == 0
    assert int(host_flushes) < 20, "every call was still recorded"
    assert int(exp_fallbacks) > 0


_WHOLE_FIRST_CHILD = """
import numpy as np, npvk
rng = np.random.default_rng(7)
a, b = rng.random(1 << 20) + 0.5, rng.random(1 << 20) + 0.5


def chain(x, y):
    w = x * 1.0
    for k in range(12):
        w = w * 0.5 + y * 0.25 + x * 0.125
    return w


def bypassed():
    f = npvk.stats()["ops_fallback"]
    return sum(f.get("add", {}).values()) + sum(f.get("multiply", {}).values())


expected = chain(a, b)
npvk.enable()
npvk.device()  # made now: a made device's decisions
x, y = np.array(a), np.array(b)
for k in range(3):  # flushes of one op, read at once: the host's
    z = x + k
    z[0]
streak = npvk.cost_model(measure=False)["host_streak"]
before, calls = npvk.stats(), bypassed()
got = chain(x, y)
got[0]
after = npvk.stats()
print(streak, after["host_flushes"] - before["host_flushes"], after["flushes"] - before["flushes"],
      bypassed() - calls, bool(np.array_equal(got, expected)))
"""

# A device with a fixed cost per flush (20 ms) that streams 50x faster than
# the host: a one-op flush is the host's (16 MB at 0.5 ns/B, 8 ms, and less
# as measured), a fused chain the device's (37 ops against 20.2 ms).
_FIXED_COST_DEVICE = ("device_flush_ns 20000000\ndevice_ns_per_byte 0.01\n"
                      "device_math_ns 0\ndevice_pow_ns 0\ndevice_narrow_ns 0\n"
                      "device_dispatch_ns 0\nhost_ns_per_byte 0.5\n"
                      "host_math_ns 0\nhost_pow_ns 0\n")


def test_work_recorded_before_a_bypass_is_weighed_whole_first(tmp_path):
    """Flushes of an op or two that the host wins (a read after each op)
    start the unrecorded stretch; a fused chain recorded after them is then
    weighed whole before any call is bypassed. The first bypassed call used to
    read the chain's last results instead: a flush of a few ops the host won
    by the device's fixed cost, again and again, so SOR's fused sweeps, which
    the device runs faster than NumPy, ran with NumPy's loops. With figures of
    the test's choosing, so that the decisions do not depend on what load
    made of a measurement."""
    (words,) = run_with_figures(tmp_path, _WHOLE_FIRST_CHILD, _FIXED_COST_DEVICE)
    streak, host_flushes, device_flushes, calls_bypassed, same = words
    assert same == "True"
    assert int(streak) >= 2, "the one-op flushes ran on the host"
    assert int(device_flushes) >= 1
    assert int(host_flushes) == 0, f"{host_flushes} flushes of the chain ran on the host"
    assert int(calls_bypassed) == 0


_REPORTED_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    npvk.enable(min_bytes=1 << 16)
    a = np.linspace(0.0, 1.0, 300_000)
    b = np.sqrt(a) * 2.0 + 1.0  # CHAIN
    print(float(b[7]) == float(np.sqrt(a[7]) * 2.0 + 1.0), npvk.stats()["host_flushes"])
""")


def test_the_report_names_the_sites_whose_recorded_calls_ran_on_the_host(tmp_path):
    """NPVK_REPORT, per call site: calls recorded for the device whose flush
    the cost model then ran with NumPy's loops are rows of placement "host",
    reason "cost model" (not "device"), and the summary on stderr names the
    site. With the device made to look free, the same calls are on the
    device's rows."""
    script = tmp_path / "program.py"
    script.write_text(_REPORTED_CHILD)
    chain_line = next(n for n, line in enumerate(_REPORTED_CHILD.splitlines(), 1)
                      if line.endswith("# CHAIN"))
    report = tmp_path / "coverage.csv"
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1", NPVK_REPORT=str(report))
    env.pop("NPVK", None)

    def placements(device_ns_per_byte, host_ns_per_byte):
        (figures,) = tmp_path.glob("cost-model-*.txt")
        figures.write_text(figures_file(device_ns_per_byte, host_ns_per_byte))
        out = subprocess.run([sys.executable, str(script)], env=env, text=True,
                             capture_output=True, timeout=300)
        assert out.returncode == 0, out.stderr
        with open(report, newline="") as f:
            rows = [r for r in csv.DictReader(f)
                    if r["file"] == str(script) and int(r["line"]) == chain_line]
        return out, {(r["op"], r["placement"], r["reason"]): int(r["count"]) for r in rows}

    first = subprocess.run([sys.executable, str(script)], env=env, text=True,
                           capture_output=True, timeout=300)  # measures the figures
    assert first.returncode == 0, first.stderr
    out, rows = placements(1e6, 0)  # the host looks free
    assert out.stdout.split()[0] == "True" and int(out.stdout.split()[1]) >= 1, out.stdout
    assert rows == {("sqrt", "host", "cost model"): 1, ("multiply", "host", "cost model"): 1,
                    ("add", "host", "cost model"): 1}, rows
    summary = re.search(r"(\d+) recorded calls ran on the host: (.*); \d+ host syncs", out.stderr)
    assert summary and int(summary.group(1)) >= 3, out.stderr
    assert "(cost model) x1 at program.py:" in summary.group(2), out.stderr
    out, rows = placements(0, 1e6)  # the device looks free
    assert out.stdout.split() == ["True", "0"], out.stdout
    assert rows == {("sqrt", "device", ""): 1, ("multiply", "device", ""): 1,
                    ("add", "device", ""): 1}, rows
    assert "ran on the host" not in out.stderr, out.stderr


_IN_PLACE_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    npvk.enable()
    npvk.device()
    x = np.zeros(1 << 18)
    npvk.sync()
    before = npvk.stats()
    for _ in range(100):
        x += 1.0
    ok = bool((x == 100.0).all())
    after = npvk.stats()
    print(after["flushes"] - before["flushes"], after["host_flushes"] - before["host_flushes"], ok)
""")


def test_in_place_chains_are_priced_per_step(tmp_path):
    """A chain of in-place updates moves one array's bytes however long it
    is, but the device computes each step's FP classes per element: priced
    by bytes alone, 100 steps of `x += 1.0` went to a device that streams no
    faster than the host (and took longer there than NumPy's 100 loops)."""
    (words,) = run_with_figures(tmp_path, _IN_PLACE_CHILD, figures_file(0.03, 0.03))
    device_flushes, host_flushes, ok = words
    assert ok == "True"
    assert (device_flushes, host_flushes) == ("0", "1")
