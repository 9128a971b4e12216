"""pytest configuration of npvk's Python suite.

Run from the repository root:

    PYTHONPATH=build/python NPVK_VALIDATION=1 NPVK_CACHE_DIR=build/test-kernel-cache \\
        /usr/bin/python3 -m pytest tests/python -q

Every test starts and ends with npvk disabled. The Khronos validation layer is
on (NPVK_VALIDATION=1 unless the environment says otherwise) and the suite fails
if it reports anything.
"""

import os
import sys
import warnings

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import npvk  # noqa: F401
except ImportError:
    # Not on PYTHONPATH: use the default build tree.
    sys.path.insert(0, os.path.join(_ROOT, "build", "python"))
    import npvk  # noqa: F401

# The context reads these when it is created (the first npvk.enable()).
os.environ.setdefault("NPVK_VALIDATION", "1")
os.environ.setdefault(
    "NPVK_CACHE_DIR",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(npvk.__file__))), os.pardir,
                 "test-kernel-cache"))
for _var in ("NPVK", "NPVK_MIN_BYTES", "NPVK_STATS"):
    os.environ.pop(_var, None)
# The suite tests the device's paths: the cost model would run much of its
# default-threshold work with NumPy's loops on lavapipe. test_cost_model*.py
# turns it on; tests/libraries and the examples run with it, as users do.
os.environ.setdefault("NPVK_COST_MODEL", "0")

import numpy as np  # noqa: E402


def _validation_messages():
    return npvk.stats().get("validation_messages", 0)


@pytest.fixture(autouse=True)
def npvk_off_around_each_test():
    """Each test starts with npvk disabled and NumPy's error state at its
    defaults, and leaves them so; validation messages fail the test that
    caused them."""
    if npvk.is_enabled():
        npvk.disable()
    before = _validation_messages()
    old_err = np.geterr()
    yield
    leaked = npvk.is_enabled()
    if leaked:
        npvk.disable()
    np.seterr(**old_err)
    # FP errors of device work are reported at the next report point, with
    # the error state of that moment (a known npvk bug, see test_fp_errors.py):
    # drop what is left so it cannot surface as a warning in the next test.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        npvk.sync()
    after = _validation_messages()
    assert after == before, f"{after - before} Vulkan validation messages during this test"
    assert not leaked, "the test left npvk enabled"


@pytest.fixture(scope="session", autouse=True)
def no_validation_messages_in_session():
    yield
    npvk.disable()
    count = _validation_messages()
    assert count == 0, f"the Khronos validation layer reported {count} messages"
