// Every op row (compile/ops.cpp) has the facts its op needs: a row that lacks
// its GLSL, or a reduction without its fold rules, fails here.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "compile/dtype.hpp"
#include "compile/families/reduce/reduce_plan.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/ops.hpp"

namespace npvk {
namespace {

// The function a template alternative calls (its text up to '('), if any.
std::vector<std::string> Alternatives(const char *tmpl) {
  std::vector<std::string> out;
  std::string all = tmpl, cur;
  for (char c : all) {
    if (c == ';') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// What is wrong with a row; empty when nothing is.
std::vector<std::string> RowProblems(const OpInfo &r) {
  std::vector<std::string> p;
  if (!r.name || !*r.name) p.push_back("no name");
  if (r.nin < 1 || r.nout < 1 || r.nin + r.nout > kMaxOperands) p.push_back("bad arity");
  if (!r.implemented) return p;
  if (r.kinds == 0) p.push_back("no dtype kinds");
  if (r.gen == OpGen::Template) {
    if (!r.glsl && !r.math_f64) p.push_back("no GLSL template and no math function");
    // A math function serves float loops only: other loops need a template.
    if (!r.glsl && (r.kinds & ~kFloat)) p.push_back("non-float loops without a template");
  } else if (r.glsl || r.math_f64) {
    p.push_back("a custom generator and a template");
  }
  if (r.glsl)
    for (const std::string &alt : Alternatives(r.glsl))
      if (alt.empty()) p.push_back("an empty template alternative");
  if (r.math_f64) {
    const std::string lib = glsl::shader_text("math_f64.glsl");
    if (lib.find(std::string(r.math_f64) + "(") == std::string::npos)
      p.push_back(std::string("math_f64.glsl has no ") + r.math_f64);
  }
  if ((r.pole || r.float_divmod || r.math_f64) && !(r.kinds & kFloat))
    p.push_back("float rules on an op without float loops");
  if (r.compare && (r.nin != 2 || r.rule != LoopRule::ToBool))
    p.push_back("a comparison must be binary and give bool");
  if ((r.fp == FpRule::Divides || r.fp == FpRule::Floors) && r.nin != 2)
    p.push_back("integer division rules on a non-binary op");
  if (r.reducible) {
    if (r.nin != 2 || r.nout != 1) p.push_back("a reducible op must be binary");
    if (r.fold == FloatFold::Compensated && r.identity != Identity::Zero)
      p.push_back("a compensated sum starts from zero");
    // Without an identity the fold starts from the first element, which is
    // right only for idempotent selections (maximum, minimum), whose
    // float16 results are exact.
    if (r.identity == Identity::None && r.half != HalfRule::Exact)
      p.push_back("a reducible op without an identity must be a selection");
  } else if (r.identity != Identity::None || r.fold != FloatFold::Exact) {
    p.push_back("reduction rules on an op that is not reducible");
  }
  return p;
}

TEST(OpRows, RowIIsOpI) {
  for (int i = 0; i < NPVK_OP_COUNT; ++i) EXPECT_EQ(int(op_info(npvk_op(i)).op), i);
}

TEST(OpRows, NamesAreUnique) {
  std::set<std::string> names;
  for (int i = 0; i < NPVK_OP_COUNT; ++i)
    EXPECT_TRUE(names.insert(op_info(npvk_op(i)).name).second) << op_info(npvk_op(i)).name;
}

TEST(OpRows, EveryRowHasItsFields) {
  for (int i = 0; i < NPVK_OP_COUNT; ++i) {
    const OpInfo &r = op_info(npvk_op(i));
    for (const std::string &problem : RowProblems(r)) ADD_FAILURE() << r.name << ": " << problem;
  }
}

// The checker itself: rows with a field taken away must fail it.
TEST(OpRows, CheckerCatchesMissingFields) {
  OpInfo exp = op_info(NPVK_OP_EXP);
  exp.math_f64 = nullptr;
  EXPECT_FALSE(RowProblems(exp).empty());
  OpInfo typo = op_info(NPVK_OP_SIN);
  typo.math_f64 = "npvk_sine_f64";
  EXPECT_FALSE(RowProblems(typo).empty());
  OpInfo add = op_info(NPVK_OP_ADD);
  add.identity = Identity::None;
  EXPECT_FALSE(RowProblems(add).empty());
  OpInfo sub = op_info(NPVK_OP_SUBTRACT);
  sub.fold = FloatFold::Checked;
  EXPECT_FALSE(RowProblems(sub).empty());
}

TEST(OpRows, ReductionFacts) {
  uint64_t bits = 0;
  EXPECT_TRUE(reducible(NPVK_OP_ADD));
  EXPECT_FALSE(reducible(NPVK_OP_SUBTRACT));
  ASSERT_TRUE(reduce_identity(NPVK_OP_MULTIPLY, NPVK_FLOAT32, &bits));
  EXPECT_EQ(bits, 0x3f800000u);
  ASSERT_TRUE(reduce_identity(NPVK_OP_MULTIPLY, NPVK_FLOAT64, &bits));
  EXPECT_EQ(bits, 0x3ff0000000000000ull);
  ASSERT_TRUE(reduce_identity(NPVK_OP_MULTIPLY, NPVK_INT16, &bits));
  EXPECT_EQ(bits, 1u);
  ASSERT_TRUE(reduce_identity(NPVK_OP_BITWISE_AND, NPVK_UINT8, &bits));
  EXPECT_EQ(bits, ~uint64_t(0));
  EXPECT_FALSE(reduce_identity(NPVK_OP_MAXIMUM, NPVK_FLOAT32, &bits));
  EXPECT_FALSE(reduce_identity(NPVK_OP_POWER, NPVK_FLOAT32, &bits));
}

TEST(OpRows, LoopRules) {
  const npvk_dtype half_power[3] = {NPVK_FLOAT16, NPVK_FLOAT16, NPVK_FLOAT16};
  EXPECT_FALSE(op_has_loop(op_info(NPVK_OP_FLOAT_POWER), half_power, 3, nullptr));
  EXPECT_TRUE(op_has_loop(op_info(NPVK_OP_POWER), half_power, 3, nullptr));
  const npvk_dtype mixed[3] = {NPVK_INT64, NPVK_UINT64, NPVK_BOOL};
  EXPECT_TRUE(op_has_loop(op_info(NPVK_OP_LESS), mixed, 3, nullptr));
  EXPECT_FALSE(op_has_loop(op_info(NPVK_OP_LOGICAL_AND), mixed, 3, nullptr));
  EXPECT_TRUE(is_comparison(NPVK_OP_GREATER_EQUAL));
  EXPECT_FALSE(is_comparison(NPVK_OP_MAXIMUM));
}

}  // namespace
}  // namespace npvk
