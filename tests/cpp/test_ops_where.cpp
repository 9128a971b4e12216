// where(c, x, y) with a bool condition and every dtype; exact (it only selects).
#include "op_case_test.hpp"

namespace npvk_test {
namespace {

template <class T>
std::vector<Bytes> WhereValues(std::mt19937 &rng) {
  std::vector<Bytes> xy = BinaryValues<T>(rng);
  std::vector<bool> condition(xy[0].size() / sizeof(T));
  for (size_t i = 0; i < condition.size(); ++i) condition[i] = (rng() & 1u) != 0;
  return {ToBytes(condition), xy[0], xy[1]};
}

}  // namespace

std::vector<OpCase> WhereCases() {
  std::vector<OpCase> cases;
  AddCases(
      cases, NPVK_OP_WHERE,
      [](const Loop &, std::mt19937 &rng, auto tag) {
        using T = typename decltype(tag)::type;
        return OpCase{{},
                      MakeElementFn<T, bool, T, T>([](bool c, T x, T y) { return c ? x : y; }),
                      Exact(),
                      WhereValues<T>(rng)};
      },
      /*key=*/1);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Where, OpCaseTest, ::testing::ValuesIn(WhereCases()), OpCaseName);

}  // namespace npvk_test
