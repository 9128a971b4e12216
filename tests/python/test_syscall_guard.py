"""The syscall safety net (interpose/syscall_guard.cpp): the C library's I/O
functions make managed memory current before the kernel reads or writes it,
whoever calls them. Each case reaches the kernel without the array's buffer
protocol (a memoryview exported before the device op, ndarray.tofile's
fwrite, a C function called through ctypes), on arrays whose newest data is
pending on the device, so without the net the call would fail with EFAULT
(test_without_the_guard_calls_fail shows it does). The bytes must equal plain
NumPy's, and the net must have done the work (syscalls_guarded)."""

import os
import shutil
import socket
import subprocess
import threading

import numpy as np
import pytest

import npvk
from npvk_testlib import read_all, run_python, subprocess_env

from test_io import N, base, same_in_both


def _through_pipe(send):
    """Runs send(w) while a thread drains the pipe; returns what it read."""
    r, w = os.pipe()
    out = []
    reader = threading.Thread(target=lambda: out.append(read_all(r)))
    reader.start()
    try:
        result = send(w)
    finally:
        os.close(w)
        reader.join()
        os.close(r)
    return result, out[0]


# Each scenario(directory) -> list of results. Names say which call and which
# way: "out" cases make the kernel read device-written data, "in" cases make it
# write into memory the device still reads or writes.

def _os_write(d):
    c = base()
    m = memoryview(c)
    c *= 3.0  # pending write
    return list(_through_pipe(lambda w: os.write(w, m[:4096])))


def _os_writev(d):
    a, b = base(), base(1.0)
    ma, mb = memoryview(a), memoryview(b)
    np.multiply(a, 2.0, out=a)
    np.add(b, a, out=b)
    return list(_through_pipe(lambda w: os.writev(w, [ma[:1000], mb[:1000]])))


def _os_pwrite_file(d):
    c = base()
    m = memoryview(c)
    c -= 7.0
    fd = os.open(d / "c.bin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        n = os.pwrite(fd, m, 16)
        k = os.pwritev(fd, [m[:100]], 0)
    finally:
        os.close(fd)
    return [n, k, (d / "c.bin").read_bytes()]


def _file_write(d):
    c = base()
    m = memoryview(c)
    c /= 3.0
    with open(d / "c.bin", "wb", buffering=0) as f:
        n = f.write(m)
    return [n, (d / "c.bin").read_bytes()]


def _tofile(d):
    c = base() * 2.0 - 5.0  # pending; tofile hands the pointer to fwrite
    c.tofile(d / "c.bin")
    e = base(dtype=np.float32) + 1.5
    with open(d / "e.bin", "wb") as f:
        e[::-1].tofile(f)
        e.tofile(f)
    return [(d / "c.bin").read_bytes(), (d / "e.bin").read_bytes()]


def _os_readv_in(d):
    a = base()
    m = memoryview(a)
    p = a * 2.0  # pending read of a: its pages are read-only
    b = base()
    mb = memoryview(b)
    b += 1.0  # pending write of b: no access
    (d / "in.bin").write_bytes(bytes(range(256)) * 200)
    fd = os.open(d / "in.bin", os.O_RDONLY)
    try:
        n = os.readv(fd, [m.cast("B")[:5000], mb.cast("B")[8:4008]])
        k = os.preadv(fd, [mb.cast("B")[:64]], 3)
    finally:
        os.close(fd)
    return [n, k, a, p, b]


def _file_readinto(d):
    a = base()
    m = memoryview(a)
    p = a + 1.0  # pending read of a
    (d / "in.bin").write_bytes(np.arange(N, dtype=np.float64).tobytes())
    with open(d / "in.bin", "rb", buffering=0) as f:
        n = f.readinto(m)
    return [n, a, p]


def _socket_send_recv_into(d):
    s1, s2 = socket.socketpair()
    try:
        c = base()
        mc = memoryview(c)
        c *= 1.5  # pending write
        dst = base()
        md = memoryview(dst).cast("B")
        p = dst * 2.0  # pending read of dst
        s1.send(mc[:256])
        got = 0
        while got < 256 * 8:
            got += s2.recv_into(md[got:256 * 8])
        s1.sendmsg([mc[256:512]])
        k, _, _, _ = s2.recvmsg_into([md[4096:6144]])
        s1.sendall(mc[:16])
        j, _ = s2.recvfrom_into(md[8000:8128])
    finally:
        s1.close()
        s2.close()
    return [got, k, j, dst, p, c]


def _ctypes_libc_write_read(d):
    """ctypes looks `write` and `read` up with dlsym (issue 19: the pointer
    it got bypassed the patched slots, and write returned -1, EFAULT)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.write.restype = libc.read.restype = ctypes.c_ssize_t
    libc.write.argtypes = libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    c = base()
    c *= 3.0  # pending write
    n, sent = _through_pipe(lambda w: libc.write(w, c.ctypes.data, c.nbytes))
    a = base()
    p = a * 2.0  # pending read of a: its pages are read-only
    (d / "in.bin").write_bytes(bytes(range(256)) * 64)
    fd = os.open(d / "in.bin", os.O_RDONLY)
    try:
        k = libc.read(fd, a.ctypes.data, 8192)
    finally:
        os.close(fd)
    return [n, ctypes.get_errno() if n < 0 else 0, sent, k, a, p]


SCENARIOS = {
    "os_write": _os_write,
    "os_writev": _os_writev,
    "os_pwrite_file": _os_pwrite_file,
    "file_write": _file_write,
    "tofile": _tofile,
    "os_readv_in": _os_readv_in,
    "file_readinto": _file_readinto,
    "socket_send_recv_into": _socket_send_recv_into,
    "ctypes_libc_write_read": _ctypes_libc_write_read,
}


@pytest.mark.parametrize("case", SCENARIOS)
def test_io_on_pending_arrays(tmp_path, case):
    guarded = []

    def scenario(d):
        before = npvk.stats().get("syscalls_guarded", 0)
        result = SCENARIOS[case](d)
        guarded.append(npvk.stats().get("syscalls_guarded", 0) - before)
        return result

    same_in_both(scenario, tmp_path)
    assert guarded[-1] > 0, "the guard did nothing"


_EFAULT_SCRIPT = """
import os, numpy as np, npvk
npvk.enable(min_bytes=0)
c = np.arange(10_000.0)
m = memoryview(c)
c *= 3.0
r, w = os.pipe()
try:
    print(os.write(w, m[:1024]), os.read(r, 8) == np.float64(0.0).tobytes(),
          npvk.stats()["syscalls_guarded"])
except OSError as e:
    print("errno", e.errno)
"""


def test_without_the_guard_calls_fail():
    """Shows the cases above test the guard: with it off, a system call on
    device-owned pages fails with EFAULT."""
    off = run_python(["-c", _EFAULT_SCRIPT], env=subprocess_env(NPVK_SYSCALL_GUARD="0"))
    assert off.returncode == 0, off.stderr
    assert off.stdout.split() == ["errno", "14"]
    on = run_python(["-c", _EFAULT_SCRIPT], env=subprocess_env(NPVK_SYSCALL_GUARD=None))
    assert on.returncode == 0, on.stderr
    assert on.stdout.split() == ["8192", "True", "1"]


_LATE_LIBRARY = r"""
#include <unistd.h>
long npvk_test_write(int fd, const void *p, unsigned long n) { return write(fd, p, n); }
long npvk_test_read(int fd, void *p, unsigned long n) { return read(fd, p, n); }
"""


def test_library_loaded_after_enable(tmp_path):
    """An object dlopen'ed after npvk.enable() is patched too; ctypes hands
    the array's address to its C function directly (no buffer protocol)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "late.c"
    src.write_text(_LATE_LIBRARY)
    lib = tmp_path / "liblate.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src)], check=True)
    code = f"""
import ctypes, os, numpy as np, npvk
npvk.enable(min_bytes=0)
lib = ctypes.CDLL({str(lib)!r})
lib.npvk_test_write.restype = lib.npvk_test_read.restype = ctypes.c_long
c = np.arange(10_000.0)
c *= 3.0  # pending write
r, w = os.pipe()
n = lib.npvk_test_write(w, ctypes.c_void_p(c.ctypes.data), ctypes.c_ulong(4096))
back = np.frombuffer(os.read(r, 4096), dtype=np.float64)
payload = np.full(8, 9.5).tobytes()  # before p: np.full itself may run on the device
d = np.arange(10_000.0)
p = d + 1.0  # pending read of d
os.write(w, payload)
k = lib.npvk_test_read(r, ctypes.c_void_p(d.ctypes.data), ctypes.c_ulong(64))
ok = (n == 4096 and k == 64 and (back == np.arange(512.0) * 3.0).all()
      and (d[:8] == 9.5).all() and (d[8:] == np.arange(8.0, 10_000.0)).all()
      and (p == np.arange(10_000.0) + 1.0).all())
print(ok, npvk.stats()["syscalls_guarded"])
"""
    proc = run_python(["-c", code])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "2"]


_LOOKUP_LIBRARY = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
typedef long (*write_fn)(int, const void *, unsigned long);
long npvk_test_dlsym_write(int fd, const void *p, unsigned long n) {
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  return ((write_fn)dlsym(libc, "write"))(fd, p, n);
}
long npvk_test_dlvsym_write(int fd, const void *p, unsigned long n) {
  return ((write_fn)dlvsym(RTLD_DEFAULT, "write", "GLIBC_2.2.5"))(fd, p, n);
}
"""


def test_functions_looked_up_with_dlsym_and_dlvsym_are_guarded(tmp_path):
    """A C library's own dlsym (on a handle) and dlvsym lookups of `write`
    get the guarded function, like ctypes' (issue 19)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        # A preloaded ASan runtime interposes write itself: the global lookup
        # npvk's guard table is built from finds ASan's interceptor, not the
        # libc function this library's dlsym on libc's handle returns, so the
        # lookup is not recognised as a guarded name (seen in CI's sanitizer
        # stage; the plain build runs this test).
        pytest.skip("a preloaded ASan runtime interposes write")
    src = tmp_path / "lookup.c"
    src.write_text(_LOOKUP_LIBRARY)
    lib = tmp_path / "liblookup.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src), "-ldl"], check=True)
    code = f"""
import ctypes, os, numpy as np, npvk
npvk.enable(min_bytes=0)
lib = ctypes.CDLL({str(lib)!r})
results = []
for fn in (lib.npvk_test_dlsym_write, lib.npvk_test_dlvsym_write):
    fn.restype = ctypes.c_long
    c = np.arange(10_000.0)
    c *= 3.0  # pending write
    r, w = os.pipe()
    n = fn(w, ctypes.c_void_p(c.ctypes.data), ctypes.c_ulong(4096))
    back = np.frombuffer(os.read(r, 4096), dtype=np.float64) if n == 4096 else None
    results.append(n == 4096 and (back == np.arange(512.0) * 3.0).all())
print(*results, npvk.stats()["syscalls_guarded"])
"""
    proc = run_python(["-c", code])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "2"]
