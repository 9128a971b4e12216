#!/usr/bin/env python3
"""Other libraries' own test suites, run plain and with npvk, compared test by test.

    /usr/bin/python3 tests/libraries/run.py            # the full selection (see README.md)
    /usr/bin/python3 tests/libraries/run.py --quick    # the CI selection (a few minutes)
    /usr/bin/python3 tests/libraries/run.py --suites scipy.ndimage dask.array
    /usr/bin/python3 tests/libraries/run.py --suites pandas --modes plain npvk --repeat 3

Each selected suite (test modules of the libraries installed for --python:
Debian's python3-scipy, python3-dask, python3-pandas, python3-skimage,
python3-sklearn and python3-matplotlib, which ship their tests) runs three
times with pytest in subprocesses:

  plain    npvk not enabled
  npvk     NPVK=1 (the default settings a user gets)
  forced   NPVK=1 NPVK_MIN_BYTES=0 (every supported call goes to the device)

npvk is enabled the way a user enables it: the subprocess adds --build-dir's
python directory as a site directory, so its npvk-autoload.pth runs and NPVK=1
enables npvk when the library imports NumPy. Per-test outcomes come from
pytest's --junitxml. A run whose pytest dies (a signal, or --suite-timeout) is
reported as crashed; the tests it did not reach are not compared.

Reports, per suite and mode: passed, failed (or error), skipped, crashed, wall
time, and the "new failures": tests that pass plain and fail under that mode.
With --repeat N, each suite runs its modes N times, in turn and in reverse
order every other round (plain npvk, npvk plain, ...), so that a machine
growing busier or quieter weighs on every mode alike; the wall time is the
median of the N, and a test is a new failure if it is one in any round.
Those listed in known_failures.txt (each with its reason) are reported as known;
any other new failure makes the exit status 1.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KNOWN_FAILURES = os.path.join(HERE, "known_failures.txt")

MODES = {
    "plain": {},
    "npvk": {"NPVK": "1"},
    "forced": {"NPVK": "1", "NPVK_MIN_BYTES": "0"},
}

# suite -> (package whose directory the paths are under, full selection, quick selection).
# The full selection is the modules of each library that do array arithmetic
# through NumPy's ufuncs and reductions (what npvk replaces); the quick one a
# few of them that together take well under a minute plain.
SUITES = {
    "scipy.ndimage": ("scipy.ndimage", [
        "tests/test_filters.py", "tests/test_measurements.py", "tests/test_morphology.py",
        "tests/test_interpolation.py", "tests/test_fourier.py",
    ], ["tests/test_measurements.py"]),
    # LAPACK and BLAS through f2py on managed memory (forced mode makes every
    # array managed, workspaces included). test_decomp_ldl runs three times in
    # the quick selection: its complex cases died in forced mode in 4 of 6
    # runs, by where the kernel had put the arrays (OpenBLAS 0.3.21 reads
    # past ?hetrf's workspace; docs/architecture.md, "Managed memory").
    "scipy.linalg": ("scipy.linalg", [
        "tests/test_decomp_ldl.py", "tests/test_decomp_cholesky.py", "tests/test_decomp.py",
        "tests/test_basic.py", "tests/test_fblas.py", "tests/test_blas.py",
        "tests/test_decomp_polar.py", "tests/test_procrustes.py",
    ], ["tests/test_decomp_ldl.py"] * 3 + [
        "tests/test_decomp_cholesky.py", "tests/test_fblas.py", "tests/test_blas.py"]),
    "dask.array": ("dask.array", [
        "tests/test_array_core.py", "tests/test_reductions.py", "tests/test_ufunc.py",
        "tests/test_routines.py", "tests/test_creation.py", "tests/test_slicing.py",
    ], ["tests/test_ufunc.py::test_unary_ufunc"]),
    "pandas": ("pandas", [
        "tests/window", "tests/groupby/aggregate", "tests/groupby/test_function.py",
        "tests/arithmetic", "tests/reductions", "tests/frame/methods/test_quantile.py",
    ], ["tests/reductions/test_stat_reductions.py"]),
    "skimage": ("skimage", [
        "filters/tests", "exposure/tests", "transform/tests", "color/tests",
        "measure/tests", "morphology/tests",
    ], ["filters/tests/test_gaussian.py"]),
    "sklearn": ("sklearn", [
        "cluster/tests/test_k_means.py", "decomposition/tests/test_pca.py",
        "preprocessing/tests/test_data.py", "metrics/tests/test_pairwise.py",
        "linear_model/tests/test_ridge.py",
    ], ["decomposition/tests/test_pca.py::test_pca", "decomposition/tests/test_pca.py::test_whitening"]),
    "matplotlib": ("matplotlib", [
        "tests/test_colors.py", "tests/test_path.py", "tests/test_transforms.py",
        "tests/test_image.py", "tests/test_axes.py",
    ], ["tests/test_colors.py"]),
}

BAD = {"failed", "error"}


def package_dir(python, package):
    proc = subprocess.run([python, "-c", f"import os, {package} as m; print(os.path.dirname(m.__file__))"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def load_known():
    """-> {(suite, test id): reason}; lines are `suite test-id  # reason`."""
    known = {}
    if os.path.exists(KNOWN_FAILURES):
        for line in open(KNOWN_FAILURES):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            entry, _, reason = line.partition("#")
            suite, _, test = entry.strip().partition(" ")
            known[(suite, test.strip())] = reason.strip()
    return known


def parse_junit(path):
    """-> {test id: outcome} from a pytest --junitxml file."""
    outcomes = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return outcomes
    for case in root.iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped":
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        outcomes[test] = outcome
    return outcomes


def run_suite(args, suite, paths, mode, out_dir):
    """Runs one suite in one mode -> (outcomes, wall seconds, crashed)."""
    # The caller's other NPVK_* settings (NPVK_VALIDATION, NPVK_DEVICE) apply to every mode.
    env = {k: v for k, v in os.environ.items() if k not in ("NPVK", "NPVK_MIN_BYTES")}
    env.update(MODES[mode])
    env.setdefault("MPLBACKEND", "Agg")
    if args.cache_dir:
        env["NPVK_CACHE_DIR"] = args.cache_dir
    junit = os.path.join(out_dir, f"{suite}-{mode}.xml")
    site_dir = os.path.join(os.path.abspath(args.build_dir), "python")
    boot = ("import site, sys; site.addsitedir(sys.argv.pop(1)); import pytest; "
            "sys.exit(pytest.main(sys.argv[1:]))")
    # --keep-duplicates: a module listed N times runs N times (a flaky crash shows).
    cmd = [args.python, "-c", boot, site_dir, "-q", "-p", "no:cacheprovider", "-o",
           "addopts=", f"--junitxml={junit}", "-W", "ignore::DeprecationWarning",
           "--keep-duplicates"]
    if args.pytest_args:
        cmd += args.pytest_args.split()
    cmd += paths
    start = time.monotonic()
    log = open(os.path.join(out_dir, f"{suite}-{mode}.log"), "w")
    try:
        rc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=out_dir,
                            timeout=args.suite_timeout).returncode
    except subprocess.TimeoutExpired:
        rc = -9
    wall = time.monotonic() - start
    crashed = rc < 0 or rc > 5 or not os.path.exists(junit)
    return parse_junit(junit), wall, crashed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    ap.add_argument("--cache-dir", default=None, help="NPVK_CACHE_DIR for the npvk runs")
    ap.add_argument("--out-dir", default=os.path.join(REPO, "build", "library-tests"))
    ap.add_argument("--quick", action="store_true", help="the CI selection")
    ap.add_argument("--suites", nargs="*", default=None, help=f"of {', '.join(SUITES)}")
    ap.add_argument("--modes", nargs="*", default=list(MODES), help=f"of {', '.join(MODES)}")
    ap.add_argument("--pytest-args", default="", help="extra pytest arguments, one string")
    ap.add_argument("--suite-timeout", type=float, default=3600)
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds per suite, modes in alternating order; wall = median")
    ap.add_argument("--summary", action="store_true", help="print one line only")
    args = ap.parse_args()
    args.out_dir = os.path.abspath(args.out_dir)
    os.makedirs(args.out_dir, exist_ok=True)
    known = load_known()

    rows, new_failures, known_seen, missing = [], [], [], []
    for suite in args.suites or list(SUITES):
        package, full, quick = SUITES[suite]
        base = package_dir(args.python, package)
        paths = [os.path.join(base, p) for p in (quick if args.quick else full)] if base else []
        paths = [p for p in paths if os.path.exists(p.split("::")[0])]
        if not paths:
            missing.append(suite)
            continue
        rounds = []  # each {mode: (outcomes, wall, crashed)}
        for r in range(args.repeat):
            results = {}
            for mode in (args.modes if r % 2 == 0 else args.modes[::-1]):
                results[mode] = run_suite(args, suite, paths, mode, args.out_dir)
                if not args.summary:
                    o, wall, crashed = results[mode]
                    print(f"  {suite:14} {mode:7} {wall:7.1f} s  {len(o)} tests"
                          f"{'  CRASHED' if crashed else ''}", flush=True)
            rounds.append(results)
        walls = {mode: statistics.median(r[mode][1] for r in rounds) for mode in args.modes}
        for mode in args.modes:
            outcomes, _, crashed = rounds[0][mode]
            counts = {k: sum(1 for v in outcomes.values() if v == k)
                      for k in ("passed", "failed", "error", "skipped")}
            new = set()
            for results in rounds:
                plain = results.get("plain", ({}, 0.0, False))[0]
                new |= {t for t, v in results[mode][0].items()
                        if v in BAD and plain.get(t) in ("passed", "xfailed")}
                crashed = crashed or results[mode][2]
            unknown = 0
            for t in sorted(new):
                reason = known.get((suite, t)) or known.get((suite, t.split("[")[0]))
                (known_seen if reason else new_failures).append((suite, mode, t, reason))
                unknown += not reason
            rows.append((suite, mode, counts, walls[mode], crashed, unknown,
                         walls[mode] / walls["plain"] if walls.get("plain") else None))

    crashes = [(r[0], r[1]) for r in rows if r[4]]
    if args.summary:
        total = {m: sum(r[3] for r in rows if r[1] == m) for m in args.modes}
        times = " ".join(f"{m} {total[m]:.0f}s" for m in args.modes)
        print(f"library suites ({len(rows) // max(len(args.modes), 1)}): {len(new_failures)} new failures,"
              f" {len(known_seen)} known, {len(crashes)} crashes; {times}"
              + (f"; not installed: {' '.join(missing)}" if missing else ""))
    else:
        print(f"\n{'suite':14} {'mode':7} {'passed':>7} {'failed':>7} {'skipped':>7} {'new':>4}"
              f" {'crash':>5} {'wall s':>8} {'x plain':>7}")
        for suite, mode, c, wall, crashed, new, ratio in rows:
            print(f"{suite:14} {mode:7} {c['passed']:7} {c['failed'] + c['error']:7} {c['skipped']:7}"
                  f" {new:4} {'yes' if crashed else '':>5} {wall:8.1f} "
                  f"{(f'{ratio:.2f}') if ratio else '':>7}")
        if args.repeat > 1:
            print(f"(wall: median of {args.repeat} rounds; counts: the first round)")
        for suite, mode, t, reason in known_seen:
            print(f"known   {suite} [{mode}] {t}  # {reason}")
        for suite, mode, t, _ in new_failures:
            print(f"NEW     {suite} [{mode}] {t}")
        for suite, mode in crashes:
            print(f"CRASHED {suite} [{mode}] (log: {args.out_dir}/{suite}-{mode}.log)")
        if missing:
            print(f"not installed (or without tests): {' '.join(missing)}")
    return 1 if new_failures or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
