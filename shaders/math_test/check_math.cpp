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

#include "check_math_harness.hpp"
#include "check_math_core.hpp"
#include "check_math_ext.hpp"

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
