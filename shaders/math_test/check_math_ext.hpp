// check_math_ext.hpp -- the test sets of the functions built on
// exp/log/trig, and of integer and half powers, against the correctly rounded result.
// Part of check_math.cpp, which includes it once, after math_f64.glsl.
#pragma once

namespace {

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
