// Reductions (NumPy's ufunc.reduce): a binary op folded over some axes of an
// array. The kept axes form the outer space (one result each), the reduced
// axes the inner space. Both are planned like an elementwise loop (size-1
// dimensions dropped, contiguous dimensions merged), so kernels depend only on
// the op, the dtypes and the two ranks. See docs/architecture.md, "Reductions".
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compile/iteration.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/view.hpp"

namespace npvk {

// How the work of one reduction is spread over invocations.
enum class ReduceMode : uint8_t {
  // Each invocation folds one result's elements in order: many results.
  PerThread,
  // Each workgroup folds a chunk of one result's elements: its lanes take
  // interleaved elements (adjacent lanes read adjacent memory), then a
  // shared-memory tree combines the lanes. Few results over many elements.
  Workgroup,
  // An accumulation (ufunc.accumulate): each invocation scans one line along
  // the axis in order, so every result rounds exactly as NumPy's loop does.
  Scan,
  // NumPy's pairwise float sum: each invocation evaluates one subtree of
  // NumPy's pairwise tree over one block (8-accumulator leaves of at most 128
  // elements, split as NumPy splits), in NumPy's order.
  Pairwise,
  // The pass after Pairwise: one invocation per result joins each block's
  // subtrees (the top of the tree, complete to the split depth) and adds the
  // blocks in order to `initial`, as NumPy's `io1 += pairwise_sum(block)`.
  BlockCombine,
};

// The order in which a float sum adds its elements.
enum class SumOrder : uint8_t {
  Compensated,  // Neumaier along each run, pairwise across lanes: not NumPy's bits
  Sequential,   // one add per element in index order: NumPy's outer-axis loop
  Pairwise,     // NumPy's pairwise_sum per block, the blocks added in order
};

// The structural identity of a reduction kernel.
struct ReduceKernelSpec {
  npvk_op op = NPVK_OP_ADD;
  npvk_dtype in = NPVK_FLOAT64, out = NPVK_FLOAT64;  // the input is cast to `out` on load
  ReduceMode mode = ReduceMode::PerThread;
  uint32_t outer_rank = 0, inner_rank = 0;
  // PerThread only: fold in index order without compensation (NumPy's
  // outer-axis order) rather than compensated.
  bool in_order = false;

  std::string key() const;  // e.g. "reduce:add(i1)->i8/w/o1i1", "scan:add(i4)->i8/o1"
  // The (out, out) -> out loop of the op that combines two values.
  KernelSpec combiner() const;
};

// One recorded reduction with its planned loops.
struct ReduceOp {
  ReduceKernelSpec spec;  // mode and ranks of the first (or only) pass
  IterationSpace outer;   // kept axes; strides: [input, output]
  IterationSpace inner;   // reduced axes; strides: [input] ([input, output] for a scan)
  int64_t outputs = 0, reduced = 0;
  // Workgroup mode: chunks per result. More than one writes partial results
  // to scratch memory, and a second pass folds them into the output.
  int64_t chunks = 1;
  bool has_init = false;
  uint64_t init_bits = 0;                  // `initial` in out's dtype, as a scalar view holds it
  SumOrder order = SumOrder::Compensated;  // float add only; Exact for the rest
  // Pairwise: elements per block (the last may be shorter), blocks per
  // result, and the depth of NumPy's tree at which each full block and the
  // last block are cut into subtrees, one Pairwise invocation each (2^depth
  // slots per block; a shorter last block uses the first 2^last_depth).
  int64_t block = 0, blocks = 1;
  uint32_t depth = 0, last_depth = 0;
  int64_t slots() const { return blocks << depth; }  // subtree values per result
  bool single_pass() const { return blocks == 1 && depth == 0; }
};

// NumPy's pairwise_sum splits n > 128 elements at n/2 rounded down to a
// multiple of 8 (numpy/core/src/umath/loops_utils.h.src).
constexpr int64_t kPairwiseLeaf = 128;
inline int64_t pairwise_split(int64_t n) {
  return (n / 2) & ~int64_t(7);
}

// Whether `op` can be reduced, and its identity (as scalar bits of `dtype`)
// when it has one.
bool reducible(npvk_op op);
bool reduce_identity(npvk_op op, npvk_dtype dtype, uint64_t *bits);

// Plans the reduction of `in` into `out` (in's rank, extent 1 on `axes`).
// Throws on mismatched shapes, bad axes or unsupported dtypes.
// `loop_budget`: the most elements one invocation may fold (see Context).
// `sum_block`: a float sum's blocks, as npvk_reduce_blocked takes it (0: one
// block per result).
ReduceOp plan_reduction(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                        const View &out, uint64_t max_invocations, int64_t loop_budget,
                        int64_t sum_block = 0);

// Plans the accumulation of `in` along `axis` into `out` (in's shape).
ReduceOp plan_scan(npvk_op op, const View &in, uint32_t axis, const View &out);

}  // namespace npvk
