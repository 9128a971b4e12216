// modf and frexp, the two-output ufuncs that take a float apart, against C's modf and frexp on
// the host. Subnormals are included: both work on the bits, so flushing drivers give them too.
#include <cmath>
#include <limits>

#include "op_case_test.hpp"

namespace npvk_test {
namespace {

template <class T>
std::vector<T> PartsEdges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = EdgeValues<T>();
  for (T x : {L::denorm_min(), L::min(), L::min() / T(3), L::min() - L::denorm_min(),
              std::nextafter(T(1), T(0)), std::nextafter(T(1), T(2)), T(0.75), T(1e-5),
              std::ldexp(T(1), L::digits - 1) + T(0.5)}) {
    v.push_back(x);
    v.push_back(-x);
  }
  v.push_back(-L::quiet_NaN());
  return v;
}

template <class Make>
void AddParts(std::vector<OpCase> &cases, npvk_op op, Make make) {
  AddCases(cases, op, [&](const Loop &, std::mt19937 &rng, auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      return OpCase{{}, make(T()), Exact(), UnaryValues<T>(rng, PartsEdges<T>())};
    } else {
      return OpCase{};
    }
  });
}

}  // namespace

std::vector<OpCase> FloatPartsCases() {
  std::vector<OpCase> cases;
  // NumPy's modf returns (fraction, integral part).
  AddParts(cases, NPVK_OP_MODF, [](auto zero) -> ElementFn {
    using T = decltype(zero);
    return [](const uint8_t *const *in, uint8_t *const *out) {
      T ipart;
      Store<T>(out[0], std::modf(Load<T>(in[0]), &ipart));
      Store<T>(out[1], ipart);
    };
  });
  AddParts(cases, NPVK_OP_FREXP, [](auto zero) -> ElementFn {
    using T = decltype(zero);
    return [](const uint8_t *const *in, uint8_t *const *out) {
      int e = 0;
      Store<T>(out[0], std::frexp(Load<T>(in[0]), &e));
      // glibc: 0 for infinities and NaN (C leaves it unspecified); NumPy passes it on.
      Store<int32_t>(out[1], std::isfinite(Load<T>(in[0])) ? e : 0);
    };
  });
  return cases;
}

INSTANTIATE_TEST_SUITE_P(FloatParts, OpCaseTest, ::testing::ValuesIn(FloatPartsCases()),
                         OpCaseName);

}  // namespace npvk_test
