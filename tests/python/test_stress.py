"""Stress: many threads, fork, signals and long loops with device work queued.

The default (CI) versions take seconds. NPVK_STRESS_LONG=1 runs the long
versions (minutes), recorded in docs/architecture.md ("Failure handling"):

    NPVK_STRESS_LONG=1 NPVK_CACHE_DIR=$PWD/build/test-kernel-cache NPVK_VALIDATION=1 \\
        PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python/test_stress.py

Results are compared bit for bit with NumPy, so the chains use only correctly
rounded ops (add, multiply, sqrt, comparisons, where, integer arithmetic)."""

import contextvars
import os
import signal
import textwrap
import threading
import time

import numpy as np
import pytest

import npvk
from npvk_testlib import StatsDelta, assert_same, npvk_enabled, run_python

LONG = os.environ.get("NPVK_STRESS_LONG", "0") not in ("", "0")


def _scale(fast, long):
    return long if LONG else fast


def _chain(x, shared, ints, i):
    """Mixed ufuncs on one thread's arrays and a shared read-only one."""
    y = x * (i + 1.0) + shared
    z = np.sqrt(np.abs(y)) - shared * 0.25
    w = np.where(z > 1.0, z, -z * 0.5)
    w += 1.0                            # in place
    k = (ints * 3) // 7 ^ (ints + i)    # integer path
    m = np.maximum(w, y) * (k > 0)
    return [y, z, w, k, m]


def _run_threads(n, target):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    # A copy of this context: NumPy keeps the NEP 49 allocator there.
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(guarded, i))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_eight_threads_mixed_chains_shared_and_private():
    nthreads, rounds, n = 8, _scale(6, 200), 20_000

    def run_all():
        shared = np.arange(n, dtype=np.float64) * 0.5
        out = np.zeros(nthreads * 64)   # shared, each thread writes its own slice
        results = [[] for _ in range(nthreads)]
        barrier = threading.Barrier(nthreads)

        def work(i):
            x = np.arange(n, dtype=np.float64) - 3.0 * i
            ints = np.arange(n, dtype=np.int64) * (i + 1) - 5000
            barrier.wait()
            for r in range(rounds):
                res = _chain(x, shared, ints, i)
                x = res[2] * 0.5 + x            # carried to the next round
                np.add(res[4][:64], r, out=out[i * 64:(i + 1) * 64])
                if r % 3 == 2:
                    # Half the threads sync first; the others read their own
                    # pending result directly, often while another thread's
                    # flush runs (stale up to 2861ec4; docs/architecture.md,
                    # "Managed memory").
                    if i % 2:
                        npvk.sync()
                    results[i].append(float(x[r]))
            npvk.sync()
            results[i].extend(res)

        _run_threads(nthreads, work)
        return results, out.copy()

    expected, expected_out = run_all()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        start = time.monotonic()
        actual, actual_out = run_all()
        elapsed = time.monotonic() - start
        assert delta.device_ops > nthreads * rounds * 5
    print(f"8 threads x {rounds} rounds: {elapsed:.2f} s")
    for i in range(nthreads):
        for a, e in zip(actual[i], expected[i]):
            if isinstance(e, np.ndarray):
                assert_same(a, e, context=f"thread {i}")
            else:
                assert a == e, f"thread {i}"
    assert_same(actual_out, expected_out)


FORK_SCRIPT = textwrap.dedent("""
    import contextvars, os, sys, threading
    import numpy as np
    import npvk

    ROUNDS, FORKS, N = {rounds}, {forks}, 30_000
    npvk.enable(min_bytes=0)
    stop = threading.Event()
    errors = []

    def worker(i):
        try:
            x = np.arange(N, dtype=np.float64) + i
            while not stop.is_set():
                y = x * 2.0 + 1.0
                z = np.sqrt(y * y)         # == y exactly
                if not (z == y).all():
                    errors.append(i)
        except BaseException as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(worker, i))
               for i in range(3)]
    for t in threads:
        t.start()
    a = np.arange(N, dtype=np.float64)
    for k in range(FORKS):
        b = a * 3.0 + k                    # pending in this thread at the fork
        pid = os.fork()
        if pid == 0:
            ok = b[N - 1] == (N - 1) * 3.0 + k and bool(((a * 3.0 + k) == b).all())
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            errors.append(f"child {{k}} exit {{code}}")
        assert (b == a * 3.0 + k).all()
    stop.set()
    for t in threads:
        t.join()
    print("errors", errors, flush=True)
    sys.exit(1 if errors else 0)
""")


def test_fork_while_threads_queue_work():
    """Forks while other threads keep recording and flushing work: the
    atfork handler runs all of it first, the child computes on the host with
    the right data, and the parent carries on on the device."""
    script = FORK_SCRIPT.format(rounds=0, forks=_scale(8, 200))
    start = time.monotonic()
    proc = run_python(["-c", script], timeout=_scale(120, 1200))
    print(f"fork stress: {time.monotonic() - start:.2f} s")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "errors []" in proc.stdout


SIGINT_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    # A shell that started the suite in the background hands it SIGINT
    # ignored, and Python then raises no KeyboardInterrupt at all.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import npvk

    N, SECONDS = 200_000, {seconds}
    rng = np.random.default_rng(1)
    a0 = rng.random(N)

    def compute(a):
        b = a
        for _ in range(8):
            b = np.sqrt(b * 2.0 + 1.0) - 0.5
        return b

    expected = compute(a0)
    npvk.enable(min_bytes=0)
    a = np.array(a0)
    stop = threading.Event()
    sent = 0

    looping = threading.Event()

    def interrupter():
        global sent
        # Not before the main thread is past t.start(): a signal while it
        # waits for the thread to start is an interrupt of the test's own
        # set-up (a loaded machine made that wait longer than 5 ms).
        looping.wait()
        while not stop.is_set():
            if sent % 8 == 7:
                # Now and then a pause until an iteration completes (slow
                # machines and sanitizer builds need longer than others).
                seen = done
                pause_end = time.monotonic() + 5.0
                while done == seen and time.monotonic() < pause_end and not stop.is_set():
                    time.sleep(0.01)
            else:
                time.sleep(0.001 * (5 + (sent * 7) % 40))   # 5 to 44 ms
            os.kill(os.getpid(), signal.SIGINT)
            sent += 1

    done = interrupted = 0
    compute(a)
    npvk.sync()  # kernels built before the signals start: they test flushes, not compiles
    t = threading.Thread(target=interrupter)
    t.start()
    looping.set()  # (its first signal comes 5 ms later, inside the loop)
    deadline = time.monotonic() + SECONDS
    while True:
        # A signal may land anywhere, the handler of the last one included.
        try:
            try:
                # Past the deadline once an iteration went through (a loaded
                # machine may need longer for the first), or long past it.
                now = time.monotonic()
                if now > deadline and (done > 0 or now > deadline + 60):
                    break
                b = compute(a)
                npvk.sync()                  # the flush the signal lands in
                ok = bool((b == expected).all())
                if not ok:
                    print("wrong result", flush=True)
                    sys.exit(2)
                done += 1
            except KeyboardInterrupt:
                interrupted += 1
        except KeyboardInterrupt:
            interrupted += 1
    # The last signals may still come: ignore them before waiting for the sender.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop.set()
    t.join()
    # Whatever was interrupted, npvk is consistent afterwards.
    b = compute(a)
    assert (b == expected).all() and (a == a0).all()
    print("done", done, "interrupted", interrupted, "sent", sent, flush=True)
""")


def test_sigint_during_flushes():
    """KeyboardInterrupt raised at any point, flushes included (the signal
    interrupts the fence wait and the driver's threads): no crash, no hang,
    and later work gives NumPy's results."""
    proc = run_python(["-c", SIGINT_SCRIPT.format(seconds=_scale(4, 120))],
                      timeout=_scale(120, 600))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    print(proc.stdout.strip())
    words = proc.stdout.split()
    assert int(words[words.index("done") + 1]) > 0
    assert int(words[words.index("interrupted") + 1]) > 0


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_long_loop_memory_stays_flat():
    """Many small and large ops: resident memory and managed (device) memory
    do not grow with the number of ops."""
    iterations = _scale(1_000, 50_000)   # 2 ops each: 2e3 (CI) or 1e5 ops
    with npvk_enabled(min_bytes=0):
        big = np.ones(100_000)
        small = np.ones(100)

        def step(k):
            nonlocal big, small
            big = big * 1.0 + 0.0 if k % 2 else np.sqrt(big)
            small = small + 1.0 if k % 2 else small - 1.0
            if k % 500 == 0:
                npvk.sync()

        for k in range(iterations // 10):  # warm up: kernels, caches, pools
            step(k)
        npvk.sync()
        rss0 = _rss_bytes()
        managed0 = npvk.stats()["managed_bytes"]
        start = time.monotonic()
        for k in range(iterations):
            step(k)
        npvk.sync()
        elapsed = time.monotonic() - start
        rss1 = _rss_bytes()
        managed1 = npvk.stats()["managed_bytes"]
        assert_same(big, np.ones(100_000))
        assert small[0] in (1.0, 2.0)
    print(f"{2 * iterations} ops in {elapsed:.2f} s; rss {rss0 >> 20} -> {rss1 >> 20} MiB; "
          f"managed {managed0} -> {managed1} bytes")
    assert managed1 <= managed0 + (4 << 20)
    # ASan holds freed memory in quarantine (and LeakSanitizer checks leaks).
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        assert rss1 - rss0 < (32 << 20)
