#!/usr/bin/env python3
"""Runs each example of this directory plain and with NPVK=1, compares the
outputs, and prints wall times side by side (medians of --repeat runs).

    /usr/bin/python3 examples/python/libraries/compare.py [--small] [--forced] [--repeat 4] [--build-dir build]

npvk is enabled as a user enables it: NPVK=1, with --build-dir's python
directory added as a site directory (its npvk-autoload.pth). Outputs compared:
  - integer arrays (labels, counts) and the PNG's bytes: exactly;
  - float arrays: |npvk - plain| <= RTOL * max|plain| per array, with NaNs in
    the same places. RTOL = 1e-9: npvk's sums run in a different order than
    NumPy's pairwise sum and its exp/sin/sqrt may differ from NumPy's by a few
    ULPs; a fit or filter over 1e5-1e7 values carries that to ~1e-13 relative,
    far inside 1e-9, while any wrong element or lost update is far outside it.
Exit status 1 if any output differs.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RTOL = 1e-9

# name -> (script, size argument, full size, small size, output suffix)
EXAMPLES = {
    "pandas groupby/rolling": ("pandas_rolling.py", "--n", 2_000_000, 20_000, ".npz"),
    "sklearn PCA+KMeans": ("sklearn_kmeans_pca.py", "--n", 100_000, 2_000, ".npz"),
    "scipy.ndimage filters": ("ndimage_filters.py", "--size", 2048, 128, ".npz"),
    "matplotlib field PNG": ("matplotlib_field.py", "--size", 1000, 100, ".png"),
}


def run_once(args, script, size_arg, size, out, npvk):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPVK")}
    # One BLAS/OpenMP thread in both runs, so a threaded reduction's order
    # cannot differ between them.
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    if npvk:
        env["NPVK"] = "1"
        if args.forced:
            env["NPVK_MIN_BYTES"] = "0"  # every supported call on the device
        if args.cache_dir:
            env["NPVK_CACHE_DIR"] = args.cache_dir
    site_dir = os.path.join(os.path.abspath(args.build_dir), "python")
    boot = ("import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); "
            "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__'); "
            "m = sys.modules.get('npvk'); "
            "s = m.stats() if m and m.is_enabled() else None; "
            "print('ops_recorded', s['ops_on_device'] if s else -1, s['ops_on_host'] if s else -1)")
    cmd = [args.python, "-c", boot, site_dir, os.path.join(HERE, script), size_arg, str(size),
           "--out", out]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"{script} failed (npvk={npvk}):\n{proc.stderr[-3000:]}")
    compute = float(proc.stdout.split("compute_s")[1].split()[0])
    # Ops npvk took (recorded), and those of them the cost model ran with
    # NumPy's loops on the host.
    recorded, on_host = (int(x) for x in proc.stdout.split("ops_recorded")[1].split()[:2])
    if npvk and recorded < 0:
        raise SystemExit(f"{script}: npvk was not enabled (is {site_dir} a built npvk?)")
    return wall, compute, (recorded, on_host)


def compare(plain, npvk):
    """-> list of differences (empty when the outputs match)."""
    if plain.endswith(".png"):
        a, b = open(plain, "rb").read(), open(npvk, "rb").read()
        return [] if a == b else [f"PNG bytes differ ({len(a)} vs {len(b)} bytes)"]
    diffs = []
    with np.load(plain) as p, np.load(npvk) as q:
        for key in p.files:
            a, b = p[key], q[key]
            if a.shape != b.shape or a.dtype != b.dtype:
                diffs.append(f"{key}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}")
            elif a.dtype.kind in "fc":
                nan = np.isnan(a)
                if not np.array_equal(nan, np.isnan(b)):
                    diffs.append(f"{key}: NaNs in different places")
                    continue
                scale = np.abs(a[~nan]).max(initial=0.0)
                err = np.abs(a[~nan] - b[~nan]).max(initial=0.0)
                if err > RTOL * scale:
                    diffs.append(f"{key}: max error {err:.3g} > {RTOL:g} * {scale:.3g}")
            elif not np.array_equal(a, b):
                diffs.append(f"{key}: {np.count_nonzero(a != b)} elements differ")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--small", action="store_true", help="small sizes (the test's)")
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--forced", action="store_true", help="the npvk runs with NPVK_MIN_BYTES=0")
    ap.add_argument("--only", nargs="*", default=None, help="names containing one of these")
    args = ap.parse_args()
    failed = False
    print(f"{'example':24} {'plain s':>8} {'npvk s':>8} {'ratio':>6}   (compute only: plain, npvk)  npvk ops            outputs")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (script, size_arg, full, small, suffix) in EXAMPLES.items():
            if args.only and not any(o in name for o in args.only):
                continue
            size = small if args.small else full
            times = {False: [], True: []}
            outs = {}
            for i in range(args.repeat):
                # Interleaved, so load changes hit both alike, and in ABBA
                # order: each run inherits the page state of the run before
                # it (in a guest that hands a process the pages the last one
                # freed, backed, and gives the host back the rest), so each
                # kind follows each kind equally often. Plain always after
                # npvk made the ndimage example's ratio 1.11 one way round
                # and 0.97 the other.
                for npvk in ((False, True) if i % 2 == 0 else (True, False)):
                    outs[npvk] = os.path.join(tmp, f"{script}-{npvk}{suffix}")
                    times[npvk].append(run_once(args, script, size_arg, size, outs[npvk], npvk))
            diffs = compare(outs[False], outs[True])
            failed |= bool(diffs)
            wp, wn = (statistics.median(t[0] for t in times[k]) for k in (False, True))
            cp, cn = (statistics.median(t[1] for t in times[k]) for k in (False, True))
            recorded, on_host = times[True][-1][2]
            print(f"{name:24} {wp:8.2f} {wn:8.2f} {wn / wp:6.2f}   ({cp:6.2f}, {cn:6.2f})"
                  f" {recorded:5} ({recorded - on_host} on the device)  "
                  f"{'match' if not diffs else 'DIFFER: ' + '; '.join(diffs)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
