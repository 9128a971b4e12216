// The ufuncs of issue 6 beyond test_ops_math.cpp: sign, heaviside, reciprocal, conjugate,
// deg2rad/rad2deg, nextafter, spacing, gcd/lcm and float_power, then the float64 math library's
// transcendental functions against the host's long double libm (docs/accuracy.md).
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
  if constexpr (std::is_signed_v<T>) return a < 0 ? U(U(0) - U(a)) : U(a);
  else return U(a);
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
      return OpCase{{}, MakeElementFn<T, T, T>([fn](T a, T b) { return fn(a, b); }), tol,
                    BinaryValues<T>(rng)};
    }
  });
}

}  // namespace

std::vector<OpCase> MathExtCases() {
  std::vector<OpCase> cases;
  AddUnary(cases, NPVK_OP_SIGN, Exact(), [](auto x) { return Sign(x); });
  AddUnary(cases, NPVK_OP_CONJUGATE, Exact(), [](auto x) { return x; });
  AddUnary(cases, NPVK_OP_RECIPROCAL, Exact(), [](auto x) { return Reciprocal(x); });
  AddUnary(cases, NPVK_OP_DEG2RAD, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>) return Deg2Rad(x);
    else return x;
  });
  AddUnary(cases, NPVK_OP_RAD2DEG, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>) return Rad2Deg(x);
    else return x;
  });
  AddUnary(cases, NPVK_OP_SPACING, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>) return Spacing(x);
    else return x;
  });
  AddBinary(cases, NPVK_OP_HEAVISIDE, Exact(), [](auto x, auto h) {
    if constexpr (kIsFloat<decltype(x)>) return Heaviside(x, h);
    else return x;
  });
  AddBinary(cases, NPVK_OP_NEXTAFTER, Exact(), [](auto x, auto y) {
    if constexpr (kIsFloat<decltype(x)>) return decltype(x)(std::nextafter(x, y));
    else return x;
  });
  AddBinary(cases, NPVK_OP_GCD, Exact(), [](auto a, auto b) {
    if constexpr (kIsInt<decltype(a)>) return Gcd(a, b);
    else return a;
  });
  AddBinary(cases, NPVK_OP_LCM, Exact(), [](auto a, auto b) {
    if constexpr (kIsInt<decltype(a)>) return Lcm(a, b);
    else return a;
  });
  // float_power computes in float64 (NumPy has only its float64 loop; the float32 one rounds
  // the float64 result once), with power's 2-ULP bound.
  AddBinary(cases, NPVK_OP_FLOAT_POWER, Ulps(2), [](auto a, auto b) {
    return decltype(a)(std::pow(double(a), double(b)));
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(MathExt, OpCaseTest, ::testing::ValuesIn(MathExtCases()), OpCaseName);

}  // namespace npvk_test
