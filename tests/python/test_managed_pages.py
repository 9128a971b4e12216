"""Managed arrays' page mappings: the pages device work wrote stay closed
until the host touches them, a program gets alias mappings once a second
thread starts, and no array's mapping ends where another's begins
(test_coherence.py has the scenarios every program meets)."""

import numpy as np
import pytest

import npvk
from npvk_testlib import npvk_enabled, run_python, subprocess_env


# The permissions of the mapping holding an address ('rw-p', '---s', ...).
MAPS = '''
def protection(address):
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                return perms
    return None
'''

CLOSED_PAGES_SCRIPT = MAPS + """
import os, sys, tempfile
import numpy as np
import npvk


npvk.enable(min_bytes=0)
a = np.arange(10_000, dtype=np.float64)
results, seen = [], []
tmp = tempfile.mkdtemp()
for access in ("read", "write", "os.write", "readinto"):
    b = a * 3.0                       # device work writes b
    c = a + 1.0
    assert c[0] == 1.0                # a fault on c runs the work
    seen.append(protection(b.ctypes.data))
    path = os.path.join(tmp, access)
    if access == "read":
        results.append(float(b[7]))
    elif access == "write":
        b[7] = -1.0
        results.append(float(b[7]))
    elif access == "os.write":
        with open(path, "wb") as f:
            assert os.write(f.fileno(), b.data) == b.nbytes
        results.append(float(np.fromfile(path)[7]))
    else:
        np.full(10_000, 5.0).tofile(path)
        with open(path, "rb") as f:
            assert f.readinto(b.data) == b.nbytes
        results.append(float(b[7]))
    seen.append(protection(b.ctypes.data))
print(repr((results, seen)))
"""


def test_pages_stay_closed_after_device_work_until_the_host_touches_them():
    """With the alias mapping, the pages device work wrote stay closed after
    the flush (no mprotect per array per time step) and open at the first
    host access: a read, a write, and system calls that read or fill them
    (the syscall guard must see the closed pages, or write(2) fails with
    EFAULT). Here another array's fault runs the work."""
    proc = run_python(["-c", CLOSED_PAGES_SCRIPT],
                      env=subprocess_env(NPVK_PAGE_ALIAS="1", NPVK_ZERO_COPY=None))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results, seen = eval(proc.stdout.strip().splitlines()[-1])
    assert results == [21.0, -1.0, 21.0, 5.0]
    assert seen == ["---s", "rw-s"] * 4, seen


THREADS_SCRIPT = MAPS + """
import threading
import numpy as np
import npvk

def kind(address):
    return protection(address)[3]

import os
threads_at_start = len(os.listdir("/proc/self/task"))  # with NumPy's BLAS pool
npvk.enable(min_bytes=0)
a = np.arange(1_000_000, dtype=np.float64)
b = a * 2.0                          # pending when the thread starts
before = kind(a.ctypes.data), kind(b.ctypes.data)
out = []
t = threading.Thread(target=lambda: out.append(float((b + 1.0)[999_999])))
t.start()
t.join()
after = kind(a.ctypes.data), kind(b.ctypes.data)
c = a * 3.0                          # device work on a moved array
d = np.empty(1_000_000)
print(repr((threads_at_start, before, after, kind(d.ctypes.data), out, float(c[10]),
            float(b[7]))))
"""


@pytest.mark.parametrize("blas_threads", ["1", "2"])
def test_automatic_alias_when_a_second_thread_starts(blas_threads):
    """NPVK_PAGE_ALIAS unset: a single-threaded program keeps private
    mappings (huge pages, copy-on-write fork); starting a thread moves every
    managed array onto a shared pair of mappings first, data and pending work
    intact, and later arrays get one from the start. NumPy's OpenBLAS starts
    its pool at import (2 threads: one more OS thread from the start); being
    idle outside the calls the program makes, it does not count."""
    proc = run_python(["-c", THREADS_SCRIPT],
                      env=subprocess_env(NPVK_PAGE_ALIAS=None, NPVK_ZERO_COPY=None,
                                         OPENBLAS_NUM_THREADS=blas_threads))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    threads, before, after, later, out, c10, b7 = eval(proc.stdout.strip().splitlines()[-1])
    if blas_threads == "2":
        assert threads > 1, "no BLAS pool thread: the case is not tested"
    assert before == ("p", "p") and after == ("s", "s") and later == "s", proc.stdout
    assert out == [1999999.0] and c10 == 30.0 and b7 == 14.0


def test_managed_arrays_never_end_where_another_begins():
    """NumPy takes an output that ends where an input starts as overlapping it
    and runs its scalar loop, slower and, for exp and log, with other bits. The
    kernel places new mappings next to earlier ones, so managed arrays whose
    size is a multiple of the page size met end to start (7 of 48 here, before
    interpose/managed_pages.cpp left a gap), and so, once, did a 4 MiB array
    and a 2 MiB one mapped in the hole a spare cut to size left; malloc's
    arrays never do."""
    sizes = [512, 4096, 1 << 18, 100_000, 1 << 19, 3 << 18, 1 << 20]
    with npvk_enabled(min_bytes=0):
        arrays = [np.empty(n) for _ in range(6) for n in sizes]
        spans = [(a.ctypes.data, a.ctypes.data + a.nbytes) for a in arrays]
        assert npvk.stats()["managed_allocations"] >= len(arrays)
        # Whether two arrays meet depends on where the kernel puts each
        # mapping; the gap that keeps them apart does not: every array's
        # mapping (one region of /proc/self/maps) goes on past its end.
        regions = [tuple(int(x, 16) for x in line.split()[0].split("-"))
                   for line in open("/proc/self/maps")]
        ends_a_region = [span for span in spans
                         if not any(lo < span[1] < hi for lo, hi in regions)]
    starts = {start for start, _ in spans}
    assert [span for span in spans if span[1] in starts] == []
    assert ends_a_region == []
