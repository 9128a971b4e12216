"""What npvk did, for people: NPVK_PROFILE, NPVK_TRACE, NPVK_GRAPH and
NPVK_REPORT on a small program, and npvk.trace(), npvk.explain(),
npvk.profile() in process (docs/observability.md)."""

import csv
import json
import os
import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

import npvk
from npvk_testlib import npvk_enabled, run_python, subprocess_env

# Markers name the lines the coverage report must point at.
PROGRAM = textwrap.dedent("""
    import numpy as np, npvk
    npvk.enable(min_bytes=1 << 16)
    a = np.linspace(0.0, 1.0, 200_000)
    b = np.sqrt(a) * 2.0 + np.sin(a)  # DEVICE
    c = np.exp(np.linspace(0.0, 1.0, 5))  # SMALL
    total = float(b.sum())  # SYNC
    print("total", total, float(c[0]))
""")


def _line_of(marker):
    for number, line in enumerate(PROGRAM.splitlines(), 1):
        if line.endswith("# " + marker):
            return number
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory):
    """Runs PROGRAM once with every variable set; the tests read what it left."""
    tmp = tmp_path_factory.mktemp("observe")
    script = tmp / "program.py"
    script.write_text(PROGRAM)
    paths = {"profile": tmp / "profile.json", "trace": tmp / "trace.json",
             "graphs": tmp / "graphs", "report": tmp / "coverage.csv"}
    env = subprocess_env(NPVK_PROFILE=str(paths["profile"]), NPVK_TRACE=str(paths["trace"]),
                         NPVK_GRAPH=str(paths["graphs"]), NPVK_REPORT=str(paths["report"]))
    proc = run_python([str(script)], env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = np.sqrt(np.linspace(0.0, 1.0, 200_000)) * 2.0 + np.sin(np.linspace(0.0, 1.0, 200_000))
    assert float(proc.stdout.split()[1]) == pytest.approx(float(expected.sum()), rel=1e-12)
    paths["script"] = str(script)
    paths["stderr"] = proc.stderr
    return paths


def test_profile_json_parts_fit_in_wall_time(artefacts):
    report = json.loads(artefacts["profile"].read_text())
    seconds = report["seconds"]
    for key in ("record", "plan", "compile", "execute", "flush_other", "to_device", "to_host",
                "host_sync", "numpy_fallback_loops", "unaccounted"):
        assert seconds[key] >= 0.0, key
    assert seconds["record"] > 0 and seconds["execute"] > 0
    parts = sum(v for k, v in seconds.items() if k != "unaccounted")
    assert parts <= report["wall_seconds"] * 1.001
    assert parts + seconds["unaccounted"] == pytest.approx(report["wall_seconds"], rel=1e-6)
    assert report["ops_on_device"] >= 3 and report["flushes"] >= 1
    assert report["fallbacks"]["exp"]["small"] >= 1
    assert report["host_syncs"]["fault"]["count"] + report["host_syncs"]["explicit"]["count"] >= 1
    assert set(report["transfers"]) == {"to_device", "to_host"}
    assert set(report["kernels"]) == {"compiled", "memory_cache_hits", "disk_cache_hits"}
    assert 0.5 < report["array_work"]["device_fraction"] < 1.0


def _spans(trace, tid):
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["tid"] == tid]


def _inside(inner, outer, slack=0.002):
    return (outer["ts"] - slack <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + slack)


def test_trace_spans_nest_and_device_spans_fall_in_executions(artefacts):
    trace = json.loads(artefacts["trace"].read_text())
    host, device = _spans(trace, 1), _spans(trace, 2)
    names = {e["name"] for e in host}
    assert {"record", "flush", "plan", "execute"} <= names, names
    assert any(e.get("args", {}).get("op") == "sqrt" for e in host if e["name"] == "record")
    # Host spans nest: any two are disjoint or one holds the other.
    ordered = sorted(host, key=lambda e: (e["ts"], -e["dur"]))
    open_spans = []
    for span in ordered:
        while open_spans and span["ts"] >= open_spans[-1]["ts"] + open_spans[-1]["dur"] - 0.002:
            open_spans.pop()
        assert not open_spans or _inside(span, open_spans[-1]), (span, open_spans[-1])
        open_spans.append(span)
    flushes = [e for e in host if e["name"] == "flush"]
    for name in ("plan", "execute"):
        for span in (e for e in host if e["name"] == name):
            assert any(_inside(span, f) for f in flushes), span
    assert device, "no device spans"
    executions = [e for e in host if e["name"] == "execute"]
    for span in device:
        assert span["args"]["elements"] > 0
        assert any(_inside(span, x) for x in executions), span


DOT_NODE = re.compile(r'^\s*(\w+) \[(.*)\];$')
DOT_EDGE = re.compile(r'^\s*(\w+) -> (\w+);$')


def parse_dot(text):
    """A minimal parser for the DOT npvk writes: nodes, edges, clusters."""
    lines = text.strip().splitlines()
    assert re.match(r"^digraph \w+ \{$", lines[0]) and lines[-1] == "}", text
    assert text.count("{") == text.count("}")
    nodes, edges, clusters = {}, [], 0
    for line in lines[1:-1]:
        if m := DOT_EDGE.match(line):
            edges.append(m.groups())
        elif m := DOT_NODE.match(line):
            nodes[m.group(1)] = m.group(2)
        elif line.strip().startswith("subgraph cluster_"):
            clusters += 1
    for a, b in edges:
        assert a in nodes and b in nodes, (a, b)
    return nodes, edges, clusters


def test_graph_has_kernels_ops_arrays_and_contracted_temporaries(artefacts):
    files = sorted(os.listdir(artefacts["graphs"]))
    dots = [f for f in files if f.endswith(".dot")]
    assert dots, files
    texts = [(artefacts["graphs"] / f).read_text() for f in dots]
    fused = [t for t in texts if "sqrt" in t]
    assert fused
    nodes, edges, clusters = parse_dot(fused[0])
    assert clusters >= 1
    ops = {n for n, attrs in nodes.items() if "shape=box" in attrs}
    assert {"sqrt", "sin", "multiply", "add"} <= {
        re.search(r"#\d+ (\w+)", nodes[n]).group(1) for n in ops}
    assert any("contracted" in attrs and "style=dashed" in attrs for attrs in nodes.values())
    dot = shutil.which("dot")
    if dot:
        subprocess.run([dot, "-Tsvg", "-o", os.devnull], input=fused[0], text=True, check=True)
        assert any(f.endswith(".svg") for f in files)


def test_report_names_the_programs_own_lines(artefacts):
    with open(artefacts["report"], newline="") as f:
        rows = list(csv.DictReader(f))
    mine = [r for r in rows if r["file"] == artefacts["script"]]
    assert mine, rows
    by_line = {}
    for r in mine:
        by_line.setdefault(int(r["line"]), []).append(r)
    device = by_line[_line_of("DEVICE")]
    assert {"sqrt", "sin", "multiply", "add"} <= {r["op"] for r in device
                                                  if r["placement"] == "device"}
    small = by_line[_line_of("SMALL")]
    assert any(r["op"] == "exp" and r["placement"] == "fallback" and r["reason"] == "small"
               for r in small)
    synced = by_line[_line_of("SYNC")]
    # The sum: on the device as a reduction, or on NumPy's path through add's loop.
    assert any(r["op"] in ("add", "add.reduce") for r in synced)
    assert any(r["placement"] == "host sync" for r in synced)
    assert all(int(r["site_host_syncs"]) >= 1 for r in synced)
    assert not any("/numpy/" in r["file"] or "__array_function__" in r["file"] for r in rows)
    summary = re.search(r"npvk: ([\d.]+)% of array work on the device; (\d+) fallbacks",
                        artefacts["stderr"])
    assert summary, artefacts["stderr"]
    assert 50 < float(summary.group(1)) < 100 and int(summary.group(2)) >= 1


def test_trace_context_manager_and_explain(tmp_path):
    path = tmp_path / "block.json"
    with npvk_enabled():
        a = np.linspace(0.0, 1.0, 50_000)
        with npvk.trace(path):
            b = np.sqrt(a) + 1.0
        text = npvk.explain()
        report = npvk.profile()
    np.testing.assert_array_equal(b, np.sqrt(np.linspace(0.0, 1.0, 50_000)) + 1.0)
    trace = json.loads(path.read_text())
    assert {"record", "flush", "execute"} <= {e["name"] for e in _spans(trace, 1)}
    assert _spans(trace, 2)
    assert "step 0: sqrt(s0)" in text or "step 0: add(" in text
    assert "#version 460" in text
    assert report["seconds"]["record"] > 0 and report["wall_seconds"] > 0


def test_trace_and_explain_need_npvk_enabled(tmp_path):
    with pytest.raises(RuntimeError, match="not enabled"):
        with npvk.trace(tmp_path / "never.json"):
            pass
    with pytest.raises(RuntimeError, match="not enabled"):
        npvk.explain()
    assert not (tmp_path / "never.json").exists()
