// docs/ops.md's table against what the library reports (npvk_op_get_info, npvk_op_supported),
// and against what the test_ops_*.cpp files cover: all three must agree.
#include <algorithm>
#include <set>

#include "npvk_test_support.hpp"
#include "op_case.hpp"

namespace npvk_test {
namespace {

using DtypeList = std::vector<npvk_dtype>;

class OpTableTest : public NpvkTest {};

// Every dtype the ABI names, float16 included.
std::vector<npvk_dtype> AbiDtypes() {
  std::vector<npvk_dtype> all;
  for (int d = 0; d < NPVK_DTYPE_COUNT; ++d) all.push_back(static_cast<npvk_dtype>(d));
  return all;
}

// Calls f on every combination of `count` dtypes.
template <class F>
void ForEachCombination(uint32_t count, F f) {
  const std::vector<npvk_dtype> all = AbiDtypes();
  std::vector<size_t> pick(count, 0);
  std::vector<npvk_dtype> dtypes(count);
  while (true) {
    for (uint32_t i = 0; i < count; ++i) dtypes[i] = all[pick[i]];
    f(dtypes);
    uint32_t i = count;
    while (i > 0 && ++pick[i - 1] == all.size()) pick[--i] = 0;
    if (i == 0) return;
  }
}

std::set<std::pair<int, DtypeList>> LoopSet(const std::vector<Loop> &loops) {
  std::set<std::pair<int, DtypeList>> set;
  for (const Loop &l : loops) set.insert({l.op, l.dtypes});
  return set;
}

TEST(OpTable, InfoMatchesNumPyNamesAndDocs) {
  for (int i = 0; i < NPVK_OP_COUNT; ++i) {
    const npvk_op op = static_cast<npvk_op>(i);
    const OpSignature &want = Signature(op);
    SCOPED_TRACE(want.name);
    npvk_op_info info{};
    info.struct_size = sizeof(info);
    NPVK_ASSERT_OK(npvk_op_get_info(op, &info));
    ASSERT_NE(info.name, nullptr);
    EXPECT_STREQ(info.name, want.name);
    EXPECT_EQ(info.nin, want.nin);
    EXPECT_EQ(info.nout, want.nout);
    EXPECT_EQ(info.implemented != 0, IsDocumented(op))
        << "implemented = " << info.implemented << " but docs/ops.md "
        << (IsDocumented(op) ? "lists" : "does not list") << " the op";
  }
}

// Exactly the documented loops are supported on a device with every capability npvk uses
// (lavapipe has them all); on a device without one, loops needing it are not checked.
// npvk_op_has_loop must match the docs everywhere (a mismatch shows as NPVK_ERR_INTERNAL).
TEST_F(OpTableTest, SupportedMatchesDocs) {
  npvk_device_info dev{};
  dev.struct_size = sizeof(dev);
  NPVK_ASSERT_OK(npvk_context_device_info(ctx(), &dev));
  auto device_has = [&](npvk_dtype d) {
    switch (d) {
      case NPVK_FLOAT64:
      case NPVK_FLOAT32:  // float32 transcendentals and fmod compute in float64
      case NPVK_FLOAT16:  // and float16 ones through float32's
        return dev.float64 != 0;
      case NPVK_INT64:
      case NPVK_UINT64:
        return dev.int64 != 0;
      case NPVK_INT16:
      case NPVK_UINT16:
        return dev.int16 != 0 && dev.storage16 != 0;
      case NPVK_BOOL:
      case NPVK_INT8:
      case NPVK_UINT8:
        return dev.int8 != 0 && dev.storage8 != 0;
      default:
        return true;
    }
  };
  auto documented = LoopSet(DocumentedLoops());
  for (const auto &loop : LoopSet(Float16Loops())) documented.insert(loop);
  int64_t checked = 0;
  for (int i = 0; i < NPVK_OP_COUNT; ++i) {
    const npvk_op op = static_cast<npvk_op>(i);
    const OpSignature &sig = Signature(op);
    const bool is_documented = IsDocumented(op);
    int64_t wrong = 0;
    std::string first_wrong;
    ForEachCombination(sig.nin + sig.nout, [&](const std::vector<npvk_dtype> &dtypes) {
      // Unimplemented ops: only the same-dtype combinations, enough to see a stray "yes".
      if (!is_documented &&
          std::adjacent_find(dtypes.begin(), dtypes.end(), std::not_equal_to<>()) != dtypes.end()) {
        return;
      }
      int supported = -1;
      npvk_status s = npvk_op_supported(ctx(), op, dtypes.data(),
                                        static_cast<uint32_t>(dtypes.size()), &supported);
      // npvk_op_has_loop answers for a device with every capability: always the docs.
      int has_loop = -1;
      const npvk_status hs =
          npvk_op_has_loop(op, dtypes.data(), static_cast<uint32_t>(dtypes.size()), &has_loop);
      ++checked;
      const bool want = documented.count({op, dtypes}) > 0;
      if (hs != NPVK_SUCCESS || (has_loop == 1) != want) s = NPVK_ERR_INTERNAL;
      const bool checkable = std::all_of(dtypes.begin(), dtypes.end(), device_has) || !want;
      if (s == NPVK_SUCCESS && (supported == 1) == want) return;
      if (s == NPVK_SUCCESS && supported == 0 && !checkable) return;
      if (wrong++ == 0) {
        first_wrong = Signature(op).name;
        for (npvk_dtype d : dtypes) first_wrong += std::string(" ") + DtypeName(d);
        first_wrong += " -> status " + std::string(npvk_status_string(s)) +
                       ", supported = " + std::to_string(supported) +
                       ", docs/ops.md: " + (want ? "yes" : "no");
      }
    });
    EXPECT_EQ(wrong, 0) << wrong << " dtype combination(s) of " << sig.name
                        << " disagree with docs/ops.md, first: " << first_wrong;
  }
  EXPECT_GT(checked, 0);
}

// Every documented loop has a case with a reference, and no case tests an undocumented loop.
TEST(OpTable, CasesCoverEveryDocumentedLoop) {
  std::vector<Loop> covered;
  for (auto build : {ArithCases, MathCases, MathExtCases, BitwiseCases, CompareCases, WhereCases,
                     CastCases, FloatPartsCases}) {
    for (const OpCase &c : build()) covered.push_back(c.loop);
  }
  const auto want = LoopSet(DocumentedLoops());
  const auto have = LoopSet(covered);
  EXPECT_EQ(have.size(), covered.size()) << "a loop is tested by two cases";
  for (const Loop &l : DocumentedLoops()) {
    EXPECT_TRUE(have.count({l.op, l.dtypes})) << "no case for " << LoopName(l);
  }
  for (const Loop &l : covered) {
    EXPECT_TRUE(want.count({l.op, l.dtypes})) << "case for an undocumented loop " << LoopName(l);
  }
}

}  // namespace
}  // namespace npvk_test
