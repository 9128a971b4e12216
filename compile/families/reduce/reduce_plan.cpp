#include "compile/families/reduce/reduce_plan.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/ops.hpp"

namespace npvk {

// Both from the op's row (compile/ops.cpp).
bool reducible(npvk_op op) {
  return op_info(op).reducible;
}

bool reduce_identity(npvk_op op, npvk_dtype dtype, uint64_t *bits) {
  switch (op_info(op).identity) {
    case Identity::None:
      return false;
    case Identity::Zero:
      *bits = 0;
      return true;
    case Identity::One:
      *bits = dtype == NPVK_FLOAT32   ? 0x3f800000u
              : dtype == NPVK_FLOAT64 ? 0x3ff0000000000000ull
                                      : 1;
      return true;
    case Identity::Bit1:
      *bits = 1;
      return true;
    case Identity::AllOnes:
      *bits = ~uint64_t(0);
      return true;
  }
  return false;
}

std::string ReduceKernelSpec::key() const {
  if (mode == ReduceMode::Scan)
    return std::string("scan:") + op_info(op).name + "(" + dtype_info(in).suffix + ")->" +
           dtype_info(out).suffix + "/o" + std::to_string(outer_rank);
  const char *shape = mode == ReduceMode::Workgroup      ? "/w"
                      : mode == ReduceMode::Pairwise     ? "/p"
                      : mode == ReduceMode::BlockCombine ? "/b"
                      : in_order                         ? "/s"
                                                         : "/t";
  return std::string("reduce:") + op_info(op).name + "(" + dtype_info(in).suffix + ")->" +
         dtype_info(out).suffix + shape + "/o" + std::to_string(outer_rank) + "i" +
         std::to_string(inner_rank);
}

KernelSpec ReduceKernelSpec::combiner() const {
  KernelSpec s;
  s.op = op;
  s.nin = 2;
  s.nout = 1;
  for (int k = 0; k < 3; ++k) s.operands[k].dtype = out;
  return s;
}

namespace {

// What reductions and scans require of the op and the dtypes.
ReduceOp start_plan(npvk_op op, const View &in, const View &out, const char *method) {
  const OpInfo &info = op_info(op);
  NPVK_REQUIRE(reducible(op), NPVK_ERR_UNSUPPORTED,
               std::string(info.name) + " cannot be reduced (not an associative binary op)");
  require(!in.scalar && !out.scalar, NPVK_ERR_INVALID_ARGUMENT,
          "a reduction's input and output must be arrays, not scalar views");
  NPVK_REQUIRE(in.dtype != NPVK_FLOAT16 && out.dtype != NPVK_FLOAT16, NPVK_ERR_UNSUPPORTED,
               std::string(info.name) + ": float16 is not supported yet");
  ReduceOp r;
  r.spec.op = op;
  r.spec.in = in.dtype;
  r.spec.out = out.dtype;
  const npvk_dtype loop[3] = {out.dtype, out.dtype, out.dtype};
  const char *reason = nullptr;
  if (!op_has_loop(info, loop, 3, &reason))
    fail(NPVK_ERR_BAD_DTYPE, std::string(info.name) + "." + method + ": " + reason);
  return r;
}

// The depth at which NumPy's tree over `n` elements is cut into subtrees of
// at most about `target` elements. Every node above the cut splits: the
// leftmost node is the smallest of its depth (a left half is never larger).
uint32_t split_depth(int64_t n, int64_t target) {
  uint32_t depth = 0;
  for (int64_t smallest = n; smallest > kPairwiseLeaf && smallest > target; ++depth)
    smallest = pairwise_split(smallest);
  return depth;
}

// NumPy's order for a float sum, where the planned loops show it: the
// reduced run contiguous and innermost (NumPy's loop gets it whole, or in
// blocks of its buffer size, and sums each pairwise), or a kept axis
// innermost (NumPy adds the reduced elements one by one, in index order).
// Anything else keeps the compensated sum.
void plan_sum_order(ReduceOp &r, int64_t sum_block, int64_t invocations, int64_t loop_budget) {
  if (op_info(r.spec.op).fold != FloatFold::Compensated ||
      dtype_info(r.spec.out).kind != DtypeKind::Float || r.inner.rank != 1 || r.reduced < 1)
    return;
  const int64_t step = r.inner.strides[0][0];
  int64_t smallest_kept = 0;  // the smallest kept input stride, 0 for none
  if (r.outer.rank)
    for (int64_t s : r.outer.strides[0]) {
      if (s == 0) return;  // a broadcast input: NumPy's axis order is not the strides'
      const int64_t a = s < 0 ? -s : s;
      if (smallest_kept == 0 || a < smallest_kept) smallest_kept = a;
    }
  if (step == 1 && (smallest_kept == 0 || smallest_kept > 1)) {
    const int64_t R = r.reduced;
    r.block = sum_block > 0 && sum_block < R ? sum_block : R;
    r.blocks = (R + r.block - 1) / r.block;
    const int64_t last = R - (r.blocks - 1) * r.block;
    // Many results: a subtree as large as one invocation may fold; few: small
    // subtrees for parallelism, larger while the combining pass would loop
    // over too many of them. An invocation loops about once per 8 elements.
    const int64_t largest = 3 * loop_budget;
    int64_t target = r.outputs >= invocations / 4 ? largest : 2048;
    for (;;) {
      r.depth = split_depth(r.block, target);
      r.last_depth = split_depth(last, target);
      if (r.slots() <= loop_budget / 2 || target >= largest) break;
      target = std::min(largest, target * 2);
    }
    if (r.slots() > loop_budget / 2) return;
    r.order = SumOrder::Pairwise;
    r.spec.mode = ReduceMode::Pairwise;
    r.chunks = 1;
  } else if (step != 0 && smallest_kept != 0 && smallest_kept < (step < 0 ? -step : step) &&
             r.reduced <= loop_budget) {
    // A reversed reduced axis too (a[::-1].sum(0)): NumPy's reduction keeps
    // its strides' signs (NPY_ITER_DONT_NEGATE_STRIDES), so it adds in index
    // order, as this kernel does.
    r.order = SumOrder::Sequential;
    r.spec.mode = ReduceMode::PerThread;
    r.spec.in_order = true;
    r.chunks = 1;
  }
}

}  // namespace

ReduceOp plan_reduction(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                        const View &out, uint64_t max_invocations, int64_t loop_budget,
                        int64_t sum_block) {
  ReduceOp r = start_plan(op, in, out, "reduce");
  NPVK_REQUIRE(out.ndim == in.ndim, NPVK_ERR_SHAPE_MISMATCH,
               "a reduction's output has the input's rank (extent 1 on reduced axes), got " +
                   std::to_string(out.ndim) + " for " + std::to_string(in.ndim));
  std::vector<bool> reduced(in.ndim, false);
  for (uint32_t axis : axes) {
    NPVK_REQUIRE(
        axis < in.ndim, NPVK_ERR_INVALID_ARGUMENT,
        "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.ndim));
    NPVK_REQUIRE(!reduced[axis], NPVK_ERR_INVALID_ARGUMENT,
                 "axis " + std::to_string(axis) + " is listed twice");
    reduced[axis] = true;
  }
  const int64_t in_item = dtype_info(in.dtype).itemsize, out_item = dtype_info(out.dtype).itemsize;
  Dims outer_shape, inner_shape;
  OperandDims outer_strides(2), inner_strides(1);
  for (uint32_t d = 0; d < in.ndim; ++d) {
    const int64_t want = reduced[d] ? 1 : in.shape[d];
    NPVK_REQUIRE(out.shape[d] == want, NPVK_ERR_SHAPE_MISMATCH,
                 "output extent " + std::to_string(out.shape[d]) + " on axis " + std::to_string(d) +
                     " should be " + std::to_string(want));
    if (reduced[d]) {
      inner_shape.push_back(in.shape[d]);
      inner_strides[0].push_back(in.strides[d] / in_item);
    } else {
      outer_shape.push_back(in.shape[d]);
      outer_strides[0].push_back(in.strides[d] / in_item);
      outer_strides[1].push_back(out.strides[d] / out_item);
    }
  }
  r.outer = merge_dimensions(outer_shape, outer_strides, {true, true});
  r.inner = merge_dimensions(inner_shape, inner_strides, {true});
  r.outputs = r.outer.count;
  r.reduced = r.inner.count;
  r.spec.outer_rank = r.outer.rank;
  r.spec.inner_rank = r.inner.rank;

  // Many results: one invocation each. Few results over many elements: a
  // workgroup per chunk, with enough chunks to keep the device busy, but at
  // least 16 elements per lane. Either way no invocation folds more than
  // `loop_budget` elements.
  const int64_t invocations = int64_t(std::max<uint64_t>(max_invocations, kWorkgroupSize));
  const int64_t lane = kWorkgroupSize;
  if ((r.outputs >= invocations / 4 || r.reduced < 1024) && r.reduced <= loop_budget) {
    r.spec.mode = ReduceMode::PerThread;
  } else {
    r.spec.mode = ReduceMode::Workgroup;
    const int64_t groups = invocations / lane;
    const int64_t most = std::max<int64_t>(1, r.reduced / (lane * 16));
    const int64_t least = (r.reduced + lane * loop_budget - 1) / (lane * loop_budget);
    r.chunks = std::max(least, std::clamp<int64_t>((groups + r.outputs - 1) / r.outputs, 1, most));
  }
  plan_sum_order(r, sum_block, invocations, loop_budget);
  return r;
}

ReduceOp plan_scan(npvk_op op, const View &in, uint32_t axis, const View &out) {
  ReduceOp r = start_plan(op, in, out, "accumulate");
  r.spec.mode = ReduceMode::Scan;
  NPVK_REQUIRE(
      axis < in.ndim, NPVK_ERR_INVALID_ARGUMENT,
      "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.ndim));
  require(out.ndim == in.ndim, NPVK_ERR_SHAPE_MISMATCH,
          "an accumulation's output has the input's shape");
  const int64_t in_item = dtype_info(in.dtype).itemsize, out_item = dtype_info(out.dtype).itemsize;
  Dims outer_shape;
  OperandDims outer_strides(2);
  for (uint32_t d = 0; d < in.ndim; ++d) {
    require(out.shape[d] == in.shape[d], NPVK_ERR_SHAPE_MISMATCH,
            "an accumulation's output has the input's shape");
    if (d == axis) continue;
    outer_shape.push_back(in.shape[d]);
    outer_strides[0].push_back(in.strides[d] / in_item);
    outer_strides[1].push_back(out.strides[d] / out_item);
  }
  r.outer = merge_dimensions(outer_shape, outer_strides, {true, true});
  // The scanned axis stays one dimension with both strides, whatever its extent.
  r.inner.count = in.shape[axis];
  r.inner.rank = 1;
  r.inner.shape = {in.shape[axis]};
  r.inner.strides = {{in.strides[axis] / in_item}, {out.strides[axis] / out_item}};
  r.outputs = r.outer.count;
  r.reduced = r.inner.count;
  r.spec.outer_rank = r.outer.rank;
  r.spec.inner_rank = 1;
  return r;
}

}  // namespace npvk
