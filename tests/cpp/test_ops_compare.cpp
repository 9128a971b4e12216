// Comparisons, logical ops, maximum/minimum/fmax/fmin and clip against C++ references; exact,
// except that a zero from maximum/minimum/fmax/fmin may carry either sign (NumPy's own loops
// differ).
#include <cmath>
#include <type_traits>

#include "op_case_test.hpp"

namespace npvk_test {
namespace {

template <class T>
T Maximum(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a >= b ? a : b;  // bool: or
}

template <class T>
T Minimum(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a <= b ? a : b;  // bool: and
}

// fmax/fmin: the non-NaN operand when exactly one is NaN.
template <class T>
T Fmax(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
  }
  return a >= b ? a : b;
}

template <class T>
T Fmin(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
  }
  return a <= b ? a : b;
}

// NumPy's clip loop: minimum(maximum(x, lo), hi), where each step keeps a
// NaN first operand (so a NaN bound gives NaN) and returns the second
// operand of equal ones.
template <class T>
T Clip(T x, T lo, T hi) {
  auto nan = [](T v) {
    if constexpr (kIsFloat<T>) return std::isnan(v);
    return false;
  };
  const T low = nan(x) || x > lo ? x : lo;
  return nan(low) || low < hi ? low : hi;
}

template <class T>
std::vector<Bytes> ClipValues(std::mt19937 &rng) {
  std::vector<Bytes> x_lo = BinaryValues<T>(rng);
  std::vector<Bytes> hi = BinaryValues<T>(rng);
  return {x_lo[0], x_lo[1], hi[1]};
}

// -1, 0 or 1 as a is below, equal to or above b, by value (int64 with uint64).
template <class A, class B>
int CompareValues(A a, B b) {
  if constexpr (std::is_signed_v<A> && !std::is_signed_v<B>) {
    if (a < 0) return -1;
    return uint64_t(a) < b ? -1 : uint64_t(a) > b ? 1 : 0;
  } else {
    return -CompareValues(b, a);
  }
}

template <class Fn>
void AddPredicate(std::vector<OpCase> &cases, npvk_op op, Fn fn) {
  AddCases(cases, op, [&](const Loop &loop, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
      if (loop.dtypes[0] != loop.dtypes[1]) {  // NumPy 2's qQ->? and Qq->?
        using U = std::conditional_t<std::is_same_v<T, int64_t>, uint64_t, int64_t>;
        return OpCase{
            {},
            MakeElementFn<bool, T, U>([fn](T a, U b) { return bool(fn(CompareValues(a, b), 0)); }),
            Exact(),
            BinaryValues<T, U>(rng)};
      }
    }
    return OpCase{{},
                  MakeElementFn<bool, T, T>([fn](T a, T b) { return bool(fn(a, b)); }),
                  Exact(),
                  BinaryValues<T>(rng)};
  });
}

template <class Fn>
void AddExtremum(std::vector<OpCase> &cases, npvk_op op, Fn fn) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    Tolerance tol = Exact();
    tol.signed_zero_equal = true;
    return OpCase{
        {}, MakeElementFn<T, T, T>([fn](T a, T b) { return fn(a, b); }), tol, BinaryValues<T>(rng)};
  });
}

}  // namespace

std::vector<OpCase> CompareCases() {
  std::vector<OpCase> cases;
  // C++'s operators are IEEE comparisons: NaN compares unequal, -0.0 == 0.0.
  AddPredicate(cases, NPVK_OP_EQUAL, [](auto a, auto b) { return a == b; });
  AddPredicate(cases, NPVK_OP_NOT_EQUAL, [](auto a, auto b) { return a != b; });
  AddPredicate(cases, NPVK_OP_LESS, [](auto a, auto b) { return a < b; });
  AddPredicate(cases, NPVK_OP_LESS_EQUAL, [](auto a, auto b) { return a <= b; });
  AddPredicate(cases, NPVK_OP_GREATER, [](auto a, auto b) { return a > b; });
  AddPredicate(cases, NPVK_OP_GREATER_EQUAL, [](auto a, auto b) { return a >= b; });
  // Logical ops look at x != 0, so NaN is true and -0.0 is false.
  AddPredicate(cases, NPVK_OP_LOGICAL_AND, [](auto a, auto b) { return a != 0 && b != 0; });
  AddPredicate(cases, NPVK_OP_LOGICAL_OR, [](auto a, auto b) { return a != 0 || b != 0; });
  AddPredicate(cases, NPVK_OP_LOGICAL_XOR, [](auto a, auto b) { return (a != 0) != (b != 0); });
  AddCases(cases, NPVK_OP_LOGICAL_NOT, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{
        {}, MakeElementFn<bool, T>([](T a) { return a == 0; }), Exact(), UnaryValues<T>(rng)};
  });
  AddExtremum(cases, NPVK_OP_MAXIMUM, [](auto a, auto b) { return Maximum(a, b); });
  AddExtremum(cases, NPVK_OP_MINIMUM, [](auto a, auto b) { return Minimum(a, b); });
  AddExtremum(cases, NPVK_OP_FMAX, [](auto a, auto b) { return Fmax(a, b); });
  AddExtremum(cases, NPVK_OP_FMIN, [](auto a, auto b) { return Fmin(a, b); });
  AddCases(cases, NPVK_OP_CLIP, [](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    return OpCase{{}, MakeElementFn<T, T, T, T>(Clip<T>), Exact(), ClipValues<T>(rng)};
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Compare, OpCaseTest, ::testing::ValuesIn(CompareCases()), OpCaseName);

}  // namespace npvk_test
