// sqrt, exp, log, power, rounding and floating-point classification against C++ references.
// Tolerances follow docs/ops.md's "Accuracy" section; everything not named there is exact.
#include <cmath>
#include <type_traits>

#include "op_case_test.hpp"
#include "reference_int.hpp"

namespace npvk_test {
namespace {

// exp/log: float64 may be 1 ULP from glibc (docs/ops.md: "at most 1 ULP from glibc's
// result"); float32 is computed in float64 and rounded once, which docs/ops.md bounds by
// 0.5 ULP + 2^-29 relative, and tests allow 2 ULP against a float64-computed reference.
Tolerance TranscendentalTolerance(npvk_dtype dtype) {
  return dtype == NPVK_FLOAT64 ? Ulps(1) : Ulps(2);
}

// power on floats is exp(y * log(x)) in double-double; docs/ops.md allows 2 ULP pending a
// worst-case analysis.
constexpr uint32_t kPowerUlps = 2;

// Random samples per accuracy-bounded op: the bounds are statistical claims, so they get many
// more samples than the exact ops (it costs no extra kernel).
constexpr size_t kAccuracySamples = 20000;

template <class T>
T ExpRef(T x) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(std::exp(double(x)));
  else
    return static_cast<T>(std::exp(x));
}

template <class T>
T LogRef(T x) {
  if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(std::log(double(x)));
  else
    return static_cast<T>(std::log(x));
}

// Exact wrapping repeated multiplication (by squaring: the same product modulo 2^bits). A
// negative exponent gives 0, except bases 1 and -1 (docs/ops.md; NumPy raises there).
template <class T>
T IntPower(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  T result = 1;
  auto e = static_cast<std::make_unsigned_t<T>>(exponent);
  while (e != 0) {
    if (e & 1u) result = WrapMul(result, base);
    base = WrapMul(base, base);
    e >>= 1;
  }
  return result;
}

template <class T>
T Power(T a, T b) {
  if constexpr (kIsInt<T>)
    return IntPower(a, b);
  else if constexpr (kIsFloat<T>)
    return std::pow(a, b);  // powf for float32, as NumPy's loop
  else
    return T();
}

// exp's interesting range: float32 stays clear of results below FLT_MIN (docs/ops.md: lavapipe
// may flush float32 subnormals), float64 spans nearly all finite results.
template <class T>
std::vector<Bytes> ExpValues(std::mt19937 &rng) {
  const double hi = std::is_same_v<T, float> ? 88.0 : 709.0;
  const double lo = std::is_same_v<T, float> ? -87.0 : -708.0;
  std::vector<T> v = EdgeValues<T>();
  for (T x : {T(-1000), T(1e-8), T(-1e-8), T(hi), T(lo)}) v.push_back(x);
  for (size_t i = 0; i < kAccuracySamples; ++i) {
    v.push_back(static_cast<T>(Uniform(rng, lo, hi)));
  }
  for (size_t i = 0; i < kAccuracySamples / 10; ++i) {
    v.push_back(static_cast<T>(Uniform(rng, -1, 1)));
  }
  return {ToBytes(v)};
}

// log over many magnitudes, and close to 1 where the result is small and cancellation bites.
template <class T>
std::vector<Bytes> LogValues(std::mt19937 &rng) {
  const int max_exp = std::is_same_v<T, float> ? 120 : 1000;
  std::vector<T> v = EdgeValues<T>();
  for (size_t i = 0; i < kAccuracySamples; ++i) {
    const int e = static_cast<int>(rng() % (2 * max_exp + 1)) - max_exp;
    v.push_back(static_cast<T>(std::ldexp(Uniform(rng, 1, 2), e)));
  }
  for (int k = 1; k < 40; ++k) {
    v.push_back(T(1) + std::ldexp(T(1), -k));
    v.push_back(T(1) - std::ldexp(T(1), -k));
  }
  return {ToBytes(v)};
}

// Float power: every pair of edges (C99's special cases), then bases in +-[1/16, 16] with
// integral and fractional exponents in [-20, 20], so results stay normal in float32.
template <class T>
std::vector<Bytes> FloatPowerValues(std::mt19937 &rng) {
  std::vector<Bytes> v = BinaryValues<T>(rng, EdgeValues<T>(), EdgeValues<T>());
  std::vector<T> a = FromBytes<T>(v[0]);
  std::vector<T> b = FromBytes<T>(v[1]);
  for (size_t i = 0; i < kAccuracySamples; ++i) {
    T base = static_cast<T>(std::ldexp(Uniform(rng, 1, 2), static_cast<int>(rng() % 9) - 5));
    a.push_back((rng() & 1u) ? -base : base);
    b.push_back(i % 2 ? static_cast<T>(static_cast<int>(rng() % 41) - 20)
                      : static_cast<T>(Uniform(rng, -20, 20)));
  }
  return {ToBytes(a), ToBytes(b)};
}

// Integer power: edge pairs plus small bases with exponents up to 70 (past every width) and
// full-range pairs.
template <class T>
std::vector<Bytes> IntPowerValues(std::mt19937 &rng) {
  std::vector<Bytes> v = BinaryValues<T>(rng);
  std::vector<T> a = FromBytes<T>(v[0]);
  std::vector<T> b = FromBytes<T>(v[1]);
  for (size_t i = 0; i < kRandomBinary; ++i) {
    int64_t base = static_cast<int64_t>(rng() % 21) - 10;
    if (std::is_unsigned_v<T> && base < 0) base = -base;
    a.push_back(static_cast<T>(base));
    b.push_back(static_cast<T>(rng() % 71));
  }
  return {ToBytes(a), ToBytes(b)};
}

template <class Fn>
void AddFloatUnary(std::vector<OpCase> &cases, npvk_op op, Tolerance tol, Fn fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    using R = decltype(fn(T()));
    return OpCase{{}, MakeElementFn<R, T>([fn](T a) { return fn(a); }), tol, UnaryValues<T>(rng)};
  });
}

}  // namespace

std::vector<OpCase> MathCases() {
  std::vector<OpCase> cases;
  AddFloatUnary(cases, NPVK_OP_SQRT, Exact(), [](auto x) { return decltype(x)(std::sqrt(x)); });
  AddCases(cases, NPVK_OP_EXP, [](const Loop &loop, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{},
                  MakeElementFn<T, T>(ExpRef<T>),
                  TranscendentalTolerance(loop.dtypes[0]),
                  ExpValues<T>(rng)};
  });
  AddCases(cases, NPVK_OP_LOG, [](const Loop &loop, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{},
                  MakeElementFn<T, T>(LogRef<T>),
                  TranscendentalTolerance(loop.dtypes[0]),
                  LogValues<T>(rng)};
  });
  AddCases(cases, NPVK_OP_POWER, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      return OpCase{
          {}, MakeElementFn<T, T, T>(Power<T>), Ulps(kPowerUlps), FloatPowerValues<T>(rng)};
    } else {
      return OpCase{{}, MakeElementFn<T, T, T>(Power<T>), Exact(), IntPowerValues<T>(rng)};
    }
  });
  // rint rounds half to even: std::nearbyint in the default rounding mode.
  AddFloatUnary(cases, NPVK_OP_RINT, Exact(),
                [](auto x) { return decltype(x)(std::nearbyint(x)); });
  // bool and integers (NumPy 2's loops): the input itself.
  AddFloatUnary(cases, NPVK_OP_FLOOR, Exact(), [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return decltype(x)(std::floor(x));
    else
      return x;
  });
  AddFloatUnary(cases, NPVK_OP_CEIL, Exact(), [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return decltype(x)(std::ceil(x));
    else
      return x;
  });
  AddFloatUnary(cases, NPVK_OP_TRUNC, Exact(), [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>)
      return decltype(x)(std::trunc(x));
    else
      return x;
  });
  // bool and integer loops too: never NaN or infinite.
  AddFloatUnary(cases, NPVK_OP_ISNAN, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return bool(std::isnan(x));
    else
      return false;
  });
  AddFloatUnary(cases, NPVK_OP_ISINF, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return bool(std::isinf(x));
    else
      return false;
  });
  AddFloatUnary(cases, NPVK_OP_ISFINITE, Exact(), [](auto x) {
    if constexpr (kIsFloat<decltype(x)>)
      return bool(std::isfinite(x));
    else
      return true;
  });
  AddFloatUnary(cases, NPVK_OP_SIGNBIT, Exact(), [](auto x) { return bool(std::signbit(x)); });
  AddCases(cases, NPVK_OP_COPYSIGN, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{},
                  MakeElementFn<T, T, T>([](T a, T b) { return T(std::copysign(a, b)); }),
                  Exact(),
                  BinaryValues<T>(rng)};
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Math, OpCaseTest, ::testing::ValuesIn(MathCases()), OpCaseName);

}  // namespace npvk_test
