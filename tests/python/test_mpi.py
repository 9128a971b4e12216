"""MPI: `mpiexec -n 2` with mpi4py; rank r binds to device r (local-rank) and
Allreduce, Send/Recv and Bcast of arrays the device computed are correct."""

import json
import shutil
import subprocess

import pytest

from npvk_testlib import PYTHON, subprocess_env
from npvk_two_devices import two_lavapipe_env

PROGRAM = """
import json, sys
import numpy as np, npvk
npvk.enable(min_bytes=0)
from mpi4py import MPI
comm = MPI.COMM_WORLD
r = comm.Get_rank()
n = 100_000
base = np.arange(n, dtype=np.float64)
a = np.sqrt(base) * (r + 1) + 1.0   # device-owned, pending on the device
total = np.empty_like(a)
comm.Allreduce(a, total, op=MPI.SUM)
ok_all = bool(np.array_equal(total, (np.sqrt(np.arange(n, dtype=np.float64)) * 1 + 1.0)
                             + (np.sqrt(np.arange(n, dtype=np.float64)) * 2 + 1.0)))
got = np.empty(n)
if r == 0:
    comm.Send(a * 3.0, dest=1)
    ok_p2p = True
else:
    comm.Recv(got, source=0)
    ok_p2p = bool(np.array_equal(got, (np.sqrt(np.arange(n, dtype=np.float64)) + 1.0) * 3.0))
b = base * 5.0 if r == 0 else np.empty(n)
comm.Bcast(b, root=0)
ok_bcast = bool(np.array_equal(b, np.arange(n, dtype=np.float64) * 5.0))
# One file per rank: mpiexec merges the ranks' stdout, and two lines written
# at once could land on one line.
with open(f"{sys.argv[1]}/rank{r}.json", "w") as f:
    json.dump({"rank": r, "device": npvk.device()["index"],
               "ops": npvk.stats()["ops_on_device"], "ok": [ok_all, ok_p2p, ok_bcast]}, f)
"""


def test_two_ranks_two_devices(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("mpiexec is not installed")
    env = two_lavapipe_env(tmp_path)
    if env is None:
        pytest.skip("no lavapipe manifest under /usr/share/vulkan/icd.d")
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    run_env = subprocess_env(NPVK_DEVICE=None, OMPI_COMM_WORLD_LOCAL_RANK=None, **env)
    exports = []
    for k in ("VK_DRIVER_FILES", "VK_ICD_FILENAMES", "PYTHONPATH", "NPVK_VALIDATION",
              "NPVK_CACHE_DIR"):
        if k in run_env:
            exports += ["-x", k]
    r = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", "--allow-run-as-root"] + exports
                       + [PYTHON, str(script), str(tmp_path)], env=run_env, capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr[-4000:]
    rows = sorted((json.loads(p.read_text()) for p in tmp_path.glob("rank*.json")),
                  key=lambda row: row["rank"])
    assert [row["device"] for row in rows] == [0, 1], r.stdout
    for row in rows:
        assert row["ok"] == [True, True, True] and row["ops"] > 0, row
