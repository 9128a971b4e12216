"""What npvk did, for people: NPVK_PROFILE, NPVK_TRACE, NPVK_GRAPH, NPVK_REPORT,
and npvk.profile(), npvk.trace(path), npvk.explain(). See docs/observability.md.

NPVK_TRACE and NPVK_GRAPH are read by the C runtime when the context is made;
this module adds what needs Python: the reports written at exit, the per
call-site coverage, SVG rendering of the graphs, and the context manager.
"""

import atexit
import collections
import contextlib
import math
import os
import sys
import time

# csv, json, shutil and subprocess are imported where a report or a graph is
# written: they cost 4 ms of every NPVK=1 program's start-up, most of which
# never write one.

_native = None
_wall_start = None
_pid = None  # a forked child that exits normally must not overwrite its parent's reports
# True while NPVK_PROFILE or NPVK_REPORT counts work by op (and by call site):
# code outside the ufunc loops (reductions) tells note() what it did.
watching = False

# The parts of the profile, in report order, with their labels. They exclude
# one another, so wall time minus their sum is the time npvk cannot see.
_PARTS = (
    ("record", "recording"),
    ("plan", "fusion planning"),
    ("compile", "compilation"),
    ("execute", "device execution"),
    ("flush_other", "flush, other"),
    ("to_device", "to device"),
    ("to_host", "to host"),
    ("host_sync", "host syncs"),
    ("numpy_fallback_loops", "NumPy fallbacks"),
)
# Rendering many graphs with dot at exit would take longer than the program.
_MAX_SVG = 100


def _env(name):
    value = os.environ.get(name, "")
    return None if value in ("", "0") else value


def install(native):
    """Called by npvk.enable(); acts on the environment once per process."""
    global _native, _wall_start, _pid, watching
    if _native is not None:
        return
    _native = native
    _pid = os.getpid()
    _wall_start = time.perf_counter()
    profile_to, report_to, graph_dir = _env("NPVK_PROFILE"), _env("NPVK_REPORT"), _env("NPVK_GRAPH")
    if profile_to:
        native.set_timing(True)
        atexit.register(_at_exit, _write_profile, profile_to)
    if report_to:
        native.report_begin(_skip_prefixes())
        atexit.register(_at_exit, _write_report, report_to)
    watching = bool(profile_to or report_to)
    if graph_dir:
        os.makedirs(graph_dir, exist_ok=True)
        native.set_graph_dir(graph_dir)
        import shutil
        if shutil.which("dot"):
            atexit.register(_at_exit, render_graphs, graph_dir)


def reset():
    global _wall_start
    _wall_start = time.perf_counter()
    if _native is not None:
        _native.reset_observed()


def note(op, reason, args):
    """Counts a call that ran on the device (reason None) or fell back, at the
    caller's call site; `args` are the call's, the first one its array."""
    size = getattr(args[0], "size", 0) if args else 0
    _native.note_op(op, reason, int(size) if isinstance(size, int) else 0)


def _skip_prefixes():
    # Call sites are the user's lines: frames in NumPy or npvk are skipped.
    import numpy

    here = os.path.dirname(os.path.abspath(__file__))
    # NumPy 1.x names the frames of its array-function dispatchers this way.
    return [os.path.dirname(os.path.abspath(numpy.__file__)) + os.sep, here + os.sep,
            "<__array_function__ internals>"]


def _at_exit(write, target):
    if os.getpid() != _pid:
        return
    try:
        _native.sync()
        write(target)
    except Exception as exc:  # the program's own exit status matters more
        print(f"npvk: {write.__name__.strip('_')} failed: {exc}", file=sys.stderr)


def _require_enabled():
    if _native is None or not _native.active():
        raise RuntimeError("npvk is not enabled (call npvk.enable() or run with NPVK=1)")


def profile():
    """Where the time went since enable() (or reset_stats()), as a dict: the
    NPVK_PROFILE report. Seconds of wall time by part; the parts exclude one
    another, and "unaccounted" is the rest (Python, NumPy outside ufunc loops)."""
    if _native is None:
        raise RuntimeError("npvk was never enabled")
    wall = time.perf_counter() - _wall_start
    p, s = _native.profile(), _native.stats()
    parts = {key: p[key] for key, _ in _PARTS}
    elements = p["elements_on_device"] + p["elements_fallback"]
    return {
        "wall_seconds": wall,
        "seconds": dict(parts, unaccounted=max(wall - sum(parts.values()), 0.0)),
        "device_seconds": s.get("device_seconds", 0.0),
        "ops_on_device": s["ops_on_device"],
        "flushes": s.get("flushes", 0),
        "dispatches": s.get("dispatches", 0),
        "kernels": {
            "compiled": s.get("kernels_compiled", 0),
            "memory_cache_hits": s.get("memory_cache_hits", 0),
            "disk_cache_hits": s.get("disk_cache_hits", 0),
        },
        "transfers": {
            "to_device": {"bytes": s.get("bytes_to_device", 0), "seconds": p["to_device"]},
            "to_host": {"bytes": s.get("bytes_to_host", 0), "seconds": p["to_host"]},
        },
        "host_syncs": {
            reason: {"count": n, "seconds": p.get("sync_" + reason, 0.0)}
            for reason, n in s.get("host_syncs", {}).items()
        },
        "fallbacks": s["ops_fallback"],
        "fallback_calls": s["ops_fallback_total"],
        # Recorded work the cost model ran with NumPy's loops, whole flushes.
        "cost_model": {"host_flushes": s.get("host_flushes", 0),
                       "ops_on_host": s.get("ops_on_host", 0)},
        "array_work": {
            "elements_on_device": p["elements_on_device"],
            "elements_fallback": p["elements_fallback"],
            "device_fraction": p["elements_on_device"] / elements if elements else None,
        },
    }


def _fallback_text(fallbacks, limit=3):
    top = sorted(((n, u, r) for u, rs in fallbacks.items() for r, n in rs.items()), reverse=True)
    text = ", ".join(f"{u} ({r}) x{n}" for n, u, r in top[:limit])
    return text + (", ..." if len(top) > limit else "")


def _percent(fraction):
    # Rounded down: 100% only when nothing fell back.
    return f"{math.floor(1000 * fraction) / 10:.1f}%"


def profile_text(report):
    s, syncs = report["seconds"], report["host_syncs"]
    k, t = report["kernels"], report["transfers"]
    inside = sum(s[key] for key, _ in _PARTS[:-1])
    notes = {
        "record": f"{report['ops_on_device']} calls sent to the device",
        "plan": f"{report['flushes']} flushes, {report['dispatches']} dispatches",
        "compile": (f"{k['compiled']} kernels compiled, {k['disk_cache_hits']} from the disk "
                    f"cache, {k['memory_cache_hits']} memory cache hits"),
        "execute": f"{report['device_seconds']:.3f} s measured on the device",
        "to_device": f"{t['to_device']['bytes']} bytes",
        "to_host": f"{t['to_host']['bytes']} bytes",
        "host_sync": ", ".join(f"{r} {v['count']} ({v['seconds']:.3f} s with their flushes)"
                               for r, v in syncs.items() if v["count"]) or "none",
        "numpy_fallback_loops": (f"{report['fallback_calls']} loop calls"
                                 + (": " + _fallback_text(report["fallbacks"])
                                    if report["fallback_calls"] else "")),
    }
    lines = [f"npvk profile: {report['wall_seconds']:.3f} s wall since enable, "
             f"{inside:.3f} s inside npvk"]
    for key, label in _PARTS:
        lines.append(f"  {label:<17}{s[key]:9.3f} s  {notes.get(key, '')}".rstrip())
    lines.append(f"  {'unaccounted':<17}{s['unaccounted']:9.3f} s  "
                 "Python, and NumPy outside replaced ufunc loops")
    cm = report["cost_model"]
    if cm["host_flushes"]:
        lines.append(f"  cost model: {cm['host_flushes']} flushes ({cm['ops_on_host']} of the "
                     f"{report['ops_on_device']} calls sent) ran with NumPy's loops, "
                     "estimated faster on the host (NPVK_REPORT names their call sites)")
    fraction = report["array_work"]["device_fraction"]
    if fraction is not None:
        # Counted as recorded: where the cost model ran flushes with NumPy's
        # loops (the line above), "on the device" would overstate it.
        where = "taken by npvk" if cm["host_flushes"] else "on the device"
        lines.append(f"  array work: {_percent(fraction)} of ufunc loop elements {where}")
    return "\n".join(lines) + "\n"


def _write_profile(target):
    report = profile()
    if target == "1":
        sys.stderr.write(profile_text(report))
        return
    import json
    with open(target, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


CSV_FIELDS = ("file", "line", "op", "placement", "reason", "count", "elements", "site_host_syncs")


def coverage():
    """Rows of the NPVK_REPORT CSV (dicts with CSV_FIELDS), by call site:
    ufunc loop calls on the device, fallen back (with the reason), or
    recorded for the device and then run by a flush on the host (placement
    "host", reason "cost model" or "device failure"; "lost" where the host
    could not), and host syncs (placement "host sync", reason
    fault/explicit/...). site_host_syncs is the call site's total on each of
    its rows. Calls whose flush has not run yet count as on the device."""
    if _native is None:
        return []
    loops, syncs = _native.report_rows()
    per_site = collections.Counter()
    for file, line, _, n in syncs:
        per_site[file, line] += n
    rows = [dict(zip(CSV_FIELDS, (file, line, op, placement, reason, calls, elements,
                                  per_site[file, line])))
            for file, line, op, placement, reason, calls, elements in loops]
    rows += [dict(zip(CSV_FIELDS, (file, line, "", "host sync", reason, n, 0,
                                   per_site[file, line])))
             for file, line, reason, n in syncs]
    rows.sort(key=lambda r: (r["file"], r["line"], r["placement"], r["op"], r["reason"]))
    return rows


def _top_sites(rows, n=3):
    top = sorted(rows, key=lambda r: -r["count"])[:n]
    where = "; ".join(f"{r['op']} ({r['reason']}) x{r['count']} at "
                      f"{os.path.basename(r['file'])}:{r['line']}" for r in top)
    return (": " + where + ("; ..." if len(rows) > n else "")) if where else ""


def coverage_summary(rows):
    device = sum(r["elements"] for r in rows if r["placement"] == "device")
    fallback = [r for r in rows if r["placement"] == "fallback"]
    # Recorded for the device, then run by a flush on the host (or lost).
    on_host = [r for r in rows if r["placement"] in ("host", "lost")]
    total = device + sum(r["elements"] for r in fallback + on_host)
    syncs = sum(r["count"] for r in rows if r["placement"] == "host sync")
    share = _percent(device / total) if total else "no"
    text = (f"npvk: {share} of array work on the device; "
            f"{sum(r['count'] for r in fallback)} fallbacks{_top_sites(fallback)}")
    if on_host:
        text += (f"; {sum(r['count'] for r in on_host)} recorded calls ran on the host"
                 f"{_top_sites(on_host)}")
    return f"{text}; {syncs} host syncs"


def _write_report(path):
    # Python is about to go; the syncs still to come (the C library's exit
    # handlers) cannot look at its frames. Ending the report runs the queued
    # work, so that each call is reported where it ran.
    _native.report_end()
    rows = coverage()
    import csv
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"{coverage_summary(rows)} (per call site: {path})", file=sys.stderr)


def render_graphs(directory):
    """Renders each flush-*.dot in `directory` that has no SVG yet (needs dot)."""
    import shutil
    import subprocess
    dot = shutil.which("dot")
    if not dot:
        return 0
    rendered = 0
    for name in sorted(os.listdir(directory)):
        src = os.path.join(directory, name)
        svg = src[:-4] + ".svg"
        if not name.endswith(".dot") or os.path.exists(svg) or rendered >= _MAX_SVG:
            continue
        subprocess.run([dot, "-Tsvg", src, "-o", svg], check=False, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rendered += 1
    return rendered


@contextlib.contextmanager
def trace(path):
    """Traces the block into `path` (Chrome/Perfetto JSON: open it in
    ui.perfetto.dev or chrome://tracing). Work still queued at the end of the
    block runs before the trace is written."""
    _require_enabled()
    _native.trace_begin()
    try:
        yield
    finally:
        try:
            _native.sync()
        finally:
            _native.trace_end(os.fspath(path))


def explain():
    """The last kernel npvk ran: its fused graph (slots and steps) and its
    GLSL. Queued work runs first, so it explains the latest array expression."""
    _require_enabled()
    _native.sync()
    source, graph = _native.last_kernel()
    if not source:
        return "npvk: no kernel has run yet\n"
    return f"npvk: last kernel, {graph}\n{source}"
