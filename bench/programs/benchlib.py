"""Shared scaffolding of the npvk benchmark programs (bench/programs/*.py).

Each program is plain NumPy and runs unchanged with and without npvk:

    python3 black_scholes.py --size medium                 # NumPy
    NPVK=1 python3 black_scholes.py --size medium          # npvk, when installed
    python3 -m npvk black_scholes.py --size medium         # npvk, from a build tree

This module only adds what a benchmark needs around the program: argument
parsing, a warm-up step excluded from timing, a timed region, saving the
result arrays for comparison, and one JSON line on stdout.

The only npvk-specific code is here and is inert without npvk: when the npvk
module has been loaded *and enabled* by the launcher, the timed region ends
with npvk.sync() (so lazily queued device work is counted; NumPy is eager and
needs nothing), and npvk.stats() is added to the JSON line. This module never
imports npvk itself, so a plain NumPy run is untouched.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

SIZES = ("small", "medium", "large")


def parse_args(description, numexpr=False):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--size", choices=SIZES, default="small",
                   help="problem size: medium takes a few seconds with NumPy on 2 cores, "
                        "small about 10x less, large about 10x more")
    p.add_argument("--repeat", type=int, default=1,
                   help="timed repetitions of the whole problem (default 1); "
                        "'seconds' is their median")
    p.add_argument("--out", help="save the final result arrays to this .npz file")
    if numexpr:
        p.add_argument("--numexpr", action="store_true",
                       help="evaluate the same expressions with numexpr.evaluate")
    args = p.parse_args()
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def active_npvk():
    """The npvk module if a launcher loaded and enabled it, else None."""
    mod = sys.modules.get("npvk")
    if mod is None:
        return None
    try:
        return mod if mod.is_enabled() else None
    except Exception:
        return None


def barrier():
    """End (and start) of a timed region: wait for queued device work."""
    mod = active_npvk()
    if mod is not None:
        mod.sync()


def _stats():
    mod = active_npvk()
    if mod is None:
        return None
    try:
        return mod.stats()
    except Exception as exc:  # report, never break the benchmark
        return {"error": repr(exc)}


def _delta(after, before):
    """after - before for the numbers in (nested) stats dicts."""
    if isinstance(after, dict):
        before = before if isinstance(before, dict) else {}
        return {k: _delta(v, before.get(k)) for k, v in after.items()}
    if isinstance(after, (int, float)) and not isinstance(after, bool):
        return after - (before if isinstance(before, (int, float)) else 0)
    return after


def checksum(results):
    """One float summarising the result arrays: the sum of all their elements."""
    total = 0.0
    for key in sorted(results):
        total += float(np.sum(np.asarray(results[key], dtype=np.float64)))
    return total


def run(name, args, setup, warmup, timed, params=None, variant=None):
    """Run one benchmark and print its JSON line.

    setup()        -> state: builds the inputs (not timed; fixed seeds).
    warmup(state)  -> runs one step/iteration of the computation on a state that
                      is then thrown away (not timed): kernels are compiled here.
    timed(state)   -> dict of name -> result array: the timed computation.
    """
    npvk = active_npvk()
    if variant is None:
        variant = "numexpr" if getattr(args, "numexpr", False) else ("npvk" if npvk else "numpy")

    if npvk is not None:
        # The device is made when work first needs it, or once what it would
        # save pays for making it (docs/architecture.md, "Cost model"): made
        # here, the driver's start-up stays out of the timed steady state.
        npvk.device()
    state = setup()
    warmup(state)
    barrier()
    del state

    stats_before = _stats()
    seconds = []
    results = None
    for _ in range(args.repeat):
        results = None
        state = setup()
        barrier()
        t0 = time.perf_counter()
        results = timed(state)
        barrier()
        seconds.append(time.perf_counter() - t0)
        del state
    stats_after = _stats()

    results = {k: np.asarray(v) for k, v in results.items()}
    line = {
        "name": name,
        "size": args.size,
        "variant": variant,
        "seconds": float(np.median(seconds)),
        "seconds_each": seconds,
        "repeat": args.repeat,
        "checksum": checksum(results),
        "params": params or {},
        "npvk_enabled": npvk is not None,
        "numpy": np.__version__,
    }
    if args.out:
        np.savez(args.out, **results)
        line["result_file"] = os.path.abspath(args.out)
    if npvk is not None:
        try:
            line["device"] = npvk.device()
        except Exception as exc:
            line["device"] = {"error": repr(exc)}
        line["stats"] = stats_after
        line["stats_timed"] = _delta(stats_after, stats_before)
    print(json.dumps(line), flush=True)
    return line
