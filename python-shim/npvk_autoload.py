"""Imported at interpreter start by npvk-autoload.pth. When NPVK is set to
something other than 0, npvk is enabled as soon as the program imports NumPy;
otherwise this module does nothing (one dictionary lookup), so an installed
npvk costs nothing measurable.

Enabling waits for the program's own `import numpy` because .pth files run
while site directories are still being added: NumPy may not be importable yet.
"""

import os
import sys


_pending = False  # NumPy was imported by npvk's own import: enable at its end


def _enable(npvk_whole=False):
    global _pending
    spec = getattr(sys.modules.get("npvk"), "__spec__", None)
    if not npvk_whole and getattr(spec, "_initializing", False):
        # The program imported npvk before NumPy (to call npvk.stats()
        # later, say), and npvk's import imported NumPy: npvk is not whole
        # yet. Its last lines call _enable(npvk_whole=True).
        _pending = True
        return
    _pending = False
    try:
        import npvk

        npvk.enable()
        if npvk._stats_requested():
            npvk.report_at_exit()
    except Exception as exc:  # never break the user's program
        print(f"npvk: not enabled: {exc}", file=sys.stderr)


class _EnableAfterNumpy:
    """A meta-path finder that lets NumPy import as usual, then enables npvk."""

    def find_spec(self, name, path=None, target=None):
        if name != "numpy":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec("numpy")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_enable(module):
            exec_module(module)
            _enable()

        loader.exec_module = exec_then_enable
        return spec


if os.environ.get("NPVK", "0") not in ("", "0"):
    if "numpy" in sys.modules:
        _enable()
    else:
        sys.meta_path.insert(0, _EnableAfterNumpy())
