"""The suite's coherence, I/O, syscall-guard, FP-error and thread tests
again with NPVK_ZERO_COPY=0: device-local copies of managed arrays instead of
lavapipe working on the host pages, the code path of discrete GPUs (downloads
on host access, uploads after host writes). The option is read when the
context is created, hence a pytest subprocess.

Every ufunc loop runs mirrored as well, in ctest's own `pytest_mirrored_loops`
(python-shim/CMakeLists.txt): test_ufunc_loops.py whole under NPVK_ZERO_COPY=0.
A subset is not enough: mirrored bugs have shown up only once the runs before
had filled the cache of spare mappings."""

import os

from npvk_testlib import HERE, REPO_ROOT, run_python, subprocess_env


def test_suite_with_mirrored_buffers():
    args = [os.path.join(HERE, f) for f in (
        "test_coherence.py", "test_io.py", "test_syscall_guard.py", "test_fp_errors.py")]
    args.append(os.path.join(HERE, "test_fork_threads.py") + "::test_threads_with_sync_calls")
    args.append(os.path.join(HERE, "test_fork_threads.py") +
                "::test_threads_with_private_and_shared_arrays")
    proc = run_python(["-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                      env=subprocess_env(NPVK_ZERO_COPY="0"), timeout=900, cwd=REPO_ROOT)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
    assert " passed" in tail


def test_zero_copy_switch_takes_effect():
    """Guards the test above: with NPVK_ZERO_COPY=0 a host read of a device
    result really downloads it; by default lavapipe works in place."""
    code = ("import numpy as np, npvk\n"
            "npvk.enable(min_bytes=0)\n"
            "a = np.arange(10_000.0)\n"
            "b = a * 2\n"
            "assert b[5] == 10.0\n"
            "print(npvk.stats()['bytes_to_host'])\n")
    mirrored = run_python(["-c", code], env=subprocess_env(NPVK_ZERO_COPY="0"))
    assert mirrored.returncode == 0, mirrored.stderr
    assert int(mirrored.stdout) >= 80_000
    # The default, also when the suite itself runs with NPVK_ZERO_COPY=0.
    in_place = run_python(["-c", code], env=subprocess_env(NPVK_ZERO_COPY=None))
    assert in_place.returncode == 0, in_place.stderr
    device = run_python(["-c", "import npvk; npvk.enable(); print(npvk.device()['driver'])"])
    if "llvmpipe" in device.stdout:
        assert int(in_place.stdout) == 0
