// check_math.cpp -- host-side accuracy checker for shaders/math_f64.glsl.
//
// Compiles the very same GLSL source as C++ (through glsl_compat.hpp) and
// compares npvk_exp_f64 / npvk_log_f64 / npvk_pow_f64 / npvk_fmod_f64 /
// npvk_fmod_f32 with glibc's exp / log / pow / fmod / fmodf:
//   * "ulp vs glibc": distance in units in the last place between our result
//     and glibc's (integer; 0 = bit-identical up to the NaN payload). A sign
//     difference (other than +0/-0 in exp/log/pow sweeps) or NaN/non-NaN
//     mismatch counts as a failure.
//   * "err vs exact": |ours - exact| / ulp(exact) against a __float128
//     (libquadmath) reference on a subsample, i.e. the real error of ours.
// Special values (+-0, subnormals, +-inf, NaN, +-1, huge, ...) are checked
// bit-exactly (incl. the sign of zero) whenever the glibc result is
// NaN, +-inf, +-0 or +-1; otherwise within the function's ulp tolerance.
//
// Usage: check_math [--scale S] [--ftz] [--seed N] [--quiet]
//   --scale S  multiply the number of random points by S (default 1)
//   --ftz      evaluate OUR functions with x86 FTZ+DAZ set (flush subnormals,
//              like a driver without float64 denorm preservation); glibc
//              references are computed with the default MXCSR.
// Tolerances: ulp vs glibc <= 1 (exp, log), <= 2 (pow), 0 (fmod); in addition
// the sampled error vs exact must stay <= 0.6 ulp for exp/log/pow (a
// regression gate: the implementation measures ~0.52).
// Exit status 0 iff every check is within tolerance. The last line is
// "N passed, N failed" (one per test set).

#include "glsl_compat.hpp"
#include "../math_f64.glsl"

#include <quadmath.h>
#include <xmmintrin.h>

#include <cfloat>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

uint64_t bitsOf(double x) { return doubleBitsToUint64(x); }
double fromBits(uint64_t b) { return uint64BitsToDouble(b); }

// Monotone integer image of a double (+0 and -0 both map to 0).
__int128 ordOf(double x)
{
    int64_t i = doubleBitsToInt64(x);
    return i < 0 ? (__int128)INT64_MIN - i : (__int128)i;
}

const double kFail = 1e30;  // "infinitely many ulps": NaN or sign mismatch

// ulp distance between two doubles (NaN == NaN), see header comment.
double ulpDiff(double a, double b)
{
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb)
        return (na && nb) ? 0.0 : kFail;
    if (std::signbit(a) != std::signbit(b) && !(a == 0.0 && b == 0.0))
        return kFail;
    __int128 d = ordOf(a) - ordOf(b);
    if (d < 0)
        d = -d;
    return (double)d;
}

bool sameBits(double a, double b)
{
    if (std::isnan(a) && std::isnan(b))
        return true;
    return bitsOf(a) == bitsOf(b);
}

// |a - ref| in units of the double ulp at ref; -1 when not measurable.
double errVsExact(double a, __float128 ref)
{
    if (std::isnan(a) || std::isinf(a) || isnanq(ref))
        return -1.0;
    __float128 ar = fabsq(ref);
    if (ar > (__float128)DBL_MAX)
        return -1.0;
    __float128 u;
    if (ar < (__float128)DBL_MIN) {
        u = ldexpq((__float128)1.0, -1074);
    } else {
        int e;
        frexpq(ar, &e);  // ar = m * 2^e, 0.5 <= m < 1
        u = ldexpq((__float128)1.0, e - 53);
    }
    return (double)(fabsq((__float128)a - ref) / u);
}

struct Rng {
    std::mt19937_64 g;
    explicit Rng(uint64_t seed) : g(seed) {}
    uint64_t u64() { return g(); }
    double uni(double lo, double hi) { return lo + (hi - lo) * (double)(g() >> 11) * 0x1p-53; }
    int irange(int lo, int hi) { return lo + (int)(g() % (uint64_t)(hi - lo + 1)); }
    // random double with biased exponent field uniform in [elo, ehi]
    double bitsExp(int elo, int ehi, bool randomSign)
    {
        uint64_t e = (uint64_t)irange(elo, ehi);
        uint64_t m = g() & 0x000FFFFFFFFFFFFFULL;
        uint64_t s = randomSign ? (g() & 0x8000000000000000ULL) : 0;
        return fromBits(s | (e << 52) | m);
    }
    double logUni(double lo, double hi) { return std::exp(uni(std::log(lo), std::log(hi))); }
    // 1 +- 2^-k * u, k in [1, kmax]
    double nearOne(int kmax)
    {
        int k = irange(1, kmax);
        double u = uni(0.0, 1.0);
        double s = (g() & 1) ? 1.0 : -1.0;
        return 1.0 + s * std::ldexp(u, -k);
    }
};

bool gFtz = false;
bool gQuiet = false;
bool gNoExt = false;

struct FtzScope {
    unsigned saved;
    FtzScope() : saved(_mm_getcsr()) { if (gFtz) _mm_setcsr(saved | 0x8040); }
    ~FtzScope() { _mm_setcsr(saved); }
};

struct Result {
    std::string fn, set;
    size_t n = 0, ndiff = 0, nbad = 0;
    double maxUlp = 0.0, wx = 0.0, wy = 0.0, wOurs = 0.0, wRef = 0.0;
    size_t nExact = 0;
    double maxExact = -1.0, ex = 0.0, ey = 0.0;
    double tol = 0.0, exactTol = 0.0;
    bool vsCr = false;  // compared with the correctly rounded result, not glibc
    bool pass() const { return nbad == 0 && maxExact <= exactTol; }
};

std::vector<Result> gResults;

struct Fn {
    const char* name;
    double tol;  // max allowed ulp distance to glibc
    int arity;
    double (*ours1)(double);
    double (*ref1)(double);
    __float128 (*exact1)(__float128);
    double (*ours2)(double, double);
    double (*ref2)(double, double);
    __float128 (*exact2)(__float128, __float128);
    bool bitExact;  // fmod: results must be bit-identical
    double exactTol;  // max allowed error vs the exact value (ulp), sampled
};

double ourExp(double x) { return npvk_exp_f64(x); }
double ourLog(double x) { return npvk_log_f64(x); }
double ourPow(double x, double y) { return npvk_pow_f64(x, y); }
double ourFmod(double x, double y) { return npvk_fmod_f64(x, y); }
// float args travel as doubles; convert by bits (the plain casts would be
// flushed under --ftz, unlike buffer loads/stores on the GPU).
// float arguments travel as doubles holding exact float values; convert by
// bits, so that --ftz (which flushes subnormal cvtsd2ss/cvtss2sd) does not
// alter them -- on the GPU they are plain buffer loads/stores.
float toF32(double d)
{
    uint64_t b = doubleBitsToUint64(d);
    uint s = (uint)(b >> 32) & 0x80000000u;
    int e = (int)((b >> 52) & 0x7FF);
    uint64_t m = b & 0x000FFFFFFFFFFFFFULL;
    if (e == 0x7FF) return uintBitsToFloat(s | 0x7F800000u | (m ? 0x400000u : 0u));
    if (e == 0) return uintBitsToFloat(s);
    int fe = e - 896;
    if (fe >= 1) return uintBitsToFloat(s | ((uint)fe << 23) | (uint)(m >> 29));
    return uintBitsToFloat(s | (uint)((m | 0x0010000000000000ULL) >> (926 - e)));
}
double fromF32(float f)
{
    uint b = floatBitsToUint(f);
    uint64_t s = (uint64_t)(b & 0x80000000u) << 32;
    uint e = (b >> 23) & 0xFF, m = b & 0x7FFFFF;
    if (e == 255) return uint64BitsToDouble(s | 0x7FF0000000000000ULL | ((uint64_t)m << 29));
    if (e == 0) {
        if (m == 0) return uint64BitsToDouble(s);
        int p = 31 - __builtin_clz(m);  // value = m * 2^-149 = 1.f * 2^(p-149)
        uint64_t frac = ((uint64_t)m << (52 - p)) & 0x000FFFFFFFFFFFFFULL;
        return uint64BitsToDouble(s | ((uint64_t)(p - 149 + 1023) << 52) | frac);
    }
    return uint64BitsToDouble(s | ((uint64_t)(e + 896) << 52) | ((uint64_t)m << 29));
}
double ourFmodf(double x, double y) { return fromF32(npvk_fmod_f32(toF32(x), toF32(y))); }
double refExp(double x) { return ::exp(x); }
double refLog(double x) { return ::log(x); }
double refPow(double x, double y) { return ::pow(x, y); }
double refFmod(double x, double y) { return ::fmod(x, y); }
double refFmodf(double x, double y) { return (double)::fmodf((float)x, (float)y); }
__float128 qExp(__float128 x) { return expq(x); }
__float128 qLog(__float128 x) { return logq(x); }
__float128 qPow(__float128 x, __float128 y) { return powq(x, y); }

const Fn kExp = {"exp", 1.0, 1, ourExp, refExp, qExp, nullptr, nullptr, nullptr, false, 0.6};
const Fn kLog = {"log", 1.0, 1, ourLog, refLog, qLog, nullptr, nullptr, nullptr, false, 0.6};
const Fn kPow = {"pow", 2.0, 2, nullptr, nullptr, nullptr, ourPow, refPow, qPow, false, 0.6};
const Fn kFmod = {"fmod_f64", 0.0, 2, nullptr, nullptr, nullptr, ourFmod, refFmod, nullptr, true, 0.0};
const Fn kFmodf = {"fmod_f32", 0.0, 2, nullptr, nullptr, nullptr, ourFmodf, refFmodf, nullptr, true, 0.0};

__attribute__((noinline)) void evalOurs(const Fn& f, const std::vector<double>& xs,
                                        const std::vector<double>& ys, std::vector<double>& ours)
{
    const size_t n = xs.size();
    if (f.arity == 1)
        for (size_t i = 0; i < n; ++i) ours[i] = f.ours1(xs[i]);
    else
        for (size_t i = 0; i < n; ++i) ours[i] = f.ours2(xs[i], ys[i]);
}

// Run one test set. exactEvery: measure the exact error on every n-th point
// (0 = never). special: strict special-value rules (see header).
void runSet(const Fn& f, const std::string& set, const std::vector<double>& xs,
            const std::vector<double>& ys, size_t exactEvery, bool special)
{
    const size_t n = xs.size();
    std::vector<double> ours(n), ref(n);
    {
        FtzScope ftz;  // evalOurs is noinline: no FP code moves across the MXCSR writes
        evalOurs(f, xs, ys, ours);
    }
    if (f.arity == 1)
        for (size_t i = 0; i < n; ++i) ref[i] = f.ref1(xs[i]);
    else
        for (size_t i = 0; i < n; ++i) ref[i] = f.ref2(xs[i], ys[i]);

    Result r;
    r.fn = f.name;
    r.set = set;
    r.n = n;
    r.tol = f.tol;
    r.exactTol = f.exactTol;
    for (size_t i = 0; i < n; ++i) {
        double d;
        if (f.bitExact) {
            d = sameBits(ours[i], ref[i]) ? 0.0 : kFail;
        } else {
            d = ulpDiff(ours[i], ref[i]);
            bool strict = special && (std::isnan(ref[i]) || std::isinf(ref[i]) || ref[i] == 0.0 ||
                                      std::fabs(ref[i]) == 1.0);
            if (strict && !sameBits(ours[i], ref[i]))
                d = kFail;
        }
        if (d > 0)
            r.ndiff++;
        if (d > f.tol)
            r.nbad++;
        if (d > r.maxUlp) {
            r.maxUlp = d;
            r.wx = xs[i];
            r.wy = f.arity == 2 ? ys[i] : 0.0;
            r.wOurs = ours[i];
            r.wRef = ref[i];
        }
        if (exactEvery && (i % exactEvery) == 0 && (f.exact1 || f.exact2)) {
            __float128 q = f.arity == 1 ? f.exact1((__float128)xs[i])
                                        : f.exact2((__float128)xs[i], (__float128)ys[i]);
            double e = errVsExact(ours[i], q);
            if (e >= 0) {
                r.nExact++;
                if (e > r.maxExact) {
                    r.maxExact = e;
                    r.ex = xs[i];
                    r.ey = f.arity == 2 ? ys[i] : 0.0;
                }
            }
        }
    }
    gResults.push_back(r);
}

// ----------------------------------------------------------------- inputs

std::vector<double> specialDoubles()
{
    return {0.0, -0.0, fromBits(1), -fromBits(1), fromBits(0x000FFFFFFFFFFFFFULL), DBL_MIN, -DBL_MIN,
            DBL_MAX, -DBL_MAX, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0,
            -3.0, 0.1, -0.1, 10.0, -10.0, 1e-300, -1e-300, 1e300, -1e300, 1e-17, -1e-17, 1e-310,
            0x1p-1022, 0x1p-1074, 0x1p-1000, 0x1p1000, 0x1p52, -0x1p52, 0x1p53 + 2, 0x1p63, -0x1p63,
            9007199254740991.0, -9007199254740991.0, 709.782712893384, 709.78271289338397,
            709.7827128933841, -745.1332191019411, -745.13321910194122, -745.1332191019412,
            -745.2, -708.39641853226408, -708.4, 700.0, -700.0, 0.6931471805599453, M_E,
            std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), std::nextafter(-1.0, -2.0),
            std::nextafter(-1.0, 0.0), 0.25, 4.0, 7.0, -7.0, 1.5, -1.5, 1023.0, 1024.0, -1074.0,
            -1075.0, 1e10, -1e10, 1e19, -1e19, 123456789.0, 2.5, -2.5};
}

void cross(const std::vector<double>& a, const std::vector<double>& b, std::vector<double>& xs,
           std::vector<double>& ys)
{
    for (double x : a)
        for (double y : b) {
            xs.push_back(x);
            ys.push_back(y);
        }
}

size_t scaled(double scale, size_t n)
{
    size_t m = (size_t)(scale * (double)n);
    return m < 1000 ? 1000 : m;
}

void testExp(Rng& rng, double scale)
{
    std::vector<double> xs;
    std::vector<double> none;
    xs = specialDoubles();
    runSet(kExp, "special values", xs, none, 1, true);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 2000000); i < n; ++i) xs.push_back(rng.uni(-745.2, 709.8));
    runSet(kExp, "uniform [-745.2, 709.8]", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        double x = rng.bitsExp(0, 1032, true);  // |x| in [2^-1074, 2^10)
        if (x > 709.8 || x < -745.2) x = std::fmod(x, 700.0);
        xs.push_back(x);
    }
    runSet(kExp, "all exponents |x| < 2^10", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 500000); i < n; ++i) {
        xs.push_back(rng.uni(700.0, 709.79));
        xs.push_back(rng.uni(-745.2, -700.0));  // subnormal results
    }
    runSet(kExp, "near overflow / subnormal", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 100000); i < n; ++i) xs.push_back(rng.uni(-709.1, -707.7));
    runSet(kExp, "results around DBL_MIN", xs, none, 1, false);

    xs.clear();
    const double l = 0.6931471805599453 / 32;
    for (size_t i = 0, n = scaled(scale, 500000); i < n; ++i) {
        int k = rng.irange(-34000, 32700);
        double x = (k + 0.5) * l;  // reduction boundaries (k rounding ties)
        int steps = rng.irange(-3, 3);
        for (int s = 0; s < std::abs(steps); ++s) x = std::nextafter(x, steps > 0 ? INFINITY : -INFINITY);
        xs.push_back(x);
    }
    runSet(kExp, "reduction boundaries", xs, none, 16, false);
}

void testLog(Rng& rng, double scale)
{
    std::vector<double> xs, none;
    xs = specialDoubles();
    runSet(kLog, "special values", xs, none, 1, true);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 2000000); i < n; ++i) xs.push_back(rng.bitsExp(0, 2046, false));
    runSet(kLog, "all positive exponents", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) xs.push_back(rng.nearOne(53));
    runSet(kLog, "1 +- 2^-k u", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) xs.push_back(rng.uni(0.5, 2.0));
    runSet(kLog, "uniform [0.5, 2]", xs, none, 16, false);

    xs.clear();
    for (size_t i = 0, n = scaled(scale, 300000); i < n; ++i) {
        uint64_t m = (rng.u64() & 0x000FFFFFFFFFFFFFULL) >> rng.irange(0, 51);
        xs.push_back(fromBits(m ? m : 1));
    }
    runSet(kLog, "subnormal inputs", xs, none, 16, false);
}

void testPow(Rng& rng, double scale)
{
    std::vector<double> xs, ys;
    std::vector<double> sp = specialDoubles();
    cross(sp, sp, xs, ys);
    runSet(kPow, "special values (cross)", xs, ys, 1, true);

    auto clear = [&] { xs.clear(); ys.clear(); };

    clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        double x = rng.bitsExp(0, 2046, false);
        if (x == 1.0) continue;
        xs.push_back(x);
        ys.push_back(rng.uni(-760.0, 720.0) / std::log(x));
    }
    runSet(kPow, "x any exponent, |y log x| <= 760", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 500000); i < n; ++i) {
        double x = rng.nearOne(52);
        if (x == 1.0) continue;
        xs.push_back(x);
        ys.push_back(rng.uni(-750.0, 710.0) / std::log(x));
    }
    runSet(kPow, "x = 1 +- 2^-k u, huge |y|", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        xs.push_back(rng.logUni(0.01, 100.0));
        ys.push_back(rng.uni(-60.0, 60.0));
    }
    runSet(kPow, "x in [0.01,100], y in [-60,60]", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 500000); i < n; ++i) {
        xs.push_back(-rng.logUni(0.01, 100.0));
        ys.push_back((double)rng.irange(-200, 200));
    }
    runSet(kPow, "x < 0, integer y in [-200,200]", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 200000); i < n; ++i) {
        double ax = 1.0 + std::ldexp(rng.uni(0.0, 1.0), -rng.irange(10, 52));
        if (ax == 1.0) continue;
        double y = std::nearbyint(rng.uni(-700.0, 700.0) / std::log(ax));
        if (std::fmod(y, 2.0) == 0.0) y += 1.0;
        if (std::fabs(y) >= 0x1p53) continue;
        xs.push_back(-ax);
        ys.push_back(y);
    }
    runSet(kPow, "x = -(1 + eps), huge odd y", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 200000); i < n; ++i) {
        double x = (double)rng.irange(2, 1000);
        if (rng.u64() & 1) x = -x;
        xs.push_back(x);
        ys.push_back((double)rng.irange(-60, 60));
    }
    runSet(kPow, "integer x, integer y", xs, ys, 32, false);

    clear();
    const double fixedY[] = {0.5, -0.5, 1.5, 2.0, 3.0, -1.0, -2.0, 1.0 / 3.0, 1.0, 0.1};
    for (size_t i = 0, n = scaled(scale, 300000); i < n; ++i) {
        xs.push_back(rng.bitsExp(0, 2046, false));
        ys.push_back(fixedY[rng.irange(0, 9)]);
    }
    runSet(kPow, "fixed y (sqrt, square, 1/x ...)", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 200000); i < n; ++i) {
        uint64_t m = (rng.u64() & 0x000FFFFFFFFFFFFFULL) >> rng.irange(0, 51);
        xs.push_back(fromBits(m ? m : 1));
        ys.push_back(rng.uni(-1.1, 1.1));
    }
    runSet(kPow, "subnormal x", xs, ys, 32, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 500000); i < n; ++i) {
        xs.push_back(fromBits(rng.u64()));
        ys.push_back(fromBits(rng.u64()));
    }
    runSet(kPow, "random bit patterns", xs, ys, 32, false);
}

void testFmod(Rng& rng, double scale)
{
    std::vector<double> xs, ys;
    std::vector<double> sp = specialDoubles();
    cross(sp, sp, xs, ys);
    runSet(kFmod, "special values (cross)", xs, ys, 0, true);
    auto clear = [&] { xs.clear(); ys.clear(); };

    clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        xs.push_back(rng.bitsExp(0, 2046, true));
        ys.push_back(rng.bitsExp(0, 2046, true));
    }
    runSet(kFmod, "random finite bits", xs, ys, 0, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        double x = rng.bitsExp(0, 2046, true);
        double y = std::ldexp(rng.uni(0.5, 1.0), std::ilogb(x) + 1 - rng.irange(0, 64));
        if (rng.u64() & 1) y = -y;
        xs.push_back(x);
        ys.push_back(y);
    }
    runSet(kFmod, "|x|/|y| in [1, 2^64]", xs, ys, 0, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 50000); i < n; ++i) {
        xs.push_back(rng.bitsExp(1800, 2046, true));
        ys.push_back(rng.bitsExp(0, 200, true));
    }
    runSet(kFmod, "huge x, tiny y (long division)", xs, ys, 0, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 300000); i < n; ++i) {
        uint64_t m = (rng.u64() & 0x000FFFFFFFFFFFFFULL) >> rng.irange(0, 51);
        double s = fromBits(m ? m : 1);
        double o = rng.bitsExp(0, 60, true);
        if (rng.u64() & 1) {
            xs.push_back(o);
            ys.push_back(s);
        } else {
            xs.push_back(s);
            ys.push_back(o);
        }
    }
    runSet(kFmod, "subnormal operands", xs, ys, 0, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 300000); i < n; ++i) {
        xs.push_back((double)rng.irange(-1000000, 1000000));
        double y = (double)rng.irange(-1000, 1000);
        ys.push_back(y);
    }
    runSet(kFmod, "integer operands", xs, ys, 0, false);

    // float32
    std::vector<double> spf;
    for (double v : sp) spf.push_back((double)(float)v);
    spf.push_back((double)uintBitsToFloat(1u));
    spf.push_back((double)uintBitsToFloat(0x007FFFFFu));
    spf.push_back((double)FLT_MAX);
    spf.push_back((double)FLT_MIN);
    clear();
    cross(spf, spf, xs, ys);
    runSet(kFmodf, "special values (cross)", xs, ys, 0, true);

    clear();
    for (size_t i = 0, n = scaled(scale, 2000000); i < n; ++i) {
        float x, y;
        do x = uintBitsToFloat((uint)rng.u64()); while (std::isnan(x));
        do y = uintBitsToFloat((uint)rng.u64()); while (std::isnan(y));
        xs.push_back((double)x);
        ys.push_back((double)y);
    }
    runSet(kFmodf, "random bits (incl. inf, subnormal)", xs, ys, 0, false);

    clear();
    for (size_t i = 0, n = scaled(scale, 1000000); i < n; ++i) {
        float x = (float)rng.logUni(1e-30, 1e30);
        float y = (float)(x * rng.logUni(1e-8, 1.0));
        if (rng.u64() & 1) x = -x;
        if (rng.u64() & 1) y = -y;
        xs.push_back((double)x);
        ys.push_back((double)y);
    }
    runSet(kFmodf, "|x|/|y| in [1, 1e8]", xs, ys, 0, false);
}


// ------------------------------------------------- the functions built on exp/log/trig

// Each is compared with the correctly rounded result: the __float128 (libquadmath) value
// rounded once to double ("ulp vs CR", integer), and its real error vs that value is measured
// on every point ("err vs exact"). Results that are NaN, +-inf or +-0 must match bit-exactly
// (sign of zero included). Tolerances are docs/accuracy.md's targets.
struct ExtFn {
    const char* name;
    int arity;
    double (*ours1)(double);
    __float128 (*q1)(__float128);
    double (*ours2)(double, double);
    __float128 (*q2)(__float128, __float128);
    double tol;  // ulps from the correctly rounded result
    // If nonzero: a result within absTol * max(|x|, |y|) of the exact value also passes
    // (logaddexp's cancellation near x == y == -log(2), see docs/accuracy.md).
    double absTol = 0;
};

double ulpOfQ(__float128 ar)
{
    if (ar < (__float128)DBL_MIN) return 0x1p-1074;
    int e;
    frexpq(ar, &e);
    return (double)ldexpq((__float128)1.0, e - 53);
}

void runExt(const ExtFn& f, const std::string& set, const std::vector<double>& xs,
            const std::vector<double>& ys)
{
    const size_t n = xs.size();
    std::vector<double> ours(n);
    {
        FtzScope ftz;
        for (size_t i = 0; i < n; ++i) ours[i] = f.arity == 1 ? f.ours1(xs[i]) : f.ours2(xs[i], ys[i]);
    }
    Result r;
    r.fn = f.name;
    r.set = set;
    r.n = n;
    r.tol = f.tol;
    r.exactTol = f.tol;
    r.vsCr = true;
    for (size_t i = 0; i < n; ++i) {
        __float128 q = f.arity == 1 ? f.q1((__float128)xs[i]) : f.q2((__float128)xs[i], (__float128)ys[i]);
        double cr = (double)q;
        double d;
        // NaN, infinities and the sign of a zero result must match; a subnormal next to a
        // zero result is an ulp away like any other neighbour.
        if (std::isnan(cr) || std::isinf(cr) || std::isnan(ours[i]) || std::isinf(ours[i]) ||
            (cr == 0.0 && ours[i] == 0.0))
            d = sameBits(ours[i], cr) ? 0.0 : kFail;
        else
            d = ulpDiff(ours[i], cr);
        if (d > f.tol && d < kFail && f.absTol > 0 &&
            fabsq((__float128)ours[i] - q) <= (__float128)f.absTol * std::max(std::fabs(xs[i]), std::fabs(ys[i])))
            d = f.tol;  // within the absolute bound: counted at the tolerance
        // a zero of the wrong sign from a sum of subnormal-sized terms is one ulp off
        if (d >= kFail && cr == 0.0 && ours[i] == 0.0 && f.arity == 2 &&
            (std::fpclassify(xs[i]) == FP_SUBNORMAL || std::fpclassify(ys[i]) == FP_SUBNORMAL))
            d = 1.0;
        // --ftz stands in for a driver that flushes float64 subnormals: a result below DBL_MIN
        // that comes from arithmetic on subnormal-sized terms (logaddexp's sum) is not checked.
        if (gFtz && std::fabs(cr) < DBL_MIN && std::fabs(ours[i]) < DBL_MIN) d = 0;
        if (d > 0) r.ndiff++;
        if (d > f.tol) r.nbad++;
        if (d > r.maxUlp) {
            r.maxUlp = d;
            r.wx = xs[i];
            r.wy = f.arity == 2 ? ys[i] : 0.0;
            r.wOurs = ours[i];
            r.wRef = cr;
        }
        if (!std::isnan(cr) && !std::isinf(cr) && std::isfinite(ours[i])) {
            double e = (double)(fabsq((__float128)ours[i] - q) / ulpOfQ(fabsq(q)));
            if (f.absTol > 0 && e > f.tol &&
                fabsq((__float128)ours[i] - q) <= (__float128)f.absTol * std::max(std::fabs(xs[i]), std::fabs(ys[i])))
                e = 0;  // reported by the absolute bound instead
            r.nExact++;
            if (e > r.maxExact) {
                r.maxExact = e;
                r.ex = xs[i];
                r.ey = f.arity == 2 ? ys[i] : 0.0;
            }
        }
    }
    gResults.push_back(r);
}

double oExp2(double x) { return npvk_exp2_f64(x); }
double oExpm1(double x) { return npvk_expm1_f64(x); }
double oLog2(double x) { return npvk_log2_f64(x); }
double oLog10(double x) { return npvk_log10_f64(x); }
double oLog1p(double x) { return npvk_log1p_f64(x); }
double oCbrt(double x) { return npvk_cbrt_f64(x); }
double oSin(double x) { return npvk_sin_f64(x); }
double oCos(double x) { return npvk_cos_f64(x); }
double oTan(double x) { return npvk_tan_f64(x); }
double oAsin(double x) { return npvk_asin_f64(x); }
double oAcos(double x) { return npvk_acos_f64(x); }
double oAtan(double x) { return npvk_atan_f64(x); }
double oSinh(double x) { return npvk_sinh_f64(x); }
double oCosh(double x) { return npvk_cosh_f64(x); }
double oTanh(double x) { return npvk_tanh_f64(x); }
double oAsinh(double x) { return npvk_asinh_f64(x); }
double oAcosh(double x) { return npvk_acosh_f64(x); }
double oAtanh(double x) { return npvk_atanh_f64(x); }
double oAtan2(double y, double x) { return npvk_atan2_f64(y, x); }
double oHypot(double x, double y) { return npvk_hypot_f64(x, y); }
double oLae(double x, double y) { return npvk_logaddexp_f64(x, y); }
double oLae2(double x, double y) { return npvk_logaddexp2_f64(x, y); }
__float128 qExp2(__float128 x) { return exp2q(x); }
__float128 qExpm1(__float128 x) { return expm1q(x); }
__float128 qLog2(__float128 x) { return log2q(x); }
__float128 qLog10(__float128 x) { return log10q(x); }
__float128 qLog1p(__float128 x) { return log1pq(x); }
__float128 qCbrt(__float128 x) { return cbrtq(x); }
__float128 qSin(__float128 x) { return sinq(x); }
__float128 qCos(__float128 x) { return cosq(x); }
__float128 qTan(__float128 x) { return tanq(x); }
__float128 qAsin(__float128 x) { return asinq(x); }
__float128 qAcos(__float128 x) { return acosq(x); }
__float128 qAtan(__float128 x) { return atanq(x); }
__float128 qSinh(__float128 x) { return sinhq(x); }
__float128 qCosh(__float128 x) { return coshq(x); }
__float128 qTanh(__float128 x) { return tanhq(x); }
__float128 qAsinh(__float128 x) { return asinhq(x); }
__float128 qAcosh(__float128 x) { return acoshq(x); }
__float128 qAtanh(__float128 x) { return atanhq(x); }
__float128 qAtan2(__float128 y, __float128 x) { return atan2q(y, x); }
__float128 qHypot(__float128 x, __float128 y) { return hypotq(x, y); }
// NumPy's logaddexp formulas evaluated in binary128.
__float128 qLae(__float128 x, __float128 y)
{
    if (x == y) return x + logq((__float128)2);
    __float128 t = x - y;
    if (t > 0) return x + log1pq(expq(-t));
    if (t <= 0) return y + log1pq(expq(t));
    return t;
}
__float128 qLae2(__float128 x, __float128 y)
{
    if (x == y) return x + 1;
    __float128 t = x - y;
    if (t > 0) return x + log1pq(exp2q(-t)) / logq((__float128)2);
    if (t <= 0) return y + log1pq(exp2q(t)) / logq((__float128)2);
    return t;
}

void testExt(Rng& rng, double scale)
{
    const ExtFn fns[] = {
        {"exp2", 1, oExp2, qExp2, nullptr, nullptr, 1}, {"expm1", 1, oExpm1, qExpm1, nullptr, nullptr, 1},
        {"log2", 1, oLog2, qLog2, nullptr, nullptr, 1}, {"log10", 1, oLog10, qLog10, nullptr, nullptr, 1},
        {"log1p", 1, oLog1p, qLog1p, nullptr, nullptr, 1}, {"cbrt", 1, oCbrt, qCbrt, nullptr, nullptr, 1},
        {"sin", 1, oSin, qSin, nullptr, nullptr, 1}, {"cos", 1, oCos, qCos, nullptr, nullptr, 1},
        {"tan", 1, oTan, qTan, nullptr, nullptr, 1}, {"arcsin", 1, oAsin, qAsin, nullptr, nullptr, 1},
        {"arccos", 1, oAcos, qAcos, nullptr, nullptr, 1}, {"arctan", 1, oAtan, qAtan, nullptr, nullptr, 1},
        {"sinh", 1, oSinh, qSinh, nullptr, nullptr, 1}, {"cosh", 1, oCosh, qCosh, nullptr, nullptr, 1},
        {"tanh", 1, oTanh, qTanh, nullptr, nullptr, 1}, {"arcsinh", 1, oAsinh, qAsinh, nullptr, nullptr, 1},
        {"arccosh", 1, oAcosh, qAcosh, nullptr, nullptr, 1}, {"arctanh", 1, oAtanh, qAtanh, nullptr, nullptr, 1},
        {"arctan2", 2, nullptr, nullptr, oAtan2, qAtan2, 1}, {"hypot", 2, nullptr, nullptr, oHypot, qHypot, 1},
        {"logaddexp", 2, nullptr, nullptr, oLae, qLae, 1, 0x1p-64},
        {"logaddexp2", 2, nullptr, nullptr, oLae2, qLae2, 1, 0x1p-64},
    };
    const size_t n = scaled(scale, 100000);
    std::vector<double> sp = specialDoubles();
    const double huge[] = {0x1.6ac5b262ca1ffp+849, 0x1.8a48e7e3cd2bbp+797, 6381956970095103.0 * 0x1p797,
                           1e22, 0x1.921fb54442d18p+0, 0x1.921fb54442d18p+1, 0x1.921fb54442d18p+1023,
                           DBL_MAX, 1.6e6, 1.5999999999999998e6, 1048576.0, 5.0e15, 1e300};
    for (const ExtFn& f : fns) {
        std::vector<double> xs, ys;
        auto add = [&](double x, double y) { xs.push_back(x); ys.push_back(y); };
        auto flush = [&](const char* set) { runExt(f, set, xs, ys); xs.clear(); ys.clear(); };
        std::string nm = f.name;
        if (f.arity == 2) {
            for (double a : sp) for (double b : sp) add(a, b);
            flush("special values (cross)");
            for (size_t i = 0; i < n; ++i) add(rng.bitsExp(0, 2046, true), rng.bitsExp(0, 2046, true));
            flush("random finite bits");
            for (size_t i = 0; i < n; ++i) {
                double a = rng.uni(-100, 100);
                add(a, a * rng.uni(0.5, 2.0) + (rng.u64() & 1 ? 1e-3 : 0.0));
            }
            flush("close operands in [-200, 200]");
            for (size_t i = 0; i < n; ++i) {
                double a = rng.bitsExp(1023 - 60, 1023 + 60, true);
                add(a, rng.bitsExp(1023 - 60, 1023 + 60, true));
            }
            flush("|x|, |y| in [2^-60, 2^60]");
            if (nm == "logaddexp" || nm == "logaddexp2") {
                for (size_t i = 0; i < n; ++i) {
                    double y = rng.uni(-700, -46);
                    double e = nm == "logaddexp" ? std::exp(y) : std::exp2(y);
                    add(-e * rng.uni(0.5, 1.5), y);  // x + log1p(e^(y - x)) cancels
                }
                flush("tiny x = -e^y: the sum cancels");
            }
            continue;
        }
        for (double v : sp) add(v, 0);
        for (double v : huge) { add(v, 0); add(-v, 0); }
        flush("special values");
        double lo = -10, hi = 10;
        if (nm == "exp2") { lo = -1080; hi = 1030; }
        else if (nm == "expm1") { lo = -50; hi = 710; }
        else if (nm == "sinh" || nm == "cosh") { lo = -711; hi = 711; }
        else if (nm == "tanh") { lo = -25; hi = 25; }
        else if (nm == "arcsin" || nm == "arccos" || nm == "arctanh") { lo = -1; hi = 1; }
        else if (nm == "arccosh") { lo = 1; hi = 20; }
        else if (nm == "log1p") { lo = -1; hi = 10; }
        else if (nm == "log2" || nm == "log10") { lo = 0; hi = 4; }
        for (size_t i = 0; i < n; ++i) add(rng.uni(lo, hi), 0);
        flush("uniform main range");
        for (size_t i = 0; i < n; ++i) {
            double x = rng.bitsExp(0, 2046, true);
            if (nm == "exp2" || nm == "expm1" || nm == "sinh" || nm == "cosh")
                x = rng.bitsExp(0, 1032, true);          // |x| < 2^10 (past overflow)
            add(x, 0);
        }
        flush("random bits, all exponents");
        for (size_t i = 0; i < n; ++i) {
            int k = rng.irange(1, 53);
            double u = rng.uni(0, 1), s = (rng.u64() & 1) ? 1.0 : -1.0;
            double x;
            if (nm == "arccosh" || nm == "log2" || nm == "log10") x = 1.0 + std::ldexp(u, -k);
            else if (nm == "arcsin" || nm == "arccos" || nm == "arctanh") x = s * (1.0 - std::ldexp(u, -k));
            else x = s * std::ldexp(u, -k);              // near 0
            add(x, 0);
        }
        flush("near the hard point (0 or 1)");
        if (nm == "sin" || nm == "cos" || nm == "tan") {
            for (size_t i = 0; i < n; ++i) {
                double k = std::floor(rng.logUni(1.0, 2e6));
                double x = k * 1.5707963267948966;
                int steps = rng.irange(-4, 4);
                for (int s = 0; s < std::abs(steps); ++s) x = std::nextafter(x, steps > 0 ? INFINITY : -INFINITY);
                add(rng.u64() & 1 ? -x : x, 0);
            }
            flush("near multiples of pi/2 (< 2e6 pi/2)");
            for (size_t i = 0; i < n; ++i) add(rng.uni(-2e6, 2e6), 0);
            flush("uniform [-2e6, 2e6] (both reductions)");
        }
    }
}

// x**n for a fixed integer n (npvk_f64_powi) and x**0.5 (npvk_f64_pow_half), vs the correctly
// rounded result. Normal results must be correctly rounded (0 ulp, error <= 0.5 ulp vs exact);
// subnormal ones, which npvk_f64_down600 rounds twice, may be 1 ulp off.
template <int N> double oPowi(double x) { return npvk_f64_powi(x, N); }
template <int N> __float128 qPowi(__float128 x) { return powq(x, (__float128)N); }
double oPowHalf(double x) { return npvk_f64_pow_half(x); }
__float128 qPowHalf(__float128 x) { return x == 0 ? (__float128)0 : powq(x, (__float128)0.5); }

void testPowi(Rng& rng, double scale)
{
    const ExtFn fns[] = {
        {"powi(2)", 1, oPowi<2>, qPowi<2>, nullptr, nullptr, 0},
        {"powi(3)", 1, oPowi<3>, qPowi<3>, nullptr, nullptr, 0},
        {"powi(4)", 1, oPowi<4>, qPowi<4>, nullptr, nullptr, 0},
        {"powi(5)", 1, oPowi<5>, qPowi<5>, nullptr, nullptr, 0},
        {"powi(6)", 1, oPowi<6>, qPowi<6>, nullptr, nullptr, 0},
        {"powi(7)", 1, oPowi<7>, qPowi<7>, nullptr, nullptr, 0},
        {"powi(8)", 1, oPowi<8>, qPowi<8>, nullptr, nullptr, 0},
        {"powi(-2)", 1, oPowi<-2>, qPowi<-2>, nullptr, nullptr, 0},
        {"powi(-3)", 1, oPowi<-3>, qPowi<-3>, nullptr, nullptr, 0},
        {"powi(-5)", 1, oPowi<-5>, qPowi<-5>, nullptr, nullptr, 0},
        {"powi(-8)", 1, oPowi<-8>, qPowi<-8>, nullptr, nullptr, 0},
        {"pow(.5)", 1, oPowHalf, qPowHalf, nullptr, nullptr, 0},
    };
    const int exps[] = {2, 3, 4, 5, 6, 7, 8, -2, -3, -5, -8, 0};
    const size_t n = scaled(scale, 100000);
    std::vector<double> sp = specialDoubles();
    for (size_t j = 0; j < sizeof(exps) / sizeof(exps[0]); ++j) {
        const int e = exps[j];
        std::vector<double> xs, ys;
        auto run = [&](const char* set, double tol) {
            ExtFn f = fns[j];
            f.tol = tol;
            ys.assign(xs.size(), 0.0);
            runExt(f, set, xs, ys);
            gResults.back().exactTol = tol == 0 ? 0.501 : tol;
            xs.clear();
        };
        for (double v : sp) xs.push_back(v);
        run("special values", 1);
        for (size_t i = 0; i < n; ++i) xs.push_back(rng.uni(-10, 10));
        run("uniform [-10, 10]", 0);
        for (size_t i = 0; i < n; ++i) xs.push_back(rng.bitsExp(0, 2046, true));
        run("random bits, all exponents", 1);
        if (e == 0) continue;
        // |x|^n near the ends of the normal range, and subnormal results
        for (size_t i = 0; i < n; ++i) {
            double t = rng.u64() & 1 ? rng.uni(-1022, -950) : rng.uni(950, 1024);
            xs.push_back((rng.u64() & 1 ? -1 : 1) * std::exp2(t / e));
        }
        run("results near 2^-1022 and 2^1024", 0);
        for (size_t i = 0; i < n; ++i) xs.push_back(std::exp2(rng.uni(-1076, -1022) / e));
        run("subnormal results", 1);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    double scale = 1.0;
    uint64_t seed = 20240601;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--scale" && i + 1 < argc) scale = std::atof(argv[++i]);
        else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--ftz") gFtz = true;
        else if (a == "--quiet") gQuiet = true;
        else if (a == "--no-ext") gNoExt = true;
        else {
            std::fprintf(stderr, "usage: %s [--scale S] [--seed N] [--ftz] [--quiet]\n", argv[0]);
            return 2;
        }
    }
    auto t0 = std::chrono::steady_clock::now();
    Rng rng(seed);
    testExp(rng, scale);
    testLog(rng, scale);
    testPow(rng, scale);
    testFmod(rng, scale);
    if (!gNoExt) testExt(rng, scale);
    testPowi(rng, scale);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

#ifdef NPVK_F64_USE_FMA
    const char* variant = "NPVK_F64_USE_FMA";
#else
    const char* variant = "default (no fma)";
#endif
    std::printf("math_f64.glsl host check: variant=%s%s, seed=%" PRIu64 ", scale=%g\n", variant,
                gFtz ? ", FTZ+DAZ on for npvk_*" : "", seed, scale);
    size_t passed = 0, failed = 0, points = 0;
    std::string lastFn;
    struct Summary { std::string fn; double maxUlp; double maxExact; size_t n; double tol, exactTol; bool vsCr; };
    std::vector<Summary> sums;
    for (const Result& r : gResults) {
        points += r.n;
        if (r.pass()) passed++; else failed++;
        if (sums.empty() || sums.back().fn != r.fn) sums.push_back({r.fn, 0.0, -1.0, 0, r.tol, r.exactTol, r.vsCr});
        Summary& s = sums.back();
        s.maxUlp = std::max(s.maxUlp, r.maxUlp);
        s.maxExact = std::max(s.maxExact, r.maxExact);
        s.n += r.n;
        if (!gQuiet || !r.pass()) {
            std::printf("%-4s %-9s %-36s n=%-8zu ulp-vs-%s max=%-5s differ=%-7zu", r.pass() ? "ok" : "FAIL",
                        r.fn.c_str(), r.set.c_str(), r.n, r.vsCr ? "CR" : "glibc",
                        r.maxUlp >= kFail ? "BAD" : std::to_string((long long)r.maxUlp).c_str(), r.ndiff);
            if (r.maxExact >= 0) std::printf(" err-vs-exact max=%.3f (n=%zu)", r.maxExact, r.nExact);
            std::printf("\n");
            if (r.maxUlp > 0 && (!r.pass() || !gQuiet))
                std::printf("       worst: x=%a y=%a ours=%a %s=%a\n", r.wx, r.wy, r.wOurs, r.vsCr ? "CR" : "glibc", r.wRef);
        }
    }
    std::printf("\nSummary (%zu points, %.1f s):\n", points, secs);
    for (const Summary& s : sums) {
        std::printf("  %-10s n=%-8zu max ulp vs %s = %s (tolerance %g)", s.fn.c_str(), s.n, s.vsCr ? "CR" : "glibc",
                    s.maxUlp >= kFail ? "BAD" : std::to_string((long long)s.maxUlp).c_str(), s.tol);
        if (s.maxExact >= 0)
            std::printf(", max error vs exact = %.3f ulp (gate %g)", s.maxExact, s.exactTol);
        std::printf("\n");
    }
    std::printf("%zu passed, %zu failed\n", passed, failed);
    return failed ? 1 : 0;
}
