"""The README's main job, examples/python/black_scholes.py, as a user runs it:
plain, and with npvk (NPVK=1 where npvk is installed in the interpreter's
site-packages, as from the wheel in a venv; else python -m npvk), compared
price by price."""

import os
import site

import numpy as np

from npvk_testlib import NPVK_PYTHON_DIR, REPO_ROOT, run_python, subprocess_env

SCRIPT = os.path.join(REPO_ROOT, "examples", "python", "black_scholes.py")
OPTIONS = 200_000


def _run(tmp_path, name, accelerated):
    out = tmp_path / f"{name}.npz"
    args = [SCRIPT, "--options", str(OPTIONS), "--iterations", "1", "--save", str(out)]
    installed = NPVK_PYTHON_DIR in site.getsitepackages() and os.path.isfile(
        os.path.join(NPVK_PYTHON_DIR, "npvk-autoload.pth"))
    env = subprocess_env(NPVK="1" if accelerated and installed else None,
                         NPVK_STATS="1" if accelerated else None)
    if accelerated and not installed:
        args = ["-m", "npvk"] + args
    proc = run_python(args, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return np.load(out), proc


def test_black_scholes_with_npvk_gives_numpys_prices(tmp_path):
    plain, _ = _run(tmp_path, "plain", accelerated=False)
    ours, proc = _run(tmp_path, "npvk", accelerated=True)
    # NPVK_STATS=1's summary: the work ran on the device.
    summary = [line for line in proc.stderr.splitlines() if line.startswith("npvk: ")]
    assert summary and int(summary[-1].split()[1]) > 0, proc.stderr
    rng = np.random.default_rng(42)  # the script's inputs
    s, x = rng.uniform(5.0, 30.0, OPTIONS), rng.uniform(1.0, 100.0, OPTIONS)
    # A price is a difference of terms no larger than s and x, each made with
    # exp, log and sqrt, which npvk computes within 1 ULP and NumPy's own
    # loops within 1-2 ULP (docs/accuracy.md): a few eps of s + x apart
    # (measured: 1.7 eps at most).
    bound = 4 * np.finfo(np.float64).eps * (s + x)
    for kind in ("call", "put"):
        difference = np.abs(ours[kind] - plain[kind])
        assert np.all(difference <= bound), (kind, float((difference / bound).max()))
