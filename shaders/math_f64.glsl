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
//   double npvk_f64_powi(double x, int n);    // x**n, 2 <= |n| <= 8, n constant:
//                                             // correctly rounded (normal results)
//   double npvk_f64_pow_half(double x);       // pow(x, 0.5)
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
#define NPVK_F64_LN2_HI     6.93147180559945286227e-01LF  // ln2, nearest double
#define NPVK_F64_LN2_LO     2.31904681384629955842e-17LF  // LN2 - HI
#define NPVK_F64_INVLN2_HI  1.44269504088896338700e+00LF  // 1/ln2
#define NPVK_F64_INVLN2_LO  2.03552737409310331110e-17LF  // INVLN2 - HI
#define NPVK_F64_INVLN10_HI 4.34294481903251816668e-01LF  // 1/ln10
#define NPVK_F64_INVLN10_LO 1.09831965021676507274e-17LF  // INVLN10 - HI
#define NPVK_F64_THIRD_HI   3.33333333333333314830e-01LF  // 1/3
#define NPVK_F64_THIRD_LO   1.85037170770859413132e-17LF  // THIRD - HI
#define NPVK_F64_PIO2_HI    1.57079632679489655800e+00LF  // pi/2
#define NPVK_F64_PIO2_LO    6.12323399573676603587e-17LF  // PIO2 - HI
#define NPVK_F64_PI_HI      3.14159265358979311600e+00LF  // pi
#define NPVK_F64_PI_LO      1.22464679914735320717e-16LF  // PI - HI
#define NPVK_F64_PIO4      7.85398163397448278999e-01LF  // pi/4
#define NPVK_F64_3PIO4     2.35619449019234483700e+00LF  // 3pi/4
#define NPVK_F64_INV_PIO2   6.36619772367581382433e-01LF  // 2/pi
#define NPVK_F64_PIO2_1     1.57079632673412561417e+00LF  // pi/2, 33-bit piece 1
#define NPVK_F64_PIO2_2     6.07710050630396597660e-11LF  // pi/2, 33-bit piece 2
#define NPVK_F64_PIO2_3     2.02226624871116645580e-21LF  // pi/2, 33-bit piece 3
#define NPVK_F64_PIO2_4     8.47842766036889956997e-32LF  // pi/2 - pieces 1..3
#define NPVK_F64_SIN_S1     (-1.66666666666666657415e-01LF)  // -1/3!
#define NPVK_F64_SIN_S2     8.33333333333333321769e-03LF  // +1/5!
#define NPVK_F64_SIN_S3     (-1.98412698412698412526e-04LF)  // -1/7!
#define NPVK_F64_SIN_S4     2.75573192239858925110e-06LF  // +1/9!
#define NPVK_F64_SIN_S5     (-2.50521083854417202239e-08LF)  // -1/11!
#define NPVK_F64_SIN_S6     1.60590438368216133409e-10LF  // +1/13!
#define NPVK_F64_SIN_S7     (-7.64716373181981640551e-13LF)  // -1/15!
#define NPVK_F64_SIN_S8     2.81145725434552059811e-15LF  // +1/17!
#define NPVK_F64_SIN_S9     (-8.22063524662432949554e-18LF)  // -1/19!
#define NPVK_F64_SIN_S10    1.95729410633912625952e-20LF  // +1/21!
#define NPVK_F64_COS_C2     4.16666666666666643537e-02LF  // +1/4!
#define NPVK_F64_COS_C3     (-1.38888888888888894189e-03LF)  // -1/6!
#define NPVK_F64_COS_C4     2.48015873015873015658e-05LF  // +1/8!
#define NPVK_F64_COS_C5     (-2.75573192239858882758e-07LF)  // -1/10!
#define NPVK_F64_COS_C6     2.08767569878681001866e-09LF  // +1/12!
#define NPVK_F64_COS_C7     (-1.14707455977297245073e-11LF)  // -1/14!
#define NPVK_F64_COS_C8     4.77947733238738525345e-14LF  // +1/16!
#define NPVK_F64_COS_C9     (-1.56192069685862252711e-16LF)  // -1/18!
#define NPVK_F64_COS_C10    4.11031762331216484407e-19LF  // +1/20!
#define NPVK_F64_ATAN_T1    (-3.33333333333333314830e-01LF)  // -1/3
#define NPVK_F64_ATAN_T2    2.00000000000000011102e-01LF  // +1/5
#define NPVK_F64_ATAN_T3    (-1.42857142857142849213e-01LF)  // -1/7
#define NPVK_F64_ATAN_T4    1.11111111111111104943e-01LF  // +1/9
#define NPVK_F64_ATAN_T5    (-9.09090909090909116141e-02LF)  // -1/11
#define NPVK_F64_ATAN_T6    7.69230769230769273470e-02LF  // +1/13
// Offsets (in doubles) into the table buffer; data: math_f64_tables.cpp
#define NPVK_F64_TAB_EXP     0  // 2^(j/32) = T[EXP + 2j] + T[EXP + 2j + 1], j = 0..31
#define NPVK_F64_TAB_LOG    64  // T[LOG + 3i] = invc_i (a multiple of 2^-7), -log(invc_i) = T[LOG + 3i + 1] + T[LOG + 3i + 2], i = 0..127
#define NPVK_F64_TAB_ATAN  448  // atan(i/64) = T[ATAN + 2i] + T[ATAN + 2i + 1], i = 0..64
#define NPVK_F64_TAB_IPIO2  578  // 2/pi = sum of T[IPIO2 + j] * 2^(-32 (j + 1)), j = 0..39 (32-bit integers)
#define NPVK_F64_TAB_SIZE  618  // doubles in all
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
    // m + 1022 is in [-56, 0] here. The clamp changes no result, but a SIMD
    // driver also runs this path, masked off, for lanes with larger m: their
    // unclamped scale would wrap into the sign bit and give subnormals,
    // which cost microcode assists on x86 (exp of positive x: 18.7 -> 11.4
    // ns per call on llvmpipe 22.3).
    precise double sc = npvk_f64_pow2i(min(m + 1022, 0));
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
// Double-double helpers for the functions below
// ---------------------------------------------------------------------------

// a - b exactly (the low part is the rounding error).
npvk_f64x2 npvk_f64_two_diff(double a, double b)
{
    precise double nb = -b;
    return npvk_f64_two_sum(a, nb);
}

// (a.hi + a.lo) + (b.hi + b.lo), about 2^-104 relative unless it cancels.
npvk_f64x2 npvk_f64_dd_add(npvk_f64x2 a, npvk_f64x2 b)
{
    npvk_f64x2 s = npvk_f64_two_sum(a.hi, b.hi);
    precise double lo = s.lo + (a.lo + b.lo);
    return npvk_f64_fast_two_sum(s.hi, lo);
}

npvk_f64x2 npvk_f64_dd_sub(npvk_f64x2 a, npvk_f64x2 b)
{
    precise double nh = -b.hi;
    precise double nl = -b.lo;
    return npvk_f64_dd_add(a, npvk_f64x2(nh, nl));
}

npvk_f64x2 npvk_f64_dd_mul(npvk_f64x2 a, npvk_f64x2 b)
{
    npvk_f64x2 p = npvk_f64_two_prod(a.hi, b.hi);
    precise double lo = p.lo + (a.hi * b.lo + a.lo * b.hi);
    return npvk_f64_fast_two_sum(p.hi, lo);
}

// a / b with one correction step (|b.hi| >= 2^-900, |a|/|b| < 2^995).
npvk_f64x2 npvk_f64_dd_div(npvk_f64x2 a, npvk_f64x2 b)
{
    precise double q = a.hi / b.hi;
    npvk_f64x2 p = npvk_f64_two_prod(q, b.hi);
    precise double r = (((a.hi - p.hi) - p.lo) + a.lo) - q * b.lo;
    precise double ql = r / b.hi;
    return npvk_f64_fast_two_sum(q, ql);
}

// sqrt(a) for a.hi > 0 (a < 2^995), one correction step.
npvk_f64x2 npvk_f64_dd_sqrt(npvk_f64x2 a)
{
    precise double s = sqrt(a.hi);
    npvk_f64x2 p = npvk_f64_two_prod(s, s);
    precise double r = ((a.hi - p.hi) - p.lo) + a.lo;
    precise double sl = r / (2.0LF * s);
    return npvk_f64_fast_two_sum(s, sl);
}

npvk_f64x2 npvk_f64_dd(double hi, double lo)
{
    return npvk_f64x2(hi, lo);
}

// log(hi + lo) for hi > 0 finite, |lo| <= ulp(hi): log(hi) + lo/hi.
npvk_f64x2 npvk_f64_log_dd(double hi, double lo)
{
    npvk_f64x2 l = npvk_f64_log_core(doubleBitsToUint64(hi));
    precise double c = l.lo + lo / hi;
    return npvk_f64_two_sum(l.hi, c);
}

double npvk_f64_nan()
{
    return uint64BitsToDouble(NPVK_F64_QNAN_BITS);
}

double npvk_f64_inf(bool negative)
{
    return uint64BitsToDouble((negative ? NPVK_F64_SIGN_BITS : 0UL) | NPVK_F64_EXP_BITS);
}

// |x| with the sign of s (bits).
double npvk_f64_with_sign(double x, double s)
{
    return uint64BitsToDouble((doubleBitsToUint64(x) & NPVK_F64_ABS_BITS) |
                              (doubleBitsToUint64(s) & NPVK_F64_SIGN_BITS));
}

bool npvk_f64_isnan(double x)
{
    return (doubleBitsToUint64(x) & NPVK_F64_ABS_BITS) > NPVK_F64_EXP_BITS;
}

// |x| < 2^e for -1022 <= e <= 1023, on the bits (subnormals included).
bool npvk_f64_below(double x, int e)
{
    return (doubleBitsToUint64(x) & NPVK_F64_ABS_BITS) < (uint64_t(e + 1023) << 52);
}

// x * 2^600 exactly for finite x >= 0, subnormals included: those are scaled
// from their integer bits, so a driver that flushes float64 subnormals in
// arithmetic still gets them right.
double npvk_f64_up600(double x)
{
    uint64_t ix = doubleBitsToUint64(x);
    precise double sub = double(ix) * 2.05013308946749534662e-143LF;   // bits * 2^-474
    precise double nor = x * npvk_f64_pow2i(600);
    return ix < NPVK_F64_IMPL_BIT ? sub : nor;
}

// v * 2^-600 for finite v >= 0; a subnormal result is assembled from its
// integer bits (v * 2^474 rounded to an integer), not produced by arithmetic
// that a flushing driver would zero. v is rounded twice then.
double npvk_f64_down600(double v)
{
    precise double nor = v * npvk_f64_pow2i(-600);
    precise double w = v * npvk_f64_pow2i(474);
    precise double wi = (w + 4503599627370496.0LF) - 4503599627370496.0LF;
    return npvk_f64_below(v, -422) ? uint64BitsToDouble(uint64_t(wi)) : nor;
}

// ---------------------------------------------------------------------------
// Powers with a fixed exponent (x**n, x**0.5): the code generator calls these
// when the exponent is a scalar known when the kernel is built (it is then part
// of the kernel's key), instead of the general exp(y*log|x|) of npvk_pow_f64.
// ---------------------------------------------------------------------------

// v * 2^k for 1/256 <= v < 512 and any k: exact while the result is normal,
// +inf past the largest double, and a subnormal result is assembled from bits
// by npvk_f64_down600 (rounded twice, as there).
double npvk_f64_scale2(double v, int k)
{
    precise double up = v * npvk_f64_pow2i(clamp(k, -1022, 1023));
    precise double big = up * npvk_f64_pow2i(clamp(k - 1023, 0, 1023));
    precise double low = v * npvk_f64_pow2i(clamp(k + 600, -1022, 1023));
    double tiny = npvk_f64_down600(low);
    return k < -1014 ? tiny : big;                   // below, v * 2^k may be subnormal
}

// x**n for an integer 2 <= |n| <= 8 (a constant at every call, so the loop
// unrolls): x = m * 2^e with m in [1, 2); m^|n| is a double-double product
// chain (about 2^-100 relative, so the one rounding of hi + lo is the correct
// one but for results that close to a midpoint), for n < 0 its reciprocal by
// one double-double division, and the power of two is applied exactly.
// Zeros, subnormal x (whose powers round to 0 or overflow), infinities and
// NaN take C99's results by selects, not branches (see the design notes).
double npvk_f64_powi(double x, int n)
{
    uint64_t ix = doubleBitsToUint64(x);
    uint64_t ax = ix & NPVK_F64_ABS_BITS;
    int e = int(ax >> 52) - 1023;
    double m = uint64BitsToDouble((ax & NPVK_F64_MANT_BITS) | NPVK_F64_ONE_BITS);
    int an = abs(n);
    npvk_f64x2 p = npvk_f64x2(m, 0.0LF);
    for (int b = (an >= 8 ? 3 : (an >= 4 ? 2 : 1)) - 1; b >= 0; --b) {
        p = npvk_f64_dd_mul(p, p);
        if (((an >> b) & 1) != 0)
            p = npvk_f64_dd_mul(p, npvk_f64x2(m, 0.0LF));
    }
    if (n < 0)
        p = npvk_f64_dd_div(npvk_f64x2(1.0LF, 0.0LF), p);
    precise double v = p.hi + p.lo;                  // in [1/256, 256]
    double r = npvk_f64_scale2(v, n * e);
    // +inf for x = +-inf and n > 0, and for x = +-0 or subnormal and n < 0
    bool big_result = (n > 0) == (ax == NPVK_F64_EXP_BITS);
    double edge = big_result ? npvk_f64_inf(false) : 0.0LF;
    r = (ax >= NPVK_F64_EXP_BITS || e == -1023) ? edge : r;
    r = ax > NPVK_F64_EXP_BITS ? x : r;              // NaN
    return (an & 1) != 0 ? npvk_f64_with_sign(r, x) : r;
}

// pow(x, 0.5): sqrt(x), but +0 at -0 and +inf at -inf as C99's pow gives. A
// positive subnormal x is scaled up from its bits first, so a driver that
// flushes float64 subnormals still gets its square root.
double npvk_f64_pow_half(double x)
{
    uint64_t ix = doubleBitsToUint64(x);
    uint64_t ax = ix & NPVK_F64_ABS_BITS;
    precise double s = sqrt(x);
    precise double sub = sqrt(npvk_f64_up600(uint64BitsToDouble(ax))) * npvk_f64_pow2i(-300);
    s = (ix < NPVK_F64_IMPL_BIT) ? sub : s;           // positive subnormal (or +0)
    s = (ix > NPVK_F64_SIGN_BITS) ? npvk_f64_nan() : s; // negative (a flushed -subnormal too)
    return ax == 0UL ? 0.0LF : (ax == NPVK_F64_EXP_BITS ? npvk_f64_inf(false) : s);
}

// ---------------------------------------------------------------------------
// exp2, expm1, log2, log10, log1p, logaddexp, logaddexp2, cbrt
// ---------------------------------------------------------------------------

double npvk_exp2_f64(double x)
{
    if (npvk_f64_isnan(x))
        return x;
    if (x >= 1024.0LF)
        return npvk_f64_inf(false);
    if (x < -1075.0LF)
        return 0.0LF;                                 // also exp2(-inf)
    // x*ln2 as a double-double: |x| <= 1075, so the low part is < 2^-43
    npvk_f64x2 p = npvk_f64_two_prod(x, NPVK_F64_LN2_HI);
    precise double lo = p.lo + x * NPVK_F64_LN2_LO;
    npvk_f64x2 h = npvk_f64_fast_two_sum(p.hi, lo);
    return npvk_f64_exp_core(h.hi, h.lo);
}

// exp(x) = 2^m * T_j * (1 + p) for -700 <= x <= 45, split for error-free sums:
// exp(x) = a + b.hi + b.lo + c, a = 2^m T_j exactly, b = 2^m T_j p exactly
// (p = expm1(r) to 2^-62 relative), c the small rest.
struct npvk_f64_exp_terms {
    double a;
    npvk_f64x2 b;
    double c;
};

npvk_f64_exp_terms npvk_f64_exp_split(double x)
{
    precise double z = x * NPVK_F64_EXP_INVL;
    precise double kd = (z + NPVK_F64_SHIFT) - NPVK_F64_SHIFT;
    int k = int(kd);
    precise double rh = x - kd * NPVK_F64_EXP_LHI;   // exact
    precise double rl = 0.0LF - kd * NPVK_F64_EXP_LLO;
    npvk_f64x2 r = npvk_f64_two_sum(rh, rl);
    int j = k & 31;
    int m = k >> 5;                                    // -1010 <= m <= 65
    precise double r2 = r.hi * r.hi;
    precise double q = ((((NPVK_F64_EXP_C7 * r.hi + NPVK_F64_EXP_C6) * r.hi + NPVK_F64_EXP_C5) * r.hi
                         + NPVK_F64_EXP_C4) * r.hi + NPVK_F64_EXP_C3) * r.hi + NPVK_F64_EXP_C2;
    precise double pl0 = r2 * q + r.lo * (1.0LF + r.hi);
    npvk_f64x2 p = npvk_f64_fast_two_sum(r.hi, pl0);  // expm1(r)
    double th = NPVK_F64_TAB(NPVK_F64_TAB_EXP + 2 * j);
    double tl = NPVK_F64_TAB(NPVK_F64_TAB_EXP + 2 * j + 1);
    double sc = npvk_f64_pow2i(m);
    precise double a = th * sc;                        // exact
    npvk_f64x2 b = npvk_f64_two_prod(th, p.hi);
    precise double c = (th * p.lo + tl + tl * p.hi) * sc;
    precise double bh = b.hi * sc;
    precise double bl = b.lo * sc;
    return npvk_f64_exp_terms(a, npvk_f64x2(bh, bl), c);
}

// exp(x) as a double-double for -700 <= x <= 45, about 2^-62 relative.
npvk_f64x2 npvk_f64_exp_dd(double x)
{
    npvk_f64_exp_terms t = npvk_f64_exp_split(x);
    npvk_f64x2 s = npvk_f64_two_sum(t.a, t.b.hi);
    precise double lo = (s.lo + t.b.lo) + t.c;
    return npvk_f64_fast_two_sum(s.hi, lo);
}

// expm1(x) as a double-double for |x| <= 45, relative error about 2^-62:
// 2^m T_j - 1 is summed error-free with the rest.
npvk_f64x2 npvk_f64_expm1_dd(double x)
{
    npvk_f64_exp_terms t = npvk_f64_exp_split(x);
    npvk_f64x2 s1 = npvk_f64_two_sum(t.a, -1.0LF);
    npvk_f64x2 s2 = npvk_f64_two_sum(s1.hi, t.b.hi);
    precise double lo = ((s1.lo + s2.lo) + t.b.lo) + t.c;
    return npvk_f64_fast_two_sum(s2.hi, lo);
}

double npvk_expm1_f64(double x)
{
    if (npvk_f64_isnan(x))
        return x;
    if (x > 40.0LF)
        return npvk_exp_f64(x);                       // exp(x) - 1 rounds to exp(x)
    if (x < -40.0LF)
        return -1.0LF;                                // -1 + exp(x) rounds to -1
    if (npvk_f64_below(x, -54))
        return x;                                     // +-0, subnormals, x + x^2/2 -> x
    return npvk_f64_expm1_dd(x).hi;
}

// NaN, +inf, zeros and negative x: log2, log10 give what log gives.
bool npvk_f64_log_special(double x)
{
    uint64_t ix = doubleBitsToUint64(x);
    return ix >= NPVK_F64_EXP_BITS || ix == 0UL;
}

double npvk_log2_f64(double x)
{
    if (npvk_f64_log_special(x))
        return npvk_log_f64(x);
    npvk_f64x2 l = npvk_f64_log_core(doubleBitsToUint64(x));
    return npvk_f64_dd_mul(l, npvk_f64_dd(NPVK_F64_INVLN2_HI, NPVK_F64_INVLN2_LO)).hi;
}

double npvk_log10_f64(double x)
{
    if (npvk_f64_log_special(x))
        return npvk_log_f64(x);
    npvk_f64x2 l = npvk_f64_log_core(doubleBitsToUint64(x));
    return npvk_f64_dd_mul(l, npvk_f64_dd(NPVK_F64_INVLN10_HI, NPVK_F64_INVLN10_LO)).hi;
}

double npvk_log1p_f64(double x)
{
    if (npvk_f64_isnan(x))
        return x;
    if (x == -1.0LF)
        return npvk_f64_inf(true);
    if (x < -1.0LF)
        return npvk_f64_nan();
    if (x == npvk_f64_inf(false))
        return x;
    if (npvk_f64_below(x, -54))
        return x;                                     // +-0, subnormals: x - x^2/2 -> x
    npvk_f64x2 u = npvk_f64_two_sum(1.0LF, x);        // 1 + x exactly
    return npvk_f64_log_dd(u.hi, u.lo).hi;
}

// log(exp(x) + exp(y)) (base 2 for logaddexp2) as max + log1p(exp(min - max)),
// NumPy's formula, but with min - max exact and the log1p term and the final
// sum in double-double: NumPy's double evaluation loses up to ~60 ulps where
// max and the log1p term cancel. Equal operands (also equal infinities) give
// max + log(2); an infinite operand gives +inf or the other operand.
double npvk_f64_logaddexp_any(double x, double y, bool base2)
{
    if (npvk_f64_isnan(x) || npvk_f64_isnan(y)) {
        precise double s = x + y;
        return s;
    }
    if (x == y) {
        precise double s = x + (base2 ? 1.0LF : NPVK_F64_LN2_HI);
        return s;
    }
    // pick by the bits, so that flushing drivers keep a subnormal operand intact
    uint64_t ux = doubleBitsToUint64(x), uy = doubleBitsToUint64(y);
    int64_t kx = (ux & NPVK_F64_SIGN_BITS) != 0UL ? -int64_t(ux & NPVK_F64_ABS_BITS) : int64_t(ux);
    int64_t ky = (uy & NPVK_F64_SIGN_BITS) != 0UL ? -int64_t(uy & NPVK_F64_ABS_BITS) : int64_t(uy);
    double big = kx > ky ? x : y;
    double lesser = kx > ky ? y : x;
    if (big == npvk_f64_inf(false) || lesser == npvk_f64_inf(true))  // NumPy: big + log1p(0),
        return (doubleBitsToUint64(big) & NPVK_F64_ABS_BITS) == 0UL ? 0.0LF : big;  // -0 -> +0
    npvk_f64x2 d = npvk_f64_two_diff(lesser, big);    // exactly min - max < 0 (or -inf)
    if (base2 && d.hi >= -1100.0LF)                   // 2^d = e^(d ln2); below, both are 0
        d = npvk_f64_dd_mul(d, npvk_f64_dd(NPVK_F64_LN2_HI, NPVK_F64_LN2_LO));
    npvk_f64x2 l;
    if (d.hi < -700.0LF) {
        double e = npvk_exp_f64(d.hi);                // < 2^-1009
        if (e == 0.0LF)                               // big + 0, without arithmetic on a
            return (doubleBitsToUint64(big) & NPVK_F64_ABS_BITS) == 0UL ? 0.0LF : big;  // subnormal
        l = npvk_f64_dd(e, 0.0LF);
    } else if (d.hi < -45.0LF) {
        // log1p(e) = e to 2^-64 relative; e in double-double, as the sum may cancel
        npvk_f64x2 e = npvk_f64_exp_dd(d.hi);
        precise double el = e.lo + e.hi * d.lo;
        l = npvk_f64_fast_two_sum(e.hi, el);
    } else {
        npvk_f64x2 e = npvk_f64_dd_add(npvk_f64_expm1_dd(d.hi), npvk_f64_dd(1.0LF, 0.0LF));
        precise double el = e.lo + e.hi * d.lo;     // e^(d.hi + d.lo)
        npvk_f64x2 u = npvk_f64_dd_add(npvk_f64_dd(1.0LF, 0.0LF), npvk_f64_dd(e.hi, el));
        l = npvk_f64_log_dd(u.hi, u.lo);
    }
    if (base2)
        l = npvk_f64_dd_mul(l, npvk_f64_dd(NPVK_F64_INVLN2_HI, NPVK_F64_INVLN2_LO));
    return npvk_f64_dd_add(npvk_f64_dd(big, 0.0LF), l).hi;
}

double npvk_logaddexp_f64(double x, double y)
{
    return npvk_f64_logaddexp_any(x, y, false);
}

double npvk_logaddexp2_f64(double x, double y)
{
    return npvk_f64_logaddexp_any(x, y, true);
}

// cbrt(x) = sign(x) * exp(log|x| / 3), both in double-double.
double npvk_cbrt_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax == 0UL || ax >= NPVK_F64_EXP_BITS)
        return x;                                     // +-0, +-inf, NaN
    npvk_f64x2 l = npvk_f64_log_core(ax);
    npvk_f64x2 t = npvk_f64_dd_mul(l, npvk_f64_dd(NPVK_F64_THIRD_HI, NPVK_F64_THIRD_LO));
    return npvk_f64_with_sign(npvk_f64_exp_core(t.hi, t.lo), x);
}

// ---------------------------------------------------------------------------
// sinh, cosh, tanh, arcsinh, arccosh, arctanh
// ---------------------------------------------------------------------------

// exp(|x| - ln2) = exp(|x|)/2 for 22 < |x|, where exp(-|x|) no longer matters;
// overflows to +inf past 710.4758.
double npvk_f64_half_exp(double ax)
{
    if (ax > 710.6LF)
        return npvk_f64_inf(false);
    npvk_f64x2 d = npvk_f64_two_sum(ax, -NPVK_F64_LN2HI);
    precise double lo = d.lo - NPVK_F64_LN2LO;
    return npvk_f64_exp_core(d.hi, lo);
}

double npvk_sinh_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS || npvk_f64_below(x, -26))
        return x;                                     // NaN, +-inf, +-0, sinh(x) -> x
    double a = uint64BitsToDouble(ax);
    double r;
    if (a > 22.0LF) {
        r = npvk_f64_half_exp(a);
    } else {
        // (E + E/(E+1)) / 2 with E = expm1|x|: no cancellation.
        npvk_f64x2 e = npvk_f64_expm1_dd(a);
        npvk_f64x2 t = npvk_f64_dd_div(e, npvk_f64_dd_add(e, npvk_f64_dd(1.0LF, 0.0LF)));
        precise double h = npvk_f64_dd_add(e, t).hi * 0.5LF;
        r = h;
    }
    return npvk_f64_with_sign(r, x);
}

double npvk_cosh_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    double a = uint64BitsToDouble(ax);
    if (ax >= NPVK_F64_EXP_BITS)
        return a;                                     // NaN, +inf
    if (npvk_f64_below(x, -27))
        return 1.0LF;
    if (a > 22.0LF)
        return npvk_f64_half_exp(a);
    // (e + 1/e) / 2 with e = exp|x| = 1 + expm1|x| in double-double.
    npvk_f64x2 e = npvk_f64_dd_add(npvk_f64_expm1_dd(a), npvk_f64_dd(1.0LF, 0.0LF));
    npvk_f64x2 inv = npvk_f64_dd_div(npvk_f64_dd(1.0LF, 0.0LF), e);
    precise double h = npvk_f64_dd_add(e, inv).hi * 0.5LF;
    return h;
}

double npvk_tanh_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax > NPVK_F64_EXP_BITS || npvk_f64_below(x, -27))
        return x;                                     // NaN, +-0, tanh(x) -> x
    double a = uint64BitsToDouble(ax);
    if (a > 22.0LF)
        return npvk_f64_with_sign(1.0LF, x);          // also +-inf
    // E / (E + 2) with E = expm1(2|x|)
    precise double a2 = 2.0LF * a;
    npvk_f64x2 e = npvk_f64_expm1_dd(a2);
    npvk_f64x2 t = npvk_f64_dd_div(e, npvk_f64_dd_add(e, npvk_f64_dd(2.0LF, 0.0LF)));
    return npvk_f64_with_sign(t.hi, x);
}

// log(2a) for a > 2^28, where asinh(a) and acosh(a) are log(2a) to < 2^-56.
double npvk_f64_log_twice(double a)
{
    npvk_f64x2 l = npvk_f64_log_core(doubleBitsToUint64(a));
    return npvk_f64_dd_add(l, npvk_f64_dd(NPVK_F64_LN2_HI, NPVK_F64_LN2_LO)).hi;
}

double npvk_asinh_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS || npvk_f64_below(x, -27))
        return x;                                     // NaN, +-inf, +-0, asinh(x) -> x
    double a = uint64BitsToDouble(ax);
    if (a > 268435456.0LF)
        return npvk_f64_with_sign(npvk_f64_log_twice(a), x);
    // log(a + sqrt(a^2 + 1)) with the argument in double-double
    npvk_f64x2 s = npvk_f64_dd_sqrt(npvk_f64_dd_add(npvk_f64_two_prod(a, a), npvk_f64_dd(1.0LF, 0.0LF)));
    npvk_f64x2 u = npvk_f64_dd_add(s, npvk_f64_dd(a, 0.0LF));
    return npvk_f64_with_sign(npvk_f64_log_dd(u.hi, u.lo).hi, x);
}

double npvk_acosh_f64(double x)
{
    if (npvk_f64_isnan(x))
        return x;
    if (x < 1.0LF)
        return npvk_f64_nan();
    if (x == npvk_f64_inf(false))
        return x;
    if (x > 268435456.0LF)
        return npvk_f64_log_twice(x);
    // log(x + sqrt(x^2 - 1)), x^2 - 1 exact in double-double
    npvk_f64x2 p = npvk_f64_two_prod(x, x);
    npvk_f64x2 d = npvk_f64_two_sum(p.hi, -1.0LF);
    precise double dl = d.lo + p.lo;
    npvk_f64x2 dd = npvk_f64_fast_two_sum(d.hi, dl);
    if (dd.hi <= 0.0LF)
        return 0.0LF;                                 // x == 1
    npvk_f64x2 u = npvk_f64_dd_add(npvk_f64_dd_sqrt(dd), npvk_f64_dd(x, 0.0LF));
    return npvk_f64_log_dd(u.hi, u.lo).hi;
}

double npvk_atanh_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax > NPVK_F64_EXP_BITS || npvk_f64_below(x, -27))
        return x;                                     // NaN, +-0, atanh(x) -> x
    if (ax > NPVK_F64_ONE_BITS)
        return npvk_f64_nan();
    if (ax == NPVK_F64_ONE_BITS)
        return npvk_f64_inf(x < 0.0LF);
    double a = uint64BitsToDouble(ax);
    // log((1 + a) / (1 - a)) / 2, the quotient in double-double
    precise double na = -a;
    npvk_f64x2 q = npvk_f64_dd_div(npvk_f64_two_sum(1.0LF, a), npvk_f64_two_sum(1.0LF, na));
    precise double h = npvk_f64_log_dd(q.hi, q.lo).hi * 0.5LF;
    return npvk_f64_with_sign(h, x);
}

// ---------------------------------------------------------------------------
// hypot
// ---------------------------------------------------------------------------

double npvk_hypot_f64(double x, double y)
{
    uint64_t ux = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    uint64_t uy = doubleBitsToUint64(y) & NPVK_F64_ABS_BITS;
    if (ux == NPVK_F64_EXP_BITS || uy == NPVK_F64_EXP_BITS)
        return npvk_f64_inf(false);                   // C99: inf even with a NaN
    if (ux > NPVK_F64_EXP_BITS || uy > NPVK_F64_EXP_BITS)
        return npvk_f64_nan();
    double a = uint64BitsToDouble(max(ux, uy));
    double b = uint64BitsToDouble(min(ux, uy));
    if (min(ux, uy) == 0UL || (doubleBitsToUint64(a) >> 52) - (doubleBitsToUint64(b) >> 52) > 60UL)
        return a;                                     // b^2 < ulp(a^2) / 2^60
    // Scale by a power of 2 so that a^2 and b^2 (b >= a 2^-60) are normal:
    // a in [2^-450, 2^500] stays.
    double as = a, bs = b;
    bool up = npvk_f64_below(a, -450);
    if (up) {
        as = npvk_f64_up600(a);
        bs = npvk_f64_up600(b);
    } else if (!npvk_f64_below(a, 500)) {
        precise double sa = a * npvk_f64_pow2i(-600);
        precise double sb = b * npvk_f64_pow2i(-600);
        as = sa;
        bs = sb;
    }
    npvk_f64x2 sum = npvk_f64_dd_add(npvk_f64_two_prod(as, as), npvk_f64_two_prod(bs, bs));
    double r = npvk_f64_dd_sqrt(sum).hi;
    if (!up) {
        precise double big = (as == a) ? r : r * npvk_f64_pow2i(600);
        return big;
    }
    return npvk_f64_down600(r);
}

// ---------------------------------------------------------------------------
// arctan, arctan2, arcsin, arccos
// ---------------------------------------------------------------------------

// atan(n / d) for n, d >= 0 double-doubles, not both 0, n/d and d/n < 2^995;
// about 2^-100 relative. For n > d it is pi/2 - atan(d / n).
npvk_f64x2 npvk_f64_atan_ratio(npvk_f64x2 n, npvk_f64x2 d)
{
    bool inv = n.hi > d.hi;
    npvk_f64x2 v = inv ? npvk_f64_dd_div(d, n) : npvk_f64_dd_div(n, d);  // in [0, 1]
    // atan(v) = atan(c) + atan((v - c) / (1 + v c)), c = i/64 nearest v
    precise double i64 = v.hi * 64.0LF;
    precise double id = (i64 + NPVK_F64_SHIFT) - NPVK_F64_SHIFT;
    int i = int(id);
    precise double c = id * 0.015625LF;
    precise double nc = -c;
    npvk_f64x2 num = npvk_f64_two_sum(v.hi, nc);
    precise double nl = num.lo + v.lo;
    npvk_f64x2 p = npvk_f64_two_prod(v.hi, c);
    npvk_f64x2 den = npvk_f64_two_sum(1.0LF, p.hi);
    precise double dl = den.lo + (p.lo + v.lo * c);
    npvk_f64x2 t = npvk_f64_dd_div(npvk_f64_dd(num.hi, nl), npvk_f64_dd(den.hi, dl));  // |t| <= 2^-7
    precise double tt = t.hi * t.hi;
    precise double q = NPVK_F64_ATAN_T5 + tt * NPVK_F64_ATAN_T6;
    q = NPVK_F64_ATAN_T4 + tt * q;
    q = NPVK_F64_ATAN_T3 + tt * q;
    q = NPVK_F64_ATAN_T2 + tt * q;
    q = NPVK_F64_ATAN_T1 + tt * q;
    precise double tl = t.lo + (t.hi * tt) * q;
    npvk_f64x2 at = npvk_f64_dd(NPVK_F64_TAB(NPVK_F64_TAB_ATAN + 2 * i),
                                NPVK_F64_TAB(NPVK_F64_TAB_ATAN + 2 * i + 1));
    npvk_f64x2 r = npvk_f64_dd_add(at, npvk_f64_fast_two_sum(t.hi, tl));
    if (inv)
        r = npvk_f64_dd_sub(npvk_f64_dd(NPVK_F64_PIO2_HI, NPVK_F64_PIO2_LO), r);
    return r;
}

double npvk_atan_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax > NPVK_F64_EXP_BITS || npvk_f64_below(x, -27))
        return x;                                     // NaN, +-0, atan(x) -> x
    double a = uint64BitsToDouble(ax);
    if (!npvk_f64_below(a, 60))
        return npvk_f64_with_sign(NPVK_F64_PIO2_HI, x);  // also +-inf
    npvk_f64x2 r = npvk_f64_atan_ratio(npvk_f64_dd(a, 0.0LF), npvk_f64_dd(1.0LF, 0.0LF));
    return npvk_f64_with_sign(r.hi, x);
}

// pi - r (for arguments in the left half plane).
npvk_f64x2 npvk_f64_pi_minus(npvk_f64x2 r)
{
    return npvk_f64_dd_sub(npvk_f64_dd(NPVK_F64_PI_HI, NPVK_F64_PI_LO), r);
}

double npvk_atan2_f64(double y, double x)
{
    uint64_t uy = doubleBitsToUint64(y), ux = doubleBitsToUint64(x);
    uint64_t ay = uy & NPVK_F64_ABS_BITS, ax = ux & NPVK_F64_ABS_BITS;
    if (ay > NPVK_F64_EXP_BITS || ax > NPVK_F64_EXP_BITS) {
        precise double s = x + y;                     // NaN
        return s;
    }
    bool xneg = ux != ax;
    double r;
    if (ay == 0UL) {
        r = xneg ? NPVK_F64_PI_HI : 0.0LF;            // atan2(+-0, -x) = +-pi, (+-0, +x) = +-0
    } else if (ax == 0UL) {
        r = NPVK_F64_PIO2_HI;
    } else if (ay == NPVK_F64_EXP_BITS) {
        // +-inf: pi/4 or 3pi/4 for an infinite x, else pi/2
        if (ax == NPVK_F64_EXP_BITS)
            r = xneg ? NPVK_F64_3PIO4 : NPVK_F64_PIO4;
        else
            r = NPVK_F64_PIO2_HI;
    } else if (ax == NPVK_F64_EXP_BITS) {
        r = xneg ? NPVK_F64_PI_HI : 0.0LF;
    } else {
        int ey = int(ay >> 52), ex = int(ax >> 52);
        double a = uint64BitsToDouble(ay), b = uint64BitsToDouble(ax);
        if (ey - ex > 60) {
            r = NPVK_F64_PIO2_HI;                     // |y/x| > 2^59
        } else if (ex - ey > 60 && !xneg) {
            // atan(q) rounds to q; a may be subnormal
            precise double q = a / b;                 // normal when a >= 2^400
            precise double qs = npvk_f64_up600(a) / b;
            r = npvk_f64_below(a, 400) ? npvk_f64_down600(qs) : q;
        } else if (ex - ey > 60) {
            r = NPVK_F64_PI_HI;
        } else {
            // scale both by one power of 2 into a safe range for the ratio
            double as = a, bs = b;
            if (max(ey, ex) > 1923) {
                precise double sa = a * npvk_f64_pow2i(-600);
                precise double sb = b * npvk_f64_pow2i(-600);
                as = sa;
                bs = sb;
            } else if (max(ey, ex) < 123) {
                as = npvk_f64_up600(a);
                bs = npvk_f64_up600(b);
            }
            npvk_f64x2 t = npvk_f64_atan_ratio(npvk_f64_dd(as, 0.0LF), npvk_f64_dd(bs, 0.0LF));
            if (xneg)
                t = npvk_f64_pi_minus(t);
            r = t.hi;
        }
    }
    return npvk_f64_with_sign(r, y);
}

double npvk_asin_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax > NPVK_F64_EXP_BITS || npvk_f64_below(x, -27))
        return x;                                     // NaN, +-0, asin(x) -> x
    if (ax > NPVK_F64_ONE_BITS)
        return npvk_f64_nan();
    double a = uint64BitsToDouble(ax);
    // atan(a / sqrt((1 - a)(1 + a)))
    precise double na = -a;
    npvk_f64x2 s = npvk_f64_dd_mul(npvk_f64_two_sum(1.0LF, na), npvk_f64_two_sum(1.0LF, a));
    npvk_f64x2 r;
    if (s.hi == 0.0LF)
        r = npvk_f64_dd(NPVK_F64_PIO2_HI, NPVK_F64_PIO2_LO);
    else
        r = npvk_f64_atan_ratio(npvk_f64_dd(a, 0.0LF), npvk_f64_dd_sqrt(s));
    return npvk_f64_with_sign(r.hi, x);
}

double npvk_acos_f64(double x)
{
    uint64_t ux = doubleBitsToUint64(x);
    uint64_t ax = ux & NPVK_F64_ABS_BITS;
    if (ax > NPVK_F64_EXP_BITS)
        return x;
    if (ax > NPVK_F64_ONE_BITS)
        return npvk_f64_nan();
    double a = uint64BitsToDouble(ax);
    // atan2(sqrt((1 - a)(1 + a)), x)
    precise double na = -a;
    npvk_f64x2 s = npvk_f64_dd_mul(npvk_f64_two_sum(1.0LF, na), npvk_f64_two_sum(1.0LF, a));
    npvk_f64x2 r = npvk_f64_dd(0.0LF, 0.0LF);
    if (s.hi != 0.0LF)
        r = npvk_f64_atan_ratio(npvk_f64_dd_sqrt(s), npvk_f64_dd(a, 0.0LF));
    if (ux != ax)
        r = npvk_f64_pi_minus(r);
    return r.hi;
}

// ---------------------------------------------------------------------------
// sin, cos, tan
// ---------------------------------------------------------------------------

// x = q * pi/2 + y, |y| <= pi/4 (+ a little), y as a double-double.
struct npvk_f64_reduced {
    npvk_f64x2 y;
    int q;
};

// Bits b..b+63 of the 96-bit number l0 + l1 * 2^32 + l2 * 2^64 (limbs < 2^32).
uint64_t npvk_f64_bits64(uint64_t l0, uint64_t l1, uint64_t l2, int b)
{
    uint64_t w = (l0 | (l1 << 32)) >> b;
    return b == 0 ? w : (w | (l2 << (64 - b)));
}

// Payne-Hanek for a = |x| >= 2^20: x * 2/pi mod 4 from the exact integer
// product of x's 53-bit significand M and the 224 bits of 2/pi (32-bit chunks
// c_j from the table) that reach bit 2^1 of the product; lower chunks of 2/pi
// change the fraction by less than 2^-138. a = M * 2^e, and chunk j weighs
// 2^(-32(j+1)), so chunks j < j0 = floor((e - 2) / 32) only add multiples of 4.
npvk_f64_reduced npvk_f64_reduce_large(double a)
{
    uint64_t ia = doubleBitsToUint64(a);
    int e = int(ia >> 52) - 1075;                     // e >= -32
    uint64_t m = (ia & NPVK_F64_MANT_BITS) | NPVK_F64_IMPL_BIT;
    uint64_t ml = m & 0xFFFFFFFFUL;
    uint64_t mh = m >> 32;
    int j0 = max(0, (e - 2) >> 5);
    uint64_t acc[12];
    for (int k = 0; k < 12; ++k)
        acc[k] = 0UL;
    // S = sum_i M * c_(j0+i) * 2^(32 (6 - i)), 32-bit limbs, little-endian
    for (int i = 0; i < 7; ++i) {
        uint64_t c = uint64_t(NPVK_F64_TAB(NPVK_F64_TAB_IPIO2 + j0 + i));
        uint64_t p0 = ml * c;
        uint64_t p1 = mh * c;
        acc[6 - i] += p0 & 0xFFFFFFFFUL;
        acc[7 - i] += (p0 >> 32) + (p1 & 0xFFFFFFFFUL);
        acc[8 - i] += p1 >> 32;
    }
    uint64_t carry = 0UL;
    for (int k = 0; k < 12; ++k) {
        uint64_t v = acc[k] + carry;
        acc[k] = v & 0xFFFFFFFFUL;
        carry = v >> 32;
    }
    // x * 2/pi = S * 2^-s (mod 4): bits s+1, s are the quadrant, the 128 bits
    // below them the fraction (191 <= s <= 256).
    int s = 32 * (j0 + 7) - e;
    int w = s >> 5;
    int q = int(npvk_f64_bits64(acc[w], acc[w + 1], acc[w + 2], s & 31) & 3UL);
    int t = s - 64;
    w = t >> 5;
    uint64_t fh = npvk_f64_bits64(acc[w], acc[w + 1], acc[w + 2], t & 31);
    t = s - 128;
    w = t >> 5;
    uint64_t fl = npvk_f64_bits64(acc[w], acc[w + 1], acc[w + 2], t & 31);
    bool neg = (fh >> 63) != 0UL;
    if (neg) {                                        // fraction >= 1/2: take f - 1
        q += 1;
        fh = ~fh + (fl == 0UL ? 1UL : 0UL);
        fl = 0UL - fl;
    }
    // f = A 2^-53 + B 2^-106 + C 2^-128, each part exact in a double
    precise double pa = double(fh >> 11) * 1.11022302462515654042e-16LF;             // 2^-53
    precise double pb = double(((fh & 0x7FFUL) << 42) | (fl >> 22)) * 1.23259516440783094596e-32LF;  // 2^-106
    precise double pc = double(fl & 0x3FFFFFUL) * 2.93873587705571876992e-39LF;      // 2^-128
    npvk_f64x2 u = npvk_f64_two_sum(pb, pc);
    npvk_f64x2 v = npvk_f64_two_sum(pa, u.hi);
    precise double vl = v.lo + u.lo;
    npvk_f64x2 f = npvk_f64_fast_two_sum(v.hi, vl);
    npvk_f64x2 y = npvk_f64_dd_mul(f, npvk_f64_dd(NPVK_F64_PIO2_HI, NPVK_F64_PIO2_LO));
    if (neg) {
        precise double nh = -y.hi;
        precise double nl = -y.lo;
        y = npvk_f64x2(nh, nl);
    }
    return npvk_f64_reduced(y, q);
}

// Finite x: Cody-Waite with three 33-bit pieces of pi/2 (k * piece exact for
// |k| < 2^20) below 1.6e6, Payne-Hanek above; exact to about 2^-100 relative
// for every finite double.
npvk_f64_reduced npvk_f64_reduce(double x)
{
    uint64_t ux = doubleBitsToUint64(x);
    double a = uint64BitsToDouble(ux & NPVK_F64_ABS_BITS);
    npvk_f64_reduced r;
    if (a < 1.6e6LF) {
        precise double z = a * NPVK_F64_INV_PIO2;
        precise double kd = (z + NPVK_F64_SHIFT) - NPVK_F64_SHIFT;
        precise double r1 = a - kd * NPVK_F64_PIO2_1;  // exact (Sterbenz)
        precise double t2 = kd * NPVK_F64_PIO2_2;      // exact products
        precise double t3 = kd * NPVK_F64_PIO2_3;
        npvk_f64x2 s2 = npvk_f64_two_diff(r1, t2);
        npvk_f64x2 s3 = npvk_f64_two_diff(s2.hi, t3);
        precise double lo = (s2.lo + s3.lo) - kd * NPVK_F64_PIO2_4;
        r = npvk_f64_reduced(npvk_f64_two_sum(s3.hi, lo), int(kd));
    } else {
        r = npvk_f64_reduce_large(a);
    }
    if (ux != doubleBitsToUint64(a)) {
        precise double nh = -r.y.hi;
        precise double nl = -r.y.lo;
        r = npvk_f64_reduced(npvk_f64x2(nh, nl), -r.q);
    }
    return r;
}

// sin(y) for |y| <= pi/4 as a double-double: Taylor series to y^21, and the
// first-order effect of y.lo.
npvk_f64x2 npvk_f64_sin_dd(npvk_f64x2 y)
{
    precise double z = y.hi * y.hi;
    precise double p = NPVK_F64_SIN_S9 + z * NPVK_F64_SIN_S10;
    p = NPVK_F64_SIN_S8 + z * p;
    p = NPVK_F64_SIN_S7 + z * p;
    p = NPVK_F64_SIN_S6 + z * p;
    p = NPVK_F64_SIN_S5 + z * p;
    p = NPVK_F64_SIN_S4 + z * p;
    p = NPVK_F64_SIN_S3 + z * p;
    p = NPVK_F64_SIN_S2 + z * p;
    p = NPVK_F64_SIN_S1 + z * p;
    precise double lo = y.lo * (1.0LF - 0.5LF * z) + (y.hi * z) * p;
    return npvk_f64_fast_two_sum(y.hi, lo);
}

// cos(y) for |y| <= pi/4 as a double-double: 1 - y^2/2 summed exactly, then
// Taylor terms to y^20 and the first-order effect of y.lo.
npvk_f64x2 npvk_f64_cos_dd(npvk_f64x2 y)
{
    npvk_f64x2 zz = npvk_f64_two_prod(y.hi, y.hi);
    precise double hh = 0.5LF * zz.hi;
    precise double hl = 0.5LF * zz.lo;
    npvk_f64x2 w = npvk_f64_two_diff(1.0LF, hh);
    precise double z = zz.hi;
    precise double c = NPVK_F64_COS_C9 + z * NPVK_F64_COS_C10;
    c = NPVK_F64_COS_C8 + z * c;
    c = NPVK_F64_COS_C7 + z * c;
    c = NPVK_F64_COS_C6 + z * c;
    c = NPVK_F64_COS_C5 + z * c;
    c = NPVK_F64_COS_C4 + z * c;
    c = NPVK_F64_COS_C3 + z * c;
    c = NPVK_F64_COS_C2 + z * c;
    precise double lo = ((w.lo - hl) + (z * z) * c) - y.hi * y.lo;
    return npvk_f64_fast_two_sum(w.hi, lo);
}

double npvk_sin_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS)
        return ax > NPVK_F64_EXP_BITS ? x : npvk_f64_nan();
    if (npvk_f64_below(x, -27))
        return x;                                     // +-0, sin(x) -> x
    npvk_f64_reduced r = npvk_f64_reduce(x);
    npvk_f64x2 v = (r.q & 1) == 0 ? npvk_f64_sin_dd(r.y) : npvk_f64_cos_dd(r.y);
    precise double res = (r.q & 2) == 0 ? v.hi : -v.hi;
    return res;
}

double npvk_cos_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS)
        return ax > NPVK_F64_EXP_BITS ? x : npvk_f64_nan();
    if (npvk_f64_below(x, -27))
        return 1.0LF;
    npvk_f64_reduced r = npvk_f64_reduce(x);
    npvk_f64x2 v = (r.q & 1) == 0 ? npvk_f64_cos_dd(r.y) : npvk_f64_sin_dd(r.y);
    precise double res = ((r.q + 1) & 2) == 0 ? v.hi : -v.hi;
    return res;
}

double npvk_tan_f64(double x)
{
    uint64_t ax = doubleBitsToUint64(x) & NPVK_F64_ABS_BITS;
    if (ax >= NPVK_F64_EXP_BITS)
        return ax > NPVK_F64_EXP_BITS ? x : npvk_f64_nan();
    if (npvk_f64_below(x, -27))
        return x;                                     // +-0, tan(x) -> x
    npvk_f64_reduced r = npvk_f64_reduce(x);
    npvk_f64x2 s = npvk_f64_sin_dd(r.y);
    npvk_f64x2 c = npvk_f64_cos_dd(r.y);
    // tan = s / c in even quadrants, -c / s in odd ones
    npvk_f64x2 t = (r.q & 1) == 0 ? npvk_f64_dd_div(s, c) : npvk_f64_dd_div(c, s);
    precise double res = (r.q & 1) == 0 ? t.hi : -t.hi;
    return res;
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
