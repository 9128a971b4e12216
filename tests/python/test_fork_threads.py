"""fork() and threads with pending device work.

The fork scenarios run in a subprocess of their own (a fork of the pytest
process would inherit pytest's state), with a timeout that kills the whole
process group, so a deadlocked child fails the test instead of hanging it."""

import contextvars
import math
import textwrap
import threading
import time

import numpy as np
import pytest

import npvk
from npvk_testlib import StatsDelta, assert_same, npvk_enabled, run_python, subprocess_env

N = 10_000

FORK_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import npvk

    N = 10_000
    npvk.enable(min_bytes=0)
    a = np.arange(N, dtype=np.float64)
    b = a * 2.0 + 1.0          # pending device work at fork time
    pid = os.fork()
    if pid == 0:
        try:
            c = b * 3.0        # the child cannot use the device: NumPy's path
            d = np.sqrt(a) + b
            ok = (c.tolist() == [(2.0 * i + 1.0) * 3.0 for i in range(N)]
                  and d[4] == 2.0 + 9.0
                  and npvk.stats()["host_syncs"]["fork"] >= 0)
            os._exit(0 if ok else 3)
        except BaseException as exc:
            print("child:", repr(exc), file=sys.stderr, flush=True)
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    # The parent continues on the device.
    before = npvk.stats()["ops_on_device"]
    e = b * 3.0 + a
    assert npvk.stats()["ops_on_device"] > before
    assert e.tolist() == [(2.0 * i + 1.0) * 3.0 + i for i in range(N)]
    print("child exit", code, "fork syncs", npvk.stats()["host_syncs"]["fork"], flush=True)
    sys.exit(code)
""")


SNAPSHOT_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import npvk

    npvk.enable(min_bytes=0)
    big = np.arange(1_000_000, dtype=np.float64)   # a huge-page-sized mapping
    small = np.arange(3_000, dtype=np.float64)
    pending = big * 2.0                            # device work queued at the fork
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)                              # the parent has written by now
        ok = (big[5] == 5.0 and small[6] == 6.0 and pending[7] == 14.0
              and big[-1] == 999_999.0)
        big[9] = small[9] = pending[9] = -1.0      # must not reach the parent
        os._exit(0 if ok else 3)
    os.close(r)
    big[5] = small[6] = pending[7] = big[-1] = 99.0
    os.write(w, b"x")
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert big[9] == 9.0 and small[9] == 9.0 and pending[9] == 18.0
    assert (pending * 1.0)[7] == 99.0              # the parent keeps its device
    print("child exit", code, flush=True)
    sys.exit(code)
""")


@pytest.mark.parametrize("alias", ["1", "0", None])
def test_fork_child_sees_the_pages_as_they_were_at_the_fork(alias):
    """Managed pages are shared memory (a second mapping of them serves the
    device), so the child must get its own copy at the fork, as private
    memory would: the parent's writes after fork() returns never reach the
    child, and the child's never reach the parent. NPVK_PAGE_ALIAS=0 keeps
    private pages (copy-on-write)."""
    proc = run_python(["-c", SNAPSHOT_SCRIPT], timeout=30,
                      env=subprocess_env(NPVK_PAGE_ALIAS=alias))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "child exit 0" in proc.stdout


def test_fork_with_pending_work():
    # (At commit 4d54bfe the child deadlocked here: the context lock, a
    # recursive mutex taken in the atfork prepare handler, could not be
    # unlocked in the child, whose thread id differs.)
    proc = run_python(["-c", FORK_SCRIPT], timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "child exit 0" in proc.stdout


def test_multiprocessing_fork_pool():
    script = textwrap.dedent("""
        import multiprocessing as mp
        import numpy as np
        import npvk

        def work(k):
            x = np.arange(10_000, dtype=np.float64) * k   # NumPy's path in the child
            return float((x + shared).sum())

        npvk.enable(min_bytes=0)
        shared = np.arange(10_000, dtype=np.float64) * 0.5 + 1.0   # pending at fork
        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(work, range(6))
        want = [float((np.arange(10_000) * k + np.arange(10_000) * 0.5 + 1.0).sum())
                for k in range(6)]
        assert got == want, (got, want)
        before = npvk.stats()["ops_on_device"]
        y = shared * 2.0
        assert npvk.stats()["ops_on_device"] > before
        print("ok", npvk.stats()["host_syncs"]["fork"])
    """)
    proc = run_python(["-c", script], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("ok")


def test_subprocess_spawn_with_pending_work():
    """subprocess (fork+exec in C) from a process with pending work; the
    parent's results stay right and it keeps using the device."""
    script = textwrap.dedent("""
        import subprocess, sys
        import numpy as np
        import npvk
        npvk.enable(min_bytes=0)
        a = np.arange(10_000, dtype=np.float64)
        b = a * 2.0
        r = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True,
                           text=True)
        assert r.stdout.strip() == "42", r
        before = npvk.stats()["ops_on_device"]
        c = b + a
        assert npvk.stats()["ops_on_device"] > before
        assert c.tolist() == [3.0 * i for i in range(10_000)]
        print("ok")
    """)
    proc = run_python(["-c", script], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "ok"


def _chain(x, shared, k, before_host_access):
    for j in range(30):
        x = x * 1.0001 + shared
        y = np.sqrt(np.abs(x)) - shared[::-1]
        if j % 10 == k % 10:
            before_host_access()
            x[j] = -x[j]  # host write in the chain
        z = np.maximum(y, x[::1]) // 3.0
    before_host_access()
    return [x, y, z, float(x.sum())]


def _run_threads(nthreads, target, copy_context):
    """Runs target(i) in nthreads threads; with copy_context, each thread
    runs in a copy of this thread's contextvars context (NumPy keeps the
    NEP 49 allocator there), else in a fresh one like any threading.Thread."""
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = []
    for i in range(nthreads):
        if copy_context:
            ctx = contextvars.copy_context()
            threads.append(threading.Thread(target=ctx.run, args=(guarded, i)))
        else:
            threads.append(threading.Thread(target=guarded, args=(i,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _nothing():
    pass


def _threaded_chains(nthreads, copy_context, before_host_access=_nothing):
    shared0 = np.arange(N, dtype=np.float64) * 0.5

    def run_all():
        shared = np.array(shared0)
        shared2 = shared * 2.0  # pending when the threads start (unless synced)
        before_host_access()
        results = [None] * nthreads
        barrier = threading.Barrier(nthreads)

        def work(i):
            x = np.arange(N, dtype=np.float64) + i
            barrier.wait()
            results[i] = _chain(x, shared2, i, before_host_access) + [shared2[i * 7]]

        _run_threads(nthreads, work, copy_context)
        return results

    expected = run_all()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual = run_all()
        device_ops = delta.device_ops
    for i in range(nthreads):
        for a, e in zip(actual[i], expected[i]):
            if isinstance(e, np.ndarray):
                assert_same(a, e, context=f"thread {i}")
            else:
                # x.sum() runs on the device, summed in another order than
                # NumPy's pairwise sum (tests/python/test_reductions.py).
                assert math.isclose(a, e, rel_tol=1e-12), f"thread {i}: {a} != {e}"
    return device_ops


@pytest.mark.parametrize("nthreads", [4, 8])
def test_threads_with_private_and_shared_arrays(nthreads):
    """Threads running device ufunc chains at once on private arrays, all
    reading a shared array, touching their own pending results on the host."""
    device_ops = _threaded_chains(nthreads, copy_context=True)
    assert device_ops > nthreads * 30


@pytest.mark.parametrize("nthreads", [4])
def test_threads_with_sync_calls(nthreads):
    """The same with npvk.sync() (which releases the GIL while it flushes)
    before each host access, so flushes of one thread overlap others' work."""
    device_ops = _threaded_chains(nthreads, copy_context=True, before_host_access=npvk.sync)
    assert device_ops > nthreads * 30


@pytest.mark.parametrize("flush_by", ["fault", "sync"])
def test_host_read_during_another_threads_flush(flush_by):
    """One thread keeps flushing (by faulting on its own pending result, or by
    npvk.sync(), which releases the GIL while it waits); another reads its
    own pending results with a plain copy (no ufunc, no npvk lock). During a
    flush the pages lavapipe works on are open to the host; the reader must
    still never see stale data. (Seen at commit 4d54bfe: ~20% stale reads.)"""
    stale = []
    stop = threading.Event()

    def flusher():
        y = np.ones(N)
        while not stop.is_set():
            for _ in range(5):
                y = y * 1.0 + 0.0
            if flush_by == "sync":
                npvk.sync()
            else:
                y[0]  # fault: flush

    def reader():
        try:
            for _ in range(150):
                a = np.full(N, 1.0)
                b = a * 3.0 + 1.0  # pending
                snapshot = b.copy()  # a plain host read of the pending result
                if snapshot[0] != 4.0 or snapshot[N - 1] != 4.0:
                    stale.append(float(snapshot[0]))
        finally:
            stop.set()

    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        threads = [threading.Thread(target=contextvars.copy_context().run, args=(f,))
                   for f in (flusher, reader)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert delta.device_ops > 300
    assert stale == [], f"{len(stale)} of 150 reads saw stale data"


def _page_protection(address):
    """The permissions ('rw-', 'r--', '---') of the mapping holding address."""
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                return perms[:3]
    return None


def test_host_read_while_another_thread_syncs():
    """A plain element read (no allocation, no ufunc: nothing that takes npvk's
    lock) of a pending result while another thread's npvk.sync() runs a long
    batch whose last op writes that result. The program's mapping must stay
    closed for the whole flush (the device works through a second mapping of
    the pages), so the read faults and waits for the result. Up to 2861ec4
    the flush opened the pages and the read saw stale data every time."""
    with npvk_enabled(min_bytes=0):
        heavy = np.ones(2_000_000)
        for _ in range(10):
            heavy = heavy * 1.0000001 + 0.5  # queued: a long batch
        a = np.full(N, 1.0)
        # Queued last. A value no other test makes: recycled pages that held
        # the same result would hide a stale read.
        b = a * 7.0 - 0.125
        address = b.ctypes.data
        assert _page_protection(address) == "---"  # pending: no host access

        def flusher():
            npvk.sync()  # runs the batch with the GIL released

        t = threading.Thread(target=contextvars.copy_context().run, args=(flusher,))
        t.start()
        deadline = time.monotonic() + 30
        while (_page_protection(address) == "---" and t.is_alive()
               and time.monotonic() < deadline):
            time.sleep(0.0005)  # until the pages open, or the flush ends
        # Read at once: had the flush opened the pages early, this reads them
        # before the batch reaches the op that writes them.
        seen = (float(b[0]), float(b[N - 1]))
        t.join()
        del heavy
    assert seen == (6.875, 6.875)


@pytest.mark.parametrize("nthreads", [4, 8])
def test_plain_threads_are_correct(nthreads):
    _threaded_chains(nthreads, copy_context=False)


def test_plain_threads_use_the_device():
    """Arrays made in any threading.Thread get npvk's allocator. (Up to
    638c1f8 they did not: NumPy keeps the NEP 49 handler in a contextvar and a
    new thread starts with a fresh context, so every op there fell back.)"""
    device_ops = _threaded_chains(4, copy_context=False)
    assert device_ops > 4 * 30


def test_threads_writing_shared_array_in_turns():
    """Threads take turns (a lock) writing slices of one shared array that
    other threads' device ops read."""
    def run_all():
        shared = np.zeros(N)
        lock = threading.Lock()
        outs = {}

        def work(i):
            local = np.arange(N, dtype=np.float64) * (i + 1)
            for step in range(10):
                with lock:
                    shared[i * 100 + step] = step + i  # host write, shared
                    snap = shared + local  # device read of shared
                outs[(i, step)] = snap
        _run_threads(6, work, copy_context=True)
        return shared, outs

    e_shared, e_outs = run_all()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        a_shared, a_outs = run_all()
        assert delta.device_ops >= 60
    # Interleaving differs between runs; each snapshot must equal shared at
    # that moment plus local, so check the final state and the invariant.
    assert_same(a_shared, e_shared)
    for (i, step), snap in a_outs.items():
        local = np.arange(N, dtype=np.float64) * (i + 1)
        diff = snap - local
        assert diff[i * 100 + step] == step + i
        assert np.all((diff == 0) | (diff == e_shared))


def test_fork_in_plain_process_unaffected():
    """Sanity: the same fork script without npvk.enable() works, so a failure
    of test_fork_with_pending_work is npvk's."""
    script = FORK_SCRIPT.replace("npvk.enable(min_bytes=0)", "pass").replace(
        "assert npvk.stats()[\"ops_on_device\"] > before", "pass").replace(
        'npvk.stats()["host_syncs"]["fork"]', "0")
    proc = run_python(["-c", script], timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
