"""Floating-point errors of device work: with NumPy's default error state
('warn'), npvk raises NumPy's own RuntimeWarnings (docs/ops.md, "Floating-point
errors"), possibly later than NumPy would: at the next ufunc call, buffer
access or npvk.sync(), but always before the error state or the warnings
filters change (npvk/_errstate.py) and before recorded warnings are read. The
set of warnings must be NumPy's, under the error state the op was issued in."""

import warnings
from collections import Counter

import numpy as np
import pytest

import npvk
from npvk_testlib import NUMPY2, StatsDelta, assert_same, npvk_enabled

# NumPy 2 keeps its error state in a context variable: seterrobj and extobj=
# are gone.
numpy1_error_objects = pytest.mark.skipif(NUMPY2, reason="NumPy 2 removed seterrobj and extobj=")

N = 10_000


def _float(v, dtype=np.float64):
    return np.full(N, v, dtype=dtype)


FUSED = 1 << 17


def _fused(v):
    return np.full(FUSED, v)


def _overflow_then_input_overwritten():
    # A later kernel of the same flush overwrites the fused kernel's input,
    # so its flags loop stays in the kernel (runtime/flags_pass.cpp).
    a = _fused(1e308)
    b = a * 10.0 + 1.0
    a[: FUSED // 2] = 0.0
    return b


def _signaling_nan(bits, dtype):
    # Payload in the low word (float64) and beside the quiet bit: NumPy's
    # loops on x86 raise invalid for a signaling NaN operand.
    return np.full(N, bits, dtype=np.uint64 if dtype == np.float64 else np.uint32).view(dtype)


def _int_min(dtype):
    return np.full(N, np.iinfo(dtype).min, dtype=dtype)


def _inplace(start, update):
    a = _float(start)
    update(a)
    return a


def _one_overflowing_element():
    a = np.ones(N)
    a[N - 7] = 1e308  # one element, near the end of some invocation's range
    return a * 10.0 + 1.0


def _chain_overflow_then_invalid():
    x = _float(1e308) * 10.0  # overflow
    return x - x  # inf - inf: invalid, in the same fused kernel


def _accumulate_after_pole():
    acc = np.ones(N)
    q = np.ones(N) / _float(0.0)  # divide by zero: recomputed by the rare pass
    acc += q  # in place, with an infinite operand: quiet
    acc *= 1e308  # in place, inf * 1e308: quiet
    return acc


def _accumulate_overflow_in_place():
    acc = _float(1e308)
    for _ in range(3):
        acc += _float(1e308)  # the in-place chain overflows at its first step
    return acc


# Kernels whose element overwrites an operand it loaded (in-place updates)
# compute flags in the main loop; the others recompute flagged elements in a
# second pass (compile/families/elementwise/elementwise_glsl.cpp). Both are covered here.
CASES = {
    "divide_by_zero": lambda: _float(1.0) / _float(0.0),
    "invalid_divide": lambda: _float(0.0) / _float(0.0),
    "both_in_one_call": lambda: np.arange(N, dtype=np.float64) / _float(0.0),
    "overflow_multiply": lambda: _float(1e308) * _float(10.0),
    "overflow_float32": lambda: _float(3e38, np.float32) * np.float32(2.0),
    "overflow_add": lambda: _float(1.7e308) + _float(1.7e308),
    "inf_minus_inf": lambda: _float(np.inf) - _float(np.inf),
    "log_of_zero": lambda: np.log(_float(0.0)),
    "log_of_negative": lambda: np.log(_float(-1.0)),
    "sqrt_of_negative": lambda: np.sqrt(_float(-4.0)),
    "exp_overflow": lambda: np.exp(_float(1000.0)),
    "power_zero_negative": lambda: np.power(_float(0.0), _float(-1.0)),
    "floor_divide_by_zero": lambda: np.floor_divide(_float(1.0), _float(0.0)),
    "remainder_by_zero": lambda: np.remainder(_float(1.0), _float(0.0)),
    "floor_divide_overflow": lambda: np.floor_divide(_float(1e308), _float(0.1)),
    "floor_divide_overflow_float32": lambda: _float(3e38, np.float32) // np.float32(0.25),
    "divmod_by_zero": lambda: np.divmod(_float(1.0), _float(0.0)),
    "divmod_zero_by_zero": lambda: np.divmod(_float(0.0, np.float32), np.float32(0.0)),
    "divmod_overflow": lambda: np.divmod(_float(3e38, np.float32), np.float32(0.25)),
    "divmod_of_inf": lambda: np.divmod(_float(np.inf), _float(2.0)),
    "divmod_by_inf_is_quiet": lambda: np.divmod(_float(-1.0), _float(np.inf)),
    "int_divmod_by_zero": lambda: np.divmod(np.arange(N, dtype=np.int16), np.int16(0)),
    "int_divmod_overflow": lambda: np.divmod(_int_min(np.int32), np.full(N, -1, np.int32)),
    "uint_divmod_by_zero": lambda: np.divmod(np.arange(N, dtype=np.uint64), np.uint64(0)),
    "modf_of_inf_and_nan_is_quiet": lambda: np.modf(np.where(np.arange(N) % 2, np.inf, np.nan)),
    "frexp_of_inf_and_nan_is_quiet": lambda: np.frexp(np.where(np.arange(N) % 2, -np.inf,
                                                               np.nan))[0],
    "int_floor_divide_by_zero": lambda: np.arange(N) // np.zeros(N, dtype=np.int64),
    "int_remainder_by_zero": lambda: np.arange(N, dtype=np.int32) % np.zeros(N, np.int32),
    "int_fmod_by_zero": lambda: np.fmod(np.arange(N, dtype=np.int16), np.int16(0)),
    "int_floor_divide_overflow": lambda: _int_min(np.int64) // np.full(N, -1, np.int64),
    "int8_floor_divide_overflow_scalar": lambda: _int_min(np.int8) // np.int8(-1),
    "int_remainder_of_min_is_quiet": lambda: _int_min(np.int32) % np.full(N, -1, np.int32),
    "int_fmod_of_min_is_quiet": lambda: np.fmod(_int_min(np.int16), np.int16(-1)),
    "uint_floor_divide_is_quiet": lambda: np.full(N, 255, np.uint8) // np.uint8(255),
    "nan_input_is_quiet": lambda: _float(np.nan) * 2.0 + 1.0,
    "inf_input_is_quiet": lambda: _float(np.inf) * 2.0,
    "no_error": lambda: _float(3.0) * 2.0,
    "inplace_overflow": lambda: _inplace(1e308, lambda a: a.__imul__(10.0)),
    "inplace_invalid": lambda: _inplace(np.inf, lambda a: a.__isub__(np.inf)),
    "inplace_nan_is_quiet": lambda: _inplace(np.nan, lambda a: a.__iadd__(1.0)),
    "signaling_nan_low_payload": lambda: _signaling_nan(0x7FF0000000000001, np.float64) + 1.0,
    "signaling_nan_float32": lambda: _signaling_nan(0x7FA00000, np.float32) * np.float32(2),
    "inplace_signaling_nan": lambda: _signaling_nan(0x7FF4000000000000, np.float64).__iadd__(1.0),
    "inplace_signaling_nan_low_payload":
        lambda: _signaling_nan(0x7FF0000000000001, np.float64).__isub__(1.0),
    "one_overflowing_element": _one_overflowing_element,
    "chain_overflow_then_invalid": _chain_overflow_then_invalid,
    "accumulate_after_pole": _accumulate_after_pole,
    "accumulate_overflow_in_place": _accumulate_overflow_in_place,
    # Fused chains (FUSED elements: fusion starts at 65536) whose non-finite
    # value is absorbed by a later op: the main loop tests only results no
    # later op carries an infinity or NaN from (compile/glsl_fp.cpp,
    # nonfinite_tested), so these must keep theirs.
    "overflow_absorbed_by_a_divisor": lambda: 1.0 / (_fused(1e308) * 10.0),
    "overflow_absorbed_by_exp": lambda: np.exp(-(_fused(1e308) * 10.0)),
    "overflow_absorbed_by_where": lambda: np.where(_fused(1.0) > 2.0, _fused(1e308) * 10.0, 1.0),
    "pole_absorbed_by_maximum": lambda: np.maximum(np.log(_fused(0.0) * 1.0), 0.0),
    "invalid_absorbed_by_a_comparison": lambda: np.sqrt(_fused(1.0) - 2.0) > 0.0,
    "overflow_carried_to_the_result": lambda: ((_fused(1e308) * 10.0) - 1.0) * 2.0 + 3.0,
    "overflow_of_a_cube_absorbed": lambda: 1.0 / (_fused(1e200) * 1.0) ** 3,
    "inverse_absorbs_an_overflow": lambda: (_fused(1e308) * 10.0) ** -1.0 + 1.0,
    "overflow_then_input_overwritten": _overflow_then_input_overwritten,
    "flags_pass_after_a_nan_input": lambda: np.sqrt(_fused(np.nan) * 1.0 + _fused(-1.0)),
}


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
        npvk.sync()  # device errors surface by here at the latest
    return result, Counter((w.category.__name__, str(w.message)) for w in caught)


@pytest.mark.parametrize("case", list(CASES))
def test_default_errstate_warns_like_numpy(case):
    fn = CASES[case]
    expected, expected_warnings = _record(fn)
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual, actual_warnings = _record(fn)
        assert delta.device_ops > 0
    assert_same(actual, expected)
    assert actual_warnings == expected_warnings


@pytest.mark.parametrize("case", ["divide_by_zero", "overflow_multiply", "log_of_zero",
                                  "int_floor_divide_by_zero"])
def test_errstate_ignore_is_quiet(case):
    fn = CASES[case]
    with npvk_enabled(min_bytes=0):
        with np.errstate(all="ignore"):
            _result, caught = _record(fn)
        # Leaving the errstate block must not release the suppressed warnings.
        _r2, later = _record(lambda: _float(1.0) + 1.0)
    assert caught == Counter()
    assert later == Counter()


def test_warning_surfaces_after_the_work_ran():
    """The warning of a device op appears once its work has run (here: a host
    read flushes) by the next ufunc call, named after the ufunc that raised it."""
    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = a / z
            c[0]  # runs the pending work
            d = c + 1.0  # the next ufunc call reports
            del d
        messages = [str(w.message) for w in caught]
    assert messages == ["divide by zero encountered in divide"]
    assert np.isinf(c).all()


def test_warning_stays_in_the_catch_warnings_block_of_the_op():
    """The op's work is still queued when the block is left: leaving it runs
    the work and reports its errors inside the block."""
    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = a / z
            d = c + 1.0  # the next ufunc call
            del d
        messages = [str(w.message) for w in caught]
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            npvk.sync()  # the late warning, kept out of pytest's report
    assert messages == ["divide by zero encountered in divide"]


@pytest.mark.parametrize("case", ["divide_by_zero", "log_of_zero", "int_floor_divide_by_zero"])
def test_errstate_ignore_applies_to_ops_queued_in_the_block(case):
    fn = CASES[case]
    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="ignore"):
                r = fn()  # queued, not run
            r.sum()  # runs it, outside the block
            npvk.sync()
    assert [str(w.message) for w in caught] == []


# 'raise' for divide, over, under and invalid in NumPy 1.x's errobj mask.
RAISE_ALL_MASK = 2 | 2 << 3 | 2 << 6 | 2 << 9


def _raises_fpe(fn):
    try:
        fn()
    except FloatingPointError as exc:
        return str(exc)
    return None


def _with_seterrobj(a, z):
    old = np.geterrobj()
    np.seterrobj([8192, RAISE_ALL_MASK, None])
    try:
        return a / z
    finally:
        np.seterrobj(old)


@numpy1_error_objects
@pytest.mark.parametrize("how", ["seterrobj", "extobj"])
def test_raise_mode_from_seterrobj_and_extobj(how):
    if how == "seterrobj":
        def fn(a, z):
            return _with_seterrobj(a, z)
    else:
        def fn(a, z):
            return np.divide(a, z, extobj=[8192, RAISE_ALL_MASK, None])
    expected = _raises_fpe(lambda: fn(_float(1.0), _float(0.0)))
    assert expected == "divide by zero encountered in divide"
    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            actual = _raises_fpe(lambda: fn(_float(1.0), _float(0.0)))
            npvk.sync()
    assert actual == expected


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_floor_divide_overflow_warns(dtype):
    def fn():
        return (np.full(N, np.iinfo(dtype).min, dtype=dtype) //
                np.full(N, -1, dtype=dtype))

    expected, expected_warnings = _record(fn)
    assert expected_warnings  # NumPy warns
    with npvk_enabled(min_bytes=0):
        actual, actual_warnings = _record(fn)
    assert_same(actual, expected)
    assert actual_warnings == expected_warnings


def _explicit_syncs():
    # Not flushes: with mirrored buffers (test_mirrored.py) uploads flush too.
    return npvk.stats()["host_syncs"]["explicit"]


def _device_divide_by_zero():
    return _float(1.0) / _float(0.0)


def test_op_under_warn_is_reported_before_errstate_ignore():
    """An op issued under 'warn' warns even when the error state turns to
    'ignore' before its work runs."""
    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = _device_divide_by_zero()
            with np.errstate(all="ignore"):
                r.sum()
            npvk.sync()
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


def test_reading_the_recorded_warnings_reports_queued_errors():
    """NumPy's TestFloatExceptions.test_warnings: len(w) right after the op."""
    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            before = _explicit_syncs()
            _device_divide_by_zero()
            assert _explicit_syncs() == before  # nothing ran it: lazy
            assert len(w) == 1
            assert "divide by zero" in str(w[0].message)
            _float(1e300) * _float(1e300)
            assert len(w) == 2
            assert "overflow" in str(w[-1].message)


def test_no_state_change_no_sync():
    """Laziness is kept: ops, and error-state changes with nothing queued,
    make the shim run nothing."""
    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            a, z = _float(1.0), _float(0.0)
            npvk.sync()
            before = _explicit_syncs()
            with np.errstate(divide="ignore"):
                pass
            c = a / z
            d = c + 1.0
            assert _explicit_syncs() == before
            npvk.sync()
            del d
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


@pytest.mark.parametrize("method", ["divide", "log_at"])
def test_pytest_warns_sees_the_device_warning(method):
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        if method == "divide":
            with pytest.warns(RuntimeWarning, match="divide by zero"):
                _device_divide_by_zero()
        else:
            # (NumPy's test has errstate(all='warn'), which reports underflow:
            # NumPy's loop then.)
            arr = np.array([np.inf, 0, -np.inf])
            with pytest.warns(RuntimeWarning, match="invalid value") as record:
                np.log.at(arr, [2])
            if NUMPY2:
                # NumPy 2's ufunc.at hands the loop one element at a time with
                # a zero output stride (and names the error after "at"): it
                # stays on NumPy's path, a dispatch per index being no gain.
                assert [str(w.message) for w in record] == ["invalid value encountered in at"]
                assert delta.fallbacks("log", "reduction") == 1
                return
        assert delta.device_ops > 0


def test_suppress_warnings_block_keeps_the_device_warning():
    from numpy.testing import suppress_warnings

    with npvk_enabled(min_bytes=0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with suppress_warnings() as sup:
                sup.filter(RuntimeWarning)
                _device_divide_by_zero()
            npvk.sync()
    # NumPy 2.4 deprecates suppress_warnings itself (a DeprecationWarning).
    assert [w for w in caught if issubclass(w.category, RuntimeWarning)] == []


def test_underflow_warn_falls_back_and_warns():
    """The device does not detect underflow: reporting it takes NumPy's loop."""
    fn = lambda: _float(1e-300) * _float(1e-300)  # noqa: E731
    with np.errstate(under="warn"):
        expected, expected_warnings = _record(fn)
    assert expected_warnings
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        with np.errstate(under="warn"):
            actual, actual_warnings = _record(fn)
        assert delta.fallbacks("multiply", "errstate") >= 1
    assert_same(actual, expected)
    assert actual_warnings == expected_warnings


def test_warnings_as_errors_run_on_the_device_and_raise_at_the_op():
    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        delta = StatsDelta()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning, match="divide by zero"):
                a / z
        assert delta.fallbacks("divide", "errstate") == 0
        assert delta.device_ops >= 1
        c = a + 1.0  # the filter is gone: lazy again
        assert delta.device_ops >= 2
        del c


def test_an_error_filter_written_into_the_list_counts_at_the_next_change():
    """The shim remembers its last scan of warnings.filters and rescans only
    when an entry differs: one written in place (not at the front, the list
    and its length unchanged) must count from the next state change on."""
    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            np.seterr(**np.geterr())  # a change: the filters are scanned, no error filter
            warnings.filters[1] = ("error", None, RuntimeWarning, None, 0)
            with pytest.raises(RuntimeWarning, match="divide by zero"):
                with np.errstate(over="warn"):  # the next change: scanned again
                    a / z
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            c = a / z  # the block is over: a warning, not an exception
            npvk.sync()
        del c


def _sum_of_random():
    return np.random.default_rng(19).random(1_000_000)


def test_sum_has_the_same_bits_under_simplefilter_error():
    """Issue 19: under warnings.simplefilter("error") npvk took NumPy's loops,
    whose pairwise sum differs from the device's in the last bits: the same
    call gave another result there. Both now run the device's reduction."""
    with npvk_enabled(min_bytes=0):
        x = _sum_of_random()
        outside = x.sum()
        delta = StatsDelta()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            inside = x.sum()
            inside_mean = x.mean()
        with np.errstate(divide="raise", over="raise", invalid="raise"):
            raising = x.sum()
        fallbacks = delta.fallbacks(reason="errstate")
        outside_mean = x.mean()
    assert inside.tobytes() == outside.tobytes(), (inside, outside)
    assert raising.tobytes() == outside.tobytes(), (raising, outside)
    assert inside_mean.tobytes() == outside_mean.tobytes()
    assert fallbacks == 0


AT_THE_OP_CASES = {
    "divide": lambda: _float(1.0) / _float(0.0),
    "sum_overflow": lambda: _float(1e308).sum(),
    "cumsum_overflow": lambda: np.cumsum(_float(1e308)),
    "exp_overflow": lambda: np.exp(_float(1000.0)),
    "strided_2d_invalid": lambda: np.zeros((200, 100))[:, ::2] / np.zeros((200, 100))[:, 1::2],
    "int_floor_divide_by_zero": lambda: np.arange(N) // np.zeros(N, dtype=np.int64),
}


def _outcome(fn, state):
    """(exception type, message, whether the statement after the op ran) of
    fn under `state`, or None. The error must come at the op itself: the
    statement after it must not run, as under NumPy."""
    after = []
    try:
        with warnings.catch_warnings():
            if state == "filter_error":
                warnings.simplefilter("error")
            elif state == "filter_error_behind_a_message_filter":
                # A filter for one message only does not catch every
                # RuntimeWarning: the one behind it still makes them errors.
                warnings.filterwarnings("error", category=RuntimeWarning)
                warnings.filterwarnings("ignore", message="not this one")
            if state.startswith("filter_error"):
                fn()
                after.append(True)
            else:
                # Not all="raise": reporting underflow takes NumPy's loops.
                with np.errstate(divide="raise", over="raise", invalid="raise"):
                    fn()
                    after.append(True)
    except (RuntimeWarning, FloatingPointError) as e:
        return type(e).__name__, str(e), bool(after)
    return None


@pytest.mark.parametrize("state", ["filter_error", "filter_error_behind_a_message_filter",
                                   "errstate_raise"])
@pytest.mark.parametrize("case", list(AT_THE_OP_CASES))
def test_errors_at_the_op_raise_as_numpy(case, state):
    """Warnings as errors and 'raise' modes run the op on the device at once
    and raise NumPy's exception at the op."""
    fn = AT_THE_OP_CASES[case]
    expected = _outcome(fn, state)
    assert expected is not None
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual = _outcome(fn, state)
        assert delta.device_ops >= 1
        assert delta.fallbacks(reason="errstate") == 0
    assert actual == expected


@numpy1_error_objects
def test_extobj_warn_mode_is_honoured():
    """extobj= with divide='warn' under a thread state of 'ignore' warns."""
    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        delta = StatsDelta()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="ignore"):
                np.divide(a, z, extobj=[8192, 1, None])
        assert delta.fallbacks("divide", "extobj") >= 1
    assert [str(w.message) for w in caught] == ["divide by zero encountered in divide"]


def test_numpy_testing_assert_warns_sees_the_device_warning():
    from numpy.testing import assert_no_warnings, assert_warns

    with npvk_enabled(min_bytes=0):
        a, z = _float(1.0), _float(0.0)
        delta = StatsDelta()
        assert_warns(RuntimeWarning, np.divide, a, z)
        with pytest.raises(AssertionError):
            assert_no_warnings(np.divide, a, z)
        assert delta.device_ops >= 2
