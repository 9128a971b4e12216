"""The discrete-GPU memory path (NPVK_ZERO_COPY=0: device copies of managed
arrays) moves and fuses exactly as the zero-copy path does: a new output is
never uploaded (the op overwrites it), a reused allocation costs no flush,
and a time step moves 0 bytes to the device once its inputs are there. Each
program runs in a subprocess per mode (the option is read when the context
is made), and the counts are compared side by side."""

import json

import pytest

from npvk_testlib import run_python, subprocess_env

# Steps 2.. of a program: dispatches, flushes and bytes per step. The first
# step uploads the initial data (mirrored) and builds the kernels. (An
# npvk.sync() would open every page to the host for writing, so the inputs'
# next use would upload them again.)
PROGRAM = r"""
import json, numpy as np, npvk
npvk.enable(min_bytes=0)
rng = np.random.default_rng(3)
n = 1 << 18
x = rng.standard_normal(n)
u = rng.random(n)
def chain(d):
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    w = np.exp(-0.5 * d * d) * k
    return np.where(d > 0, w * 2.0, w)
def heat(u):
    un = u.copy()
    un[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return un
def doubled(a):
    return a * 2.0
steps = {"chain": lambda: chain(x), "heat": lambda: heat(u), "doubled": lambda: doubled(x)}
out = {}
for name, step in steps.items():
    step().sum()  # builds the kernels and uploads the inputs (mirrored)
    rows = []
    for _ in range(3):
        before = npvk.stats()
        r = step()
        r.sum()  # reads a result: one sync, downloads in mirrored mode
        after = npvk.stats()
        rows.append({k: after[k] - before[k] for k in
                     ("dispatches", "flushes", "bytes_to_device")})
    out[name] = rows
print(json.dumps(out))
"""


def _run(zero_copy):
    proc = run_python(["-c", PROGRAM], env=subprocess_env(NPVK_ZERO_COPY=zero_copy), timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both_modes():
    return _run(None), _run("0")


@pytest.mark.parametrize("program", ["chain", "heat", "doubled"])
def test_mirrored_steps_move_nothing_to_the_device(both_modes, program):
    zero_copy, mirrored = both_modes
    for row in mirrored[program]:
        assert row["bytes_to_device"] == 0, mirrored[program]


@pytest.mark.parametrize("program", ["chain", "heat", "doubled"])
def test_mirrored_steps_fuse_and_flush_as_zero_copy(both_modes, program):
    zero_copy, mirrored = both_modes
    for z, m in zip(zero_copy[program], mirrored[program]):
        assert (m["dispatches"], m["flushes"]) == (z["dispatches"], z["flushes"]), (
            zero_copy[program], mirrored[program])
