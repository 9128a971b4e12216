// Kernel keys name compiled pipelines (and the disk cache's entries): they
// must not change unless a kernel's code does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compile/families/matmul/matmul_plan.hpp"
#include "compile/families/reduce/reduce_plan.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/view.hpp"

namespace npvk {
namespace {

KernelSpec Spec(npvk_op op, std::vector<npvk_dtype> in, std::vector<npvk_dtype> out) {
  KernelSpec s;
  s.op = op;
  s.nin = uint32_t(in.size());
  s.nout = uint32_t(out.size());
  for (size_t k = 0; k < in.size(); ++k) s.operands[k].dtype = in[k];
  for (size_t k = 0; k < out.size(); ++k) s.operands[in.size() + k].dtype = out[k];
  return s;
}

TEST(KernelKeys, SingleOps) {
  KernelSpec add = Spec(NPVK_OP_ADD, {NPVK_FLOAT64, NPVK_FLOAT64}, {NPVK_FLOAT64});
  add.operands[1].scalar = true;
  EXPECT_EQ(add.key(), "add(f8,f8s)->f8/c");
  KernelSpec divmod = Spec(NPVK_OP_DIVMOD, {NPVK_INT8, NPVK_INT8}, {NPVK_INT8, NPVK_INT8});
  divmod.contiguous = false;
  divmod.rank = 3;
  EXPECT_EQ(divmod.key(), "divmod(i1,i1)->i1,i1/r3");
  EXPECT_EQ(Spec(NPVK_OP_CAST, {NPVK_FLOAT16}, {NPVK_UINT64}).key(), "cast(f2)->u8/c");
  EXPECT_EQ(Spec(NPVK_OP_LESS, {NPVK_INT64, NPVK_UINT64}, {NPVK_BOOL}).key(), "less(i8,u8)->b1/c");
}

TEST(KernelKeys, FixedExponent) {
  KernelSpec pow = Spec(NPVK_OP_POWER, {NPVK_FLOAT64, NPVK_FLOAT64}, {NPVK_FLOAT64});
  pow.operands[1].scalar = true;
  EXPECT_EQ(pow.key(), "power(f8,f8s)->f8/c");
  auto form = [&](npvk_dtype dtype, uint64_t bits) {
    View v;
    v.scalar = true;
    v.dtype = dtype;
    v.scalar_bits = bits;
    return fixed_exponent_of(pow, v);
  };
  auto f8 = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  };
  pow.exponent = form(NPVK_FLOAT64, f8(3.0));
  EXPECT_EQ(pow.key(), "power^3(f8,f8s)->f8/c");
  EXPECT_EQ(form(NPVK_FLOAT64, f8(-2.0)).key_suffix(), "^-2");
  EXPECT_EQ(form(NPVK_FLOAT64, f8(0.5)).key_suffix(), "^0.5");
  EXPECT_EQ(form(NPVK_FLOAT32, 0x40000000u).key_suffix(), "^2");  // 2.0f
  EXPECT_EQ(form(NPVK_FLOAT16, 0x4600u).key_suffix(), "^6");      // 6.0 in half
  // The general pow for everything else: other values, NaN, array exponents.
  for (double y : {0.0, 1.0, 9.0, -9.0, 2.5, -0.5, std::nan("")})
    EXPECT_EQ(form(NPVK_FLOAT64, f8(y)).kind, FixedExponent::None) << y;
  View array = {};
  EXPECT_EQ(fixed_exponent_of(pow, array).kind, FixedExponent::None);
  KernelSpec ints = Spec(NPVK_OP_POWER, {NPVK_INT64, NPVK_INT64}, {NPVK_INT64});
  ints.operands[1].scalar = true;
  View three;
  three.scalar = true;
  three.dtype = NPVK_INT64;
  three.scalar_bits = 3;
  EXPECT_EQ(fixed_exponent_of(ints, three).kind, FixedExponent::None);
  // In a fused kernel the form follows the op's name.
  FusedKernelSpec s;
  s.slots = {{NPVK_FLOAT64, false, true}, {NPVK_FLOAT64, true, true}};
  FusedKernelSpec::Step step;
  step.op = pow;
  step.slot[0] = 0, step.slot[1] = 1, step.slot[2] = 0;
  s.steps = {step};
  EXPECT_EQ(s.key(), "s:f8,f8s|power^3(0,1)->0/c");
}

TEST(KernelKeys, Fused) {
  FusedKernelSpec s;
  s.slots = {{NPVK_FLOAT64, false, true}, {NPVK_FLOAT64, true, true}, {NPVK_FLOAT64, false, false}};
  FusedKernelSpec::Step add, exp;
  add.op = Spec(NPVK_OP_ADD, {NPVK_FLOAT64, NPVK_FLOAT64}, {NPVK_FLOAT64});
  add.slot[0] = 0, add.slot[1] = 1, add.slot[2] = 2;
  exp.op = Spec(NPVK_OP_EXP, {NPVK_FLOAT64}, {NPVK_FLOAT64});
  exp.slot[0] = 2, exp.slot[1] = 2;
  s.steps = {add, exp};
  EXPECT_EQ(s.key(), "s:f8,f8s,f8-|add(0,1)->2;exp(2)->2/c");
  s.contiguous = false;
  s.rank = 2;
  s.narrow_index = true;
  EXPECT_EQ(s.key(), "s:f8,f8s,f8-|add(0,1)->2;exp(2)->2/r2n");
  s.narrow_offsets = true;  // 32-bit offsets are other code
  EXPECT_EQ(s.key(), "s:f8,f8s,f8-|add(0,1)->2;exp(2)->2/r2no");
}

// The vector path is code of its own, so it has a key of its own: the
// generator reads it from the spec, not from the environment.
TEST(KernelKeys, VectorAccess) {
  FusedKernelSpec s;
  s.slots = {{NPVK_FLOAT32, false, true}, {NPVK_FLOAT32, false, true}};
  FusedKernelSpec::Step neg;
  neg.op = Spec(NPVK_OP_NEGATIVE, {NPVK_FLOAT32}, {NPVK_FLOAT32});
  neg.slot[0] = 0, neg.slot[1] = 1;
  s.steps = {neg};
  EXPECT_EQ(s.key(), "s:f4,f4|negative(0)->1/c");
  s.vector_access = true;
  EXPECT_EQ(s.key(), "s:f4,f4|negative(0)->1/cv");
  s.narrow_offsets = true;
  EXPECT_EQ(s.key(), "s:f4,f4|negative(0)->1/cvo");
}

TEST(KernelKeys, ReduceScanMatmul) {
  ReduceKernelSpec r;
  r.op = NPVK_OP_ADD;
  r.in = NPVK_INT8;
  r.out = NPVK_INT64;
  r.mode = ReduceMode::Workgroup;
  r.outer_rank = 1;
  r.inner_rank = 1;
  EXPECT_EQ(r.key(), "reduce:add(i1)->i8/w/o1i1");
  r.mode = ReduceMode::PerThread;
  r.op = NPVK_OP_MAXIMUM;
  EXPECT_EQ(r.key(), "reduce:maximum(i1)->i8/t/o1i1");
  r.mode = ReduceMode::Scan;
  r.op = NPVK_OP_ADD;
  r.in = NPVK_INT32;
  EXPECT_EQ(r.key(), "scan:add(i4)->i8/o1");
  MatmulOp m;
  m.dtype = NPVK_FLOAT64;
  m.batch_shape = {3};
  EXPECT_EQ(m.key(), "matmul:f8/b1");
}

}  // namespace
}  // namespace npvk
