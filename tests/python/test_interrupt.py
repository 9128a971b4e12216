"""Ctrl-C in a program whose device work is queued: a flush runs on the
recording thread and nothing interrupts it, so the queue is bounded by its
estimated device time (runtime/queue_budget.hpp), not only by its 4096 ops,
and a KeyboardInterrupt comes within about a second of device work."""

import signal
import subprocess
import textwrap
import time

from npvk_testlib import PYTHON, subprocess_env

# Never reads a value: only the queue's own bounds flush it. At the 4096-op
# bound alone one flush took about 25 s here (lavapipe, 2 cores), and a
# Ctrl-C waited for all of it (196 s in issue 19's program).
LOOP = textwrap.dedent("""
    import signal
    # A shell that started the suite in the background hands it SIGINT
    # ignored, and Python then raises no KeyboardInterrupt at all.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import npvk
    N = 6_000_000
    a = np.random.default_rng(0).random(N)
    b = np.ones(N)
    print("started", flush=True)
    try:
        while True:
            a = a * 0.999 + b * 0.001
            b = np.exp(-a * a) + b * 0.5
            a = a - b / 7.0
    except KeyboardInterrupt:
        print("interrupted", npvk.stats()["ops_on_device"], flush=True)
        raise
""")


def test_ctrl_c_is_honoured_within_seconds(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text(LOOP)
    code = ("import npvk_autoload, runpy; "
            f"runpy.run_path({str(script)!r}, run_name='__main__')")
    proc = subprocess.Popen([PYTHON, "-c", code], env=subprocess_env(NPVK="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "started", proc.stderr.read()
        time.sleep(1.0)  # into the loop: recording done, its first flush running
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        latency = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    print(f"Ctrl-C latency {latency:.2f} s")
    assert "KeyboardInterrupt" in err, err
    words = out.split()
    assert words[0] == "interrupted" and int(words[1]) > 0, out
    # Generous for a loaded 2-core machine; the queue's bound is about 1 s.
    assert latency < 10.0, f"KeyboardInterrupt took {latency:.1f} s"
