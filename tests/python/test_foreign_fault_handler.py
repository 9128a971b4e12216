"""Another library's SIGSEGV/SIGBUS handler installed over npvk's after the
device is bound (UCX does so in MPI_Init): npvk puts its own back in front
where it closes pages and at its syncs, and passes the faults that are not its
own on to that handler.

The foreign handler is the C library's _exit, installed with sigaction
through ctypes: a fault that reaches it ends the process with status 11
(SIGSEGV's number) rather than killing it with the signal."""

import json
import signal
import textwrap

from npvk_testlib import run_python, subprocess_env

PRELUDE = textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    import npvk

    libc = ctypes.CDLL(None, use_errno=True)
    EXIT = ctypes.cast(libc._exit, ctypes.c_void_p).value

    class Sigaction(ctypes.Structure):  # glibc's struct sigaction on Linux
        _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ubyte * 128),
                    ("flags", ctypes.c_int), ("restorer", ctypes.c_void_p)]

    def install_foreign():
        sa = Sigaction(handler=EXIT, flags=0)
        for sig in (11, 7):  # SIGSEGV, SIGBUS
            assert libc.sigaction(sig, ctypes.byref(sa), None) == 0

    def foreign_in_front():
        old = Sigaction()
        libc.sigaction(11, None, ctypes.byref(old))
        return old.handler == EXIT

    n = 1 << 18
    a_ref = np.arange(n, dtype=np.float64)
    b_ref = np.sqrt(a_ref) * 2.0
    c_ref = a_ref + 1.0
    npvk.enable(min_bytes=0)
    a = np.arange(n, dtype=np.float64)   # binds the device: npvk's handler goes in
""")


def _run(body):
    r = run_python(["-c", PRELUDE + textwrap.dedent(body)], env=subprocess_env())
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return r, lines


def test_handler_replaced_before_device_work():
    r, lines = _run("""
        install_foreign()
        b = np.sqrt(a) * 2.0               # pages closed: npvk's handler back in front
        front = foreign_in_front()
        same = bool(np.array_equal(b, b_ref))   # reads the pending result: a fault
        print(json.dumps({"front": front, "same": same,
                          "faults": npvk.stats()["faults"], "ops": npvk.stats()["ops_on_device"]}))
    """)
    assert r.returncode == 0, (r.returncode, r.stderr)
    out = lines[-1]
    assert out["same"] and not out["front"] and out["ops"] >= 2 and out["faults"] >= 1, out


def test_handler_replaced_while_results_are_pending():
    r, lines = _run("""
        b = np.sqrt(a) * 2.0               # pending, its pages closed
        install_foreign()                  # as MPI_Init would, before b is read
        c = a + 1.0                        # npvk's next op notices
        same = bool(np.array_equal(b, b_ref)) and bool(np.array_equal(c, c_ref))
        print(json.dumps({"same": same, "faults": npvk.stats()["faults"]}))
    """)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert lines[-1]["same"] and lines[-1]["faults"] >= 1, lines[-1]


def test_sync_puts_the_handler_back():
    r, lines = _run("""
        b = np.sqrt(a) * 2.0
        install_foreign()
        npvk.sync()
        print(json.dumps({"front": foreign_in_front(), "same": bool(np.array_equal(b, b_ref))}))
    """)
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert lines[-1] == {"front": False, "same": True}, lines[-1]


def test_a_fault_that_is_not_npvks_reaches_the_foreign_handler():
    r, lines = _run("""
        install_foreign()
        b = np.sqrt(a) * 2.0               # npvk's handler back in front of _exit
        same = bool(np.array_equal(b, b_ref))
        print(json.dumps({"front": foreign_in_front(), "same": same}), flush=True)
        ctypes.string_at(8)                # a genuine fault: npvk passes it on
        print("not reached", flush=True)
    """)
    assert lines and lines[-1] == {"front": False, "same": True}, (lines, r.stderr)
    assert "not reached" not in r.stdout
    # _exit(SIGSEGV): the foreign handler ran; a kill by the signal would be -11.
    assert r.returncode == signal.SIGSEGV, (r.returncode, r.stderr)
