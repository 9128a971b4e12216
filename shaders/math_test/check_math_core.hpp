// check_math_core.hpp -- the test sets of exp, log, pow and fmod
// (float64, and fmod of float32) against glibc.
// Part of check_math.cpp, which includes it once, after math_f64.glsl.
#pragma once

namespace {

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

}  // namespace
