// The fusion planner's decisions (compile/fusion.hpp, plan_kernels): which
// recorded ops share a kernel and which intermediates are never stored. The
// buffers are fakes: the planner only compares the pointers and hands them to
// `dead` (compile/fusion.cpp never dereferences a Buffer).
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <set>
#include <utility>

#include "compile/dtype.hpp"
#include "compile/fusion.hpp"

namespace npvk {
namespace {

// Distinct Buffer pointers that share one owner and are never dereferenced.
class FakeBuffers {
 public:
  // Pointer arithmetic needs a complete type, so step through bytes of the
  // owner; each fake names a different byte.
  std::shared_ptr<Buffer> make() {
    return std::shared_ptr<Buffer>(owner_, reinterpret_cast<Buffer *>(owner_->data() + next_++));
  }

 private:
  std::shared_ptr<std::array<char, 64>> owner_ = std::make_shared<std::array<char, 64>>();
  int next_ = 1;
};

// A C-contiguous float32 view of `shape` at the start of `buffer`.
View Array(const std::shared_ptr<Buffer> &buffer, std::vector<int64_t> shape) {
  View v;
  v.buffer = buffer;
  v.dtype = NPVK_FLOAT32;
  v.ndim = uint32_t(shape.size());
  int64_t stride = 4;
  for (int d = int(v.ndim) - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

// The transpose of a C-contiguous (rows, cols) float32 view: (cols, rows),
// not in memory order, so its op keeps its shape (plan_iteration flattens
// only ops whose arrays are all in order).
View Transposed(const std::shared_ptr<Buffer> &buffer, int64_t rows, int64_t cols) {
  View v = Array(buffer, {rows, cols});
  std::swap(v.shape[0], v.shape[1]);
  std::swap(v.strides[0], v.strides[1]);
  return v;
}

// A recorded op as record() would queue it: inputs, then one output.
RecordedOp Op(npvk_op op, std::vector<View> operands) {
  RecordedOp r;
  r.spec.op = op;
  r.spec.nin = uint32_t(operands.size() - 1);
  r.spec.nout = 1;
  r.operands.assign(operands.begin(), operands.end());
  std::vector<const View *> ptrs;
  for (size_t k = 0; k < r.operands.size(); ++k) {
    const View &v = r.operands[k];
    r.spec.operands[k].dtype = v.dtype;
    r.spec.operands[k].scalar = v.scalar;
    int64_t lo = 0, hi = 0;
    if (!v.scalar) v.byte_extent(dtype_info(v.dtype).itemsize, lo, hi);
    r.lo.push_back(lo);
    r.hi.push_back(hi);
    ptrs.push_back(&v);
  }
  r.space = plan_iteration(ptrs, r.spec.nin);
  return r;
}

auto NoneDead = [](const View &) { return false; };

// t = a + b; c = t * b over n elements, each array in its own buffer.
struct Chain {
  FakeBuffers fakes;
  std::shared_ptr<Buffer> a = fakes.make(), b = fakes.make(), t = fakes.make(), c = fakes.make();
  std::vector<RecordedOp> ops;
  explicit Chain(int64_t n) {
    ops.push_back(Op(NPVK_OP_ADD, {Array(a, {n}), Array(b, {n}), Array(t, {n})}));
    ops.push_back(Op(NPVK_OP_MULTIPLY, {Array(t, {n}), Array(b, {n}), Array(c, {n})}));
  }
};

TEST(FusionPlan, DependentChainFusesIntoOneKernel) {
  Chain chain(1000);
  std::vector<PlannedKernel> k = plan_kernels(chain.ops, true, 1, NoneDead);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].ops, std::vector<size_t>({0, 1}));
  ASSERT_EQ(k[0].spec.steps.size(), 2u);
  // Slots a, b, t, c: b and t are shared, not duplicated.
  ASSERT_EQ(k[0].slots.size(), 4u);
  EXPECT_EQ(k[0].spec.steps[1].slot[0], 2);  // t, forwarded from step 0
  EXPECT_EQ(k[0].spec.steps[1].slot[1], 1);  // b
  EXPECT_EQ(k[0].spec.steps[1].slot[2], 3);  // c
  // t is written before it is read, so it is never loaded from memory.
  EXPECT_TRUE(k[0].slots[2].written);
  EXPECT_FALSE(k[0].slots[2].read);
  EXPECT_TRUE(k[0].slots[1].read);
  EXPECT_FALSE(k[0].slots[1].written);
  for (const FusedKernelSpec::Slot &s : k[0].spec.slots) EXPECT_TRUE(s.stored);
  EXPECT_EQ(k[0].contracted_bytes, 0u);
  EXPECT_TRUE(k[0].spec.contiguous);
  EXPECT_EQ(k[0].space.count, 1000);
}

TEST(FusionPlan, FuseOffGivesOneKernelPerOp) {
  Chain chain(1000);
  // Even with every buffer dead, nothing is contracted without fusion.
  std::vector<PlannedKernel> k =
      plan_kernels(chain.ops, false, 1, [](const View &) { return true; });
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].ops, std::vector<size_t>({0}));
  EXPECT_EQ(k[1].ops, std::vector<size_t>({1}));
  for (const PlannedKernel &kernel : k) {
    EXPECT_EQ(kernel.spec.steps.size(), 1u);
    EXPECT_EQ(kernel.contracted_bytes, 0u);
    for (const FusedKernelSpec::Slot &s : kernel.spec.slots) EXPECT_TRUE(s.stored);
  }
}

TEST(FusionPlan, OpsBelowMinFuseElementsAreNotFused) {
  Chain small(100);
  std::vector<PlannedKernel> k = plan_kernels(small.ops, true, 101, NoneDead);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].ops, std::vector<size_t>({0}));
  EXPECT_EQ(k[1].ops, std::vector<size_t>({1}));
  // The threshold is inclusive: exactly min_fuse_elements fuses.
  EXPECT_EQ(plan_kernels(small.ops, true, 100, NoneDead).size(), 1u);
}

TEST(FusionPlan, SmallOpEndsTheKernelBeforeIt) {
  // big, small, big: the small op gets a kernel of its own, and the third op
  // starts a new kernel rather than rejoining the first.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), c = fakes.make(), s = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(c, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Array(s, {10}), Array(s, {10})}));
  ops.push_back(Op(NPVK_OP_MULTIPLY, {Array(c, {1000}), Array(b, {1000}), Array(a, {1000})}));
  std::vector<PlannedKernel> k = plan_kernels(ops, true, 500, NoneDead);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].ops, std::vector<size_t>({0}));
  EXPECT_EQ(k[1].ops, std::vector<size_t>({1}));
  EXPECT_EQ(k[2].ops, std::vector<size_t>({2}));
}

TEST(FusionPlan, DeadUnreadIntermediateIsContracted) {
  Chain chain(1000);
  const Buffer *t = chain.t.get();
  std::set<const Buffer *> asked;
  auto t_dead = [&](const View &v) {
    asked.insert(v.buffer.get());
    return v.buffer.get() == t;
  };
  std::vector<PlannedKernel> k = plan_kernels(chain.ops, true, 1, t_dead);
  ASSERT_EQ(k.size(), 1u);
  ASSERT_EQ(k[0].spec.slots.size(), 4u);
  EXPECT_TRUE(k[0].spec.slots[0].stored);   // a: only read
  EXPECT_TRUE(k[0].spec.slots[1].stored);   // b: only read
  EXPECT_FALSE(k[0].spec.slots[2].stored);  // t: dead, forwarded in registers
  EXPECT_TRUE(k[0].spec.slots[3].stored);   // c: alive
  EXPECT_EQ(k[0].contracted_bytes, 4000u);
  EXPECT_TRUE(asked.count(t));
  // A key names the contraction, so the stored and contracted kernels differ.
  std::vector<PlannedKernel> stored = plan_kernels(chain.ops, true, 1, NoneDead);
  EXPECT_NE(k[0].spec.key(), stored[0].spec.key());
}

TEST(FusionPlan, LiveIntermediateIsStored) {
  Chain chain(1000);
  std::vector<PlannedKernel> k = plan_kernels(chain.ops, true, 1, NoneDead);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_TRUE(k[0].spec.slots[2].stored);
  EXPECT_EQ(k[0].contracted_bytes, 0u);
}

TEST(FusionPlan, DeadIntermediateReadByALaterKernelIsStored) {
  // t = a + b over (1000,); then an op over another shape reads t (as the
  // transpose of a (10, 100) view), so it starts a second kernel that needs
  // t from memory.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), t = fakes.make(), c = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(t, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Transposed(t, 10, 100), Array(c, {100, 10})}));
  const Buffer *tp = t.get();
  std::vector<PlannedKernel> k =
      plan_kernels(ops, true, 1, [&](const View &x) { return x.buffer.get() == tp; });
  ASSERT_EQ(k.size(), 2u);
  EXPECT_TRUE(k[0].spec.slots[2].stored);
  EXPECT_EQ(k[0].contracted_bytes, 0u);
  // In the second kernel t is only read; the output c is alive.
  EXPECT_EQ(k[1].contracted_bytes, 0u);
}

TEST(FusionPlan, OlderValueOfAReusedBufferIsDeadOnceItsReadersRan) {
  // t = a + b; c = t * 2 in one kernel; then, in a kernel of its own (another
  // count), the buffer holds a newer array's value (generation 1) that is
  // read. The older value's store is left out, the newer one's kept.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), t = fakes.make(), c = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(t, {1000})}));
  ops.push_back(Op(NPVK_OP_MULTIPLY, {Array(t, {1000}), Array(a, {1000}), Array(c, {1000})}));
  View newer = Array(t, {500});
  newer.generation = 1;
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Array(a, {500}), newer}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {newer, Array(d, {500})}));
  auto dead = [&](const View &v) { return v.buffer == t && v.generation == 0; };
  std::vector<PlannedKernel> k = plan_kernels(ops, true, 1, dead);
  ASSERT_EQ(k.size(), 2u);
  ASSERT_EQ(k[0].spec.slots.size(), 4u);
  EXPECT_FALSE(k[0].spec.slots[2].stored);  // t, generation 0: read only in registers
  for (const FusedKernelSpec::Slot &slot : k[1].spec.slots) EXPECT_TRUE(slot.stored);
  // Without the newer array: the later kernel reads the older value.
  ops.erase(ops.begin() + 2);
  ops[2].operands[0].generation = 0;
  std::vector<PlannedKernel> one_value = plan_kernels(ops, true, 1, dead);
  EXPECT_TRUE(one_value[0].spec.slots[2].stored);
}

TEST(FusionPlan, DifferentOutputShapesDoNotFuse) {
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), c = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(c, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Array(d, {500}), Array(d, {500})}));
  std::vector<PlannedKernel> k = plan_kernels(ops, true, 1, NoneDead);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].ops, std::vector<size_t>({0}));
  EXPECT_EQ(k[1].ops, std::vector<size_t>({1}));
}

TEST(FusionPlan, SameElementsInOrderFuseWhateverTheShape) {
  // (1000,) and (10, 100), every array in memory order: the elements pair
  // up alike in both, so one kernel (as NumPy hands a ufunc's loop either
  // as one flat run, `a[k] = t` is recorded whole), and t is never stored.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), t = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(t, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Array(t, {10, 100}), Array(d, {10, 100})}));
  const Buffer *tp = t.get();
  std::vector<PlannedKernel> k =
      plan_kernels(ops, true, 1, [&](const View &x) { return x.buffer.get() == tp; });
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].contracted_bytes, 4000u);
}

TEST(FusionPlan, SameCountInAnotherOrderDoesNotFuse) {
  // (1000,) and the transpose of (10, 100): the same count, but element i
  // of one is not element i of the other.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), c = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(c, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Transposed(c, 10, 100), Array(d, {100, 10})}));
  EXPECT_EQ(plan_kernels(ops, true, 1, NoneDead).size(), 2u);
}

TEST(FusionPlan, InOrderOpsJoinABroadcastOpsLoop) {
  // t = a * a (flat); u = t * row, row broadcast over (4, 250); w = u + a
  // (flat): one kernel over (4, 250), the flat ops' slots walking it in C
  // order, and t and u never stored.
  FakeBuffers fakes;
  auto a = fakes.make(), t = fakes.make(), row = fakes.make(), u = fakes.make(), w = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_MULTIPLY, {Array(a, {1000}), Array(a, {1000}), Array(t, {1000})}));
  ops.push_back(Op(NPVK_OP_MULTIPLY, {Array(t, {4, 250}), Array(row, {250}), Array(u, {4, 250})}));
  ops.push_back(Op(NPVK_OP_ADD, {Array(u, {1000}), Array(a, {1000}), Array(w, {1000})}));
  ASSERT_EQ(ops[1].space.full_shape, Dims({4, 250}));
  const Buffer *tp = t.get(), *up = u.get();
  std::vector<PlannedKernel> k = plan_kernels(
      ops, true, 1, [&](const View &x) { return x.buffer.get() == tp || x.buffer.get() == up; });
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].shape, Dims({4, 250}));
  EXPECT_EQ(k[0].slots.size(), 5u);  // a, t, row, u, w: each array once
  EXPECT_EQ(k[0].contracted_bytes, 8000u);
  EXPECT_EQ(k[0].slots[0].strides, Dims({250, 1}));
}

TEST(FusionPlan, RefusedRebaseLeavesTheKernelAsItWas) {
  // c = a + b (flat); then -c read transposed (another order of bytes the
  // kernel wrote): refused, and the first kernel keeps its flat loop.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), c = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {1000}), Array(b, {1000}), Array(c, {1000})}));
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Transposed(c, 10, 100), Array(d, {100, 10})}));
  std::vector<PlannedKernel> k = plan_kernels(ops, true, 1, NoneDead);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].shape, Dims({1000}));
  for (const SlotBinding &slot : k[0].slots) EXPECT_EQ(slot.strides, Dims({1}));
  EXPECT_TRUE(k[0].space.contiguous);
}

TEST(FusionPlan, ShiftedReadOfWrittenBytesDoesNotFuse) {
  // c = a + b; d = -c[1:] (as a view over n-1 elements of c's buffer, with
  // the same shape as the next op's output): different elements of bytes the
  // kernel writes would race between invocations.
  FakeBuffers fakes;
  auto a = fakes.make(), b = fakes.make(), c = fakes.make(), d = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_ADD, {Array(a, {999}), Array(b, {999}), Array(c, {999})}));
  View shifted = Array(c, {999});
  shifted.offset = 4;
  ops.push_back(Op(NPVK_OP_NEGATIVE, {shifted, Array(d, {999})}));
  EXPECT_EQ(plan_kernels(ops, true, 1, NoneDead).size(), 2u);
}

TEST(FusionPlan, EmptyOpsAreSkipped) {
  FakeBuffers fakes;
  auto a = fakes.make(), c = fakes.make();
  std::vector<RecordedOp> ops;
  ops.push_back(Op(NPVK_OP_NEGATIVE, {Array(a, {0}), Array(c, {0})}));
  EXPECT_TRUE(plan_kernels(ops, true, 1, NoneDead).empty());
}

}  // namespace
}  // namespace npvk
