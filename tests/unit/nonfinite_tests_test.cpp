// Which results a fused kernel's main loop tests for a non-finite value
// (glsl::nonfinite_tested): a result needs no test of its own only where a
// later op carries its infinity or NaN into a value that is tested.
#include <gtest/gtest.h>

#include <vector>

#include "compile/glsl_parts.hpp"

namespace npvk {
namespace {

struct Chain {
  FusedKernelSpec spec;
  // Step `op` reading slots `in`, writing slot `out` (all float64).
  Chain &step(npvk_op op, std::vector<uint8_t> in, uint8_t out,
              FixedExponent exponent = FixedExponent{}) {
    FusedKernelSpec::Step st;
    st.op.op = op;
    st.op.nin = uint32_t(in.size());
    st.op.nout = 1;
    st.op.exponent = exponent;
    for (uint32_t k = 0; k <= in.size(); ++k) st.op.operands[k].dtype = NPVK_FLOAT64;
    for (size_t k = 0; k < in.size(); ++k) st.slot[k] = in[k];
    st.slot[in.size()] = out;
    for (uint8_t s : in) grow(s);
    grow(out);
    spec.steps.push_back(st);
    return *this;
  }
  std::vector<bool> tested() const {
    return glsl::nonfinite_tested(spec, std::vector<bool>(spec.steps.size(), true));
  }
  void grow(uint8_t slot) {
    if (spec.slots.size() <= slot) spec.slots.resize(slot + 1u, {NPVK_FLOAT64, false, true});
  }
};

TEST(NonfiniteTests, ArithmeticChainTestsOnlyItsLastResult) {
  // ((a * b) + c) - d: an infinity anywhere reaches the last result.
  Chain c;
  c.step(NPVK_OP_MULTIPLY, {0, 1}, 4)
      .step(NPVK_OP_ADD, {4, 2}, 4)
      .step(NPVK_OP_SUBTRACT, {4, 3}, 5);
  EXPECT_EQ(c.tested(), (std::vector<bool>{false, false, true}));
}

TEST(NonfiniteTests, AbsorbingInputsKeepTheirTests) {
  // 1 / (a * b): x / inf is 0, so the product is tested; exp(-inf) is 0.
  Chain c;
  c.step(NPVK_OP_MULTIPLY, {0, 1}, 3).step(NPVK_OP_TRUE_DIVIDE, {2, 3}, 4);
  EXPECT_EQ(c.tested(), (std::vector<bool>{true, true}));
  Chain e;
  e.step(NPVK_OP_MULTIPLY, {0, 1}, 3).step(NPVK_OP_EXP, {3}, 4);
  EXPECT_EQ(e.tested(), (std::vector<bool>{true, true}));
  // The numerator of a division carries.
  Chain n;
  n.step(NPVK_OP_MULTIPLY, {0, 1}, 3).step(NPVK_OP_TRUE_DIVIDE, {3, 2}, 4);
  EXPECT_EQ(n.tested(), (std::vector<bool>{false, true}));
}

TEST(NonfiniteTests, OneCarryingReaderIsEnough) {
  // t = a * b read by where (absorbs) and by t + c (carries, tested).
  Chain c;
  c.step(NPVK_OP_MULTIPLY, {0, 1}, 3)
      .step(NPVK_OP_WHERE, {2, 3, 0}, 4)
      .step(NPVK_OP_ADD, {3, 1}, 5);
  EXPECT_EQ(c.tested(), (std::vector<bool>{false, true, true}));
}

TEST(NonfiniteTests, AnUnwatchedReaderCarriesNothing) {
  // A reader whose result is not watched (an in-place step that computes its
  // flags branch-free) cannot stand in for the producer's test.
  Chain c;
  c.step(NPVK_OP_MULTIPLY, {0, 1}, 3).step(NPVK_OP_ADD, {3, 2}, 4);
  EXPECT_EQ(glsl::nonfinite_tested(c.spec, {true, false}), (std::vector<bool>{true, false}));
}

TEST(NonfiniteTests, OverwrittenSlotsFollowTheirWriters) {
  // Slot 3 is written twice; the second write's reader does not cover the
  // first value, which only an exp (absorbing) reads.
  Chain c;
  c.step(NPVK_OP_MULTIPLY, {0, 1}, 3)
      .step(NPVK_OP_EXP, {3}, 4)
      .step(NPVK_OP_ADD, {0, 1}, 3)
      .step(NPVK_OP_MULTIPLY, {3, 4}, 5);
  EXPECT_EQ(c.tested(), (std::vector<bool>{true, false, false, true}));
}

TEST(NonfiniteTests, FixedPowersCarryOnlyForPositiveExponents) {
  Chain cube;
  cube.step(NPVK_OP_MULTIPLY, {0, 1}, 2)
      .step(NPVK_OP_POWER, {2, 1}, 3, {FixedExponent::Integer, 3});
  EXPECT_EQ(cube.tested(), (std::vector<bool>{false, true}));
  Chain inverse;  // inf**-1 is 0
  inverse.step(NPVK_OP_MULTIPLY, {0, 1}, 2)
      .step(NPVK_OP_POWER, {2, 1}, 3, {FixedExponent::Integer, -1});
  EXPECT_EQ(inverse.tested(), (std::vector<bool>{true, true}));
  Chain general;  // pow(NaN, 0) is 1
  general.step(NPVK_OP_MULTIPLY, {0, 1}, 2).step(NPVK_OP_POWER, {2, 1}, 3);
  EXPECT_EQ(general.tested(), (std::vector<bool>{true, true}));
}

}  // namespace
}  // namespace npvk
