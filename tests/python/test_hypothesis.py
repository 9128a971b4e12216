"""Property-based: random chains of ufuncs on random views (shapes, strides,
offsets, negative steps, broadcasting, scalars, out= and in-place) give
bit-identical results with and without npvk."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npvk_testlib import StatsDelta, assert_same, npvk_enabled

FLOAT_BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
                "fmod", "maximum", "minimum", "fmax", "fmin", "copysign"]
FLOAT_UNARY = ["sqrt", "absolute", "negative", "floor", "ceil", "trunc", "rint", "square",
               "fabs"]
INT_BINARY = ["add", "subtract", "multiply", "floor_divide", "remainder", "fmod",
              "bitwise_and", "bitwise_or", "bitwise_xor", "maximum", "minimum", "right_shift"]
INT_UNARY = ["absolute", "negative", "invert", "square"]
DTYPES = ["float64", "float32", "int8", "int16", "int32", "int64", "uint8", "uint32",
          "uint64"]

step_st = st.sampled_from([1, 1, 2, 3, -1, -2])


@st.composite
def programs(draw):
    dtype = draw(st.sampled_from(DTYPES))
    ndim = draw(st.sampled_from([1, 1, 2]))
    if ndim == 1:
        shape = (draw(st.integers(1, 12_000)),)
    else:
        shape = (draw(st.integers(1, 40)), draw(st.integers(1, 400)))
    steps = tuple(draw(step_st) for _ in shape)
    offsets = tuple(draw(st.integers(0, 2)) for _ in shape)
    is_float = dtype.startswith("float")
    binary = FLOAT_BINARY if is_float else INT_BINARY
    unary = FLOAT_UNARY if is_float else INT_UNARY
    ops = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["array", "scalar", "rscalar", "unary", "inplace",
                                     "out", "broadcast"]))
        name = draw(st.sampled_from(unary if kind == "unary" else binary))
        scalar = draw(st.integers(-5, 5) if not is_float else
                      st.sampled_from([0.5, -1.5, 3.0, 0.0, -0.0, float("inf"), 1e-3]))
        if dtype.startswith("uint"):
            scalar = abs(scalar)
        if name == "right_shift":
            scalar = abs(scalar)
        ops.append((kind, name, scalar))
    seed = draw(st.integers(0, 2**32 - 1))
    return dtype, shape, steps, offsets, ops, seed


def _values(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        v = rng.uniform(-100, 100, n)
        v[rng.random(n) < 0.05] = 0.0
        v[rng.random(n) < 0.02] = np.nan
        v[rng.random(n) < 0.02] = -np.inf
        return v.astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dt)


def _view(base, shape, steps, offsets):
    idx = tuple(slice(o, o + s * abs(st_), st_) if st_ > 0 else
                slice(o + s * abs(st_) - 1, (o - 1) if o > 0 else None, st_)
                for s, st_, o in zip(shape, steps, offsets))
    return base[idx]


def _run(program, base_x, base_y):
    dtype, shape, steps, offsets, ops, _seed = program
    x = _view(np.array(base_x), shape, steps, offsets)
    y = _view(np.array(base_y), shape, steps, offsets)
    row = np.array(y.reshape(-1)[: shape[-1]])
    for kind, name, scalar in ops:
        uf = getattr(np, name)
        s = np.dtype(dtype).type(scalar)
        if name == "right_shift":
            y_arg = np.bitwise_and(y, 7)
        else:
            y_arg = y
        if kind == "array":
            x = uf(x, y_arg)
        elif kind == "scalar":
            x = uf(x, s)
        elif kind == "rscalar":
            x = uf(s, x) if name != "right_shift" else uf(x, s)
        elif kind == "unary":
            x = uf(x)
        elif kind == "inplace":
            x = np.array(x)  # a writable private copy, then in place
            uf(x, y_arg, out=x)
        elif kind == "out":
            o = np.empty_like(x)
            uf(x, y_arg, out=o)
            x = o
        else:  # broadcast a row over every row
            r = np.bitwise_and(row, 7) if name == "right_shift" else row
            x = uf(x, r)
        x = x.astype(dtype, copy=False)
    return x


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs(program):
    dtype, shape, steps, offsets, ops, seed = program
    rng = np.random.default_rng(seed)
    size = [s * abs(st_) + o + 1 for s, st_, o in zip(shape, steps, offsets)]
    n = int(np.prod(size))
    base_x = _values(dtype, n, rng).reshape(size)
    base_y = _values(dtype, n, rng).reshape(size)
    with np.errstate(all="ignore"):
        expected = _run(program, base_x, base_y)
        with npvk_enabled(min_bytes=0):
            delta = StatsDelta()
            actual = _run(program, base_x, base_y)
            accounted = delta.device_ops + delta.fallbacks()
    assert_same(actual, expected, context=repr(program[:5]))
    assert accounted > 0
