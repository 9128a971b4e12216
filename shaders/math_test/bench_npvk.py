#!/usr/bin/env python3
"""Time npvk's exp/log/pow kernels (which include math_f64.glsl) on the
device, with an elementwise add for reference.

  PYTHONPATH=<build>/python NPVK_CACHE_DIR=/tmp/npvk-bench-cache \\
      /usr/bin/python3 shaders/math_test/bench_npvk.py [ROUNDS] [N]

Prints ns/element per kernel: "dev" from npvk.stats()['device_seconds']
(timestamp queries, wall time on the device) and "cpu" from the process CPU
time (lavapipe runs in-process, so on lavapipe this is the summed time of its
worker threads; more stable than wall time on a busy machine). Each round runs
every kernel 3 times, rounds are interleaved; min and median over rounds.
To time an edited kernel without rebuilding, see NPVK_DEBUG_KERNEL_DIR in
docs/architecture.md.
"""
import sys
import time

import numpy as np
import npvk

npvk.enable(min_bytes=0)
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
n = int(sys.argv[2]) if len(sys.argv) > 2 else 400000
rng = np.random.default_rng(1)
a = rng.uniform(0.5, 2, n)           # created after enable(): on the device
w = rng.uniform(-700, 700, n)
y = rng.uniform(-30, 30, n)
af = a.astype(np.float32)
out = np.empty(n)
outf = np.empty(n, np.float32)
tests = [
    ("add", lambda: np.add(a, a, out=out)),
    ("exp", lambda: np.exp(a, out=out)),
    ("exp_wide", lambda: np.exp(w, out=out)),
    ("log", lambda: np.log(a, out=out)),
    ("pow", lambda: np.power(a, 2.7, out=out)),
    ("pow_arr", lambda: np.power(a, y, out=out)),
    ("exp_f32", lambda: np.exp(af, out=outf)),
    ("log_f32", lambda: np.log(af, out=outf)),
]
dev = {t[0]: [] for t in tests}
cpu = {t[0]: [] for t in tests}
for _, f in tests:                   # compile and warm up
    f()
npvk.sync()
for _ in range(rounds):
    for name, f in tests:
        d0, c0 = npvk.stats()["device_seconds"], time.process_time()
        for _ in range(3):
            f()
        npvk.sync()
        dev[name].append((npvk.stats()["device_seconds"] - d0) / 3 / n * 1e9)
        cpu[name].append((time.process_time() - c0) / 3 / n * 1e9)
print("ns/element, n=%d, %d rounds" % (n, rounds))
for name, _ in tests:
    d, c = sorted(dev[name]), sorted(cpu[name])
    print("%-9s dev min %7.1f med %7.1f | cpu min %7.1f med %7.1f"
          % (name, d[0], d[len(d) // 2], c[0], c[len(c) // 2]))
