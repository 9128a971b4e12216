"""The cost model's figures (docs/architecture.md, "Cost model"): figures
cached in the kernel cache's directory decide where work runs, device costs
beyond bytes (narrow types, dispatches) count, and a corrupt or outdated
figures file is measured again. test_cost_model.py has the decisions
themselves."""

import os
import subprocess
import sys
import textwrap

import pytest

from cost_model_testlib import figures_file, run_with_figures
from npvk_testlib import NPVK_PYTHON_DIR, REPO_ROOT

# Mirrored buffers (NPVK_ZERO_COPY=0) are never run on the host by design.
pytestmark = pytest.mark.skipif(os.environ.get("NPVK_ZERO_COPY") == "0",
                                reason="the cost model needs zero-copy memory")


_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    x0 = np.linspace(0.5, 2.0, 1 << 20)
    expected = np.exp(x0) * x0 + np.log(x0) ** 3
    npvk.enable()
    npvk.device()  # made now (else the first flushes wait for it): a made device's decisions
    x = np.array(x0)
    y = np.exp(x) * x + np.log(x) ** 3
    y[0]
    s = npvk.stats()
    same = bool(np.array_equal(y, expected))
    print(s["host_flushes"], s["flushes"], same)
""")


def test_cached_figures_decide(tmp_path):
    """The figures are kept in the kernel cache's directory and read from
    there: with a device made to look free, work goes to the device; with the
    host made to look free, to the host, with NumPy's bits."""
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1")
    env.pop("NPVK", None)
    run = lambda: subprocess.run([sys.executable, "-c", _CHILD], env=env, text=True,
                                 capture_output=True, timeout=300)
    first = run()
    assert first.returncode == 0, first.stderr
    files = list(tmp_path.glob("cost-model-*.txt"))
    assert len(files) == 1, os.listdir(tmp_path)
    info = os.path.join(REPO_ROOT, "build", "tools", "npvk-info")
    if os.access(info, os.X_OK):  # it shows the figures the cache holds
        shown = subprocess.run([info], env=env, text=True, capture_output=True, timeout=60)
        assert "Cost model (measured once" in shown.stdout, shown.stdout
    for device_cost, host_cost, expect_host in ((0, 1e6, False), (1e6, 0, True)):
        files[0].write_text(figures_file(device_cost, host_cost))
        out = run()
        assert out.returncode == 0, out.stderr
        host_flushes, flushes, same = out.stdout.split()
        if expect_host:
            assert (int(host_flushes), int(flushes), same) == (1, 0, "True"), out.stdout
        else:
            assert int(host_flushes) == 0 and int(flushes) >= 1, out.stdout


_NARROW_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    m0 = np.arange(1 << 22) % 3 == 0
    n0 = np.arange(1 << 22) % 5 == 0
    npvk.enable()
    npvk.device()  # made now (else the first flushes wait for it): a made device's decisions
    m, n = np.array(m0), np.array(n0)
    both = m & n
    both[0]
    s = npvk.stats()
    print(s["host_flushes"], s["flushes"], bool(np.array_equal(both, m0 & n0)))
""")


_DISPATCH_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    shapes = [(1 << 18) + k for k in range(4)]  # four kernels: ops of one shape fuse
    x0 = [np.linspace(0.0, 1.0, n) for n in shapes]
    npvk.enable()
    npvk.device()  # made now (else the first flushes wait for it): a made device's decisions
    xs = [np.array(x) for x in x0]
    for x in xs:
        x *= 3.0
    xs[0][0]
    s = npvk.stats()
    same = all(np.array_equal(x, x1 * 3.0) for x, x1 in zip(xs, x0))
    print(s["host_flushes"], s["flushes"], same)
""")


@pytest.mark.parametrize("figure, child", [("device_narrow_ns", _NARROW_CHILD),
                                           ("device_dispatch_ns", _DISPATCH_CHILD)])
def test_device_costs_beyond_bytes_decide(tmp_path, figure, child):
    """Two device costs that bytes do not show. Bools and other 1- and 2-byte
    elements cost a CPU driver per element: lavapipe ran `a & b` of 5e6 bools
    in 9 ms, NumPy in 0.6. And a dispatch of many workgroups wakes every
    driver thread, about 0.2 ms on lavapipe, so a flush of many small kernels
    (23 in-place multiplies in scikit-learn's KMeans took 14 ms there) loses.
    With the device otherwise cheaper per byte, each figure alone decides."""
    figures = [figures_file(0.01, 0.02).replace(f"{figure} 0", f"{figure} {ns}")
               for ns in (0, 1e6)]
    free, costly = run_with_figures(tmp_path, child, *figures)
    assert free[2] == costly[2] == "True"
    assert int(free[0]) == 0 and int(free[1]) >= 1, free
    assert (int(costly[0]), int(costly[1])) == (1, 0), costly


_PRODUCT_CHILD = textwrap.dedent("""
    import numpy as np, npvk
    m0 = np.linspace(0.5, 2.0, 512 * 512).reshape(512, 512)
    v0 = np.linspace(0.5, 1.0, 1 << 21)
    expected = (m0 * 2.0) @ m0
    npvk.enable()
    if "llvmpipe" not in npvk.device()["name"]:
        print("not-cpu")
        raise SystemExit
    m = np.array(m0)
    doubled = m * 2.0
    assert npvk._native.host_waits(doubled, False)
    got = doubled @ m
    tripled = m * 3.0
    assert npvk._native.host_waits(tripled, False)
    column_sums = tripled.sum(axis=0)
    quadrupled = m * 4.0
    row_sums = quadrupled.sum(axis=1)  # stays on the device with its producer
    v = np.array(v0)
    above = v > 1.0  # 2 MiB of bools: over NPVK_MIN_BYTES
    assert npvk._native.host_waits(above, False)
    any_above = bool(np.any(above))
    # 16 MiB not written by queued work: the device streams it faster, but a
    # column sum is a workgroup kernel, which needs it twice as fast.
    settled_sums = v.reshape(2048, 1024).sum(axis=0)
    counts = npvk.stats()["ops_fallback"]
    print(counts.get("matmul", {}).get("cost model", 0),
          counts.get("add.reduce", {}).get("cost model", 0),
          counts.get("logical_or.reduce", {}).get("cost model", 0),
          any_above == bool((v0 > 1.0).any()),
          bool(np.array_equal(got, expected)),
          bool(np.array_equal(column_sums, (m0 * 3.0).sum(axis=0))),
          bool(np.allclose(row_sums, (m0 * 4.0).sum(axis=1), rtol=1e-14, atol=0)),
          bool(np.array_equal(settled_sums, v0.reshape(2048, 1024).sum(axis=0))))
""")


def test_on_a_cpu_device_products_and_column_sums_are_numpys(tmp_path):
    """Where the device streams memory faster than the host, a float row sum
    of queued results stays on the device with its producer (N-body's row
    sums); column sums and logical reductions, of queued results or not, only
    where it streams at least twice as fast (a GPU): lavapipe's workgroup
    kernels ran them 3-5x slower than NumPy. A product never does, and on a CPU
    device BLAS beats the GLSL product: sklearn's PCA transform (1e5 x 50 @
    50 x 10) took 170 ms on the device against NumPy's 5. Figures that make
    the device stream 1.7x faster than the host decide here. Row sums on the
    device add in another order than NumPy's pairwise sum: within 1e-14
    relative (512 terms of one sign, docs/accuracy.md)."""
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1")
    env.pop("NPVK", None)
    run = lambda: subprocess.run([sys.executable, "-c", _PRODUCT_CHILD], env=env, text=True,
                                 capture_output=True, timeout=300)
    first = run()  # measures the figures, then they are replaced
    assert first.returncode == 0, first.stderr
    if first.stdout.strip() == "not-cpu":
        pytest.skip("a statement about a CPU device")
    (figures,) = tmp_path.glob("cost-model-*.txt")
    # A flush costs 25 us: a 2 MiB reduction is then the host's (42 us there,
    # 50 on the device), a one-op 2 MiB product of elements the device's (75
    # against 84 us), so its result is still queued when it is reduced.
    figures.write_text(figures_file(0.012, 0.02).replace("device_flush_ns 0",
                                                          "device_flush_ns 25000"))
    out = run()
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "2", "1", "True", "True", "True", "True", "True"], out.stdout


def test_a_corrupt_figures_file_is_measured_again(tmp_path):
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1")
    env.pop("NPVK", None)
    probe = "import npvk; npvk.enable(); print(npvk.cost_model()['measured'])"
    first = subprocess.run([sys.executable, "-c", probe], env=env, text=True,
                           capture_output=True, timeout=300)
    assert first.stdout.strip() == "True", first.stderr
    (ufile,) = tmp_path.glob("cost-model-*.txt")
    ufile.write_text("device_flush_ns -1\n")
    again = subprocess.run([sys.executable, "-c", probe], env=env, text=True,
                           capture_output=True, timeout=300)
    assert again.stdout.strip() == "True", again.stderr
    assert "host_pow_ns" in ufile.read_text()


def test_figures_of_an_older_measurement_are_measured_again(tmp_path):
    """A change of how the figures are measured renames their file: version
    1's host power ran NumPy's scalar loop (its operands' buffers touched,
    which NumPy's SIMD loops take for an overlap), 5-10x slower than programs
    see, and version 2 had no figure for narrow element accesses; neither
    may outlive its version."""
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1")
    env.pop("NPVK", None)
    probe = ("import npvk; npvk.enable(); c = npvk.cost_model(); "
             "print(c['measured'], c['host_pow_ns'])")
    run = lambda: subprocess.run([sys.executable, "-c", probe], env=env, text=True,
                                 capture_output=True, timeout=300)
    first = run()
    assert first.stdout.split()[0] == "True", first.stderr
    (current,) = tmp_path.glob("cost-model-*.txt")
    assert current.name.startswith("cost-model-v3-")
    older = tmp_path / current.name.replace("cost-model-v3-", "cost-model-v2-")
    older.write_text(figures_file(0.01, 0.02).replace("host_pow_ns 0", "host_pow_ns 999"))
    assert "host_pow_ns 999" in older.read_text()
    current.unlink()
    again = run()
    measured, host_pow = again.stdout.split()
    assert measured == "True", again.stderr
    assert float(host_pow) != 999
    assert current.exists()
