"""Powers with a scalar exponent that npvk knows when it records the op
(x**3, x**-2, x**0.5: compile/fixed_exponent.hpp) run their own routine, not
the general exp(y*log|x|). They must give NumPy's results and warnings on
every float loop, over the whole range: zeros, infinities, NaN, and results
that overflow, underflow or are subnormal.

Tolerance: 2 ULP in float64 and float32, as for the general power
(npvk_testlib.TRANSCENDENTAL). npvk's integer powers are correctly rounded
for normal float64 results and within 1 ULP for subnormal ones
(docs/accuracy.md); NumPy's own power loop is not correctly rounded either
(glibc's pow is within 0.52 ULP, its SIMD loops within 1 ULP). float16: 1
ULP, the float32 result rounded once more (as npvk_testlib.ulp_tolerance)."""

import numpy as np
import pytest

from npvk._numpy import POWER_HALF_IS_SQRT
from npvk_testlib import assert_same, run_both_warned

EXPONENTS = [2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -5, -8, 0.5]


def power_operands(dtype, exponent, n=4096):
    """Special values, the main range, and magnitudes whose power is near
    the ends of the dtype's range (overflow, underflow, subnormals)."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(abs(int(exponent * 10)) + np.dtype(dtype).itemsize)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -3.0,
               info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal]
    main = rng.uniform(-10, 10, n // 2)
    # |x|^e spread over 2^-(maxexp + mant + 4) .. 2^(maxexp + 4)
    top = info.maxexp + 4
    bottom = -(info.maxexp + info.nmant + 4)
    t = rng.uniform(bottom, top, n // 2) / abs(exponent)
    with np.errstate(all="ignore"):
        wide = np.exp2(t) * rng.choice([-1.0, 1.0], n // 2)
        return np.concatenate([np.array(special), main, wide]).astype(dtype)


@pytest.mark.parametrize("dtype", ["f8", "f4", "f2"])
@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("spelling", ["np.power", "operator"])
def test_power_with_a_fixed_exponent_matches_numpy(dtype, exponent, spelling):
    x = power_operands(dtype, exponent)
    if spelling == "np.power":
        fn = lambda a: np.power(a, exponent)  # noqa: E731
    else:
        fn = lambda a: a ** exponent  # noqa: E731 (x**2, x**0.5, x**-1: NumPy's fast paths)
    actual, expected, delta = run_both_warned(fn, x)
    assert_same(actual, expected, ulps=1 if dtype == "f2" else 2,
                context=f"{spelling} {dtype} ** {exponent}")
    # NumPy 2.1+'s AVX-512 loops compute np.power(x, 0.5) as sqrt(x): npvk
    # leaves those calls to NumPy (x ** 0.5 is sqrt everywhere: it runs).
    sqrt_like = dtype in ("f4", "f8") and POWER_HALF_IS_SQRT[dtype == "f8"]
    if spelling == "np.power" and exponent == 0.5 and sqrt_like:
        assert delta.fallbacks("power", "power 0.5 is sqrt in this NumPy") >= 1
    else:
        assert delta.fallbacks() == 0
        assert delta.device_ops >= 1


def test_float_power_and_float32_exponent():
    """float_power takes the same routines; an exponent given as a float32
    scalar in a float32 loop too."""
    x = power_operands("f8", 3)
    actual, expected, delta = run_both_warned(lambda a: np.float_power(a, 3), x)
    assert_same(actual, expected, ulps=2)
    assert delta.fallbacks() == 0
    x32 = power_operands("f4", -2)
    actual, expected, delta = run_both_warned(lambda a: np.power(a, np.float32(-2)), x32)
    assert_same(actual, expected, ulps=2)
    assert delta.fallbacks() == 0


def test_exponents_in_one_kernel():
    """Each exponent is part of the kernel's key: a fused chain of x**3,
    x**4 and x**-2 (one kernel) gets each one right. (The value tests above
    also run every exponent's kernel in one process: a key without the
    exponent would give x**4 the kernel of x**3.)"""
    x = np.linspace(0.25, 3.0, 1 << 16)
    # positive terms, so no cancellation magnifies their 2 ULP each
    actual, expected, delta = run_both_warned(lambda a: a ** 3 + a ** 4 + a ** -2 * 0.5, x)
    assert_same(actual, expected, ulps=4)
    assert delta.fallbacks() == 0
