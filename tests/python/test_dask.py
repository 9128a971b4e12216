"""Dask: a LocalCluster of 2 worker processes (with Nannies), each bound to
its own device by npvk.dask.DevicePerWorker, runs an unmodified dask.array
program; the result equals the same program under plain NumPy."""

import json

import pytest

from npvk_testlib import run_python, subprocess_env
from npvk_two_devices import two_lavapipe_env

PROGRAM = """
import json, sys
import numpy as np
import dask, dask.array as da
from distributed import Client, LocalCluster
import npvk.dask

if ENABLE_AT_IMPORT and __name__ != "__main__":
    # A worker (spawned: it imports this file as __mp_main__) that enables
    # npvk at import, as NPVK=1 does, before the plugin gives it its slot.
    npvk.enable()


def program(x):
    # A chunked stencil and a reduction: elementwise work in each chunk.
    y = da.sqrt(x * 0.5 + 1.0) * 3.0 - x / 7.0
    return (y[1:] + y[:-1]).sum(axis=1)


if __name__ == "__main__":
    n = 4096
    base = np.arange(n * 256, dtype=np.float64).reshape(n, 256) % 1000.0
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    client = Client(cluster)
    register = getattr(client, "register_plugin", None) or client.register_worker_plugin
    register(npvk.dask.DevicePerWorker())
    x = da.from_array(base, chunks=(512, 256))
    got = client.compute(program(x)).result()
    ref = program(da.from_array(base, chunks=(512, 256))).compute(scheduler="sync")
    info = client.run(npvk.dask.worker_device)
    client.close(); cluster.close()
    print(json.dumps({"workers": list(info.values()),
                      "equal": bool(np.array_equal(got, ref)),
                      "max_rel": float(np.max(np.abs(got - ref) / np.abs(ref)))}))
"""


@pytest.mark.parametrize("enable_at_import", [False, True])
def test_local_cluster_one_device_per_worker(tmp_path, enable_at_import):
    # Enabled at import, a worker binds its device at its first array, after
    # the plugin set its slot: still one device each.
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    env = two_lavapipe_env(tmp_path)
    if env is None:
        pytest.skip("no lavapipe manifest under /usr/share/vulkan/icd.d")
    script = tmp_path / "prog.py"
    script.write_text(f"ENABLE_AT_IMPORT = {enable_at_import}\n" + PROGRAM)
    # With NPVK_MIN_BYTES=0 every array is managed, and the first of them
    # (Dask's own, at import) binds the device before the slot is known: the
    # workers enabled at import keep the default threshold, and their 1 MiB
    # chunks are the first managed arrays.
    run_env = subprocess_env(NPVK_DEVICE=None, NPVK_MIN_BYTES=None if enable_at_import else "0",
                             **env)
    r = run_python([str(script)], env=run_env, timeout=240, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert sorted(w["device"] for w in out["workers"]) == [0, 1], out
    assert all(w["ops"] > 0 for w in out["workers"]), out
    # The reference runs in the client process, which never enabled npvk:
    # plain NumPy. The device's sqrt, mul, add and sum follow NumPy's
    # order per chunk; a relative error of 1e-12 allows the sum's order.
    assert out["max_rel"] <= 1e-12, out
