// Kernel keys name compiled pipelines (and the disk cache's entries): they
// must not change unless a kernel's code does.
#include <gtest/gtest.h>

#include "compile/kernel_spec.hpp"
#include "compile/matmul.hpp"
#include "compile/reduction.hpp"

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
