"""Shared helpers of npvk's Python test suite.

Every comparison in this suite runs the same NumPy code twice in one test:
once on NumPy's own path (npvk disabled, on private copies of the inputs) and
once with npvk enabled (``min_bytes=0`` unless a test says otherwise, so every
array is managed memory and every replaced loop is eligible for the device).
"""

import contextlib
import hashlib
import itertools
import os
import signal
import subprocess
import sys
import zlib

import numpy as np

import npvk
from npvk import _native
from npvk._numpy import NUMPY2, VERSION as NUMPY_VERSION  # noqa: F401 (for the tests)
from npvk._numpy import umath as np_umath  # noqa: F401 (numpy.core or numpy._core)

# Loops that npvk leaves to NumPy under the running NumPy, which computes them
# differently from earlier versions and from the device: {(ufunc, types):
# the fallback reason counted}. docs/architecture.md, "NumPy versions".
VERSION_FALLBACKS = {
    ("nextafter", "ee->e"): "float16 nextafter of NumPy 2.5",
} if NUMPY_VERSION >= (2, 5) else {}

# ---------------------------------------------------------------------------
# Paths

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
# The directory that holds the npvk package (build/python): subprocesses get
# it on PYTHONPATH, and the autoload tests use it as a site directory.
NPVK_PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(npvk.__file__)))
# Subprocesses run the interpreter (and so the NumPy) the suite runs under.
PYTHON = sys.executable



def libnpvk():
    """ctypes handle of the libnpvk that npvk._native loaded (libnpvk.so.1 in
    a Unix-prefix install or the build tree, libnpvk.so beside it in a wheel)."""
    import ctypes

    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libnpvk.so"):
                return ctypes.CDLL(path)
    raise AssertionError("libnpvk is not loaded")


# ---------------------------------------------------------------------------
# Enabling and counting


@contextlib.contextmanager
def npvk_enabled(min_bytes=0):
    """npvk on for the block; off again afterwards, whatever happens."""
    assert not npvk.is_enabled(), "a test must start with npvk disabled"
    npvk.enable(min_bytes=min_bytes)
    try:
        yield
    finally:
        npvk.disable()


def run_both_stats(fn, *arrays):
    """fn(*arrays) on NumPy's path (on copies) and with npvk (on managed
    copies): (actual, expected, {"fallbacks": by ufunc and reason,
    "device_ops", "dispatches"} of the npvk run)."""
    expected = fn(*[a.copy() for a in arrays])
    with npvk_enabled(min_bytes=0):
        device = [np.array(a) for a in arrays]
        delta = StatsDelta()
        actual = fn(*device)
        npvk.sync()
        counted = {"fallbacks": delta.fallback_table(), "device_ops": delta.device_ops,
                   "dispatches": delta.get("dispatches")}
    return actual, expected, counted


def numpy_error(fn, *arrays):
    """The exception fn(*arrays) raises on NumPy's path (on copies), or None:
    what raises differs between NumPy versions (NEP 50's out-of-range
    Python ints, say), and npvk must raise the same."""
    try:
        fn(*[a.copy() for a in arrays])
    except Exception as exc:  # noqa: BLE001 (any error NumPy raises)
        return exc
    return None


def assert_raises_like_numpy(error, fn, *arrays):
    """fn(*arrays) with npvk (on managed copies) raises `error`'s type and
    message."""
    with npvk_enabled(min_bytes=0):
        try:
            fn(*[np.array(a) for a in arrays])
        except type(error) as exc:
            assert str(exc) == str(error)
        else:
            raise AssertionError(f"npvk raised nothing where NumPy raised {error!r}")


def run_both_warned(fn, *arrays):
    """fn(*arrays) on NumPy's path and with npvk (min_bytes=0, managed
    copies), each recording its warnings, which must be the same:
    (actual, expected, StatsDelta of the npvk run)."""
    import warnings

    with warnings.catch_warnings(record=True) as numpy_warnings:
        warnings.simplefilter("always")
        expected = fn(*[a.copy() for a in arrays])
    with npvk_enabled(min_bytes=0):
        device = [np.array(a) for a in arrays]
        delta = StatsDelta()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            actual = fn(*device)
            actual = [np.array(a) for a in actual] if isinstance(actual, list) else np.array(actual)
            npvk.sync()
        delta.stop()
    assert [str(w.message) for w in seen] == [str(w.message) for w in numpy_warnings]
    return actual, expected, delta


def run_both_counted(fn, *arrays):
    """As run_both_stats: (actual, expected, fallbacks, device ops)."""
    actual, expected, counted = run_both_stats(fn, *arrays)
    return actual, expected, counted["fallbacks"], counted["device_ops"]


class StatsDelta:
    """What npvk counted between construction and now (without reset_stats,
    which would also zero the validation-message count the suite checks)."""

    def __init__(self):
        self.start = npvk.stats()
        self.end = None

    def now(self):
        return self.end if self.end is not None else npvk.stats()

    def stop(self):
        """Counts up to now from here on (npvk may be disabled later)."""
        self.end = npvk.stats()
        return self

    @property
    def device_ops(self):
        return self.now()["ops_on_device"] - self.start["ops_on_device"]

    def fallbacks(self, ufunc=None, reason=None):
        """Fallbacks since the start, for one ufunc and/or one reason."""
        total = 0
        before = self.start.get("ops_fallback", {})
        for name, reasons in self.now().get("ops_fallback", {}).items():
            if ufunc is not None and name != ufunc:
                continue
            for why, count in reasons.items():
                if reason is not None and why != reason:
                    continue
                total += count - before.get(name, {}).get(why, 0)
        return total

    def fallback_table(self):
        before = self.start.get("ops_fallback", {})
        out = {}
        for name, reasons in self.now().get("ops_fallback", {}).items():
            for why, count in reasons.items():
                d = count - before.get(name, {}).get(why, 0)
                if d:
                    out.setdefault(name, {})[why] = d
        return out

    def get(self, key, sub=None):
        a, b = self.start.get(key, 0), self.now().get(key, 0)
        if sub is not None:
            a, b = a.get(sub, 0) if isinstance(a, dict) else 0, b.get(sub, 0)
        return b - a


# ---------------------------------------------------------------------------
# The accelerated loops, derived exactly as npvk/__init__.py's _replace_loops
# does: npvk's op table crossed with each NumPy ufunc's .types.


def _npvk_dtype(char):
    return npvk._npvk_dtype(char)


def candidate_loops():
    """[(ufunc name, 'ab->c')] that _replace_loops offers to the native side,
    with repetitions (NumPy lists some signatures twice, e.g. sqrt 'f->f')."""
    loops = []
    for _opcode, op_name, nin, nout, implemented in _native.op_table():
        # radians/degrees: separate ufuncs with deg2rad/rad2deg's loops
        for name in (op_name,) + npvk._ALIASES.get(op_name, ()):
            # np.where is a function; npvk runs it through a ufunc of its own.
            ufunc = _native.where_ufunc() if name == "where" else npvk._ufunc_named(name)
            if not implemented or not isinstance(ufunc, np.ufunc):
                continue
            if ufunc.nin != nin or ufunc.nout != nout:
                continue
            for types in ufunc.types:
                chars = types.replace("->", "")
                if any(_npvk_dtype(c) is None for c in chars):
                    continue
                loops.append((name, types))
    return loops


_FLOAT_ONLY_PREDICATES = ("signbit",)


def documented_supported(name, types):
    """Whether docs/ops.md says npvk runs this loop: signbit takes floats
    only (NumPy 1.24 has no float16 float_power loop to offer)."""
    if name in _FLOAT_ONLY_PREDICATES and types[0] not in "efd":
        return False
    return True


def unique(seq):
    seen, out = set(), []
    for item in seq:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


CANDIDATE_LOOPS = candidate_loops()
ACCELERATED_LOOPS = unique(l for l in CANDIDATE_LOOPS if documented_supported(*l))
UNACCELERATED_LOOPS = unique(l for l in CANDIDATE_LOOPS if not documented_supported(*l))
# One replacement per distinct signature (NumPy lists some twice, e.g. sqrt
# 'f->f'; replacing those twice chained two trampolines and counted every
# fallback twice, fixed after commit 638c1f8).
EXPECTED_LOOPS_REPLACED = len(ACCELERATED_LOOPS)

# docs/ops.md, "Accuracy": exp and log are within 1 ULP of glibc in float64;
# float power is exp(y*log(x)) in double-double (tests allow 2 ULP); float32
# transcendentals are computed in float64 and rounded once, while NumPy's own
# float32 SIMD loops are within 1-4 ULP, so 2 ULP against NumPy is allowed.
# Everything else must be bit-identical.
TRANSCENDENTAL = {"exp", "log", "power", "float_power"}
# The float64 math library's other functions are within 1 ULP of the correctly
# rounded result (docs/accuracy.md); NumPy's own loops (glibc, and its float32
# SIMD loops) are up to ~3 ULP from it, so 4 ULP against NumPy is allowed.
MATH_LIBRARY = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh",
                "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "exp2", "expm1", "log2",
                "log10", "log1p", "cbrt"}
# NumPy evaluates logaddexp's formula in the loop's type and loses many ULP
# where max(x, y) and the log1p term cancel (max(x, y) in (-1, 0)); npvk keeps
# that sum in double-double (docs/accuracy.md). Operand values avoid that
# region, where the results only cancel by a factor of a few.
CANCELLING = {"logaddexp", "logaddexp2"}


def ulp_tolerance(name, types):
    if types[-1] == "e":
        # float16 rounds the float32 result: where npvk's and NumPy's float32
        # results straddle a float16 rounding boundary, 1 float16 ULP.
        return 1 if name in TRANSCENDENTAL | MATH_LIBRARY | CANCELLING else 0
    if types[-1] not in "fd":
        return 0
    if name in TRANSCENDENTAL:
        return 2
    if name in MATH_LIBRARY:
        return 4
    if name in CANCELLING:
        return 8
    return 0


def split_types(types):
    ins, outs = types.split("->")
    return list(ins), list(outs)


# ---------------------------------------------------------------------------
# Operand values


def rng_for(*key):
    seed = zlib.crc32(repr(key).encode())
    return np.random.default_rng(seed)


def _int_specials(dt):
    info = np.iinfo(dt)
    vals = [0, 1, 2, 3, 7, info.max, info.max - 1, info.max // 2 + 1]
    if info.min < 0:
        vals += [-1, -2, -3, -7, info.min, info.min + 1]
    return vals


def _float_specials(dt):
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 7.0, -7.0,
            np.inf, -np.inf, np.nan, 1e-3, -1e-3, 1e30, -1e30]
    if dt == np.float64:
        # Extremes of float64. (float32 extremes are left out: lavapipe may
        # flush float32 subnormals, docs/ops.md "Denormal numbers", and
        # pairs like 0.5 / FLT_MAX would produce them.)
        fi = np.finfo(np.float64)
        vals += [fi.max, -fi.max, fi.tiny, -fi.tiny, 1e300, -1e300]
    return vals


def _pair_prefix(specials_a, specials_b):
    """Every combination of the two special-value lists, as two columns."""
    a = [x for x in specials_a for _ in specials_b]
    b = [y for _ in specials_a for y in specials_b]
    return a, b


def _random_ints(rng, dt, n, lo=None, hi=None):
    info = np.iinfo(dt)
    lo = info.min if lo is None else max(lo, info.min)
    hi = info.max if hi is None else min(hi, info.max)
    wide = np.uint64 if hi >= 2**63 else np.int64
    mix = rng.integers(lo, hi, size=n, endpoint=True, dtype=wide).astype(dt)
    small = rng.integers(max(lo, -20), min(hi, 20), size=n, endpoint=True).astype(dt)
    pick = rng.random(n) < 0.3
    return np.where(pick, small, mix)


def _random_floats(rng, dt, n):
    mag = 10.0 ** rng.uniform(-3, 3, n)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    general = sign * mag
    integral = np.round(rng.uniform(-50, 50, n))
    halves = np.round(rng.uniform(-50, 50, n)) + 0.5
    kind = rng.integers(0, 4, n)
    out = np.where(kind == 0, integral, np.where(kind == 1, halves, general))
    return out.astype(dt)


def operand_values(name, types, n, key=()):
    """n values for each input of loop (name, types): random values, with
    every combination of the special values of each input at the front."""
    with np.errstate(all="ignore"):  # 1e30 overflows float16 to inf: intended
        return _operand_values(name, types, n, key)


def _operand_values(name, types, n, key):
    ins, _ = split_types(types)
    rng = rng_for(name, types, n, key)
    dts = [np.dtype(c) for c in ins]
    cols = []
    for pos, dt in enumerate(dts):
        if dt == np.bool_:
            cols.append(rng.integers(0, 2, n).astype(bool))
        elif dt.kind in "iu":
            bits = dt.itemsize * 8
            if name == "power" and pos == 1:
                cols.append(_random_ints(rng, dt, n, 0, 2 * bits))
            elif name == "power" and pos == 0:
                cols.append(_random_ints(rng, dt, n))
            elif name in ("left_shift", "right_shift") and pos == 1:
                vals = _random_ints(rng, dt, n, -(bits + 4), bits + 4)
                cols.append(vals)
            else:
                cols.append(_random_ints(rng, dt, n))
        else:
            if name == "exp":
                lo, hi = (-87.0, 88.0) if dt == np.float32 else (-700.0, 700.0)
                cols.append(rng.uniform(lo, hi, n).astype(dt))
            elif name == "log":
                lo, hi = (-30, 30) if dt == np.float32 else (-300, 300)
                cols.append((10.0 ** rng.uniform(lo, hi, n)).astype(dt))
            elif name == "power" and pos == 0:
                base = 10.0 ** rng.uniform(-1.5, 1.5, n)
                neg = rng.random(n) < 0.25
                cols.append(np.where(neg, -base, base).astype(dt))
            elif name in CANCELLING:
                # Negative values at most -2: no max(x, y) near (-1, 0), where
                # the result cancels and NumPy's own error grows without bound
                # (docs/accuracy.md).
                v = _random_floats(rng, dt, n)
                cols.append(np.where(v < 0, v - 2, v).astype(dt))
            elif name == "power" and pos == 1:
                expo = rng.uniform(-8, 8, n)
                integral = rng.random(n) < 0.3
                cols.append(np.where(integral, np.round(expo), expo).astype(dt))
            else:
                cols.append(_random_floats(rng, dt, n))
    # Special values: every combination at the front (binary ops), or the
    # specials themselves (unary ops).
    specials = []
    for pos, dt in enumerate(dts):
        if dt == np.bool_:
            specials.append([False, True])
        elif dt.kind in "iu":
            s = _int_specials(dt)
            if name == "power" and pos == 1:
                s = [0, 1, 2, 3, 7, 31, 63]
            elif name in ("left_shift", "right_shift") and pos == 1:
                bits = dt.itemsize * 8
                s = [0, 1, bits - 1, bits, bits + 1, 2 * bits]
                if dt.kind == "i":
                    s += [-1, -bits]
            specials.append(s)
        else:
            s = _float_specials(dt)
            if name == "exp" and dt == np.float32:
                s = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 100.0, -200.0, 88.5]
            elif name == "exp":
                s = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 709.0, 710.0, -800.0]
            elif name in CANCELLING:
                s = [v for v in s if not -1 < v < 0]  # see the random values
            specials.append(s)
    if len(dts) == 1:
        prefix = [specials[0]]
    elif len(dts) == 2:
        prefix = list(_pair_prefix(specials[0], specials[1]))
    else:  # clip: every combination of x, lo and hi
        prefix = [list(c) for c in zip(*itertools.product(*specials))]
    k = min(n, len(prefix[0]))
    out = []
    for col, pre, dt in zip(cols, prefix, dts):
        col = col.copy()
        col[:k] = np.array(pre[:k], dtype=dt)
        out.append(col)
    return out


def scalar_value(name, types, pos):
    """A Python scalar for input `pos` that keeps NumPy 1.24's value-based
    casting on the same loop (same kind, in the range of the dtype)."""
    ins, _ = split_types(types)
    dt = np.dtype(ins[pos])
    if dt == np.bool_:
        return True
    if dt.kind in "iu":
        if name in ("power", "left_shift", "right_shift") and pos == 1:
            return 3
        if dt.kind == "u":
            return 7
        return -7
    if name == "power":
        return 1.5 if pos == 0 else 2.5
    return -2.5


# ---------------------------------------------------------------------------
# Comparison


def _ulp_distance(a_bits, e_bits, nbits):
    """Units in the last place between floats given as unsigned bit patterns."""
    sign = np.uint64(1) << np.uint64(nbits - 1)
    a = a_bits.astype(np.uint64)
    e = e_bits.astype(np.uint64)
    am, em = a & (sign - np.uint64(1)), e & (sign - np.uint64(1))
    same = (a & sign) == (e & sign)
    return np.where(same, np.maximum(am, em) - np.minimum(am, em), am + em)


def _describe(actual, expected, bad, limit=8):
    idx = np.flatnonzero(bad)[:limit]
    a = actual.reshape(-1)
    e = expected.reshape(-1)
    rows = [f"  [{i}] npvk={a[i]!r} numpy={e[i]!r}" for i in idx]
    return f"{int(bad.sum())} of {bad.size} elements differ:\n" + "\n".join(rows)


def assert_same(actual, expected, ulps=0, context="", signed_zeros=True):
    """Bit-exact equality (NaNs equal to NaNs, any payload; signed zeros
    distinguished unless signed_zeros=False), or within `ulps` units in the
    last place for floats."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    where = f" ({context})" if context else ""
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}{where}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}{where}"
    if actual.dtype.kind == "f":
        a = actual.reshape(-1)
        e = expected.reshape(-1)
        an, en = np.isnan(a), np.isnan(e)
        bad = an != en
        uint = np.dtype(f"u{a.dtype.itemsize}")
        ab = a.view(uint)
        eb = e.view(uint)
        if ulps == 0:
            bad |= ~an & ~en & (ab != eb)
        else:
            dist = _ulp_distance(ab, eb, a.dtype.itemsize * 8)
            finite = np.isfinite(a) & np.isfinite(e)
            # Infinities must match exactly; finite values within `ulps`.
            bad |= ~an & ~en & ((~finite & (ab != eb)) | (finite & (dist > ulps)))
        if not signed_zeros:
            bad &= ~((a == 0) & (e == 0))
        assert not bad.any(), _describe(actual, expected, bad.reshape(actual.shape)) + where
    else:
        bad = actual != expected
        assert not np.any(bad), _describe(actual, expected, np.asarray(bad)) + where


# ---------------------------------------------------------------------------
# Subprocesses


def subprocess_env(**extra):
    env = dict(os.environ)
    paths = [NPVK_PYTHON_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(unique(paths))
    env.pop("NPVK", None)
    env.pop("NPVK_MIN_BYTES", None)
    env.pop("NPVK_STATS", None)
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_python(args, env=None, timeout=120, cwd=None, input=None):
    """Runs the suite's Python with `args` in its own process group; on a
    timeout the whole group (forked children included) is killed."""
    proc = subprocess.Popen([PYTHON] + list(args), env=env or subprocess_env(), cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            start_new_session=True, text=True)
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"timed out after {timeout} s\nstdout:\n{out}\nstderr:\n{err}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def digest(arr):
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def read_all(fd):
    """Reads a file descriptor to its end (one end of a pipe, say)."""
    parts = []
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            return b"".join(parts)
        parts.append(b)
