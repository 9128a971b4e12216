// The ufuncs of issue 6 beyond test_ops_math.cpp: sign, heaviside, reciprocal, conjugate,
// deg2rad/rad2deg, nextafter, spacing, gcd/lcm and float_power, then the float64 math library's
// transcendental functions against the host's long double libm (docs/accuracy.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_case_test.hpp"
#include "reference_int.hpp"

namespace npvk_test {
namespace {

template <class T>
T Sign(T x) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(x)) return x;
  }
  if constexpr (std::is_signed_v<T>) {
    if (x < 0) return T(-1);
  }
  return x > 0 ? T(1) : T(0);  // +0 for both zeros
}

// NumPy's integer reciprocal is C's (T)(1.0 / a); 1 / 0 = inf converts as x86-64 does: to the
// minimum of int32 or int64, and through those to 0 for narrower or unsigned types.
template <class T>
T Reciprocal(T a) {
  if constexpr (kIsFloat<T>) {
    return T(1) / a;
  } else {
    if (a == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (a == -1) return T(-1);
      if (a == 0 && sizeof(T) >= 4) return std::numeric_limits<T>::min();
    }
    return 0;
  }
}

// NumPy's npy_spacing: NaN for inf and NaN, else the step away from zero (+ for -0.0).
template <class T>
T Spacing(T x) {
  if (std::isnan(x) || std::isinf(x)) return std::numeric_limits<T>::quiet_NaN();
  if (x == 0) return std::numeric_limits<T>::denorm_min();
  return std::nextafter(x, std::copysign(std::numeric_limits<T>::infinity(), x)) - x;
}

// gcd and lcm on the magnitudes as unsigned numbers (|MIN| = 2^(bits-1)), lcm wrapping.
template <class T>
auto Magnitude(T a) {
  using U = WrapType<T>;
  if constexpr (std::is_signed_v<T>)
    return a < 0 ? U(U(0) - U(a)) : U(a);
  else
    return U(a);
}
template <class U>
U GcdUnsigned(U a, U b) {
  while (a != 0) {
    U c = a;
    a = U(b % a);
    b = c;
  }
  return b;
}
template <class T>
T Gcd(T a, T b) {
  return static_cast<T>(GcdUnsigned(Magnitude(a), Magnitude(b)));
}
template <class T>
T Lcm(T a, T b) {
  auto ua = Magnitude(a), ub = Magnitude(b);
  auto g = GcdUnsigned(ua, ub);
  return g == 0 ? T(0) : static_cast<T>(decltype(ua)(ua / g * ub));
}

template <class T>
T Heaviside(T x, T h) {
  if (std::isnan(x)) return x;
  if (x == 0) return h;
  return x < 0 ? T(0) : T(1);
}

// NumPy's constants: pi/180 and 180/pi rounded in the loop's type.
template <class T>
T Deg2Rad(T x) {
  return x * (T(M_PI) / T(180));
}
template <class T>
T Rad2Deg(T x) {
  return x * (T(180) / T(M_PI));
}

template <class F>
void AddUnary(std::vector<OpCase> &cases, npvk_op op, Tolerance tol, F fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return OpCase{};
    } else {
      return OpCase{{}, MakeElementFn<T, T>([fn](T a) { return fn(a); }), tol, UnaryValues<T>(rng)};
    }
  });
}

template <class F>
void AddBinary(std::vector<OpCase> &cases, npvk_op op, Tolerance tol, F fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return OpCase{};
    } else {
      return OpCase{{},
                    MakeElementFn<T, T, T>([fn](T a, T b) { return fn(a, b); }),
                    tol,
                    BinaryValues<T>(rng)};
    }
  });
}

// The float64 math library (docs/accuracy.md): float64 within 1 ULP of the correctly rounded
// result, measured against the host's long double libm rounded once (itself within ~0.5 ULP);
// float32 computes in float64 and rounds once, within 1 ULP of the long double reference too.
constexpr size_t kMathSamples = 4000;

// NumPy's logaddexp formula; long double keeps it far more exact than the float64 result.
long double LogAddExpL(long double x, long double y, bool base2) {
  const long double ln2 = 0.693147180559945309417232121458176568L;
  if (x == y) return x + (base2 ? 1.0L : ln2);
  const long double t = x - y;
  auto term = [&](long double d) {
    return base2 ? std::log1p(std::exp2(d)) / ln2 : std::log1p(std::exp(d));
  };
  if (t > 0) return x + term(-t);
  if (t <= 0) return y + term(t);
  return t;
}

using Gen = double (*)(std::mt19937 &, bool f32);

double Spread(std::mt19937 &rng, int lo, int hi) {
  double v = std::ldexp(Uniform(rng, 1, 2), lo + static_cast<int>(rng() % (hi - lo + 1)));
  return (rng() & 1u) ? -v : v;
}

template <class T, class Ref>
OpCase MathCase(Ref ref, uint32_t ulps64, std::mt19937 &rng, Gen gen, int nin) {
  std::vector<T> a = EdgeValues<T>(), b;
  if (nin == 2) {
    std::vector<Bytes> v = BinaryValues<T>(rng, EdgeValues<T>(), EdgeValues<T>());
    a = FromBytes<T>(v[0]);
    b = FromBytes<T>(v[1]);
  }
  const bool f32 = std::is_same_v<T, float>;
  for (size_t i = 0; i < kMathSamples; ++i) {
    a.push_back(static_cast<T>(gen(rng, f32)));
    if (nin == 2) b.push_back(static_cast<T>(gen(rng, f32)));
  }
  const Tolerance tol = Ulps(f32 ? 1 : ulps64);
  if (nin == 1) {
    return OpCase{
        {},
        MakeElementFn<T, T>([ref](T x) { return static_cast<T>(ref((long double)x, 0.0L)); }),
        tol,
        {ToBytes(a)}};
  }
  return OpCase{{},
                MakeElementFn<T, T, T>([ref](T x, T y) {
                  return static_cast<T>(ref((long double)x, (long double)y));
                }),
                tol,
                {ToBytes(a), ToBytes(b)}};
}

template <class Ref>
void AddMath(std::vector<OpCase> &cases, npvk_op op, Ref ref, Gen gen, uint32_t ulps64 = 1) {
  const int nin = static_cast<int>(Signature(op).nin);
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>)
      return MathCase<T>(ref, ulps64, rng, gen, nin);
    else
      return OpCase{};
  });
}

}  // namespace

std::vector<OpCase> MathExtCases() {
  std::vector<OpCase> cases;
  AddUnary(cases, NPVK_OP_SIGN, Exact(), [](auto x) { return Sign(x); });
  AddUnary(cases, NPVK_OP_CONJUGATE, Exact(), [](auto x) { return x; });
  AddUnary(cases, NPVK_OP_RECIPROCAL, Exact(), [](auto x) { return Reciprocal(x); });
  AddUnary(cases, NPVK_OP_DEG2RAD, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return Deg2Rad(x);
    else
      return x;
  });
  AddUnary(cases, NPVK_OP_RAD2DEG, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return Rad2Deg(x);
    else
      return x;
  });
  AddUnary(cases, NPVK_OP_SPACING, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return Spacing(x);
    else
      return x;
  });
  AddBinary(cases, NPVK_OP_HEAVISIDE, Exact(), [](auto x, auto h) {
    if constexpr (kIsFloat<decltype(x)>)
      return Heaviside(x, h);
    else
      return x;
  });
  AddBinary(cases, NPVK_OP_NEXTAFTER, Exact(), [](auto x, auto y) {
    if constexpr (kIsFloat<decltype(x)>)
      return decltype(x)(std::nextafter(x, y));
    else
      return x;
  });
  AddBinary(cases, NPVK_OP_GCD, Exact(), [](auto a, auto b) {
    if constexpr (kIsInt<decltype(a)>)
      return Gcd(a, b);
    else
      return a;
  });
  AddBinary(cases, NPVK_OP_LCM, Exact(), [](auto a, auto b) {
    if constexpr (kIsInt<decltype(a)>)
      return Lcm(a, b);
    else
      return a;
  });
  // float_power computes in float64 (NumPy has only its float64 loop; the float32 one rounds
  // the float64 result once), with power's 2-ULP bound.
  AddBinary(cases, NPVK_OP_FLOAT_POWER, Ulps(2),
            [](auto a, auto b) { return decltype(a)(std::pow(double(a), double(b))); });
  using L = long double;
  // Input generators: each op's interesting range, and magnitudes across the exponent range.
  Gen trig = [](std::mt19937 &rng, bool) {
    switch (rng() % 4) {
      case 0:
        return Uniform(rng, -10, 10);
      case 1:
        return Spread(rng, -30, 72);  // up to ~1e22: both argument reductions
      case 2:
        return std::round(Uniform(rng, -1e6, 1e6)) * 1.5707963267948966;  // near k pi/2
      default:
        return Uniform(rng, -2e6, 2e6);
    }
  };
  Gen unit = [](std::mt19937 &rng, bool) {
    return rng() % 3 ? Uniform(rng, -1, 1)
                     : std::copysign(1 - std::ldexp(Uniform(rng, 0, 1), -int(rng() % 50)),
                                     Uniform(rng, -1, 1));
  };
  Gen wide = [](std::mt19937 &rng, bool f32) {
    return Spread(rng, f32 ? -60 : -500, f32 ? 60 : 500);
  };
  Gen positive = [](std::mt19937 &rng, bool f32) {
    return std::fabs(Spread(rng, f32 ? -120 : -1000, f32 ? 120 : 1000));
  };
  Gen above_one = [](std::mt19937 &rng, bool) { return 1 + std::fabs(Spread(rng, -50, 30)); };
  Gen near_zero = [](std::mt19937 &rng, bool) {
    return rng() % 2 ? Uniform(rng, -1, 1) * 0.999 : Spread(rng, -60, 4);
  };
  Gen exp_range = [](std::mt19937 &rng, bool f32) {
    return Uniform(rng, -1, 1) * (f32 ? 87 : 700);
  };
  Gen exp2_range = [](std::mt19937 &rng, bool f32) {
    return f32 ? Uniform(rng, -125, 127) : Uniform(rng, -1074, 1023);
  };
  Gen moderate = [](std::mt19937 &rng, bool) {
    return rng() % 2 ? Uniform(rng, -20, 20) : Spread(rng, -40, 5);
  };
  Gen pairs = [](std::mt19937 &rng, bool f32) {
    return rng() % 2 ? Uniform(rng, -100, 100) : Spread(rng, f32 ? -60 : -300, f32 ? 60 : 300);
  };
  AddMath(
      cases, NPVK_OP_SIN, [](L x, L) { return std::sin(x); }, trig);
  AddMath(
      cases, NPVK_OP_COS, [](L x, L) { return std::cos(x); }, trig);
  AddMath(
      cases, NPVK_OP_TAN, [](L x, L) { return std::tan(x); }, trig);
  AddMath(
      cases, NPVK_OP_ARCSIN, [](L x, L) { return std::asin(x); }, unit);
  AddMath(
      cases, NPVK_OP_ARCCOS, [](L x, L) { return std::acos(x); }, unit);
  AddMath(
      cases, NPVK_OP_ARCTAN, [](L x, L) { return std::atan(x); }, wide);
  AddMath(
      cases, NPVK_OP_ARCTAN2, [](L y, L x) { return std::atan2(y, x); }, pairs);
  AddMath(
      cases, NPVK_OP_HYPOT, [](L x, L y) { return std::hypot(x, y); }, pairs);
  AddMath(
      cases, NPVK_OP_SINH, [](L x, L) { return std::sinh(x); }, exp_range);
  AddMath(
      cases, NPVK_OP_COSH, [](L x, L) { return std::cosh(x); }, exp_range);
  AddMath(
      cases, NPVK_OP_TANH, [](L x, L) { return std::tanh(x); }, moderate);
  AddMath(
      cases, NPVK_OP_ARCSINH, [](L x, L) { return std::asinh(x); }, wide);
  AddMath(
      cases, NPVK_OP_ARCCOSH, [](L x, L) { return std::acosh(x); }, above_one);
  AddMath(
      cases, NPVK_OP_ARCTANH, [](L x, L) { return std::atanh(x); }, unit);
  AddMath(
      cases, NPVK_OP_EXP2, [](L x, L) { return std::exp2(x); }, exp2_range);
  AddMath(
      cases, NPVK_OP_EXPM1, [](L x, L) { return std::expm1(x); }, moderate);
  AddMath(
      cases, NPVK_OP_LOG2, [](L x, L) { return std::log2(x); }, positive);
  AddMath(
      cases, NPVK_OP_LOG10, [](L x, L) { return std::log10(x); }, positive);
  AddMath(
      cases, NPVK_OP_LOG1P, [](L x, L) { return std::log1p(x); }, near_zero);
  AddMath(
      cases, NPVK_OP_CBRT, [](L x, L) { return std::cbrt(x); }, wide);
  // ldexp: float edges and random values against exponents around the range ends, clamped to
  // int as NumPy does for int64.
  AddCases(cases, NPVK_OP_LDEXP, [](const Loop &loop, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      return VisitDtype(loop.dtypes[1], [&](auto etag) {
        using E = typename decltype(etag)::type;
        if constexpr (std::is_same_v<E, int32_t> || std::is_same_v<E, int64_t>) {
          std::vector<E> exps = {0,
                                 1,
                                 -1,
                                 2,
                                 10,
                                 -10,
                                 100,
                                 -100,
                                 126,
                                 -126,
                                 127,
                                 -149,
                                 -150,
                                 1023,
                                 -1022,
                                 -1074,
                                 -1075,
                                 1024,
                                 2000,
                                 -2000,
                                 std::numeric_limits<E>::max(),
                                 std::numeric_limits<E>::min()};
          // Subnormal operands too: ldexp works on the bits, so flushing drivers keep them.
          std::vector<T> xs = EdgeValues<T>();
          using L = std::numeric_limits<T>;
          for (T x : {L::denorm_min(), L::min() / T(3), L::min() - L::denorm_min()}) {
            xs.push_back(x);
            xs.push_back(-x);
          }
          std::vector<Bytes> v = BinaryValues<T, E>(rng, xs, exps);
          std::vector<T> a = FromBytes<T>(v[0]);
          std::vector<E> b = FromBytes<E>(v[1]);
          for (size_t i = 0; i < kMathSamples; ++i) {
            a.push_back(static_cast<T>(Spread(rng, -30, 30)));
            b.push_back(static_cast<E>(static_cast<int>(rng() % 2401) - 1200));
          }
          auto ref = [](T x, E n) {
            const int e = static_cast<int>(std::clamp<E>(n, E(-4000), E(4000)));
            return static_cast<T>(std::ldexp(x, e));
          };
          return OpCase{{}, MakeElementFn<T, T, E>(ref), Exact(), {ToBytes(a), ToBytes(b)}};
        } else {
          return OpCase{};
        }
      });
    } else {
      return OpCase{};
    }
  });
  // logaddexp's long double reference loses accuracy where the result cancels, hence 2 ULP.
  AddMath(
      cases, NPVK_OP_LOGADDEXP, [](L x, L y) { return LogAddExpL(x, y, false); }, pairs, 2);
  AddMath(
      cases, NPVK_OP_LOGADDEXP2, [](L x, L y) { return LogAddExpL(x, y, true); }, pairs, 2);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(MathExt, OpCaseTest, ::testing::ValuesIn(MathExtCases()), OpCaseName);

}  // namespace npvk_test
