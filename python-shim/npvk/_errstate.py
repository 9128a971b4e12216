"""Keeps the FP errors of deferred device work inside the error state they
belong to.

NumPy checks the FP status right after each loop; npvk's device work runs
later and its errors are reported at the next report point (a ufunc loop, a
buffer request, npvk.sync()). For that to give NumPy's outcome, the errors of
an op must be reported under the NumPy error state and the warnings filters
that were in force when the op was issued. So every change of either first
runs the queued work and reports its errors (under the old state), and so does
reading the list that warnings.catch_warnings(record=True) or pytest.warns
record into. Without such changes nothing is run early: laziness is kept in
the common case.

Where deferring cannot give NumPy's outcome, either each op runs on the device
as it is recorded and reports its errors then (error modes that raise or
call back, and warnings filters that turn RuntimeWarning into an exception;
they must act at the op), or every loop takes NumPy's own path (reported
underflow, which the device does not detect). The shim applies each change
and reads the state after it (python-shim/src/error_state.cpp). Running the same kernels keeps a call's result bits the same inside
and outside such a state, which NumPy's loops (another summation order) did
not.
"""

import atexit
import functools
import sys
import warnings

import numpy as _np

from . import _native

from ._numpy import ufunc_config as _ufunc_config
from ._numpy import umath as _umath

# NumPy 1.x's error object: [bufsize, mask, callback]; 3 bits of mode a
# category in the mask (numpy/core/_ufunc_config.py).
_SHIFTS = {"divide": 0, "over": 3, "under": 6, "invalid": 9}
_MODES = {0: "ignore", 1: "warn", 2: "raise", 3: "call", 4: "print", 5: "log"}
_ACTING_MODES = ("raise", "call", "log")

_installed = []  # (owner, name, original) to restore


_geterrobj = getattr(_umath, "geterrobj", None)  # NumPy 1.x only
# Mode codes in the mask that act at the op (raise, call, log, and the
# unknown ones, taken as "raise").
_ACTING_CODES = frozenset(code for code in range(8)
                          if _MODES.get(code, "raise") in _ACTING_MODES)


_CODES = {mode: code for code, mode in _MODES.items()}


def _error_mask():
    """NumPy 2's error state as NumPy 1.x's mask, for the shim (which reads
    1.x's mask itself); a mode it does not know counts as "raise"."""
    modes = _np.geterr()
    return sum(_CODES.get(modes[k], 2) << shift for k, shift in _SHIFTS.items())


def update():
    # Read at the change, not later from the shim when a call would go to the
    # device: Python code run from inside a ufunc loop is where a pending
    # Ctrl-C surfaces, and a KeyboardInterrupt there cannot reach the program.
    _native.update_error_state()


_testing_hooked = False


def report_pending():
    _native.report_pending()
    if _installed and not _testing_hooked:
        _hook_testing()


class _RecordedWarnings(list):
    """The list catch_warnings(record=True) returns: reading it reports the
    FP errors of queued device work first, which NumPy would have recorded by
    then."""

    __hash__ = None


def _reading(name):
    method = getattr(list, name)

    def read(self, *args):
        report_pending()
        return method(self, *args)

    read.__name__ = name
    return read


for _name in ("__len__", "__iter__", "__reversed__", "__getitem__", "__contains__", "__eq__",
              "__ne__", "__repr__", "pop", "index", "count", "copy"):
    setattr(_RecordedWarnings, _name, _reading(_name))


def _wrap(owner, name, make):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_npvk", False):
        return
    wrapper = make(original)
    wrapper._npvk = True
    wrapper.__wrapped__ = original
    setattr(owner, name, wrapper)
    _installed.append((owner, name, original))


def _state_setter(original):
    # A C callable, no Python frame: programs make these changes by the
    # hundred thousand (python-shim/src/error_state.cpp).
    return functools.update_wrapper(functools.partial(_native.change_error_state, original),
                                    original)


def _enter(original):
    def __enter__(self):
        result = _native.change_error_state(original, self)
        module = getattr(self, "_module", None)
        if (type(result) is list and module is not None and
                getattr(module, "_showwarnmsg_impl", None) == result.append):
            recorded = _RecordedWarnings()
            module._showwarnmsg_impl = recorded.append
            result = recorded
        return result
    return __enter__


def _exit(original):
    def __exit__(self, *exc_info):
        return _native.change_error_state(original, self, *exc_info)
    return __exit__


def install():
    """Hooks every change of NumPy's error state and of the warnings filters."""
    # seterr, seterrcall and setbufsize edit the list geterrobj returns, which
    # is the thread's error object itself (NumPy 1.x), before they pass it to
    # seterrobj: they are hooked themselves, in every numpy module that holds
    # them (np.errstate calls those of its own module).
    for name in ("seterr", "seterrcall", "setbufsize", "seterrobj"):
        original = getattr(_ufunc_config, name, None) or getattr(_umath, name, None)
        if original is None:
            continue
        for module_name, module in list(sys.modules.items()):
            # vars(), not getattr(): NumPy 2's numpy.core alias warns on
            # every attribute it is asked for.
            if (module_name == "numpy" or module_name.startswith("numpy.")) and \
                    vars(module).get(name) is original:
                _wrap(module, name, _state_setter)
    if not hasattr(_umath, "seterrobj"):
        # NumPy 2: errstate sets a context variable without seterr.
        _wrap(_ufunc_config.errstate, "__enter__", _enter)
        _wrap(_ufunc_config.errstate, "__exit__", _exit)
    # _filters_mutated: what a library calls after editing warnings.filters
    # itself (an edit without it is seen at the next call that records work,
    # python-shim/src/error_state.cpp).
    for name in ("simplefilter", "filterwarnings", "resetwarnings", "_filters_mutated"):
        _wrap(warnings, name, _state_setter)
    # pytest.warns / pytest's per-test recorder subclass catch_warnings and
    # call these through super().
    _wrap(warnings.catch_warnings, "__enter__", _enter)
    _wrap(warnings.catch_warnings, "__exit__", _exit)
    _hook_testing()
    _native.error_state_setup(_geterrobj, _error_mask, warnings,
                              None if _testing_hooked else _hook_testing,
                              sum(1 << code for code in _ACTING_CODES))
    update()
    if not _at_exit:
        # Work still queued when the program ends (its result never read,
        # or sys.exit) runs, and its warnings are given, before Python's
        # own teardown: NumPy gave them at the op.
        atexit.register(_report_at_exit)
        _at_exit.append(True)


_at_exit = []


def _report_at_exit():
    if _installed:
        _native.report_pending()


def _hook_testing():
    """numpy.testing's suppress_warnings (assert_warns, assert_no_warnings)
    sets the filters itself. Hooked once numpy.testing is imported (importing
    it here would cost every program unittest's import): its filter() calls
    warnings.filterwarnings, which is hooked, so no block starts unhooked."""
    global _testing_hooked
    utils = sys.modules.get("numpy.testing._private.utils")
    cls = getattr(utils, "suppress_warnings", None)
    if cls is None:
        return False
    _testing_hooked = True
    if getattr(cls.__exit__, "_npvk", False):
        return True
    _wrap(cls, "__enter__", _enter)
    _wrap(cls, "__exit__", _exit)
    _wrap(cls, "_filter", _suppression_filter)
    return True


def _suppression_filter(original):
    # record() keeps its list in the suppression entry it adds; the entry
    # gets a _RecordedWarnings instead.
    def _filter(self, *args, **kwargs):
        record = original(self, *args, **kwargs)
        if type(record) is not list:
            return record
        for store in (getattr(self, "_suppressions", []), getattr(self, "_tmp_suppressions", [])):
            for i, entry in enumerate(store):
                if entry[-1] is record:
                    recorded = _RecordedWarnings()
                    store[i] = entry[:-1] + (recorded,)
                    return recorded
        return record
    return _filter


def uninstall():
    global _testing_hooked
    _testing_hooked = False
    _native.set_strict_errors(False, False)
    while _installed:
        owner, name, original = _installed.pop()
        setattr(owner, name, original)
