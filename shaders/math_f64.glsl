// math_f64.glsl -- float64 exp / log / pow / fmod for npvk's GLSL compute shaders.
//
// Textually included after the npvk prelude (#version 460 +
// GL_EXT_shader_explicit_arithmetic_types[_int64] + GL_EXT_buffer_reference).
// Declares no main() and no descriptor bindings. It needs ONE macro from the
// code generator: NPVK_F64_TABLES, an expression giving the uint64_t device
// address of a read-only buffer that holds npvk::math_f64_table_data()
// (shaders/math_f64_tables.cpp; npvk kernels: `#define NPVK_F64_TABLES
// pc.tables`). The file declares the buffer_reference type NpvkF64Table for it.
//
// Public functions:
//   double npvk_exp_f64(double x);            // <= 1 ulp vs glibc exp
//   double npvk_log_f64(double x);            // <= 1 ulp vs glibc log
//   double npvk_pow_f64(double x, double y);  // C99 Annex F special cases, <= 2 ulp
//                                             // (measured <= 1 ulp vs glibc pow)
//   double npvk_fmod_f64(double x, double y); // exact (bit-identical to C fmod)
//   float  npvk_fmod_f32(float x, float y);   // exact (bit-identical to C fmodf);
//                                             // uses no double/int64 at all
// Everything else (npvk_f64_* functions, NPVK_F64_* macros, struct
// npvk_f64x2) is internal and reserved. The f64 functions need the Vulkan
// features shaderFloat64 and shaderInt64 (and bufferDeviceAddress for the
// tables). Only exp/log/pow read the tables; glslang drops uncalled
// functions, so a shader that calls only fmod never touches NPVK_F64_TABLES.
// Accuracy is checked on the host by math_test/ (see its README.md).
//
// Optional macro: NPVK_F64_USE_FMA -- if defined before inclusion, the exact
// products of the double-double steps use fma(). Leave it UNDEFINED for Mesa
// lavapipe/llvmpipe: its NIR options set lower_ffma64, i.e. GLSL fma() on
// doubles is split into an (unfused) multiply and add there, and the Vulkan
// spec only requires fma() to be as accurate as a*b+c. The default path uses
// Dekker/Veltkamp splitting, which needs only correctly rounded * and +.
//
// Design notes
//  * Speed on SIMD-per-invocation drivers (llvmpipe/lavapipe): the tables live
//    in a device buffer, not in GLSL constant arrays -- a dynamically indexed
//    `const double t[128]` is materialised in every invocation's private
//    memory on every call there (measured: log 600-1000 ns/element instead of
//    ~15). A table read from the buffer costs ~0.75 ns/element on lavapipe.
//    llvmpipe also runs both sides of every branch under a lane mask (measured:
//    a branch that no lane takes still costs its full price), so rare-case
//    code is paid for on every call; keep it small.
//  * No fma(), frexp() or ldexp() is relied upon; exponent work is done on the
//    bit patterns (doubleBitsToUint64/uint64BitsToDouble), so subnormal inputs
//    and outputs are exact even if the driver flushes subnormal arithmetic
//    (shaderDenormPreserveFloat64 = false): subnormal results are assembled
//    from integer bits, never produced by a multiplication.
//  * Every double local whose rounding matters is `precise` (SPIR-V
//    NoContraction) so the driver neither contracts a*b+c into fma nor
//    re-associates the error-free transformations.
//  * Double literals carry the LF suffix (GLSL double literal). The C++ host
//    checker (math_test/) compiles this same file with a literal operator for
//    LF and `#define precise`.
//  * exp: x = k*ln2/32 + r (Cody-Waite, 36-bit ln2/32 hi part), |r| <= 0.0109,
//    exp(x) = 2^(k/32) * (1 + expm1(r)), 2^(j/32) as a double-double table,
//    degree-7 Taylor polynomial; subnormal results rounded once via 1+v.
//  * log: x = 2^k * z, z in [0.6875, 1.375), 128-entry table of invc (8-bit
//    multiples of 2^-7, so r = z*invc - 1 is exact) and -log(invc) in
//    double-double; log1p(r) by degree-10 Taylor; result returned as a
//    double-double with ~2^-67 relative error (used by pow).
//  * pow: |x|^y = exp(y*log|x|) with log in double-double, the product y*log
//    as double-double (exact product), and exp of a double-double argument.
//  * fmod: exact integer long division on the 53-bit significands, up to
//    11+ quotient bits per step (r = (r << s) % my), result assembled from bits
//    (worst case |x|/|y| ~ 2^2098: ~190 steps of a 64-bit %). The float32
//    version does the same with 32-bit integers (<= ~35 steps).

#ifndef NPVK_MATH_F64_GLSL
#define NPVK_MATH_F64_GLSL

// Tables: read from a device buffer of doubles (npvk::math_f64_table_data(),
// shaders/math_f64_tables.cpp) whose address is NPVK_F64_TABLES, at the
// NPVK_F64_TAB_* offsets below (see the design notes for why not constant
// arrays).
#ifdef __cplusplus
// host checker (math_test/): the same data, linked from math_f64_tables.cpp
#define NPVK_F64_TAB(i) (npvk::math_f64_table_data()[i])
#else
#ifndef NPVK_F64_TABLES
#error "math_f64.glsl: define NPVK_F64_TABLES (uint64_t device address of npvk::math_f64_table_data()) first"
#endif
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer NpvkF64Table {
    double v[];
};
#define NPVK_F64_TAB(i) NpvkF64Table(NPVK_F64_TABLES).v[i]
#endif

#define NPVK_F64_SIGN_BITS 0x8000000000000000UL
#define NPVK_F64_ABS_BITS  0x7FFFFFFFFFFFFFFFUL
#define NPVK_F64_EXP_BITS  0x7FF0000000000000UL
#define NPVK_F64_MANT_BITS 0x000FFFFFFFFFFFFFUL
#define NPVK_F64_IMPL_BIT  0x0010000000000000UL
#define NPVK_F64_ONE_BITS  0x3FF0000000000000UL
#define NPVK_F64_QNAN_BITS 0x7FF8000000000000UL
#define NPVK_F64_LOG_OFF   0x3FE6000000000000UL
#define NPVK_F64_SHIFT     6755399441055744.0LF  // 1.5 * 2^52: round-to-int shifter
#define NPVK_F64_SPLIT     134217729.0LF         // 2^27 + 1: Veltkamp splitter

// ---- BEGIN GENERATED BY math_test/gen_tables.py (do not edit by hand) ----
#define NPVK_F64_EXP_INVL   4.61662413084468283841e+01LF  // 32/ln2
#define NPVK_F64_EXP_LHI    2.16608493924468348268e-02LF  // ln2/32, 36 bits
#define NPVK_F64_EXP_LLO    5.14560924465533821524e-14LF  // ln2/32 - LHI
#define NPVK_F64_LN2HI      6.93147180559890330187e-01LF  // ln2, 42 bits
#define NPVK_F64_LN2LO      5.49792301870837115524e-14LF  // ln2 - LN2HI
#define NPVK_F64_EXP_C2     5.00000000000000000000e-01LF  // 1/2!
#define NPVK_F64_EXP_C3     1.66666666666666657415e-01LF  // 1/3!
#define NPVK_F64_EXP_C4     4.16666666666666643537e-02LF  // 1/4!
#define NPVK_F64_EXP_C5     8.33333333333333321769e-03LF  // 1/5!
#define NPVK_F64_EXP_C6     1.38888888888888894189e-03LF  // 1/6!
#define NPVK_F64_EXP_C7     1.98412698412698412526e-04LF  // 1/7!
#define NPVK_F64_LOG_C3     3.33333333333333314830e-01LF  // +1/3
#define NPVK_F64_LOG_C4     (-2.50000000000000000000e-01LF)  // -1/4
#define NPVK_F64_LOG_C5     2.00000000000000011102e-01LF  // +1/5
#define NPVK_F64_LOG_C6     (-1.66666666666666657415e-01LF)  // -1/6
#define NPVK_F64_LOG_C7     1.42857142857142849213e-01LF  // +1/7
#define NPVK_F64_LOG_C8     (-1.25000000000000000000e-01LF)  // -1/8
#define NPVK_F64_LOG_C9     1.11111111111111104943e-01LF  // +1/9
#define NPVK_F64_LOG_C10    (-1.00000000000000005551e-01LF)  // -1/10
// Offsets (in doubles) into the table buffer; data: math_f64_tables.cpp
#define NPVK_F64_TAB_EXP     0  // 2^(j/32) = T[EXP + 2j] + T[EXP + 2j + 1], j = 0..31
#define NPVK_F64_TAB_LOG    64  // T[LOG + 3i] = invc_i (a multiple of 2^-7), -log(invc_i) = T[LOG + 3i + 1] + T[LOG + 3i + 2], i = 0..127
#define NPVK_F64_TAB_SIZE  448  // doubles in all
// ---- END GENERATED ----

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

struct npvk_f64x2 {
    double hi;
    double lo;
};

// 2^e as a double, for -1022 <= e <= 1023 (built from bits, no arithmetic).
double npvk_f64_pow2i(int e)
{
    return uint64BitsToDouble(uint64_t(e + 1023) << 52);
}

// Position of the most significant set bit of v, 1 <= v <= 2^53 (the
// integer->double conversion is exact in that range).
int npvk_f64_msb53(uint64_t v)
{
    return int(doubleBitsToUint64(double(v)) >> 52) - 1023;
}

// s + e == a + b exactly (Knuth TwoSum, any magnitudes).
npvk_f64x2 npvk_f64_two_sum(double a, double b)
{
    precise double s = a + b;
    precise double bb = s - a;
    precise double e = (a - (s - bb)) + (b - bb);
    return npvk_f64x2(s, e);
}

// s + e == a + b exactly, requires |a| >= |b| (or a == 0).
npvk_f64x2 npvk_f64_fast_two_sum(double a, double b)
{
    precise double s = a + b;
    precise double e = b - (s - a);
    return npvk_f64x2(s, e);
}

// p + e == a * b exactly (barring underflow). |a|,|b| < 2^995.
npvk_f64x2 npvk_f64_two_prod(double a, double b)
{
#ifdef NPVK_F64_USE_FMA
    precise double p = a * b;
    precise double e = fma(a, b, -p);
    return npvk_f64x2(p, e);
#else
    precise double ca = NPVK_F64_SPLIT * a;
    precise double ah = ca - (ca - a);
    precise double al = a - ah;
    precise double cb = NPVK_F64_SPLIT * b;
    precise double bh = cb - (cb - b);
    precise double bl = b - bh;
    precise double p = a * b;
    precise double e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
    return npvk_f64x2(p, e);
#endif
}

// ---------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------

// exp(xh + xl) for -746 <= xh <= 710, |xl| <= 2^-40 (xl is a small correction).
// Returns a non-negative double; overflows to +inf and rounds subnormal
// results once (built from bits, so flush-to-zero arithmetic does not matter).
double npvk_f64_exp_core(double xh, double xl)
{
    precise double z = xh * NPVK_F64_EXP_INVL;
    precise double kd = (z + NPVK_F64_SHIFT) - NPVK_F64_SHIFT;  // round(z)
    int k = int(kd);
    precise double rh = xh - kd * NPVK_F64_EXP_LHI;  // exact (Sterbenz)
    precise double rl = xl - kd * NPVK_F64_EXP_LLO;
    precise double r = rh + rl;                      // |r| <= ln2/64 + tiny
    int j = k & 31;
    int m = k >> 5;                                  // floor(k / 32)
    precise double r2 = r * r;
    precise double q = ((((NPVK_F64_EXP_C7 * r + NPVK_F64_EXP_C6) * r + NPVK_F64_EXP_C5) * r
                         + NPVK_F64_EXP_C4) * r + NPVK_F64_EXP_C3) * r + NPVK_F64_EXP_C2;
    precise double p = r + r2 * q;                   // expm1(r)
    double th = NPVK_F64_TAB(NPVK_F64_TAB_EXP + 2 * j);
    double tl = NPVK_F64_TAB(NPVK_F64_TAB_EXP + 2 * j + 1);
    precise double s = th * p + tl;                  // exp(x)/2^m = th + s
    if (m >= -1021) {
        precise double y = th + s;                   // in [0.98, 1.98]
        if (m > 1023) {
            precise double y2 = y * 2.0LF;
            precise double big = y2 * npvk_f64_pow2i(1023);  // may overflow to +inf
            return big;
        }
        precise double res = y * npvk_f64_pow2i(m);
        return res;
    }
    // m <= -1022: result is below (or just at) the normal range. Work with
    // v = result * 2^1022 = (th + s) * 2^(m+1022), v < 1 means subnormal.
    precise double sc = npvk_f64_pow2i(m + 1022);    // m + 1022 in [-56, 0]
    precise double vh = th * sc;                     // exact
    precise double vl = s * sc;                      // exact
    precise double v = vh + vl;
    if (v >= 1.0LF) {
        // normal result: v in [1, 2) rounded on the 2^-52 grid; scale by bits.
        return uint64BitsToDouble(doubleBitsToUint64(v) - (1022UL << 52));
    }
    // Subnormal: round vh + vl once on the 2^-52 grid by adding 1.
    precise double hi = 1.0LF + vh;
    precise double e = (1.0LF - hi) + vh;            // exact: 1 >= vh
    precise double w = hi + (e + vl);
    precise double f = w - 1.0LF;                    // exact, multiple of 2^-52 in [0, 1]
    precise double fi = f * 4503599627370496.0LF;    // * 2^52: integer <= 2^52
    return uint64BitsToDouble(uint64_t(fi));         // subnormal (or DBL_MIN) bits
}

double npvk_exp_f64(double x)
{
    uint64_t ix = doubleBitsToUint64(x);
    uint64_t ax = ix & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS) {
        if (ax > NPVK_F64_EXP_BITS)
            return x;                                 // NaN
        return (ix == NPVK_F64_EXP_BITS) ? x : 0.0LF; // exp(+inf)=inf, exp(-inf)=0
    }
    if (x > 710.0LF)
        return uint64BitsToDouble(NPVK_F64_EXP_BITS);
    if (x < -746.0LF)
        return 0.0LF;
    return npvk_f64_exp_core(x, 0.0LF);
}

// ---------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------

// log(x) as a double-double for x > 0 finite (normal or subnormal), given its
// bit pattern. Relative error of hi + lo is about 2^-67.
npvk_f64x2 npvk_f64_log_core(uint64_t ix)
{
    if (ix < NPVK_F64_IMPL_BIT) {
        // subnormal: ix == x * 2^1074 as an integer; convert exactly and
        // take 1074 off the exponent (the field may wrap; all modular).
        precise double d = double(ix);
        ix = doubleBitsToUint64(d) - (1074UL << 52);
    }
    // x = 2^k * z with z in [0.6875, 1.375); i = table index (top 7 bits).
    uint64_t tmp = ix - NPVK_F64_LOG_OFF;
    int i = int((tmp >> 45) & 127UL);
    int k = int(int64_t(tmp) >> 52);
    uint64_t iz = ix - (tmp & (0xFFFUL << 52));
    double z = uint64BitsToDouble(iz);
    double zh = uint64BitsToDouble(iz & 0xFFFFFFFFFFFFFF00UL);  // 45 significant bits
    precise double zl = z - zh;                      // exact, <= 8 bits
    double invc = NPVK_F64_TAB(NPVK_F64_TAB_LOG + 3 * i);  // <= 8 significant bits
    // r = z*invc - 1, exact: zh*invc and zl*invc are exact products,
    // zh*invc - 1 is exact (Sterbenz) and the final sum is representable.
    precise double r = (zh * invc - 1.0LF) + zl * invc;
    precise double kd = double(k);

    npvk_f64x2 r2 = npvk_f64_two_prod(r, r);        // r^2 exactly
    precise double ah = -0.5LF * r2.hi;
    precise double al = -0.5LF * r2.lo;
    precise double q = NPVK_F64_LOG_C9 + r * NPVK_F64_LOG_C10;
    q = NPVK_F64_LOG_C8 + r * q;
    q = NPVK_F64_LOG_C7 + r * q;
    q = NPVK_F64_LOG_C6 + r * q;
    q = NPVK_F64_LOG_C5 + r * q;
    q = NPVK_F64_LOG_C4 + r * q;
    q = NPVK_F64_LOG_C3 + r * q;
    precise double p = (r2.hi * r) * q;              // r^3/3 - r^4/4 + ...

    // k*ln2 + log(1/invc) + r - r^2/2 + p, big terms summed error-free.
    precise double a = kd * NPVK_F64_LN2HI;          // exact (42-bit LN2HI)
    npvk_f64x2 s1 = npvk_f64_two_sum(a, NPVK_F64_TAB(NPVK_F64_TAB_LOG + 3 * i + 1));
    npvk_f64x2 s2 = npvk_f64_two_sum(s1.hi, r);
    npvk_f64x2 s3 = npvk_f64_two_sum(s2.hi, ah);
    precise double lo = ((s1.lo + s2.lo) + s3.lo)
                      + (((kd * NPVK_F64_LN2LO + NPVK_F64_TAB(NPVK_F64_TAB_LOG + 3 * i + 2)) + al) + p);
    return npvk_f64_fast_two_sum(s3.hi, lo);
}

double npvk_log_f64(double x)
{
    uint64_t ix = doubleBitsToUint64(x);
    if (ix >= NPVK_F64_EXP_BITS) {                   // +inf, NaN, or sign bit set
        uint64_t ax = ix & NPVK_F64_ABS_BITS;
        if (ax > NPVK_F64_EXP_BITS || ix == NPVK_F64_EXP_BITS)
            return x;                                 // NaN, log(+inf) = +inf
        if (ax == 0UL)
            return uint64BitsToDouble(NPVK_F64_SIGN_BITS | NPVK_F64_EXP_BITS); // log(-0)
        return uint64BitsToDouble(NPVK_F64_QNAN_BITS);                       // x < 0
    }
    if (ix == 0UL)
        return uint64BitsToDouble(NPVK_F64_SIGN_BITS | NPVK_F64_EXP_BITS);   // log(+0)
    npvk_f64x2 l = npvk_f64_log_core(ix);
    return l.hi;
}

// ---------------------------------------------------------------------------
// pow
// ---------------------------------------------------------------------------

// Classify |y| (bits ay, finite or inf, nonzero): 0 = not an integer,
// 1 = odd integer, 2 = even integer (inf counts as even: "not odd").
int npvk_f64_yint(uint64_t ay)
{
    int e = int(ay >> 52);
    if (e < 1023)
        return 0;
    if (e > 1075)
        return 2;
    uint64_t m = (ay & NPVK_F64_MANT_BITS) | NPVK_F64_IMPL_BIT;
    int sh = 1075 - e;                               // 0 .. 52
    if ((m & ((1UL << sh) - 1UL)) != 0UL)
        return 0;
    return ((m >> sh) & 1UL) != 0UL ? 1 : 2;
}

double npvk_pow_f64(double x, double y)
{
    uint64_t ix = doubleBitsToUint64(x);
    uint64_t iy = doubleBitsToUint64(y);
    uint64_t ax = ix & NPVK_F64_ABS_BITS;
    uint64_t ay = iy & NPVK_F64_ABS_BITS;
    if (ay == 0UL)
        return 1.0LF;                                 // pow(x, +-0) = 1, even NaN x
    if (ix == NPVK_F64_ONE_BITS)
        return 1.0LF;                                 // pow(+1, y) = 1, even NaN y
    if (ax > NPVK_F64_EXP_BITS || ay > NPVK_F64_EXP_BITS)
        return uint64BitsToDouble(NPVK_F64_QNAN_BITS);
    bool xneg = ix != ax;
    bool yneg = iy != ay;
    if (ay == NPVK_F64_EXP_BITS) {                    // y = +-inf
        if (ax == NPVK_F64_ONE_BITS)
            return 1.0LF;                             // pow(-1, +-inf) = 1
        bool big = ax > NPVK_F64_ONE_BITS;
        return uint64BitsToDouble((big != yneg) ? NPVK_F64_EXP_BITS : 0UL);
    }
    int yint = npvk_f64_yint(ay);
    uint64_t sign = (xneg && yint == 1) ? NPVK_F64_SIGN_BITS : 0UL;
    if (ax == 0UL || ax == NPVK_F64_EXP_BITS) {       // x = +-0 or +-inf
        bool res_inf = (ax == 0UL) ? yneg : !yneg;
        return uint64BitsToDouble(sign | (res_inf ? NPVK_F64_EXP_BITS : 0UL));
    }
    if (xneg && yint == 0)
        return uint64BitsToDouble(NPVK_F64_QNAN_BITS); // negative ** non-integer
    if (ax == NPVK_F64_ONE_BITS)
        return uint64BitsToDouble(sign | NPVK_F64_ONE_BITS); // (-1)^integer
    if (iy == 0x4000000000000000UL && ax >= 0x2000000000000000UL) {
        // y == 2 (x**2, common): x*x is correctly rounded, the same as NumPy's
        // square fast path; only for |x| >= 2^-511 so the product is never
        // subnormal (exact under flush-to-zero too).
        precise double sq = x * x;
        return sq;
    }
    // finite x != 0, finite y != 0: |x|^y = exp(y * log|x|)
    npvk_f64x2 l = npvk_f64_log_core(ax);
    precise double zh = y * l.hi;
    if (zh > 710.0LF)
        return uint64BitsToDouble(sign | NPVK_F64_EXP_BITS);
    if (zh < -746.0LF)
        return uint64BitsToDouble(sign);
    // here |y| <= 746 / |log x| < 2^63, so the exact product cannot overflow
    npvk_f64x2 pr = npvk_f64_two_prod(y, l.hi);
    precise double zl = pr.lo + y * l.lo;
    double res = npvk_f64_exp_core(pr.hi, zl);
    return uint64BitsToDouble(sign | doubleBitsToUint64(res));
}

// ---------------------------------------------------------------------------
// fmod
// ---------------------------------------------------------------------------

double npvk_fmod_f64(double x, double y)
{
    uint64_t ux = doubleBitsToUint64(x);
    uint64_t uy = doubleBitsToUint64(y);
    uint64_t sx = ux & NPVK_F64_SIGN_BITS;
    uint64_t ax = ux & NPVK_F64_ABS_BITS;
    uint64_t ay = uy & NPVK_F64_ABS_BITS;
    if (ay == 0UL || ax >= NPVK_F64_EXP_BITS || ay > NPVK_F64_EXP_BITS)
        return uint64BitsToDouble(NPVK_F64_QNAN_BITS); // y == 0, x inf/NaN, y NaN
    if (ax < ay)
        return x;                                     // |x| < |y| (incl. y = inf, x = +-0)
    if (ax == ay)
        return uint64BitsToDouble(sx);                // +-0 with the sign of x
    // |x| = mx * 2^(ex - 1075), |y| = my * 2^(ey - 1075); ex >= ey here.
    int ex = int(ax >> 52);
    int ey = int(ay >> 52);
    uint64_t mx = ax & NPVK_F64_MANT_BITS;
    uint64_t my = ay & NPVK_F64_MANT_BITS;
    if (ex == 0) ex = 1; else mx |= NPVK_F64_IMPL_BIT;
    if (ey == 0) ey = 1; else my |= NPVK_F64_IMPL_BIT;
    int d = ex - ey;
    // Drop trailing zero bits of my (at most d of them) so more quotient
    // bits fit per step; |y| is unchanged.
    int t = min(npvk_f64_msb53(my & (0UL - my)), d);
    my >>= t;
    ey += t;
    d -= t;
    int chunk = 63 - npvk_f64_msb53(my);              // r < my, so r << chunk < 2^64
    // Long division: r = (mx * 2^d) mod my, exactly.
    uint64_t r = mx % my;
    while (d > 0 && r != 0UL) {
        int s = min(d, chunk);
        r = (r << s) % my;
        d -= s;
    }
    if (r == 0UL)
        return uint64BitsToDouble(sx);
    // result = r * 2^(ey - 1075): normalise r to 2^52 <= r < 2^53 unless the
    // exponent reaches the subnormal floor; the bit pattern is then
    // ((ey - 1) << 52) + r in both the normal and the subnormal case.
    int sh = min(52 - npvk_f64_msb53(r), ey - 1);
    r <<= sh;
    ey -= sh;
    return uint64BitsToDouble(sx | ((uint64_t(ey - 1) << 52) + r));
}

// fmod for float32 with the same exact integer long division on the 24-bit
// significands (32-bit integers only: a shader that uses just this function
// needs neither the Float64 nor the Int64 capability). Bit-identical to C fmodf.
float npvk_fmod_f32(float x, float y)
{
    uint ux = floatBitsToUint(x);
    uint uy = floatBitsToUint(y);
    uint sx = ux & 0x80000000u;
    uint ax = ux & 0x7FFFFFFFu;
    uint ay = uy & 0x7FFFFFFFu;
    if (ay == 0u || ax >= 0x7F800000u || ay > 0x7F800000u)
        return uintBitsToFloat(0x7FC00000u);          // y == 0, x inf/NaN, y NaN
    if (ax < ay)
        return x;
    if (ax == ay)
        return uintBitsToFloat(sx);
    int ex = int(ax >> 23);
    int ey = int(ay >> 23);
    uint mx = ax & 0x7FFFFFu;
    uint my = ay & 0x7FFFFFu;
    if (ex == 0) ex = 1; else mx |= 0x800000u;
    if (ey == 0) ey = 1; else my |= 0x800000u;
    int d = ex - ey;
    int t = min(findLSB(my), d);
    my >>= t;
    ey += t;
    d -= t;
    int chunk = 31 - findMSB(my);                     // r < my, so r << chunk < 2^32
    uint r = mx % my;
    while (d > 0 && r != 0u) {
        int s = min(d, chunk);
        r = (r << s) % my;
        d -= s;
    }
    if (r == 0u)
        return uintBitsToFloat(sx);
    int sh = min(23 - findMSB(r), ey - 1);
    r <<= sh;
    ey -= sh;
    return uintBitsToFloat(sx | ((uint(ey - 1) << 23) + r));
}

#endif // NPVK_MATH_F64_GLSL
