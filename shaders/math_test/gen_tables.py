#!/usr/bin/env python3
"""Generate the constants and tables used by shaders/math_f64.glsl.

Needs mpmath (dev-time only; the checker itself does not need it).

  python3 gen_tables.py          # print the GLSL constant/offset block
  python3 gen_tables.py --check  # verify math_f64.glsl's block and math_f64_tables.cpp
  python3 gen_tables.py --write  # rewrite both from the generator

The single source of truth for two files:
  * math_f64.glsl, between the BEGIN/END GENERATED markers: the scalar
    constants (polynomial coefficients, ln2 splits) and the NPVK_F64_TAB_*
    offsets of each table in the table buffer;
  * math_f64_tables.cpp (npvk::math_f64_table_data()): the table buffer's
    contents, which the runtime uploads and kernels read at NPVK_F64_TABLES.
    Hex-float literals, exact by construction.

Every GLSL literal is printed with 21 significant digits of the *exact* binary
value of the intended double, so it parses to that double in glslang (strtod)
and in the C++ host build (long double literal operator, see glsl_compat.hpp):
the decimal is within 2^-14 ulp of the double, so no double rounding can occur.
"""
import math
import os
import struct
import sys

import mpmath

mpmath.mp.prec = 300

EXP_N = 32          # exp table: 2^(j/32), j = 0..31
LOG_NBITS = 7       # log table: 128 subintervals of [0.6875, 1.375)
LOG_N = 1 << LOG_NBITS
LOG_OFF = 0x3FE6000000000000   # bits of 0.6875
INVC_FRAC_BITS = 7  # invc is a multiple of 2^-7 (<= 8 significant bits)
ATAN_N = 64         # atan table: atan(i/64), i = 0..64
PIO2_CHUNKS = 40    # 2/pi in 32-bit chunks: 1280 bits, for Payne-Hanek reduction


def lit(v):
    """GLSL double literal (LF suffix) with 21 significant digits."""
    v = float(v)
    if v == 0.0:
        return "0.0LF" if math.copysign(1.0, v) > 0 else "-0.0LF"
    if v == int(v) and abs(v) < 2**53:
        return "%d.0LF" % int(v) if v > 0 else "(%d.0LF)" % int(v)
    s = "%.20e" % v
    assert float(s) == v
    return s + "LF" if v > 0 else "(" + s + "LF)"


def round_bits(x, bits):
    """Round mpf x to a double with at most `bits` significant bits."""
    m, e = mpmath.frexp(x)           # x = m * 2^e, 0.5 <= |m| < 1
    scaled = mpmath.nint(m * 2**bits)
    return float(mpmath.ldexp(scaled, int(e) - bits))


def hi_lo(x):
    hi = float(x)
    lo = float(x - mpmath.mpf(hi))
    return hi, lo


def double_from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def log_table():
    invc, logc_hi, logc_lo = [], [], []
    one = mpmath.mpf(1)
    for i in range(LOG_N):
        # interval [a, b) of z covered by index i (see npvk_log_core)
        bits_a = LOG_OFF + (i << (52 - LOG_NBITS))
        bits_b = LOG_OFF + ((i + 1) << (52 - LOG_NBITS))
        a = mpmath.mpf(double_from_bits(bits_a & 0xFFFFFFFFFFFFFFFF))
        b = mpmath.mpf(double_from_bits(bits_b & 0xFFFFFFFFFFFFFFFF))
        if i == LOG_N - 1:
            b = mpmath.mpf(1.375)
        c = (a + b) / 2
        ic = float(mpmath.nint(2**INVC_FRAC_BITS / c) / 2**INVC_FRAC_BITS)
        # r = z*invc - 1 must be exactly representable for every double z in
        # [a, b): sufficient |r| < 2^-7 for z < 1 (z has ulp 2^-53) and
        # |r| < 2^-6 for z >= 1 (ulp 2^-52).
        lim = mpmath.mpf(2) ** (-7 if a < 1 else -6)
        for z in (a, b):
            assert abs(z * ic - 1) < lim, (i, float(z), ic)
        invc.append(ic)
        lc = -mpmath.log(mpmath.mpf(ic))
        h, l = hi_lo(lc)
        logc_hi.append(h)
        logc_lo.append(l)
    return invc, logc_hi, logc_lo


# Layout of the table buffer (doubles), see math_f64.glsl "Tables":
#   EXP: 2^(j/32) = T[EXP + 2j] + T[EXP + 2j + 1], j = 0..31
#   LOG: T[LOG + 3i] = invc_i, -log(invc_i) = T[LOG + 3i + 1] + T[LOG + 3i + 2], i = 0..127
def tables():
    exp_t = []
    for j in range(EXP_N):
        exp_t += hi_lo(mpmath.power(2, mpmath.mpf(j) / EXP_N))
    invc, lch, lcl = log_table()
    log_t = []
    for i in range(LOG_N):
        log_t += [invc[i], lch[i], lcl[i]]
    atan_t = []
    for i in range(ATAN_N + 1):
        atan_t += hi_lo(mpmath.atan(mpmath.mpf(i) / ATAN_N))
    # 2/pi = sum_j c_j 2^(-32 (j + 1)), c_j < 2^32 stored as exact doubles
    with mpmath.workprec(32 * PIO2_CHUNKS + 200):
        frac = 2 / mpmath.pi
        pio2_t = []
        for j in range(PIO2_CHUNKS):
            frac *= 2**32
            c = int(mpmath.floor(frac))
            frac -= c
            pio2_t.append(float(c))
    return [("EXP", exp_t, "2^(j/32) = T[EXP + 2j] + T[EXP + 2j + 1], j = 0..31"),
            ("LOG", log_t, "T[LOG + 3i] = invc_i (a multiple of 2^-7), "
                           "-log(invc_i) = T[LOG + 3i + 1] + T[LOG + 3i + 2], i = 0..127"),
            ("ATAN", atan_t, "atan(i/64) = T[ATAN + 2i] + T[ATAN + 2i + 1], i = 0..64"),
            ("IPIO2", pio2_t, "2/pi = sum of T[IPIO2 + j] * 2^(-32 (j + 1)), j = 0..39 "
                              "(32-bit integers)")]


def generate_glsl():
    ln2 = mpmath.log(2)
    out = []
    out.append(GLSL_BEGIN)
    # exp constants
    inv_l = float(EXP_N / ln2)
    l_hi = round_bits(ln2 / EXP_N, 36)          # k*l_hi exact for |k| < 2^17
    l_lo = float(ln2 / EXP_N - mpmath.mpf(l_hi))
    ln2_hi = round_bits(ln2, 42)                # k*ln2_hi exact for |k| < 2^11
    ln2_lo = float(ln2 - mpmath.mpf(ln2_hi))
    out.append("#define NPVK_F64_EXP_INVL   %s  // 32/ln2" % lit(inv_l))
    out.append("#define NPVK_F64_EXP_LHI    %s  // ln2/32, 36 bits" % lit(l_hi))
    out.append("#define NPVK_F64_EXP_LLO    %s  // ln2/32 - LHI" % lit(l_lo))
    out.append("#define NPVK_F64_LN2HI      %s  // ln2, 42 bits" % lit(ln2_hi))
    out.append("#define NPVK_F64_LN2LO      %s  // ln2 - LN2HI" % lit(ln2_lo))
    # Taylor coefficients
    for n in range(2, 8):
        out.append("#define NPVK_F64_EXP_C%d     %s  // 1/%d!" % (n, lit(1 / mpmath.factorial(n)), n))
    for n in range(3, 11):
        v = mpmath.mpf(1) / n * (1 if n % 2 else -1)
        out.append("#define NPVK_F64_LOG_C%-2d    %s  // %s1/%d" % (n, lit(v), "+" if n % 2 else "-", n))
    # constants of the functions built on exp/log (exp2, log2, log10, cbrt, ...)
    def pair(name, v, what):
        h, l = hi_lo(v)
        out.append("#define NPVK_F64_%-10s %s  // %s" % (name + "_HI", lit(h), what))
        out.append("#define NPVK_F64_%-10s %s  // %s - HI" % (name + "_LO", lit(l), name))
    pair("LN2", ln2, "ln2, nearest double")
    pair("INVLN2", 1 / ln2, "1/ln2")
    pair("INVLN10", 1 / mpmath.log(10), "1/ln10")
    pair("THIRD", mpmath.mpf(1) / 3, "1/3")
    pair("PIO2", mpmath.pi / 2, "pi/2")
    pair("PI", mpmath.pi, "pi")
    out.append("#define NPVK_F64_PIO4      %s  // pi/4" % lit(mpmath.pi / 4))
    out.append("#define NPVK_F64_3PIO4     %s  // 3pi/4" % lit(3 * mpmath.pi / 4))
    # trig argument reduction: 2/pi, and pi/2 in three 33-bit pieces (k * piece
    # exact for |k| < 2^20) plus the rest
    out.append("#define NPVK_F64_INV_PIO2   %s  // 2/pi" % lit(2 / mpmath.pi))
    rest = mpmath.pi / 2
    for n in range(1, 4):
        piece = round_bits(rest, 33)
        out.append("#define NPVK_F64_PIO2_%d     %s  // pi/2, 33-bit piece %d" % (n, lit(piece), n))
        rest -= mpmath.mpf(piece)
    out.append("#define NPVK_F64_PIO2_4     %s  // pi/2 - pieces 1..3" % lit(rest))
    # Taylor coefficients of sin (y^3..y^21) and cos (y^4..y^20) on |y| <= pi/4,
    # and of atan (t^3..t^13) on |t| <= 1/128
    for k in range(1, 11):
        v = (-1)**k / mpmath.factorial(2 * k + 1)
        out.append("#define NPVK_F64_SIN_S%-2d    %s  // %s1/%d!" % (k, lit(v), "-" if k % 2 else "+", 2 * k + 1))
    for k in range(2, 11):
        v = (-1)**k / mpmath.factorial(2 * k)
        out.append("#define NPVK_F64_COS_C%-2d    %s  // %s1/%d!" % (k, lit(v), "-" if k % 2 else "+", 2 * k))
    for k in range(1, 7):
        v = mpmath.mpf(-1)**k / (2 * k + 1)
        out.append("#define NPVK_F64_ATAN_T%-2d   %s  // %s1/%d" % (k, lit(v), "-" if k % 2 else "+", 2 * k + 1))
    out.append("// Offsets (in doubles) into the table buffer; data: math_f64_tables.cpp")
    off = 0
    for name, vals, what in tables():
        out.append("#define NPVK_F64_TAB_%-4s %4d  // %s" % (name, off, what))
        off += len(vals)
    out.append("#define NPVK_F64_TAB_SIZE %4d  // doubles in all" % off)
    out.append(GLSL_END)
    return "\n".join(out) + "\n"


def cpp_lit(v):
    """Exact C++ hex-float literal."""
    return float(v).hex()


def generate_cpp():
    out = [
        "// GENERATED by shaders/math_test/gen_tables.py -- do not edit by hand.",
        "// The constant tables of shaders/math_f64.glsl, which kernels read from a",
        "// device buffer at the address NPVK_F64_TABLES; the offsets are the",
        "// NPVK_F64_TAB_* macros in math_f64.glsl (same generator). Hex-float",
        "// literals, so every value is the exact intended double.",
        '#include "compile/math_tables.hpp"',
        "",
        "namespace npvk {",
        "",
        "const std::vector<double> &math_f64_table_data() {",
        "  static const std::vector<double> data = {",
    ]
    off = 0
    for name, vals, what in tables():
        out.append("      // NPVK_F64_TAB_%s = %d: %s" % (name, off, what))
        per = {"EXP": 2, "LOG": 3, "ATAN": 2, "IPIO2": 4}[name]
        for i in range(0, len(vals), per):
            out.append("      " + " ".join(cpp_lit(v) + "," for v in vals[i:i + per]))
        off += len(vals)
    out += [
        "  };",
        "  return data;",
        "}",
        "",
        "}  // namespace npvk",
    ]
    return "\n".join(out) + "\n"


GLSL_BEGIN = "// ---- BEGIN GENERATED BY math_test/gen_tables.py (do not edit by hand) ----"
GLSL_END = "// ---- END GENERATED ----"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    glsl_path = os.path.join(here, "..", "math_f64.glsl")
    cpp_path = os.path.join(here, "..", "math_f64_tables.cpp")
    block, cpp = generate_glsl(), generate_cpp()
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "--check":
        ok = True
        if block not in open(glsl_path).read():
            print("gen_tables --check: generated block NOT found in math_f64.glsl")
            ok = False
        if open(cpp_path).read() != cpp:
            print("gen_tables --check: math_f64_tables.cpp differs from the generator")
            ok = False
        if not ok:
            sys.exit(1)
        print("gen_tables --check: math_f64.glsl constants/offsets and math_f64_tables.cpp match the generator")
    elif mode == "--write":
        src = open(glsl_path).read()
        a, b = src.index(GLSL_BEGIN), src.index(GLSL_END) + len(GLSL_END) + 1
        open(glsl_path, "w").write(src[:a] + block + src[b:])
        open(cpp_path, "w").write(cpp)
        print("gen_tables --write: updated math_f64.glsl and math_f64_tables.cpp")
    else:
        sys.stdout.write(block)


if __name__ == "__main__":
    main()
