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
};

// The structural identity of a reduction kernel.
struct ReduceKernelSpec {
  npvk_op op = NPVK_OP_ADD;
  npvk_dtype in = NPVK_FLOAT64, out = NPVK_FLOAT64;  // the input is cast to `out` on load
  ReduceMode mode = ReduceMode::PerThread;
  uint32_t outer_rank = 0, inner_rank = 0;

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
  uint64_t init_bits = 0;  // `initial` in out's dtype, as a scalar view holds it
};

// Whether `op` can be reduced, and its identity (as scalar bits of `dtype`)
// when it has one.
bool reducible(npvk_op op);
bool reduce_identity(npvk_op op, npvk_dtype dtype, uint64_t *bits);

// Plans the reduction of `in` into `out` (in's rank, extent 1 on `axes`).
// Throws on mismatched shapes, bad axes or unsupported dtypes.
// `loop_budget`: the most elements one invocation may fold (see Context).
ReduceOp plan_reduction(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                        const View &out, uint64_t max_invocations, int64_t loop_budget);

// Plans the accumulation of `in` along `axis` into `out` (in's shape).
ReduceOp plan_scan(npvk_op op, const View &in, uint32_t axis, const View &out);

std::string generate_reduce_glsl(const ReduceKernelSpec &spec);

}  // namespace npvk
