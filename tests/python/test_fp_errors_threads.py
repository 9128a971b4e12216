"""Floating-point errors of device work in threaded programs: each thread's
ops' errors are reported under that thread's own error state, and a pool
task's before its result (test_fp_errors.py has the single-threaded rules)."""

import warnings

import numpy as np

import npvk
from npvk_testlib import StatsDelta, npvk_enabled


def _two_threads(first, second):
    """Runs first(queued, done) and second(queued, done) in two threads: the
    first queues its op and sets `queued`, the second acts then sets `done`."""
    import threading

    queued, done = threading.Event(), threading.Event()
    errors = []

    def run(fn):
        try:
            fn(queued, done)
        except BaseException as e:  # noqa: B036 - reported by the test
            errors.append(e)
            queued.set()
            done.set()

    threads = [threading.Thread(target=run, args=(fn,)) for fn in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def _change_own_errstate(queued, done):
    queued.wait(60)
    with np.errstate(over="ignore"):
        pass
    done.set()


def test_another_threads_errstate_change_keeps_our_ignore():
    """Issue 19 (dask's nanvar): thread A's z / z under errstate(invalid=
    'ignore') is still pending when thread B enters and leaves an errstate of
    its own; B's report must not take A's error and warn it under B's state."""
    result = {}

    def divide_under_ignore(queued, done):
        z = np.zeros(1_000_000)
        with np.errstate(invalid="ignore"):
            result["r"] = z / z
            queued.set()
            done.wait(60)

    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _two_threads(divide_under_ignore, _change_own_errstate)
            npvk.sync()
            assert np.isnan(result["r"]).all()
        assert delta.device_ops >= 1
    assert [str(w.message) for w in caught] == []


def test_a_threads_error_is_reported_under_its_own_state():
    """The other way round: A's z / z under the default 'warn' warns once,
    also when B ignores invalid meanwhile and A does nothing more before it
    ends (a thread reports its last ops' errors when it ends)."""
    result = {}

    def divide_under_warn(queued, done):
        z = np.zeros(1_000_000)
        result["r"] = z / z
        queued.set()
        done.wait(60)

    def ignore_invalid(queued, done):
        queued.wait(60)
        with np.errstate(invalid="ignore"):
            npvk.sync()
        done.set()

    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _two_threads(divide_under_warn, ignore_invalid)
            assert np.isnan(result["r"]).all()
    assert [str(w.message) for w in caught] == ["invalid value encountered in divide"]


def test_a_pool_tasks_errors_are_reported_before_its_result():
    """A pool's worker thread lives on after a task, so it cannot wait for its
    end: each task reports its ops' errors before its future has a result,
    under the worker's state (dask's threaded scheduler: a cumprod that
    overflows warned only plain)."""
    import concurrent.futures

    def overflow():
        return np.exp(np.full(1_000_000, 1000.0))  # queued, not read

    def run():
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = pool.submit(overflow).result()
                messages = [str(w.message) for w in caught]
        return messages, result

    expected, plain = run()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        messages, result = run()
        assert np.array_equal(result, plain)
        assert delta.device_ops >= 1
    assert expected == ["overflow encountered in exp"]
    assert messages == expected
