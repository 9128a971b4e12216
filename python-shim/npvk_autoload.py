"""Imported at interpreter start by npvk-autoload.pth. Enables npvk when NPVK is
set to something other than 0; otherwise it does nothing (one dictionary
lookup), so an installed npvk costs nothing measurable."""

import os

if os.environ.get("NPVK", "0") not in ("", "0"):
    try:
        import npvk as _npvk

        _npvk.enable()
        if os.environ.get("NPVK_STATS", "0") not in ("", "0"):
            import atexit
            import sys

            def _report():
                _npvk.sync()
                s = _npvk.stats()
                print(f"npvk: {s['ops_on_device']} ops on the device, "
                      f"{s['ops_fallback_total']} on NumPy's path, "
                      f"{s['kernels_compiled']} kernels compiled, "
                      f"host syncs {s['host_syncs']}", file=sys.stderr)

            atexit.register(_report)
    except Exception as exc:  # never break the user's program at start-up
        import sys

        print(f"npvk: not enabled: {exc}", file=sys.stderr)
