"""pytest plugin of the NumPy conformance run (loaded with -p in both runs).

- NPVK_CONFORMANCE_ENABLE=1: npvk.enable() for the whole session, at
  pytest_configure, with NPVK_MIN_BYTES (run.py sets 0), before any test
  module imports NumPy's test helpers.
- NPVK_CONFORMANCE_LOG=path: one JSON line per test phase outcome, flushed as
  it happens, plus a line when a test starts, so a run that crashes or hangs
  still says what ran and which test killed it.
- NPVK_CONFORMANCE_SKIP=path: node ids (one a line) to deselect: tests that
  already ran in an earlier attempt of the same run, and the one that crashed.
- NPVK_CONFORMANCE_TEST_TIMEOUT=seconds: a test running longer ends the
  process (faulthandler dumps the stacks), so one hang cannot stall the run.
  The dump goes to NPVK_CONFORMANCE_FAULT_LOG=path where given (pytest
  captures the test's stderr, and the process ends before it is shown).
- NPVK_CONFORMANCE_STATS=path: npvk.stats() at the end of the session (JSON).
"""

import faulthandler
import json
import os
import time

_log = None
_timeout = 0
_fault_log = None


def _write(record):
    if _log is not None:
        _log.write(json.dumps(record) + "\n")
        _log.flush()


def pytest_configure(config):
    global _log, _timeout, _fault_log
    path = os.environ.get("NPVK_CONFORMANCE_LOG")
    if path:
        _log = open(path, "a", buffering=1)
    _timeout = float(os.environ.get("NPVK_CONFORMANCE_TEST_TIMEOUT", "0") or 0)
    fault_path = os.environ.get("NPVK_CONFORMANCE_FAULT_LOG")
    if fault_path and _timeout > 0:
        _fault_log = open(fault_path, "a")
    if os.environ.get("NPVK_CONFORMANCE_ENABLE") == "1":
        import npvk

        npvk.enable()  # min_bytes from NPVK_MIN_BYTES
        _write({"event": "npvk", "enabled": npvk.is_enabled(),
                "device": (npvk.device() or {}).get("name")})


def pytest_collection_modifyitems(session, config, items):
    path = os.environ.get("NPVK_CONFORMANCE_SKIP")
    if not path or not os.path.exists(path):
        return
    with open(path) as f:
        skip = {line.strip() for line in f if line.strip()}
    keep = [item for item in items if item.nodeid not in skip]
    deselected = [item for item in items if item.nodeid in skip]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    _write({"event": "start", "nodeid": nodeid})
    if _timeout > 0:
        if _fault_log is not None:
            _fault_log.write(f"start {nodeid}\n")
            _fault_log.flush()
            faulthandler.dump_traceback_later(_timeout, exit=True, file=_fault_log)
        else:
            faulthandler.dump_traceback_later(_timeout, exit=True)


def pytest_runtest_logfinish(nodeid, location):
    if _timeout > 0:
        faulthandler.cancel_dump_traceback_later()
    _write({"event": "finish", "nodeid": nodeid})


def pytest_runtest_logreport(report):
    record = {"event": "report", "nodeid": report.nodeid, "when": report.when,
              "outcome": report.outcome, "xfail": hasattr(report, "wasxfail"),
              "seconds": round(getattr(report, "duration", 0.0), 4), "t": round(time.time(), 3)}
    if report.failed:
        text = str(report.longrepr) if report.longrepr is not None else ""
        record["message"] = text[-1500:]
    _write(record)


def pytest_unconfigure(config):
    path = os.environ.get("NPVK_CONFORMANCE_STATS")
    if path and os.environ.get("NPVK_CONFORMANCE_ENABLE") == "1":
        import npvk

        npvk.sync()
        with open(path, "w") as f:
            json.dump(npvk.stats(), f, indent=1, sort_keys=True)
    if _log is not None:
        _log.close()
