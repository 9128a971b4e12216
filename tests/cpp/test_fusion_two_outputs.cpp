// Fusion of ops with two outputs (divmod, frexp): both outputs are forwarded in registers to
// later ops of the kernel and contracted when released, and their FP flags are right also when
// the op reads a value the element overwrote in place (flags computed in the main loop).
#include <cmath>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

class FusionTwoOutputs : public NpvkTest {
 protected:
  template <class T>
  std::pair<Buffer, View> Array(const std::vector<T> &values) {
    return MakeArray(ctx(), values);
  }
};

// y = q * 3 + r with (q, r) = divmod(x, 3), and e + e with (m, e) = frexp(x): one kernel, and
// no released temporary is stored.
TEST_F(FusionTwoOutputs, BothOutputsAreForwardedAndContracted) {
  const int64_t n = 1000;
  std::vector<double> xs(n);
  for (int64_t i = 0; i < n; ++i) xs[size_t(i)] = double(i - n / 2);
  auto [xb, x] = Array(xs);
  auto [yb, y] = Array(std::vector<double>(n));
  auto [eb, e2] = Array(std::vector<int32_t>(n));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  const npvk_stats before = GetStats(ctx());
  {
    auto [qb, q] = Array(std::vector<double>(n));
    auto [rb, r] = Array(std::vector<double>(n));
    auto [tb, t] = Array(std::vector<double>(n));
    auto [mb, m] = Array(std::vector<double>(n));
    auto [xpb, xp] = Array(std::vector<int32_t>(n));
    View three = MakeScalar(ctx(), 3.0);
    npvk_view in[2] = {x.get(), three.get()}, qr[2] = {q.get(), r.get()};
    NPVK_ASSERT_OK(npvk_apply(ctx(), NPVK_OP_DIVMOD, 2, in, 2, qr));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_MULTIPLY, q.get(), three.get(), t.get()));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, t.get(), r.get(), y.get()));
    npvk_view me[2] = {m.get(), xp.get()};
    NPVK_ASSERT_OK(npvk_apply(ctx(), NPVK_OP_FREXP, 1, in, 2, me));
    NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, xp.get(), xp.get(), e2.get()));
  }
  const std::vector<double> got = Read<double>(yb);
  const std::vector<int32_t> got_e = Read<int32_t>(eb);
  const npvk_stats now = GetStats(ctx());
  EXPECT_EQ(now.dispatches - before.dispatches, 1u);
  EXPECT_EQ(now.stores_contracted - before.stores_contracted, 5u);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[size_t(i)], xs[size_t(i)]) << i;  // integers: exact
    int exponent = 0;
    std::frexp(xs[size_t(i)], &exponent);
    ASSERT_EQ(got_e[size_t(i)], 2 * exponent) << i;
  }
}

// x = x + 0 in place, then divmod(x, 0): divmod reads a value its element overwrote, so its
// flags come from the main loop: divide by zero from the quotient, invalid from the remainder.
TEST_F(FusionTwoOutputs, FlagsOfAnOpOnAnOverwrittenValue) {
  const int64_t n = 500;
  auto [xb, x] = Array(std::vector<double>(n, 2.5));
  auto [zb, z] = Array(std::vector<double>(n, 0.0));
  auto [qb, q] = Array(std::vector<double>(n));
  auto [rb, r] = Array(std::vector<double>(n));
  View zero = MakeScalar(ctx(), 0.0);
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  npvk_fp_error errors[8];
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  NPVK_ASSERT_OK(npvk_binary(ctx(), NPVK_OP_ADD, x.get(), zero.get(), x.get()));
  npvk_view in[2] = {x.get(), z.get()}, qr[2] = {q.get(), r.get()};
  NPVK_ASSERT_OK(npvk_apply(ctx(), NPVK_OP_DIVMOD, 2, in, 2, qr));
  NPVK_ASSERT_OK(npvk_sync(ctx()));
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx(), errors, 8, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_DIVMOD));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_DIVIDE_BY_ZERO | NPVK_FP_INVALID));
  EXPECT_TRUE(std::isinf(Read<double>(qb)[0]));
  EXPECT_TRUE(std::isnan(Read<double>(rb)[0]));
}

}  // namespace
}  // namespace npvk_test
