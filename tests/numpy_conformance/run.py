#!/usr/bin/env python3
"""NumPy's own test suite, run plain and with npvk, compared test by test.

    /usr/bin/python3 tests/numpy_conformance/run.py [--quick] [--files F ...]
    /path/to/venv/bin/python tests/numpy_conformance/run.py --build-dir build-np2 --quick

Runs the tests of the NumPy that --python imports (numpy/_core/tests on NumPy
2.x, numpy/core/tests on 1.x) twice with pytest, in subprocesses: once plain,
once with npvk (from --build-dir) enabled for the whole session with
NPVK_MIN_BYTES=0 (npvk_conformance_plugin.py, loaded with -p, calls
npvk.enable() at pytest_configure), so every array NumPy's tests make is managed
memory and every replaced loop is eligible for the device. It reports the counts
of both runs and the tests that pass without npvk but fail with it ("new
failures"), and exits 1 if there are any.

Per-test outcomes come from the plugin's log, written as each test finishes (the
information of --junitxml / -rA, but it survives a crash); --junitxml files are
written too. A test that crashes the interpreter or exceeds --test-timeout is
recorded as 'crashed' or 'timeout' and the run resumes without the tests that
already ran.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

DEFAULT_FILES = ["test_umath.py", "test_ufunc.py", "test_numeric.py", "test_multiarray.py",
                 "test_indexing.py"]
# --quick: the parts of NumPy's suite closest to what npvk replaces (ufunc
# loops and their error reporting, array memory and I/O), leaving out the
# classes that are slow under npvk (TestAbsoluteNegative, TestBool of
# test_multiarray, TestDot, the module-level memoverlap tests of test_umath).
# Measured in README.md: a few minutes on 2 cores.
QUICK_SELECTION = [
    "test_umath.py::TestComparisons",
    "test_umath.py::TestDivision",
    "test_umath.py::TestDivisionIntegerOverflowsAndDivideByZero",
    "test_umath.py::TestRemainder",
    "test_umath.py::TestPower",
    "test_umath.py::TestMaximum",
    "test_umath.py::TestMinimum",
    "test_umath.py::TestFmax",
    "test_umath.py::TestFmin",
    "test_umath.py::TestMinMax",
    "test_umath.py::TestBool",
    "test_umath.py::TestBitwiseUFuncs",
    "test_umath.py::TestInt",
    "test_umath.py::TestFloatingPoint",
    "test_umath.py::TestFPClass",
    "test_umath.py::TestLog",
    "test_umath.py::TestExp",
    "test_umath.py::TestRoundingFunctions",
    "test_umath.py::TestSign",
    "test_umath.py::TestLdexp",
    "test_umath.py::TestSpecialFloats",
    "test_indexing.py",
    "test_numeric.py::TestBoolArray",
    "test_numeric.py::TestSeterr",
    "test_numeric.py::TestFloatExceptions",
    "test_numeric.py::TestClip",
    "test_numeric.py::TestNonzero",
    "test_ufunc.py::test_ufunc_noncontiguous",
    "test_ufunc.py::test_ufunc_methods_floaterrors",
    "test_ufunc.py::test_ufunc_input_floatingpoint_error",
    "test_ufunc.py::test_ufunc_warn_with_nan",
    "test_ufunc.py::test_addition_negative_zero",
    "test_ufunc.py::TestUfunc::test_where_param",
    "test_ufunc.py::TestUfunc::test_where_param_buffer_output",
    "test_ufunc.py::TestUfunc::test_where_param_alloc",
    "test_ufunc.py::TestUfunc::test_where_with_broadcasting",
    "test_ufunc.py::TestUfunc::test_output_argument",
    "test_ufunc.py::TestUfunc::test_inplace_fancy_indexing",  # test_ufunc_at_* on 2.x
    "test_multiarray.py::TestBinop",
    "test_multiarray.py::TestStats",
    "test_multiarray.py::TestPickling",
    "test_multiarray.py::TestIO",
    "test_multiarray.py::TestNewBufferProtocol",
    "test_multiarray.py::TestWhere",
    "test_multiarray.py::TestTemporaryElide",
    "test_multiarray.py::TestCTypes",
]

# Selections whose test is gone from a NumPy version, and what took its place
# there (resolve() uses these only when the selection itself does not exist).
# NumPy 2.0 split TestUfunc::test_inplace_fancy_indexing into test_ufunc_at_*
# tests; these six hold its checks (test_ufunc_at_inner_loops and the other
# new ones test more than the old test did, and are slow under npvk).
RENAMED = {
    "test_ufunc.py::TestUfunc::test_inplace_fancy_indexing": [
        "test_ufunc.py::TestUfunc::test_ufunc_at_basic",
        "test_ufunc.py::TestUfunc::test_ufunc_at_multiD",
        "test_ufunc.py::TestUfunc::test_ufunc_at_0D",
        "test_ufunc.py::TestUfunc::test_ufunc_at_dtypes",
        "test_ufunc.py::TestUfunc::test_ufunc_at_boolean",
        "test_ufunc.py::TestUfunc::test_ufunc_at_advanced",
    ],
}

KNOWN_FAILURES = os.path.join(HERE, "known_failures.txt")

BAD = {"failed", "error", "crashed", "timeout"}
GOOD = {"passed", "xfailed"}
OUTCOMES = ["passed", "failed", "error", "skipped", "xfailed", "xpassed", "crashed", "timeout"]


def numpy_info(python):
    """-> (NumPy version, its package directory, its tests directory, Python version)
    of the interpreter `python`."""
    proc = subprocess.run(
        [python, "-c", "import numpy, os, sys; print(numpy.__version__); "
                       "print(os.path.dirname(numpy.__file__)); print(sys.version.split()[0])"],
        capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"run.py: {python} cannot import numpy:\n{proc.stderr.strip()}")
    version, numpy_dir, py_version = (l.strip() for l in proc.stdout.split("\n")[:3])
    # NumPy 2.x moved numpy.core to numpy._core (numpy/core is a shim without
    # tests); 1.x has numpy/core/tests.
    for sub in ("_core", "core"):
        tests_dir = os.path.join(numpy_dir, sub, "tests")
        if os.path.isdir(tests_dir):
            return version, numpy_dir, tests_dir, py_version
    raise SystemExit(f"run.py: NumPy {version} at {numpy_dir} has no _core/tests or core/tests "
                     "(a NumPy installed without its tests?)")


def node_exists(path, names):
    """Whether file `path` defines the class/function chain `names` (static check)."""
    import ast

    try:
        with open(path) as f:
            node = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return True  # let pytest decide
    for name in names:
        name = name.split("[", 1)[0]
        found = [n for n in node.body if isinstance(
            n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
        if not found:
            return False
        node = found[0]
    return True


def resolve(selection, tests_dir, notes=None):
    """'test_umath.py', 'test_umath.py::TestX', or a path -> pytest args.
    A test the selection names that this NumPy's file lacks is replaced by its
    RENAMED entries, or left out; `notes` gets a line for each."""
    args = []
    for s in selection:
        path, sep, rest = s.partition("::")
        if not os.path.isabs(path) and not os.path.exists(path):
            path = os.path.join(tests_dir, path)
        if not os.path.exists(path):
            raise SystemExit(f"run.py: no such test file: {path}")
        if rest and not node_exists(path, rest.split("::")):
            renamed = [r for r in RENAMED.get(s, [])
                       if node_exists(os.path.join(tests_dir, r.partition("::")[0]),
                                      r.partition("::")[2].split("::"))]
            if notes is not None:
                notes.append(f"{s}: not in this NumPy; " +
                             (f"running {', '.join(r.split('::')[-1] for r in renamed)} instead"
                              if renamed else "left out"))
            args += [os.path.join(tests_dir, r) for r in renamed]
            continue
        args.append(path + sep + rest)
    return args


def outcome_of(phases):
    """The outcome of one test from its setup/call/teardown reports."""
    setup = phases.get("setup")
    call = phases.get("call")
    teardown = phases.get("teardown")
    if setup and setup["outcome"] == "failed":
        return "error", setup.get("message", "")
    if setup and setup["outcome"] == "skipped":
        return ("xfailed" if setup["xfail"] else "skipped"), ""
    result, message = "passed", ""
    if call:
        if call["outcome"] == "failed":
            result, message = "failed", call.get("message", "")
        elif call["outcome"] == "skipped":
            result = "xfailed" if call["xfail"] else "skipped"
        elif call["xfail"]:
            result = "xpassed"
    if teardown and teardown["outcome"] == "failed" and result != "failed":
        return "error", teardown.get("message", "")
    return result, message


def parse_log(path, durations=None, ignore=()):
    """-> (outcomes {nodeid: (outcome, message)}, unfinished nodeid or None, npvk info);
    adds each test's seconds to `durations` if given. `ignore`: tests already
    recorded as crashed (they stay unfinished in the log)."""
    phases, started, finished, info = {}, [], set(), {}
    if not os.path.exists(path):
        return {}, None, info
    with open(path) as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            ev = rec.get("event")
            if ev == "start":
                started.append(rec["nodeid"])
            elif ev == "finish":
                finished.add(rec["nodeid"])
            elif ev == "report":
                phases.setdefault(rec["nodeid"], {})[rec["when"]] = rec
                if durations is not None:
                    durations[rec["nodeid"]] = (durations.get(rec["nodeid"], 0.0) +
                                                rec.get("seconds", 0.0))
            elif ev == "npvk":
                info = rec
    outcomes = {nid: outcome_of(p) for nid, p in phases.items() if nid in finished}
    unfinished = next((nid for nid in reversed(started)
                       if nid not in finished and nid not in ignore), None)
    return outcomes, unfinished, info


def run_mode(mode, pytest_args, args, out_dir):
    """Runs pytest (resuming after crashes) and returns the mode's results."""
    log = os.path.join(out_dir, f"{mode}.jsonl")
    skip = os.path.join(out_dir, f"{mode}.skip")
    console = os.path.join(out_dir, f"{mode}.log")
    stats_path = os.path.join(out_dir, f"{mode}-npvk-stats.json")
    fault_log = os.path.join(out_dir, f"{mode}-timeouts.log")
    for p in (log, skip, console, stats_path, fault_log):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [HERE, os.path.join(args.build_dir, "python")] +
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # never write into the installed NumPy
    env["NPVK_CONFORMANCE_LOG"] = log
    env["NPVK_CONFORMANCE_SKIP"] = skip
    env["NPVK_CONFORMANCE_TEST_TIMEOUT"] = str(args.test_timeout)
    env["NPVK_CONFORMANCE_FAULT_LOG"] = fault_log
    env.setdefault("NPVK_CACHE_DIR", os.path.join(args.build_dir, "test-kernel-cache"))
    for var in ("NPVK", "NPVK_STATS", "NPVK_CONFORMANCE_ENABLE", "NPVK_CONFORMANCE_STATS"):
        env.pop(var, None)
    if mode == "npvk":
        env["NPVK_CONFORMANCE_ENABLE"] = "1"
        env["NPVK_MIN_BYTES"] = str(args.min_bytes)
        env["NPVK_CONFORMANCE_STATS"] = stats_path
        if args.validation:
            env["NPVK_VALIDATION"] = "1"
    crashed = {}
    start = time.time()
    attempt = 0
    while True:
        attempt += 1
        # --rootdir: node ids relative to the NumPy package (core/tests/... on
        # 1.x, _core/tests/... on 2.x) wherever --out is; numpy/conftest.py
        # stays inside it.
        cmd = [args.python, "-m", "pytest", "-p", "npvk_conformance_plugin",
               "-p", "no:cacheprovider", f"--rootdir={args.numpy_dir}", "-q", "-rN", "--tb=short",
               f"--junitxml={os.path.join(out_dir, f'{mode}-{attempt}.xml')}"]
        if args.k:
            cmd += ["-k", args.k]
        cmd += pytest_args
        with open(console, "a") as con:
            con.write(f"\n==== attempt {attempt}: {' '.join(cmd)}\n")
            con.flush()
            try:
                rc = subprocess.run(cmd, env=env, stdout=con, stderr=subprocess.STDOUT,
                                    cwd=out_dir, timeout=args.timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
        outcomes, unfinished, info = parse_log(log, ignore=crashed)
        if unfinished is None or attempt > args.max_restarts:
            if unfinished is not None:
                crashed[unfinished] = ("crashed", f"exit status {rc}; restarts exhausted")
            break
        # A test started and never finished: the interpreter died in it (a
        # crash, or the per-test timeout). Record it, skip what already ran.
        with open(console) as con:
            tail = con.read()[-4000:]
        # The per-test timeout's stack dump goes to fault_log (pytest captures
        # the test's stderr): after the line naming the test that started last.
        dump = ""
        if os.path.exists(fault_log):
            with open(fault_log) as f:
                text = f.read()
            dump = text[text.rfind(f"start {unfinished}\n"):] if unfinished in text else ""
        kind = "timeout" if ("Timeout (" in tail or "Timeout (" in dump or
                             rc == "timeout") else "crashed"
        if "Timeout (" in dump:
            tail = dump[-4000:]
        crashed[unfinished] = (kind, f"exit status {rc}\n{tail[-1500:]}")
        with open(skip, "w") as f:
            for nid in list(outcomes) + list(crashed):
                f.write(nid + "\n")
        print(f"  {mode}: {kind} in {unfinished} (exit status {rc}); resuming", flush=True)
    outcomes.update(crashed)
    durations = {}
    parse_log(log, durations)
    elapsed = time.time() - start
    stats = None
    if os.path.exists(stats_path):
        with open(stats_path) as f:
            stats = json.load(f)
    return {"outcomes": outcomes, "seconds": elapsed, "attempts": attempt, "npvk": info,
            "stats": stats, "durations": durations}


def check_npvk(args):
    """Exits with a message unless `args.python` imports npvk from the build tree
    (an npvk built against another Python, or a build without the shim)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(args.build_dir, "python")] +
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    proc = subprocess.run([args.python, "-c", "import npvk"], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"run.py: {args.python} cannot import npvk from "
                         f"{os.path.join(args.build_dir, 'python')} (build it for this "
                         f"interpreter, or pass --build-dir):\n{proc.stderr.strip()[-2000:]}")


def load_mode(mode, out_dir):
    """The results of an earlier run_mode from its files (--report-only)."""
    durations = {}
    outcomes, unfinished, info = parse_log(os.path.join(out_dir, f"{mode}.jsonl"), durations)
    if unfinished:
        outcomes[unfinished] = ("crashed", "did not finish")
    stats_path = os.path.join(out_dir, f"{mode}-npvk-stats.json")
    stats = None
    if os.path.exists(stats_path):
        with open(stats_path) as f:
            stats = json.load(f)
    return {"outcomes": outcomes, "seconds": 0.0, "attempts": 0, "npvk": info, "stats": stats,
            "durations": durations}


def class_of(nodeid):
    """file::Class (or file::function) of a node id, for timing summaries."""
    parts = group_of(nodeid).split("::")
    return "::".join(parts[:2])


def summarize(results):
    return Counter(o for o, _m in results["outcomes"].values())


def first_line(message):
    """The first 'E ...' line of a pytest failure report (the error itself)."""
    lines = [l.strip() for l in message.strip().splitlines()]
    for line in lines:
        if line.startswith("E "):
            return line[1:].strip()[:200]
    return lines[-1][:200] if lines else ""


def group_of(nodeid):
    return nodeid.split("[", 1)[0]


def load_known(path):
    """{entry: reason}: node ids, or test functions without parameters, that
    are known to fail under npvk (npvk bugs), like xfail(strict=True)."""
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path) as f:
        for line in f:
            entry, _, reason = line.partition("#")
            entry = entry.strip()
            if entry:
                known[entry] = reason.strip()
    return known


def known_key(nodeid):
    """A node id without the directories of its file: 'tests/test_x.py::T::f' and
    '_core/tests/test_x.py::T::f' (the rootdir differs between NumPy 1.x and 2.x)
    are both 'test_x.py::T::f'."""
    path, sep, rest = nodeid.partition("::")
    return path.replace("\\", "/").rsplit("/", 1)[-1] + sep + rest


def known_entry(nodeid, known):
    """The entry of `known` that covers `nodeid` (exact, or its function), or None."""
    keys = getattr(known_entry, "_keys", None)
    if keys is None or keys[0] is not known:
        keys = (known, {known_key(e): e for e in known})
        known_entry._keys = keys
    by_key = keys[1]
    for candidate in (nodeid, group_of(nodeid)):
        if candidate in known:
            return candidate
        if known_key(candidate) in by_key:
            return by_key[known_key(candidate)]
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", nargs="+", metavar="F",
                   help="test files (names in numpy/_core/tests or numpy/core/tests, "
                        "paths, or node ids); "
                        f"default: {' '.join(DEFAULT_FILES)}")
    p.add_argument("--quick", action="store_true",
                   help="a CI-sized subset (a few minutes on 2 cores)")
    p.add_argument("-k", help="pytest -k expression, passed to both runs")
    p.add_argument("--python", default=sys.executable,
                   help="the interpreter with NumPy and pytest whose NumPy is tested "
                        "(default: the one running run.py); --build-dir must hold an npvk "
                        "built for it")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="npvk's build tree (its python/ holds the npvk package)")
    p.add_argument("--out", help="where logs and reports go (default: BUILD/numpy-conformance)")
    p.add_argument("--min-bytes", type=int, default=0, help="NPVK_MIN_BYTES of the npvk run")
    p.add_argument("--validation", action="store_true",
                   help="NPVK_VALIDATION=1 in the npvk run (much slower)")
    p.add_argument("--only", choices=["plain", "npvk"], help="run one mode only")
    p.add_argument("--test-timeout", type=float, default=300,
                   help="seconds one test may take before it counts as hung")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds one pytest attempt may take (default: none)")
    p.add_argument("--max-restarts", type=int, default=20)
    p.add_argument("--known", default=KNOWN_FAILURES,
                   help="known new failures (npvk bugs): they do not fail the run, but an "
                        "entry whose tests all pass does (default: known_failures.txt here)")
    p.add_argument("--no-known", dest="known", action="store_const", const=None,
                   help="treat every new failure as unexpected")
    p.add_argument("--report-only", action="store_true",
                   help="do not run pytest: report on the logs already in --out")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list every new failure, not one line per test function")
    args = p.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    out_dir = os.path.abspath(args.out or os.path.join(args.build_dir, "numpy-conformance"))
    os.makedirs(out_dir, exist_ok=True)

    version, numpy_dir, tests_dir, py_version = numpy_info(args.python)
    args.numpy_dir = numpy_dir
    selection = args.files or (QUICK_SELECTION if args.quick else DEFAULT_FILES)
    notes = []
    pytest_args = resolve(selection, tests_dir, notes)
    print(f"NumPy {version} ({tests_dir}), Python {py_version} ({args.python}); "
          f"{'quick subset, ' if args.quick and not args.files else ''}"
          f"{len(pytest_args)} selections; output in {out_dir}", flush=True)
    for note in notes:
        print(f"  {note}", flush=True)
    if not args.report_only and args.only != "plain":
        check_npvk(args)

    results = {}
    for mode in ("plain", "npvk"):
        if args.only and mode != args.only:
            continue
        if args.report_only:
            results[mode] = load_mode(mode, out_dir)
            continue
        print(f"running {mode} ...", flush=True)
        results[mode] = run_mode(mode, pytest_args, args, out_dir)

    print(f"\nNumPy {version}, Python {py_version}")
    header = f"{'run':6} " + " ".join(f"{o:>8}" for o in OUTCOMES) + f" {'total':>7} {'time':>8}"
    print(header)
    for mode, res in results.items():
        c = summarize(res)
        print(f"{mode:6} " + " ".join(f"{c.get(o, 0):8d}" for o in OUTCOMES) +
              f" {sum(c.values()):7d} {res['seconds']:7.0f}s")
    report = {"numpy": version, "numpy_dir": numpy_dir, "tests_dir": tests_dir,
              "python": args.python, "python_version": py_version,
              "build_dir": args.build_dir, "selection": selection,
              "selection_notes": notes, "pytest_args": pytest_args, "k": args.k,
              "min_bytes": args.min_bytes, "validation": args.validation,
              "counts": {m: dict(summarize(r)) for m, r in results.items()},
              "seconds": {m: round(r["seconds"], 1) for m, r in results.items()},
              "seconds_by_class": {}}
    for mode, res in results.items():
        by_class = Counter()
        for nid, sec in res["durations"].items():
            by_class[class_of(nid)] += sec
        report["seconds_by_class"][mode] = {k: round(v, 2) for k, v in by_class.most_common()}
    if "npvk" in results and results["npvk"]["durations"]:
        slow = list(report["seconds_by_class"]["npvk"].items())[:8]
        print("\nslowest under npvk: " + ", ".join(f"{k.split('/')[-1]} {v:.0f}s" for k, v in slow))
    status = 0
    if "npvk" in results:
        stats = results["npvk"]["stats"] or {}
        if stats:
            print(f"\nnpvk run: device {results['npvk']['npvk'].get('device')}, "
                  f"{stats.get('ops_on_device')} ops on the device, "
                  f"{stats.get('ops_fallback_total')} fallbacks, "
                  f"{stats.get('kernels_compiled')} kernels compiled, "
                  f"{stats.get('validation_messages')} validation messages")
            report["npvk_stats"] = {k: stats.get(k) for k in (
                "ops_on_device", "ops_fallback_total", "kernels_compiled",
                "validation_messages", "faults")}
        else:
            print("\nnpvk run: no statistics (the session did not end normally)")
    if "plain" in results and "npvk" in results:
        plain = results["plain"]["outcomes"]
        dev = results["npvk"]["outcomes"]
        new = sorted(n for n in dev if dev[n][0] in BAD and plain.get(n, ("",))[0] in GOOD)
        fixed = sorted(n for n in plain if plain[n][0] in BAD and dev.get(n, ("",))[0] in GOOD)
        other = sorted(n for n in set(plain) | set(dev)
                       if n not in new and n not in fixed
                       and plain.get(n, ("absent",))[0] != dev.get(n, ("absent",))[0])
        known = load_known(args.known)
        unexpected = [n for n in new if not known_entry(n, known)]
        expected = [n for n in new if known_entry(n, known)]
        # Known entries all of whose tests ran and none failed: fixed in npvk.
        ran = {}
        for n, (o, _m) in dev.items():
            e = known_entry(n, known)
            if e and plain.get(n, ("",))[0] in GOOD:
                ran.setdefault(e, []).append(o in BAD)
        stale = sorted(e for e, fails in ran.items() if not any(fails))
        print(f"\nnew failures (pass without npvk, fail with it): {len(new)}"
              f" ({len(expected)} known, {len(unexpected)} unexpected)")
        for title, names in (("unexpected", unexpected), ("known", expected)):
            groups = {}
            for n in names:
                groups.setdefault(group_of(n), []).append(n)
            for g, members in groups.items():
                shown = members[0]
                why = known.get(known_entry(shown, known) or "", "")
                print(f"  {title:10} {len(members):4d} x {g}\n"
                      f"             [{dev[shown][0]}: {first_line(dev[shown][1])}]" +
                      (f"\n             known: {why}" if why else ""))
        if args.verbose:
            for n in new:
                print(f"  {dev[n][0]:8} {n}\n           {first_line(dev[n][1])}")
        if stale:
            print(f"\nknown failures that now pass (remove them from {args.known}): {len(stale)}")
            for e in stale:
                print(f"  {e}")
        if fixed:
            print(f"\nfail without npvk, pass with it: {len(fixed)}")
            for n in fixed:
                print(f"  {n}")
        if other:
            print(f"\nother differences: {len(other)}")
            for n in other[:50]:
                print(f"  {plain.get(n, ('absent',))[0]:>8} -> {dev.get(n, ('absent',))[0]:8} {n}")
        report["new_failures"] = [{"test": n, "outcome": dev[n][0],
                                   "known": bool(known_entry(n, known)),
                                   "message": dev[n][1][-1500:]} for n in new]
        report["stale_known_failures"] = stale
        report["other_differences"] = [{"test": n, "plain": plain.get(n, ("absent",))[0],
                                        "npvk": dev.get(n, ("absent",))[0]} for n in other]
        status = 1 if (unexpected or stale) else 0
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    if not any(summarize(r) for r in results.values()):
        print("run.py: no test ran; see the logs in", out_dir, file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
