"""npvk: run unmodified NumPy programs on any Vulkan GPU.

``NPVK=1 python3 script.py`` or ``python3 -m npvk script.py`` enables npvk for a
whole program; ``npvk.enable()`` / ``npvk.disable()`` do it from code. Large
array work then runs on the device through npvk's C runtime, with NumPy's
results; anything npvk cannot do runs on NumPy's own path and is counted in
``npvk.stats()``.
"""

import atexit
import os
import sys
import threading

import numpy as _np

from . import _assign, _errstate, _native, _numpy, _observe, _products, _reduce, _where
from ._observe import explain, profile, trace

__all__ = ["enable", "disable", "is_enabled", "sync", "stats", "reset_stats", "device", "summary",
           "profile", "trace", "explain", "get_include"]

# Not yet a measured optimum: on lavapipe every unfused device op is slower than
# NumPy's loop at every size (docs/notes/2026-12-07-performance-log.md), and no GPU has been
# measured yet. 1 MiB keeps small-array code on NumPy's path, where per-call
# recording and synchronisation would dominate on any device.
DEFAULT_MIN_BYTES = 1 << 20

_lock = threading.Lock()
_enabled = False
_min_bytes = DEFAULT_MIN_BYTES

# npvk dtype codes of include/npvk/npvk.h, by NumPy (kind, itemsize).
_DTYPE_CODES = {
    ("b", 1): 0,
    ("i", 1): 1, ("i", 2): 2, ("i", 4): 3, ("i", 8): 4,
    ("u", 1): 5, ("u", 2): 6, ("u", 4): 7, ("u", 8): 8,
    ("f", 2): 9, ("f", 4): 10, ("f", 8): 11,
}


def _npvk_dtype(char):
    dt = _np.dtype(char)
    return _DTYPE_CODES.get((dt.kind, dt.itemsize))


def _dtype_code(dt):
    """The npvk dtype code of a NumPy dtype, or None."""
    return _DTYPE_CODES.get((dt.kind, dt.itemsize))


def _min_bytes_from_env():
    value = os.environ.get("NPVK_MIN_BYTES")
    if value is None or value == "":
        return DEFAULT_MIN_BYTES
    try:
        return max(0, int(value))
    except ValueError:
        raise ValueError(f"NPVK_MIN_BYTES must be a number of bytes, not {value!r}") from None


# NumPy ufuncs that are separate objects with the same loops as an op.
_ALIASES = {"deg2rad": ("radians",), "rad2deg": ("degrees",)}


def _replace_loops():
    replaced = 0
    for opcode, name, nin, nout, implemented in _native.op_table():
        for ufunc_name in (name,) + _ALIASES.get(name, ()):
            replaced += _replace_ufunc_loops(opcode, ufunc_name, nin, nout, implemented)
    # np.matmul is a gufunc: its (T, T) -> T loops get a device loop of their own.
    for types in dict.fromkeys(_np.matmul.types):
        t = types[0]
        code = _npvk_dtype(t)
        if types == f"{t}{t}->{t}" and code is not None and t not in "?e":
            replaced += _native.replace_matmul_loop(_np.matmul, _np.dtype(t).num, code)
    return replaced


def _ufunc_named(name):
    """NumPy's ufunc `name`. clip is one only in NumPy's umath module
    (np.clip is a function that calls it)."""
    ufunc = getattr(_np, name, None)
    if isinstance(ufunc, _np.ufunc):
        return ufunc
    return getattr(_numpy.umath, name, None)


def _replace_ufunc_loops(opcode, name, nin, nout, implemented):
    # np.where is a function; npvk runs it through a ufunc of its own (_where.py).
    ufunc = _native.where_ufunc() if name == "where" else _ufunc_named(name)
    if not implemented or not isinstance(ufunc, _np.ufunc):
        return 0
    if ufunc.nin != nin or ufunc.nout != nout:
        return 0
    replaced = 0
    # Some ufuncs list a signature twice; NumPy replaces the first match,
    # so a second replacement would wrap npvk's own loop.
    for types in dict.fromkeys(ufunc.types):
        chars = types.replace("->", "")
        codes = [_npvk_dtype(c) for c in chars]
        if any(c is None for c in codes):
            continue
        nums = [_np.dtype(c).num for c in chars]
        if _native.replace_loop(ufunc, opcode, nums, codes):
            replaced += 1
    return replaced


def enable(min_bytes=None, device=None):
    """Send NumPy's large array work to the Vulkan device.

    min_bytes: arrays smaller than this stay on NumPy's path (default: the
    NPVK_MIN_BYTES environment variable, else DEFAULT_MIN_BYTES).
    device: index, name substring or "local-rank" (default: NPVK_DEVICE, else
    local-rank: among the best type of device, GPU before lavapipe, the one at
    the launcher's local rank modulo their count; device 0 without a rank).

    The device is bound at the first managed array (or npvk.device()), not
    here: NPVK_DEVICE and the launcher's rank set until then still count, and
    enable(device=...) may change the choice until then; afterwards naming
    another device is an error.
    """
    global _enabled, _min_bytes
    with _lock:
        if min_bytes is None:
            min_bytes = _min_bytes_from_env()
        _min_bytes = int(min_bytes)
        if _enabled:
            _native.set_min_bytes(int(min_bytes))
            _native.set_cost_model(_cost_model_wanted())
            _select_device(device)
            return
        # UCX (Open MPI's ucx pml) installs its own SIGSEGV/SIGBUS handler in
        # MPI_Init over npvk's page-protection handler; where the user has not
        # chosen, it keeps the other error signals only. It reads this when
        # MPI initialises, so it counts when npvk is enabled first.
        os.environ.setdefault("UCX_ERROR_SIGNALS", "SIGILL,SIGFPE")
        _check_same_device(device)  # a process enabled before stays on its device
        # With NPVK_PREPARE_DEVICE=1, enable() starts making the device on a
        # thread of its own; at exit that must be over before the C library's
        # exit handlers run. The rule is the C runtime's (npvk::PrepareDevice,
        # base/options.hpp): 1 always, 0 never (npvk_device_prepare then does
        # nothing), anything else only where the program asks, which enable()
        # does not: the thread's loading of the driver slowed the program's
        # own imports by as much as it saved (docs/architecture.md, "Device
        # binding and many devices").
        atexit.register(_native.end_device_preparation)
        _native.enable(int(min_bytes), None if device is None else str(device),
                       os.environ.get("NPVK_PREPARE_DEVICE", "0") == "1")
        try:
            _replace_loops()
        except BaseException:
            _native.disable()
            raise
        _numpy.install(_native)
        _errstate.install()
        _patch_threads()
        _where.install(_native, lambda: _min_bytes)
        _reduce.install(_native, _native.op_table(), _dtype_code)
        _assign.install(_native, _dtype_code)
        _products.install(_native)
        _hook_faulthandler()
        _observe.install(_native)
        _native.set_cost_model(_cost_model_wanted())
        _enabled = True


def _cost_model_wanted():
    """The cost model (docs/architecture.md, "Cost model") decides at each
    flush whether NumPy's own loops run the recorded work faster; on unless
    NPVK_COST_MODEL=0, or in forced mode (min_bytes 0: every supported call on
    the device)."""
    return _min_bytes > 0 and os.environ.get("NPVK_COST_MODEL", "1") not in ("", "0")


def cost_model(measure=True):
    """The cost model's figures for this device (ns per byte and per math
    call, each way), measured now if `measure` and not yet measured or cached,
    and the last weighed flush's estimates; None before enable()."""
    if not _enabled:
        return None
    return _native.cost_model(bool(measure))


def _select_device(device):
    """enable(device=...) on an enabled process: the device to bind, before
    the first array; the same device as bound, after it."""
    if device is None:
        return
    if _native.bound():
        _check_same_device(device)
    else:
        _native.select_device(str(device))


def _check_same_device(device):
    """A device is bound once per process, at its first array: naming another
    one afterwards is an error rather than silently staying on the first."""
    if device is None:
        return
    info = _native.device_info()
    if info is None:
        return
    wanted = str(device)
    same = (int(wanted) == info["index"]) if wanted.isdigit() else (
        wanted.lower() in info["name"].lower())
    if not same:
        raise RuntimeError(
            f"npvk: this process is bound to device {info['index']} ({info['name']}) since "
            f"its first array; enable(device={device!r}) must come before it. Set "
            "NPVK_DEVICE (or the launcher's local rank) before the first array instead")


def disable():
    """Run pending work, restore NumPy's loops and allocator."""
    global _enabled
    with _lock:
        if not _enabled:
            return
        _errstate.uninstall()
        _numpy.uninstall()
        _reduce.uninstall()
        _assign.uninstall()
        _native.disable()
        _where.uninstall()
        _enabled = False


def is_enabled():
    return _enabled and _native.active()


def sync():
    """Wait for all pending device work; every array is then current on the host."""
    _native.report_site()
    _native.sync()


def stats():
    """What npvk did: ops on the device and fallbacks (by ufunc and reason), host
    syncs (by reason), kernels compiled, cache hits, bytes moved, device time."""
    return _native.stats()


def reset_stats():
    _native.reset_stats()
    _observe.reset()


def device():
    """The device this process uses: index, name, driver, driver UUID; None
    while npvk is not enabled. Asked before the first array, it binds the
    device then (the one that array would get), so the answer stays true.
    It also makes the device where the bound context has not made it yet
    (it is made when work first needs it): a program that calls this before
    its timed work keeps the driver's start-up out of it."""
    if _enabled and not _native.bound():
        _native.bind()
    if _enabled:
        _native.make_device()
    return _native.device_info()


def _patch_threads():
    # NumPy's data allocator is held in a context variable, and every new
    # thread starts with a fresh context, so threads would not get npvk's
    # allocator. Each thread installs it as it starts.
    import threading

    bootstrap = threading.Thread._bootstrap_inner
    if getattr(bootstrap, "_npvk", False):
        return

    def _bootstrap_inner(self):
        if _enabled:
            try:
                _native.install_allocator()
            except Exception:
                pass  # the thread still runs, on NumPy's allocator
        try:
            return bootstrap(self)
        finally:
            # Each thread reports the FP errors of its own ops, under its own
            # error state: those of its last ops, before it ends.
            if _enabled:
                try:
                    _errstate.report_pending()
                except Exception:
                    pass  # a thread's end has no caller to raise to

    _bootstrap_inner._npvk = True
    threading.Thread._bootstrap_inner = _bootstrap_inner

    # Before the first second thread runs, managed memory gives every array a
    # second mapping for the device (docs/architecture.md, "Managed memory").
    start = threading.Thread.start

    def start_thread(self):
        if _enabled:
            _native.threads_starting()
            _patch_work_items()
        return start(self)

    start_thread._npvk = True
    threading.Thread.start = start_thread


def _patch_work_items():
    # A pool's worker thread (concurrent.futures, dask's threaded scheduler)
    # lives on after each task: each task reports its ops' FP errors, under
    # the worker's own error state, before its future has a result, as NumPy
    # warned inside the task. Patched as a pool starts its first worker, so
    # that a program that never uses one does not import the module.
    module = sys.modules.get("concurrent.futures.thread")
    item = getattr(module, "_WorkItem", None)
    if item is None or getattr(item.run, "_npvk", False):
        return
    run = item.run

    def run_then_report(self):
        fn = self.fn

        def fn_then_report(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            finally:
                if _enabled:
                    _errstate.report_pending()

        self.fn = fn_then_report
        return run(self)

    run_then_report._npvk = True
    item.run = run_then_report


def summary():
    """One line on what ran where, e.g. for the end of a program."""
    s = stats()
    syncs = ", ".join(f"{k} {v}" for k, v in s.get("host_syncs", {}).items() if v)
    fallbacks = s.get("ops_fallback", {})
    top = sorted(((n, u, r) for u, rs in fallbacks.items() for r, n in rs.items()), reverse=True)[:3]
    why = "; ".join(f"{u} ({r}) x{n}" for n, u, r in top)
    on_host = s.get("ops_on_host", 0)
    cost = f" ({on_host} of them run with NumPy's loops by the cost model)" if on_host else ""
    return (f"npvk: {s['ops_on_device']} ops on the device{cost}, "
            f"{s['ops_fallback_total']} loop calls on NumPy's path{' (' + why + ')' if why else ''}; "
            f"{s.get('kernels_compiled', 0)} kernels compiled, {s.get('cache_hits', 0)} cache hits; "
            f"device {s.get('device_seconds', 0.0):.3f} s; host syncs: {syncs or 'none'}")


def report_at_exit():
    """Print summary() on stderr when the program ends (NPVK_STATS=1)."""
    import atexit
    import sys

    def _report():
        try:
            sync()
            print(summary(), file=sys.stderr)
        except Exception as exc:  # the program's own exit status matters more
            print(f"npvk: no summary: {exc}", file=sys.stderr)

    atexit.register(_report)


def _stats_requested():
    return os.environ.get("NPVK_STATS", "0") not in ("", "0")


def _hook_faulthandler():
    # npvk resolves page faults on device-owned arrays. faulthandler.enable()
    # (pytest turns it on) would put its own SIGSEGV handler in front, which
    # treats those faults as crashes, so npvk re-installs itself in front of it.
    import faulthandler

    if getattr(faulthandler.enable, "_npvk", False):
        return
    original = faulthandler.enable

    def enable(*args, **kwargs):
        result = original(*args, **kwargs)
        _native.check_fault_handler()
        return result

    enable._npvk = True
    faulthandler.enable = enable



def get_include():
    """The directory of npvk's C header (npvk/npvk.h) in a wheel install, for
    building C extensions against the C ABI; None elsewhere (a Unix-prefix
    install puts it in <prefix>/include)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
    return path if os.path.isfile(os.path.join(path, "npvk", "npvk.h")) else None


# NPVK=1 and a program that imports npvk before NumPy: npvk's own import of
# NumPy ran the autoload hook while this module was still being made, so it
# waited (npvk_autoload._pending); npvk is whole now, all but this line.
_autoload = sys.modules.get("npvk_autoload")
if getattr(_autoload, "_pending", False):
    _autoload._enable(npvk_whole=True)

