// Cast between every pair of dtypes, with C conversion rules (docs/ops.md): to bool is x != 0,
// float to int truncates and is only defined in the target's range (so only such values are
// used), int to float and float64 to float32 round to nearest even. Exact.
#include <cmath>
#include <limits>

#include "op_case_test.hpp"

namespace npvk_test {
namespace {

// Whether docs/ops.md defines From -> To for x: float to int only when the truncated value
// fits the target, as in NumPy.
template <class From, class To>
bool CastDefined(From x) {
  if constexpr (kIsFloat<From> && kIsInt<To>) {
    if (!std::isfinite(x)) return false;
    // long double holds every int64 and uint64 exactly on x86-64, so the bounds are exact.
    const long double t = std::trunc(static_cast<long double>(x));
    return t >= static_cast<long double>(std::numeric_limits<To>::min()) &&
           t <= static_cast<long double>(std::numeric_limits<To>::max());
  } else {
    return true;
  }
}

template <class From, class To>
To CastRef(From x) {
  if constexpr (kIsBool<To>)
    return x != 0;  // NaN != 0, so NaN is true
  else
    return static_cast<To>(x);  // the compiler's C conversions are the contract
}

// Source values: From's edges and random values, plus for float sources the values just inside
// and outside the integer target's range and fractions that must truncate toward zero.
template <class From, class To>
std::vector<Bytes> CastValues(std::mt19937 &rng) {
  std::vector<From> candidates = EdgeValues<From>();
  for (size_t i = 0; i < kRandomUnary; ++i) candidates.push_back(RandomValue<From>(rng));
  if constexpr (kIsInt<From> && kIsFloat<To>) {
    // Integers one above a tie of the target's rounding: converting through a wider float
    // first rounds them to the tie, which then rounds to even, the wrong way (double rounding).
    const int digits = std::numeric_limits<To>::digits;
    for (int top = digits + 1; top < std::numeric_limits<From>::digits; ++top) {
      const uint64_t tie_plus_one = (uint64_t{1} << top) + (uint64_t{1} << (top - digits)) + 1;
      candidates.push_back(static_cast<From>(tie_plus_one));
      candidates.push_back(static_cast<From>(tie_plus_one - 2));  // exactly below the tie
      if constexpr (std::is_signed_v<From>) candidates.push_back(static_cast<From>(-tie_plus_one));
    }
  }
  if constexpr (kIsFloat<From> && kIsInt<To>) {
    using L = std::numeric_limits<To>;
    const From top = static_cast<From>(std::ldexp(1.0L, L::digits));  // MAX + 1
    const From bottom = std::is_signed_v<To> ? -top : From(0);        // MIN
    for (From x : {std::nextafter(top, From(0)), top, bottom, std::nextafter(bottom, -top),
                   std::nextafter(bottom - From(1), From(0)), From(0.99), From(-0.99), From(127.5),
                   From(-128.5), From(255.5), From(-129.5)}) {
      candidates.push_back(x);
    }
    const double lo = static_cast<double>(L::min());
    const double hi = static_cast<double>(L::max());
    for (size_t i = 0; i < 300; ++i) candidates.push_back(static_cast<From>(Uniform(rng, lo, hi)));
  }
  std::vector<From> values;
  for (From x : candidates) {
    if (CastDefined<From, To>(x)) values.push_back(x);
  }
  return {ToBytes(values)};
}

}  // namespace

std::vector<OpCase> CastCases() {
  std::vector<OpCase> cases;
  AddCases(cases, NPVK_OP_CAST, [](const Loop &loop, std::mt19937 &rng, auto from_tag) {
    using From = typename decltype(from_tag)::type;
    return VisitDtype(loop.dtypes[1], [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      return OpCase{
          {}, MakeElementFn<To, From>(CastRef<From, To>), Exact(), CastValues<From, To>(rng)};
    });
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cast, OpCaseTest, ::testing::ValuesIn(CastCases()), OpCaseName);

}  // namespace npvk_test
