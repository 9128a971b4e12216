"""Every ufunc loop npvk replaces, in every layout, against plain NumPy.

The loop list is derived from npvk._native.op_table() and each ufunc's .types
exactly as npvk/__init__.py's _replace_loops does (npvk_testlib.candidate_loops),
so a loop added to npvk is tested without touching this file. Each test runs
the same NumPy call twice: with npvk disabled (the reference), then with
npvk.enable(min_bytes=0) on managed copies of the inputs; the results must be
bit-identical, except the transcendentals (see npvk_testlib.ulp_tolerance), and
the device must really have run the loop.
"""

import numpy as np
import pytest

import npvk
from npvk_testlib import (ACCELERATED_LOOPS, EXPECTED_LOOPS_REPLACED, NUMPY2,
                          UNACCELERATED_LOOPS, VERSION_FALLBACKS, StatsDelta, assert_same,
                          npvk_enabled, operand_values, scalar_value, split_types, ulp_tolerance)

N = 10_000


def _garbage(dt, n):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.ones(n, dtype=bool)
    if dt.kind == "f":
        return np.full(n, -12345.0, dtype=dt)
    return np.full(n, 0x5A, dtype=dt)


def _copy(x):
    # Allocated now: managed memory when npvk is enabled with min_bytes=0.
    return np.array(x, copy=True)


def _interleave(x, filler_seed):
    """A 2n array whose [::2] (or [1::2]) elements are x, the rest noise."""
    big = np.empty(2 * x.size, dtype=x.dtype)
    other = np.resize(x[::-1], x.size)
    if filler_seed % 2:
        big[1::2], big[::2] = x, other
    else:
        big[::2], big[1::2] = x, other
    return big


def _mask(n):
    # Runs of 37 elements, so the masked loop calls the inner loop on long
    # stretches, plus a few isolated elements.
    m = (np.arange(n) // 37) % 2 == 0
    m[1::997] = True
    return m


# Each layout: (applicable(nin, types), run(ufunc, name, types, inputs) ->
# [arrays to compare], expect_device).


def _contiguous(uf, name, types, xs):
    return [uf(*[_copy(x) for x in xs])]


def _strided(uf, name, types, xs):
    bigs = [_interleave(x, k) for k, x in enumerate(xs)]
    bigs = [_copy(b) for b in bigs]
    views = [b[1::2] if k % 2 else b[::2] for k, b in enumerate(bigs)]
    return [uf(*views)] + bigs


def _negative(uf, name, types, xs):
    arrs = [_copy(x) for x in xs]
    views = [a[::-1] if k == 0 or len(arrs) == 1 else a for k, a in enumerate(arrs)]
    if len(arrs) == 2:
        views[1] = arrs[1][::-1]
    return [uf(*views)]


def _mixed_strides(uf, name, types, xs):
    # First operand reversed, second strided, output strided: every operand
    # has its own stride.
    a = _copy(xs[0])
    b = _copy(_interleave(xs[1], 0))
    os = _garbage_outputs(types, 2 * xs[0].size)
    uf(a[::-1], b[::2], out=tuple(o[1::2] for o in os))
    return os


def _scalar_right(uf, name, types, xs):
    return [uf(_copy(xs[0]), scalar_value(name, types, 1))]


def _scalar_left(uf, name, types, xs):
    return [uf(scalar_value(name, types, 0), _copy(xs[1]))]


def _numpy_scalar(uf, name, types, xs):
    ins, _ = split_types(types)
    s = np.dtype(ins[1]).type(scalar_value(name, types, 1))
    return [uf(_copy(xs[0]), s)]


def _broadcast(uf, name, types, xs):
    # Row (n,) with column (4, 1): NumPy runs the inner loop once per row with
    # the column's element as a stride-0 scalar.
    row = _copy(xs[0])
    col = _copy(xs[1][:4].reshape(4, 1))
    return [uf(row, col)]


def _broadcast_small(uf, name, types, xs):
    # Row (100,) with column (100, 1): small enough that NumPy's iterator
    # buffers the operands (see test_fallbacks.py); must still be right.
    row = _copy(xs[0][:100])
    col = _copy(xs[1][100:200].reshape(100, 1))
    return [uf(row, col)]


def _garbage_outputs(types, n):
    # One array per output: divmod, modf and frexp have two.
    return [_copy(_garbage(t, n)) for t in split_types(types)[1]]


def _returned(r, outs):
    # The arrays given as out= come back (a tuple of them for two outputs).
    got = r if isinstance(r, tuple) else (r,)
    assert len(got) == len(outs) and all(g is o for g, o in zip(got, outs))


def _inplace(uf, name, types, xs):
    arrs = [_copy(x) for x in xs]
    outs = [arrs[0]] + _garbage_outputs(types, xs[0].size)[1:]
    _returned(uf(*arrs, out=tuple(outs)), outs)
    return arrs + outs[1:]


def _out(uf, name, types, xs):
    outs = _garbage_outputs(types, xs[0].size)
    _returned(uf(*[_copy(x) for x in xs], out=tuple(outs)), outs)
    return outs


def _out_strided(uf, name, types, xs):
    outs = _garbage_outputs(types, 2 * xs[0].size)
    uf(*[_copy(x) for x in xs], out=tuple(o[::2] for o in outs))
    return outs


def _where(uf, name, types, xs):
    outs = _garbage_outputs(types, xs[0].size)
    mask = _copy(_mask(xs[0].size))
    uf(*[_copy(x) for x in xs], out=tuple(outs), where=mask)
    return outs


def _out_strided_reference(uf, name, types, xs):
    """What _out_strided gives where NumPy's loop honours a strided out=:
    the result of a contiguous call, written to every other element."""
    outs = _garbage_outputs(types, 2 * xs[0].size)
    results = uf(*[_copy(x) for x in xs])
    for o, r in zip(outs, results if isinstance(results, tuple) else (results,)):
        o[::2] = r
    return outs


def _same_inputs(nin, types):
    # A Python scalar takes the array's dtype (NEP 50) or one its value
    # chooses (NumPy 1.x), so it never selects a loop of two input dtypes
    # (NumPy 2's qQ->? comparisons).
    ins, _ = split_types(types)
    return nin == 2 and ins[0] == ins[1]


def _same_type_out(types):
    ins, outs = split_types(types)
    return outs[0] == ins[0]


LAYOUTS = {
    # name: (applicable(nin, types), run, expect device ops)
    "contiguous": (lambda nin, t: True, _contiguous, True),
    "strided": (lambda nin, t: True, _strided, True),
    "negative": (lambda nin, t: True, _negative, True),
    "mixed_strides": (lambda nin, t: nin == 2, _mixed_strides, True),
    "scalar_right": (_same_inputs, _scalar_right, True),
    "scalar_left": (_same_inputs, _scalar_left, True),
    "numpy_scalar": (lambda nin, t: nin == 2, _numpy_scalar, True),
    "broadcast": (lambda nin, t: nin == 2, _broadcast, True),
    "broadcast_small": (lambda nin, t: nin == 2, _broadcast_small, False),
    "inplace": (lambda nin, t: _same_type_out(t), _inplace, True),
    "out": (lambda nin, t: True, _out, True),
    "out_strided": (lambda nin, t: True, _out_strided, True),
    "where": (lambda nin, t: True, _where, True),
}


# NumPy's own wrong results: {(name, types, layout): reason}. npvk is compared
# with the result NumPy should give (the layout's reference), and NumPy's
# own run must still be wrong, so the entry goes once NumPy is fixed.
NUMPY_BUGS = {
    (name, types, "out_strided"): (
        "NumPy 2.0-2.4's float32/float64 loops of isnan, isinf, isfinite and signbit leave "
        "most elements of a strided bool out= unwritten", _out_strided_reference)
    for name in ("isnan", "isinf", "isfinite", "signbit") for types in ("f->?", "d->?")
} if NUMPY2 else {}

# Known npvk bugs: {(name, types, layout): reason}. Those layouts must still
# fail (strict, like xfail(strict=True)), so the entry has to go when fixed.
KNOWN_BUGS = {}

MINMAX = ("maximum", "minimum", "fmax", "fmin")


def _flat(results):
    return [a for r in results for a in (r if isinstance(r, tuple) else (r,))]


def _layouts_for(name, types):
    nin = len(split_types(types)[0])
    return [layout for layout, (applies, _run, _dev) in LAYOUTS.items() if applies(nin, types)]


def _check_layout(name, types, layout, expected, actual, device_ops, fallbacks):
    """Returns None, or what is wrong with this layout's results."""
    _applies, _run, expect_device = LAYOUTS[layout]
    expect_device = expect_device and (name, types) not in VERSION_FALLBACKS
    uf = npvk._ufunc_named(name)
    # A call of a two-output ufunc returns a tuple: each array is compared.
    actual, expected = _flat(actual), _flat(expected)
    try:
        assert len(actual) == len(expected)
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, ulps=ulp_tolerance(name, types), context=f"result {k}")
        if expect_device:
            assert device_ops > 0, f"nothing ran on the device; fallbacks: {fallbacks}"
            assert uf.__name__ not in fallbacks, f"fell back: {fallbacks}"
    except AssertionError as exc:
        return str(exc)
    return None


# np.where is a function, not a ufunc: test_where_fusion.py checks npvk's
# where ufunc against it.
@pytest.mark.parametrize("name,types", [pytest.param(n, t, id=f"{n}-{t}")
                                        for n, t in ACCELERATED_LOOPS if n != "where"])
def test_loop(name, types):
    """One loop in every layout that applies to it (LAYOUTS): NumPy's results,
    and device work for each. One test per loop rather than per layout keeps
    npvk.enable()/disable() (which replace ~400 loops) to once per loop."""
    uf = npvk._ufunc_named(name)
    layouts = _layouts_for(name, types)
    xs = operand_values(name, types, N)
    numpy_wrong = []
    with np.errstate(all="ignore"):
        expected = {layout: LAYOUTS[layout][1](uf, name, types, [x.copy() for x in xs])
                    for layout in layouts}
        for layout in layouts:
            bug = NUMPY_BUGS.get((name, types, layout))
            if bug:
                reference = bug[1](uf, name, types, [x.copy() for x in xs])
                if all(np.array_equal(e, r) for e, r in zip(_flat(expected[layout]),
                                                             _flat(reference))):
                    numpy_wrong.append(f"--- layout {layout}: NumPy is right now: remove its "
                                       f"NUMPY_BUGS entry ({bug[0]})")
                expected[layout] = reference
        actual, device_ops, fallbacks = {}, {}, {}
        with npvk_enabled(min_bytes=0):
            for layout in layouts:
                delta = StatsDelta()
                actual[layout] = LAYOUTS[layout][1](uf, name, types, [x.copy() for x in xs])
                device_ops[layout] = delta.device_ops
                fallbacks[layout] = delta.fallback_table()
    problems, fixed = [], []
    for layout in layouts:
        problem = _check_layout(name, types, layout, expected[layout], actual[layout],
                                device_ops[layout], fallbacks[layout])
        known = KNOWN_BUGS.get((name, types, layout))
        if problem and not known:
            problems.append(f"--- layout {layout}: {problem}")
        elif known and not problem:
            fixed.append(f"--- layout {layout} passes: remove its KNOWN_BUGS entry ({known})")
    assert not problems and not fixed and not numpy_wrong, "\n".join(problems + fixed +
                                                                   numpy_wrong)
    reason = VERSION_FALLBACKS.get((name, types))
    if reason:  # (device_ops also counts the layouts' own copies)
        assert sum(f.get(name, {}).get(reason, 0) for f in fallbacks.values()) > 0, fallbacks


@pytest.mark.parametrize("name,types", [pytest.param(n, t, id=f"{n}-{t}")
                                        for n, t in UNACCELERATED_LOOPS])
def test_unaccelerated_loop_is_numpy(name, types):
    """Loops npvk does not replace (the float predicates on integer
    and bool inputs) give NumPy's result and never count as device work."""
    uf = npvk._ufunc_named(name)
    xs = operand_values(name, types, N)
    with np.errstate(all="ignore"):
        expected = uf(*[x.copy() for x in xs])
        with npvk_enabled(min_bytes=0):
            delta = StatsDelta()
            actual = uf(*[_copy(x) for x in xs])
            assert delta.device_ops == 0
            assert delta.fallbacks(ufunc=uf.__name__) == 0
    assert_same(actual, expected)


def test_loop_list_matches_npvk():
    """The suite's loop list is what npvk replaces: every loop docs/ops.md
    lists, no more."""
    assert len(ACCELERATED_LOOPS) > 300
    with npvk_enabled(min_bytes=0):
        assert npvk.stats()["loops_replaced"] == EXPECTED_LOOPS_REPLACED
    assert npvk.stats()["loops_replaced"] == 0


INPLACE_OPERATORS = [
    ("+=", "add"), ("-=", "subtract"), ("*=", "multiply"), ("/=", "true_divide"),
    ("//=", "floor_divide"), ("%=", "remainder"), ("**=", "power"), ("&=", "bitwise_and"),
    ("|=", "bitwise_or"), ("^=", "bitwise_xor"), ("<<=", "left_shift"), (">>=", "right_shift"),
]


def _inplace_cases():
    for op, name in INPLACE_OPERATORS:
        for dtype in ["int8", "uint16", "int32", "int64", "float16", "float32", "float64"]:
            char = np.dtype(dtype).char
            if (name, f"{char}{char}->{char}") in ACCELERATED_LOOPS:
                yield pytest.param(op, name, dtype, id=f"{op}-{dtype}")


@pytest.mark.parametrize("op,name,dtype", list(_inplace_cases()))
def test_inplace_operator(op, name, dtype):
    char = np.dtype(dtype).char
    types = f"{char}{char}->{char}"
    a0, b0 = operand_values(name, types, N, key="inplace-operator")
    code = f"a {op} b"

    def run():
        a, b = _copy(a0), _copy(b0)
        view = a[::2]  # a view of the target sees the update
        exec(code, {}, {"a": a, "b": b})
        return [a, b, view.copy()]

    with np.errstate(all="ignore"):
        expected = run()
        with npvk_enabled(min_bytes=0):
            delta = StatsDelta()
            actual = run()
            assert delta.device_ops > 0
    for a, e in zip(actual, expected):
        assert_same(a, e, ulps=ulp_tolerance(name, types))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", MINMAX)
def test_minmax_signed_zero(name, dtype):
    """max/min of +0.0 and -0.0 pick the zero NumPy picks (on x86-64 its loops
    return the second operand; npvk returned the first before dc455e1)."""
    uf = npvk._ufunc_named(name)
    a0 = np.array([0.0, -0.0, 0.0, -0.0] * 2500, dtype=dtype)
    b0 = np.array([-0.0, 0.0, 0.0, -0.0] * 2500, dtype=dtype)
    expected = uf(a0, b0)
    with npvk_enabled(min_bytes=0):
        delta = StatsDelta()
        actual = uf(_copy(a0), _copy(b0))
        assert delta.device_ops > 0
    assert_same(actual, expected)
