"""Helpers of the cost model's tests (test_cost_model*.py): child processes
that run with figures of the test's choosing."""

import os
import subprocess
import sys

from npvk_testlib import NPVK_PYTHON_DIR


def run_with_figures(tmp_path, child, *figures, host_threads=None):
    """-> for each text of `figures`, the words `child` prints in a process
    whose cost model reads it (a first run measures the figures, which are
    then replaced), with NPVK_HOST_THREADS=`host_threads` where given."""
    env = dict(os.environ, PYTHONPATH=NPVK_PYTHON_DIR, NPVK_CACHE_DIR=str(tmp_path),
               NPVK_COST_MODEL="1")
    if host_threads:
        env["NPVK_HOST_THREADS"] = str(host_threads)
    env.pop("NPVK", None)
    run = lambda: subprocess.run([sys.executable, "-c", child], env=env, text=True,
                                 capture_output=True, timeout=300)
    first = run()
    assert first.returncode == 0, first.stderr
    (figures_file,) = tmp_path.glob("cost-model-*.txt")
    words = []
    for text in figures:
        figures_file.write_text(text)
        out = run()
        assert out.returncode == 0, out.stderr
        words.append(out.stdout.split())
    return words


def run_with_the_host_free(tmp_path, child, host_threads=None):
    """-> the words `child` prints in a process whose cost model finds the
    host free."""
    return run_with_figures(tmp_path, child, figures_file(1e6, 0), host_threads=host_threads)[0]


def figures_file(device_ns_per_byte, host_ns_per_byte):
    return (f"device_flush_ns 0\ndevice_ns_per_byte {device_ns_per_byte}\n"
            f"device_math_ns 0\ndevice_pow_ns 0\ndevice_narrow_ns 0\ndevice_dispatch_ns 0\n"
            f"host_ns_per_byte {host_ns_per_byte}\n"
            "host_math_ns 0\nhost_pow_ns 0\n")
