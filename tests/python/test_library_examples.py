"""The library examples (examples/python/libraries: pandas, scikit-learn,
scipy.ndimage, matplotlib) give the same outputs with npvk as without it, at
small sizes with NPVK_MIN_BYTES=0 so their NumPy calls do run on the device.
compare.py states the tolerance (integers and PNG bytes exact, floats 1e-9 of
each array's largest magnitude)."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPARE = os.path.join(REPO, "examples", "python", "libraries", "compare.py")
NEEDS = {"pandas": "pandas", "sklearn": "sklearn", "scipy.ndimage": "scipy", "matplotlib": "matplotlib"}


@pytest.mark.parametrize("name", list(NEEDS))
def test_example_outputs_match(name):
    pytest.importorskip(NEEDS[name])
    import npvk

    # npvk is <build>/python/npvk/__init__.py; compare.py takes <build>.
    build_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(npvk.__file__))))
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, COMPARE, "--small", "--forced", "--repeat", "1", "--python", sys.executable,
         "--build-dir", build_dir, "--only", name]
        + (["--cache-dir", os.environ["NPVK_CACHE_DIR"]] if "NPVK_CACHE_DIR" in os.environ else []),
        capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "match" in proc.stdout, proc.stdout
    # The comparison means something only if the example's NumPy calls ran on the device.
    on_device = int(proc.stdout.split(" on the device)")[0].split("(")[-1])
    assert on_device > 0, proc.stdout
