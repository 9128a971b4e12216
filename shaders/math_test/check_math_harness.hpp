// check_math_harness.hpp -- comparing results: ulp distances, the exact
// error, the random inputs, and running one test set.
// Part of check_math.cpp, which includes it once, after math_f64.glsl.
#pragma once

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

}  // namespace
