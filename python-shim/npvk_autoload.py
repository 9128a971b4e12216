"""Imported at interpreter start by npvk-autoload.pth. Enables npvk when NPVK is
set to something other than 0; otherwise it does nothing (one dictionary
lookup), so an installed npvk costs nothing measurable."""

import os

if os.environ.get("NPVK", "0") not in ("", "0"):
    try:
        import npvk as _npvk

        _npvk.enable()
        if _npvk._stats_requested():
            _npvk.report_at_exit()
    except Exception as exc:  # never break the user's program at start-up
        import sys

        print(f"npvk: not enabled: {exc}", file=sys.stderr)
