// Input values: the edge values each dtype must survive, and seeded random values.
#ifndef NPVK_TESTS_CPP_VALUES_HPP
#define NPVK_TESTS_CPP_VALUES_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dtypes.hpp"

namespace npvk_test {

// Removes repeats (a narrow type folds several of the listed values together), keeping the
// first occurrence; NaNs are kept once.
template <class T>
std::vector<T> Unique(const std::vector<T> &values) {
  std::vector<T> out;
  for (T v : values) {
    bool seen = std::any_of(out.begin(), out.end(),
                            [&](T o) { return std::memcmp(&o, &v, sizeof(T)) == 0; });
    if (!seen) out.push_back(v);
  }
  return out;
}

// 0, +-1, MIN, MAX, and the values whose signs matter for floor_divide/remainder/fmod and whose
// size matters for shifts (bit width - 1, width, width + 1, negative counts).
template <class T>
std::vector<T> EdgeValues() {
  using L = std::numeric_limits<T>;
  if constexpr (kIsBool<T>) {
    return {false, true};
  } else if constexpr (kIsInt<T>) {
    const T bits = static_cast<T>(sizeof(T) * 8);
    std::vector<T> v = {0,
                        1,
                        2,
                        3,
                        5,
                        7,
                        13,
                        static_cast<T>(bits - 1),
                        bits,
                        static_cast<T>(bits + 1),
                        L::max(),
                        static_cast<T>(L::max() - 1),
                        static_cast<T>(L::max() / 2),
                        static_cast<T>(L::max() / 2 + 1)};
    if constexpr (std::is_signed_v<T>) {
      for (T x : {-1, -2, -3, -5, -7, -13}) v.push_back(x);
      v.push_back(static_cast<T>(-bits));
      v.push_back(L::min());
      v.push_back(static_cast<T>(L::min() + 1));
      v.push_back(static_cast<T>(L::min() / 2));
    }
    return Unique(v);
  } else {
    // float32 edges stay clear of subnormals (lavapipe may flush them, docs/ops.md); 1e-30f is
    // normal. 2^digits and the half-integer just below 2^(digits-1) probe rounding ops.
    const T big = std::is_same_v<T, float> ? T(1e30f) : T(1e300);
    const T tiny = std::is_same_v<T, float> ? T(1e-30f) : T(1e-300);
    const T two_digits = std::ldexp(T(1), L::digits);
    const T below_half = std::ldexp(T(1), L::digits - 1) - T(0.5);
    return {T(0),          -T(0),
            T(1),          -T(1),
            T(0.5),        -T(0.5),
            T(1.5),        -T(1.5),
            T(2.5),        -T(2.5),
            T(3),          -T(3),
            T(7),          -T(7),
            T(0.1),        -T(0.1),
            T(1e10),       -T(1e10),
            big,           -big,
            L::max(),      -L::max(),
            tiny,          -tiny,
            two_digits,    two_digits + T(2),
            below_half,    -below_half,
            L::infinity(), -L::infinity(),
            L::quiet_NaN()};
  }
}

// Random values mixing the full range with small magnitudes, so that quotients, remainders and
// shift counts are not all trivial. Floats are normal numbers with exponents in [-20, 20] or
// half-integers (rounding ties).
template <class T>
T RandomValue(std::mt19937 &rng) {
  if constexpr (kIsBool<T>) {
    return (rng() & 1u) != 0;
  } else if constexpr (kIsInt<T>) {
    if (rng() % 3 == 0) {
      int64_t small = static_cast<int64_t>(rng() % 201) - 100;
      if (std::is_unsigned_v<T>) small = small < 0 ? -small : small;
      return static_cast<T>(small);
    }
    uint64_t bits = (static_cast<uint64_t>(rng()) << 32) | rng();
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  } else {
    if (rng() % 3 == 0) return T(static_cast<int>(rng() % 4001) - 2000) / T(2);
    std::uniform_real_distribution<double> mantissa(1.0, 2.0);
    int exponent = static_cast<int>(rng() % 41) - 20;
    T v = static_cast<T>(std::ldexp(mantissa(rng), exponent));
    return (rng() & 1u) ? -v : v;
  }
}

template <class T>
std::vector<T> RandomValues(std::mt19937 &rng, size_t n) {
  std::vector<T> out;
  for (size_t i = 0; i < n; ++i) out.push_back(RandomValue<T>(rng));
  return out;
}

// A uniform double in [lo, hi).
inline double Uniform(std::mt19937 &rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// A stable seed per test case name, so a failure reproduces run after run.
inline uint32_t SeedFor(const std::string &name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_VALUES_HPP
