"""np.dot, np.inner and np.vdot routed to the device's matrix product
(npvk/_products.py), and np.concatenate / np.stack / np.vstack / np.hstack as
device copies into a new array (npvk/_assign.py), against plain NumPy in the
same test.

Tolerances: concatenation copies, so it is exact (dtype, shape, layout and
values). The products are dot products of length k: integers exact; floats
within 2 k eps sum|a||b| of NumPy's BLAS result (the standard dot-product
bound, once for each side; the same bound as tests/python/test_matmul.py).
"""

import numpy as np
import pytest

from npvk_testlib import assert_same, run_both_counted


def check_product(actual, expected, fn, a, b):
    """fn applied to |a| and |b| (plain NumPy, float64) is sum|a||b| for each
    element of the result: the scale of the dot-product bound."""
    assert type(actual) is type(expected)
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind != "f":
        assert_same(actual, expected)
        return
    k = a.size if fn is np.vdot else a.shape[-1]
    eps = np.finfo(actual.dtype).eps
    scale = np.asarray(fn(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64)))
    bound = 2 * k * eps * scale + np.finfo(actual.dtype).tiny
    assert np.all(np.abs(actual.astype(np.float64) - expected) <= bound), (actual, expected)


def operands(dtype, sa, sb, seed=0):
    rng = np.random.default_rng(seed)
    if dtype[0] == "f":
        return rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    return (rng.integers(-50, 50, sa).astype(dtype), rng.integers(-50, 50, sb).astype(dtype))


PRODUCTS = {
    "dot 2x2": (np.dot, (37, 29), (29, 21)),
    "dot 2x1": (np.dot, (40, 33), (33,)),
    "dot 1x2": (np.dot, (33,), (33, 40)),
    "dot 1x1": (np.dot, (1000,), (1000,)),
    "method dot": (lambda a, b: a.dot(b), (30, 20), (20, 10)),
    "inner 1x1": (np.inner, (500,), (500,)),
    "inner 2x1": (np.inner, (30, 17), (17,)),
    "inner 1x2": (np.inner, (17,), (30, 17)),
    "inner 2x2": (np.inner, (30, 17), (20, 17)),
    "vdot 1x1": (np.vdot, (700,), (700,)),
    "vdot 2x2": (np.vdot, (20, 35), (35, 20)),
}


@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4"])
@pytest.mark.parametrize("case", sorted(PRODUCTS))
def test_product_matches_numpy_on_the_device(case, dtype):
    fn, sa, sb = PRODUCTS[case]
    a, b = operands(dtype, sa, sb)
    actual, expected, fallbacks, device_ops = run_both_counted(fn, a, b)
    check_product(actual, expected, fn, a, b)
    assert not any(name in fallbacks for name in ("dot", "inner", "vdot", "matmul")), fallbacks
    assert device_ops >= 1


@pytest.mark.parametrize("case,reason", [
    ("dot 3-d", "shape"), ("dot out=", "out"), ("vdot strided", "order")])
def test_products_npvk_leaves_to_numpy_are_counted_and_equal(case, reason):
    rng = np.random.default_rng(5)
    name = case.split()[0]
    if case == "dot 3-d":
        a, b = rng.standard_normal((3, 10, 20)), rng.standard_normal((20, 4))
        fn = np.dot
    elif case == "dot out=":
        # Operands of two dtypes: NumPy's dot with out= (one dtype goes to matmul).
        a, b = rng.standard_normal((10, 20)), rng.standard_normal((20, 4)).astype(np.float32)
        fn = lambda x, y: np.dot(x, y, out=np.empty((10, 4)))  # noqa: E731
    else:
        a, b = rng.standard_normal((40, 20)), rng.standard_normal((40, 20))
        fn = lambda x, y: np.vdot(x[:, ::2], y[:, ::2])  # noqa: E731
    actual, expected, fallbacks, _ = run_both_counted(fn, a, b)
    assert_same(actual, expected)  # NumPy's own path both times
    assert fallbacks.get(name, {}).get(reason, 0) == 1, fallbacks


@pytest.mark.parametrize("sb", [(20, 4), (20,)])
def test_dot_with_out_is_dot_without(sb):
    # dot(a, b, out) goes to the device like dot(a, b), so the two agree to the
    # bit (NumPy's test_dot_3args), and returns `out`; so does an `out` that is
    # an operand (NumPy's test_dot_out_mem_overlap).
    import npvk
    from npvk_testlib import npvk_enabled

    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((10, 20)), rng.standard_normal(sb)
    with npvk_enabled():
        npvk.sync()
        before = dict(npvk.stats()["ops_fallback"].get("dot", {}))
        a, b = np.array(a), np.array(b)
        r = np.empty((10,) + sb[1:])
        expected = np.dot(a, b)
        assert np.dot(a, b, r) is r
        assert_same(r, expected)
        sq = np.array(rng.standard_normal((20, 20)))
        c = np.array(rng.standard_normal((20, 20)))
        expected = np.dot(sq, c)
        assert np.dot(sq, c, out=c) is c
        assert_same(c, expected)
        npvk.sync()
        assert npvk.stats()["ops_fallback"].get("dot", {}) == before


def test_product_shape_errors_are_numpy_s():
    a, b = np.ones((10, 3)), np.ones((4, 5))
    with pytest.raises(ValueError) as plain:
        np.dot(a, b)
    from npvk_testlib import npvk_enabled
    with npvk_enabled(min_bytes=0):
        with pytest.raises(ValueError) as device:
            np.dot(np.array(a), np.array(b))
    assert str(device.value) == str(plain.value)


CONCATS = {
    "concatenate axis 0": lambda a, b: np.concatenate((a, b)),
    "concatenate axis 1": lambda a, b: np.concatenate([a, b, a], axis=1),
    "concatenate axis -1": lambda a, b: np.concatenate((a, b), axis=-1),
    "stack": lambda a, b: np.stack((a, b)),
    "stack axis 2": lambda a, b: np.stack((a, b, a), axis=2),
    "vstack": lambda a, b: np.vstack((a, b)),
    "hstack": lambda a, b: np.hstack((a, b)),
    "empty piece": lambda a, b: np.concatenate((a, b[:0], b)),
}


@pytest.mark.parametrize("dtype", ["f8", "f4", "i2", "u1", "?"])
@pytest.mark.parametrize("case", sorted(CONCATS))
def test_concatenate_matches_numpy_on_the_device(case, dtype):
    rng = np.random.default_rng(9)
    a = (rng.standard_normal((60, 50)) * 100).astype(dtype)
    b = (rng.standard_normal((60, 50)) * 100).astype(dtype)
    actual, expected, fallbacks, device_ops = run_both_counted(CONCATS[case], a, b)
    assert_same(actual, expected)
    assert actual.flags.c_contiguous == expected.flags.c_contiguous
    assert "concatenate" not in fallbacks, fallbacks
    assert device_ops >= 2


@pytest.mark.parametrize("case,reason", [
    ("mixed dtypes", "dtype"), ("axis None", "shape"), ("fortran order", "order"),
    ("out=", "out")])
def test_concatenate_npvk_leaves_to_numpy_is_counted_and_equal(case, reason):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((30, 40)), rng.standard_normal((30, 40))
    fn = {
        "mixed dtypes": lambda x, y: np.concatenate((x, y.astype(np.float32))),
        "axis None": lambda x, y: np.concatenate((x, y), axis=None),
        "fortran order": lambda x, y: np.concatenate((np.asfortranarray(x), y)),
        "out=": lambda x, y: np.concatenate((x, y), out=np.empty((60, 40))),
    }[case]
    actual, expected, fallbacks, _ = run_both_counted(fn, a, b)
    assert_same(actual, expected)
    assert fallbacks.get("concatenate", {}).get(reason, 0) >= 1, fallbacks
