"""I/O on arrays whose newest data is on the device, and reads into arrays
the device has pending work on. System calls cannot fault on device-owned
pages (they fail with EFAULT), so npvk must make the memory current before
the kernel sees it; results must equal plain NumPy's."""

import io
import os
import socket
import threading

import numpy as np
import pytest

from npvk_testlib import StatsDelta, assert_same, npvk_enabled, read_all

N = 10_000


def base(offset=0.0, dtype=np.float64):
    return (np.arange(N, dtype=dtype) * 0.5 + offset).astype(dtype)


def same_in_both(scenario, tmp_path):
    """scenario(directory) -> list; run plain then with npvk, compare."""
    plain = tmp_path / "plain"
    plain.mkdir()
    expected = scenario(plain)
    dev = tmp_path / "npvk"
    dev.mkdir()
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual = scenario(dev)
        device_ops = delta.device_ops
    assert device_ops > 0, "the scenario never used the device"
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        if isinstance(e, (np.ndarray, np.generic)):
            assert_same(np.asarray(a), np.asarray(e), context=f"item {k}")
        else:
            assert a == e, f"item {k} differs"


@pytest.mark.parametrize("buffering", [0, -1])
def test_file_write_of_pending_array(tmp_path, buffering):
    def scenario(d):
        c = base() * 3.0 + 1.0  # pending
        with open(d / "c.bin", "wb", buffering=buffering) as f:
            n = f.write(c)  # buffer protocol straight into write(2)
        i = base(dtype=np.int32) * 7  # pending
        with open(d / "i.bin", "wb", buffering=buffering) as f:
            f.write(i[::2].copy())
            f.write(memoryview(i))
        return [n, (d / "c.bin").read_bytes(), (d / "i.bin").read_bytes()]

    same_in_both(scenario, tmp_path)


def test_tofile_of_pending_array(tmp_path):
    def scenario(d):
        c = base() * 2.0 - 5.0  # pending
        c.tofile(d / "c.bin")
        e = base(dtype=np.float32) + 1.5
        with open(d / "e.bin", "wb") as f:
            e.tofile(f)
        t = base()[:100] * 1.0
        t.tofile(d / "t.txt", sep=" ")
        return [(d / "c.bin").read_bytes(), (d / "e.bin").read_bytes(),
                (d / "t.txt").read_text(),
                np.fromfile(d / "c.bin", dtype=np.float64)]

    same_in_both(scenario, tmp_path)


def test_save_and_load(tmp_path):
    def scenario(d):
        c = base() / 3.0  # pending
        np.save(d / "c.npy", c)
        np.savez(d / "z.npz", a=c, b=c[::-1] * 2.0)
        buf = io.BytesIO()
        np.save(buf, c * 4.0)
        loaded = np.load(d / "c.npy")
        z = np.load(d / "z.npz")
        l2 = loaded * 2.0  # device op on a freshly read array
        return [loaded, z["a"], z["b"], np.load(io.BytesIO(buf.getvalue())), l2,
                (d / "c.npy").read_bytes()]

    same_in_both(scenario, tmp_path)


def test_readinto_arrays_with_pending_work(tmp_path):
    def scenario(d):
        payload = (np.arange(N, dtype=np.float64) * -1.0).tobytes()
        (d / "in.bin").write_bytes(payload)
        a = base()
        c = a + 1.0  # pending read of a
        with open(d / "in.bin", "rb", buffering=0) as f:
            n1 = f.readinto(a)  # overwrite a before the device has read it
        w = base() * 2.0  # pending write of w
        with open(d / "in.bin", "rb") as f:
            n2 = f.readinto(w)  # the file's bytes, not the device result, win
        e = w + a
        return [n1, n2, a, c, w, e]

    same_in_both(scenario, tmp_path)


def test_fromfile_and_memmap(tmp_path):
    def scenario(d):
        (base() * 3.0).tofile(d / "x.bin")
        x = np.fromfile(d / "x.bin", dtype=np.float64)
        m = np.memmap(d / "x.bin", dtype=np.float64, mode="r+")  # not managed memory
        y = x + m  # mixed: NumPy's path
        z = x * 2.0  # device
        m[:5] = z[:5]
        m.flush()
        del m
        return [x, y, z, (d / "x.bin").read_bytes()]

    same_in_both(scenario, tmp_path)


def test_os_write_and_readv(tmp_path):
    def scenario(d):
        c = base() * 5.0  # pending
        fd = os.open(d / "c.bin", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            n = os.write(fd, c)
            os.lseek(fd, 0, os.SEEK_SET)
            a = base()
            p = a * 2.0  # pending read of a
            b = base() + 1.0  # pending write of b
            got = os.readv(fd, [a[: N // 2], b[N // 2:]])
            os.lseek(fd, 0, os.SEEK_SET)
            q = np.empty(N)
            got2 = os.preadv(fd, [q], 0)
        finally:
            os.close(fd)
        return [n, got, got2, a, p, b, q, (d / "c.bin").read_bytes()]

    same_in_both(scenario, tmp_path)


def test_pipe_write(tmp_path):
    def scenario(d):
        c = base(dtype=np.int64) * 3  # pending
        r, w = os.pipe()
        chunks = []
        reader = threading.Thread(target=lambda: chunks.append(read_all(r)))
        reader.start()
        os.write(w, c[:4096])  # a pipe holds 64 KiB; the reader drains it
        os.write(w, c[4096:])
        os.close(w)
        reader.join()
        os.close(r)
        return [np.frombuffer(chunks[0], dtype=np.int64).copy()]

    same_in_both(scenario, tmp_path)


def _recv_exactly_into(sock, arr):
    """recv_into on the array itself until it is full (a short read leaves
    the rest for the next call, which must then write at an offset: the
    array's own slices, not a memoryview, see test_memoryview_exports)."""
    flat = arr.reshape(-1).view(np.uint8)
    got = 0
    while got < flat.size:
        n = sock.recv_into(flat[got:])
        assert n > 0
        got += n
    return got


def test_socketpair_send_and_recv_into(tmp_path):
    def scenario(d):
        s1, s2 = socket.socketpair()
        try:
            c = base() * 1.5  # pending
            dst = base()
            p = dst * 2.0  # pending read of dst
            sender = threading.Thread(target=lambda: s1.sendall(c))
            sender.start()
            n = _recv_exactly_into(s2, dst)  # overwrites dst
            sender.join()
            e = base() + 8.0  # pending write of e
            s1.sendall(np.full(16, 3.25).tobytes())
            k = s2.recv_into(e, 128)
            s1.send(c[:8])
            msg = s2.recv(64)
        finally:
            s1.close()
            s2.close()
        return [n, k, dst, p, e, msg]

    same_in_both(scenario, tmp_path)


@pytest.mark.parametrize("case", [
    "write_through_fresh_view",      # memoryview taken after the op, then written by a syscall
    "read_through_older_view",       # view taken before a device write, then sent
    "write_through_older_view",      # view taken before a device read, then received into
])
def test_memoryview_exports_and_system_calls(tmp_path, case):
    """A memoryview exported before a device op (or without PyBUF_WRITABLE)
    reaches the kernel with protected pages: the syscall guard makes them
    current (test_syscall_guard.py covers each call)."""

    def scenario(d):
        r, w = os.pipe()
        try:
            if case == "write_through_fresh_view":
                a = base()
                p = a * 2.0  # pending read of a
                os.write(w, b"\x01" * 64)
                n = os.readv(r, [memoryview(a).cast("B")])
                return [n, a, p]
            if case == "read_through_older_view":
                b = base()
                m = memoryview(b)
                b += 1.0  # pending write of b
                n = os.write(w, m[:8])
                return [n, os.read(r, 64), b]
            a = base()
            m = memoryview(a)
            p = a * 2.0  # pending read of a
            os.write(w, b"\x02" * 64)
            n = os.readv(r, [m])
            return [n, a, p]
        finally:
            os.close(r)
            os.close(w)

    same_in_both(scenario, tmp_path)
