"""One device per Dask worker, with the user's program unchanged.

    dask worker SCHEDULER --preload npvk.dask
    client.register_plugin(npvk.dask.DevicePerWorker())   # or register_worker_plugin

Each worker process takes a slot (its number among the workers on its
machine, see _slot), binds npvk to the device at
that slot (NPVK_DEVICE=local-rank: slot modulo the usable devices), and runs
its tasks with npvk's allocator. The device is bound at the worker's first
array, so the slot counts also where npvk was enabled at import (NPVK=1
inherited); a worker that made an array before the plugin ran keeps the
device it bound then. npvk does not place data or schedule: Dask does.
"""

import os
import socket

import npvk

try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # distributed is not installed: the module still imports
    _WorkerPlugin = object


def _slot(worker):
    """The worker's slot on its machine: NPVK_LOCAL_RANK when set, else the
    worker's number (LocalCluster names its workers 0, 1, ...; `dask worker
    --nworkers N --name W` names them W-0, W-1, ...), else 0."""
    explicit = os.environ.get("NPVK_LOCAL_RANK")
    if explicit:
        return int(explicit)
    name = str(worker.name)
    tail = name.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def bind(worker):
    """Binds this worker process to its device and installs npvk in it."""
    os.environ.setdefault("NPVK_LOCAL_RANK", str(_slot(worker)))
    npvk.enable()
    # NumPy's allocator is a context variable: Client.run runs on this, the
    # event loop's thread; executor threads started from now on install it
    # as they start (npvk._patch_threads).
    npvk._native.install_allocator()
    return npvk.device()


class DevicePerWorker(_WorkerPlugin):
    """A WorkerPlugin that binds each worker to its own device."""

    name = "npvk-device-per-worker"

    def setup(self, worker):
        bind(worker)


def dask_setup(worker):
    """`dask worker --preload npvk.dask`: binds the worker as it starts."""
    bind(worker)


def worker_device():
    """For client.run: the device this worker uses and its op count."""
    info = npvk.device()
    return {"device": None if info is None else info["index"],
            "ops": npvk.stats()["ops_on_device"], "pid": os.getpid(),
            "host": socket.gethostname()}
