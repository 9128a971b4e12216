#!/usr/bin/env python3
"""Performance documents from bench/results: the README's short table and
docs/performance.md, both written from the newest `*-medium.json` result of
each driver (bench/run --size medium), so neither is edited by hand.

    /usr/bin/python3 bench/report.py            # rewrite README.md and docs/performance.md
    /usr/bin/python3 bench/report.py --check    # exit 1 if either differs (ctest: performance_docs)

The README's table goes between <!-- BEGIN bench/report.py --> and
<!-- END bench/report.py -->; docs/performance.md is written whole. Only the
results' own figures are used (no clock, no machine state), so the output is
the same wherever it runs. How the figures are measured: bench/README.md.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench", "results")
README = os.path.join(ROOT, "README.md")
PERFORMANCE = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- BEGIN bench/report.py -->\n", "<!-- END bench/report.py -->"
# Drivers shown side by side, newest first (the default driver is listed first
# when it is among them).
MAX_DRIVERS = 2
DEFAULT_DRIVER = "Mesa 25"


def load_results():
    """Every medium run of bench/run, oldest first, as (name, data)."""
    out = []
    for path in sorted(glob.glob(os.path.join(RESULTS, "*-medium.json"))):
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data, dict) or "summary" not in data or "meta" not in data:
            continue
        out.append((os.path.basename(path), data))
    return out


def driver(meta):
    """The driver's short name: "Mesa 25.0.7", or the device string."""
    device = meta.get("device") or "unknown device"
    m = re.search(r"Mesa \d+(\.\d+)*", device)
    return m.group(0) if m else device


def newest_per_driver(results):
    newest = {}
    for name, data in results:
        newest[driver(data["meta"])] = (name, data)  # sorted: the last is the newest
    chosen = sorted(newest.items(), key=lambda kv: kv[1][0], reverse=True)[:MAX_DRIVERS]
    chosen.sort(key=lambda kv: (not kv[0].startswith(DEFAULT_DRIVER), kv[0]))
    return chosen


def ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def seconds(x):
    return "-" if x is None else f"{x:.3f}"


def date_of(meta):
    t = meta.get("timestamp", "")
    return f"{t[0:4]}-{t[4:6]}-{t[6:8]}" if len(t) >= 8 else "?"


def machine(meta):
    return (f"{meta.get('cpus', '?')} cores of {meta.get('cpu', '?')}, NumPy {meta.get('numpy', '?')}"
            f", medians of {meta.get('runs', '?')}")


def readme_table(chosen):
    drivers = [d for d, _ in chosen]
    programs = []
    for _, (_, data) in chosen:
        for row in data["summary"]:
            if row["program"] not in programs:
                programs.append(row["program"])
    lines = ["| program (`bench/run --size medium`) | "
             + " | ".join(f"{d} vs NumPy" for d in drivers) + " |",
             "|---" * (len(drivers) + 1) + "|"]
    by = [{r["program"]: r for r in data["summary"]} for _, (_, data) in chosen]
    for p in programs:
        cells = [ratio(b.get(p, {}).get("speedup_vs_numpy")) for b in by]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    geo = [ratio(data.get("geomean", {}).get("npvk_vs_numpy")) for _, (_, data) in chosen]
    lines.append("| geometric mean | " + " | ".join(geo) + " |")
    meta = chosen[0][1][1]["meta"]
    lines.append("")
    lines.append(f"Wall time of each program's timed steps against NumPy's, on lavapipe (the CPU "
                 f"Vulkan driver), {machine(meta)}, {date_of(meta)}. Every table and plot: "
                 f"[docs/performance.md](docs/performance.md); how it is measured: "
                 f"[bench/README.md](bench/README.md).")
    return "\n".join(lines) + "\n"


def full_table(data):
    variants = data["meta"].get("variants", ["numpy", "npvk"])
    has_numexpr = "numexpr" in variants
    head = ["program", "NumPy s", "npvk s"] + (["numexpr s"] if has_numexpr else []) + [
        "npvk vs NumPy"] + (["npvk vs numexpr"] if has_numexpr else []) + [
        "kernels compiled+loaded", "device ops", "fallbacks", "host syncs", "results"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in data["summary"]:
        check = "agree" if r.get("agree") else "DIFFER"
        cells = [r["program"], seconds(r.get("numpy_seconds")), seconds(r.get("npvk_seconds"))]
        if has_numexpr:
            cells.append(seconds(r.get("numexpr_seconds")))
        cells.append(ratio(r.get("speedup_vs_numpy")))
        if has_numexpr:
            cells.append(ratio(r.get("speedup_vs_numexpr")))
        cells += [f"{r.get('kernels_compiled', 0)}+{r.get('kernels_from_disk', 0)}",
                  str(r.get("device_ops", "-")), str(r.get("fallback_ops", "-")),
                  str(r.get("host_syncs", "-")), check]
        lines.append("| " + " | ".join(cells) + " |")
    g = data.get("geomean", {})
    tail = ["geometric mean", "", ""] + ([""] if has_numexpr else []) + [
        ratio(g.get("npvk_vs_numpy"))] + ([ratio(g.get("npvk_vs_numexpr"))] if has_numexpr else [])
    tail += [""] * (len(head) - len(tail))
    lines.append("| " + " | ".join(tail) + " |")
    return "\n".join(lines) + "\n"


def performance_md(results, chosen):
    out = ["# Performance", "",
           "Generated by `bench/report.py` from `bench/results/` (do not edit; run "
           "`/usr/bin/python3 bench/report.py` after adding results). How the figures are "
           "measured, and what they leave out: [bench/README.md](../bench/README.md).", ""]
    for d, (name, data) in chosen:
        meta = data["meta"]
        stem = name[:-len(".json")]
        out += [f"## {d}, {date_of(meta)}", "",
                f"{meta.get('device', '?')}; {machine(meta)}; `bench/run --size "
                f"{meta.get('size')} --runs {meta.get('runs')}`, seconds of the timed steps "
                f"(the median run). Result: [`{name}`](../bench/results/{name}).", "",
                full_table(data)]
        png = os.path.join(RESULTS, stem + ".png")
        if os.path.exists(png):
            out += [f"![{d}, {date_of(meta)}](../bench/results/{stem}.png)", ""]
    out += ["## Every medium run", "",
            "The geometric mean of npvk against NumPy over the programs, per run of "
            "`bench/run --size medium` kept in `bench/results/`, oldest first. Runs differ in "
            "machine state and program set; compare neighbours, not the ends.", "",
            "| run | driver | programs | npvk vs NumPy | plot |", "|---|---|---|---|---|"]
    for name, data in results:
        meta = data["meta"]
        stem = name[:-len(".json")]
        geo = data.get("geomean", {}).get("npvk_vs_numpy")
        plot = (f"[png](../bench/results/{stem}.png)"
                if os.path.exists(os.path.join(RESULTS, stem + ".png")) else "-")
        out.append(f"| [{meta.get('timestamp', stem)}](../bench/results/{name}) | {driver(meta)} "
                   f"| {len(data['summary'])} | {ratio(geo)} | {plot} |")
    return "\n".join(out) + "\n"


def readme_text(chosen):
    with open(README) as f:
        doc = f.read()
    a, b = doc.find(BEGIN), doc.find(END)
    if a < 0 or b < a:
        sys.exit(f"README.md has no block between {BEGIN.strip()} and {END}")
    a += len(BEGIN)
    return doc, doc[:a] + readme_table(chosen) + doc[b:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if README.md or docs/performance.md is not what this writes")
    opts = parser.parse_args()
    results = load_results()
    if not results:
        sys.exit("no bench/results/*-medium.json")
    chosen = newest_per_driver(results)
    old_readme, new_readme = readme_text(chosen)
    new_perf = performance_md(results, chosen)
    old_perf = open(PERFORMANCE).read() if os.path.exists(PERFORMANCE) else ""
    if opts.check:
        stale = [n for n, old, new in (("README.md", old_readme, new_readme),
                                       ("docs/performance.md", old_perf, new_perf)) if old != new]
        if stale:
            sys.exit(f"{', '.join(stale)}: not what bench/results gives; regenerate with "
                     f"/usr/bin/python3 bench/report.py")
        return
    for path, old, new in ((README, old_readme, new_readme), (PERFORMANCE, old_perf, new_perf)):
        if old != new:
            with open(path, "w") as f:
                f.write(new)
            print("wrote", os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main()
