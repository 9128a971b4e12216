// The reduction and scan families (ufunc.reduce, ufunc.accumulate): their
// dispatches, in one pass or, with several chunks per result, a pass into
// scratch partials and a pass folding them.
#include <algorithm>

#include "compile/dtype.hpp"
#include "compile/families/kernels.hpp"
#include "compile/families/reduce/reduce_glsl.hpp"
#include "compile/families/reduce/reduce_replay.hpp"
#include "compile/fusion.hpp"
#include "compile/ops.hpp"

namespace npvk {
namespace {

std::string reduce_method_name(const ReduceOp &r) {
  return std::string(op_info(r.spec.op).name) +
         (r.spec.mode == ReduceMode::Scan ? ".accumulate" : ".reduce");
}

// The argument table: outer shape, outer input and output strides, inner
// shape and inner strides.
std::vector<int64_t> argument_table(const IterationSpace &outer, const Dims &in_strides,
                                    const Dims &out_strides, const Dims &inner_shape,
                                    const Dims &inner_strides) {
  std::vector<int64_t> t(outer.shape.begin(), outer.shape.end());
  t.insert(t.end(), in_strides.begin(), in_strides.end());
  t.insert(t.end(), out_strides.begin(), out_strides.end());
  t.insert(t.end(), inner_shape.begin(), inner_shape.end());
  t.insert(t.end(), inner_strides.begin(), inner_strides.end());
  return t;
}

// What varies between the passes of one reduction.
struct Pass {
  ReduceKernelSpec spec;
  uint64_t from = 0, to = 0;  // addresses
  int64_t reduced = 0, chunks = 1;
  bool apply_init = false;
  std::vector<int64_t> meta;
  uint64_t items = 0;  // results, chunks or lines
  std::vector<DispatchArgs::Access> accesses;
  int64_t line_begin = 0, line_end = 0;
  int64_t sum_block = 0, flags_at = 0;  // a pairwise sum's
  uint64_t depths = 0;
};

class ReduceKernel final : public StandaloneKernel {
 public:
  explicit ReduceKernel(ReduceOp r) : r_(std::move(r)) {}

  std::string key() const override { return r_.spec.key(); }
  std::string glsl() const override { return generate_reduce_glsl(r_.spec); }
  std::string name() const override { return reduce_method_name(r_); }
  uint32_t fp_context() const override {
    // NumPy names a reduction's exceptions "reduce" or "accumulate".
    return scan() ? NPVK_FP_IN_ACCUMULATE : NPVK_FP_IN_REDUCE;
  }

  std::string describe() const override {
    const std::string head = name() + ", " + dtype_info(r_.spec.in).name + " -> " +
                             dtype_info(r_.spec.out).name + ": " + std::to_string(r_.outputs);
    if (scan())
      return head + " line" + (r_.outputs == 1 ? "" : "s") + " of " + std::to_string(r_.reduced) +
             " elements, an invocation per line\n";
    return head + " result" + (r_.outputs == 1 ? "" : "s") + " of " + std::to_string(r_.reduced) +
           " elements each, " +
           (r_.spec.mode == ReduceMode::Workgroup ? "a workgroup per chunk"
            : pairwise() ? "NumPy's pairwise order, " + std::to_string(r_.blocks) + " block" +
                               (r_.blocks == 1 ? "" : "s") + " of " + std::to_string(r_.block) +
                               ", " + std::to_string(r_.slots()) + " subtrees per result"
            : r_.spec.in_order ? "an invocation per result, in order"
                               : "an invocation per result") +
           (r_.chunks > 1
                ? ", " + std::to_string(r_.chunks) + " chunks per result, then a pass folding them"
                : std::string()) +
           "\n";
  }
  std::string summary(int64_t elements) const override {
    return name() + " into " + std::to_string(r_.outputs) + " results, " +
           std::to_string(elements) + " elements";
  }
  std::string trace_args(int64_t elements) const override {
    return "\"elements\":" + std::to_string(elements) +
           ",\"results\":" + std::to_string(r_.outputs) + ",\"kernel\":\"" + r_.spec.key() + "\"";
  }

  uint64_t scratch_bytes() const override {
    if (pairwise())
      // Each subtree's value, then the class of its inputs.
      return r_.single_pass()
                 ? 0
                 : (uint64_t(2 * r_.outputs * r_.slots()) * dtype_info(r_.spec.out).itemsize +
                    255) &
                       ~uint64_t(255);
    if (scan() || r_.chunks <= 1) return 0;
    return (uint64_t(r_.outputs * r_.chunks) * dtype_info(r_.spec.out).itemsize + 255) &
           ~uint64_t(255);
  }

  void bind(const PlannedKernel &k, const BindTarget &t,
            std::vector<DispatchArgs> &batch) const override;

  bool replay_supported(const HostLoop &loop) const override {
    return reduce_replay_supported(r_, loop);
  }
  uint32_t replay(const HostLoop &loop, uint8_t *const *bytes) const override {
    return replay_reduce(r_, loop, bytes);
  }

 private:
  bool scan() const { return r_.spec.mode == ReduceMode::Scan; }
  bool pairwise() const { return r_.spec.mode == ReduceMode::Pairwise; }
  // NumPy's pairwise sum: the subtrees' pass, then (unless each result is
  // one subtree) the pass joining them.
  void bind_pairwise(Pass &p, const BindTarget &t, const DispatchArgs::Access &read_in,
                     const DispatchArgs::Access &write_out, std::vector<DispatchArgs> &batch) const;
  // One pass over `p.items` items, in as many dispatches as the device's
  // workgroup count needs.
  void emit(const Pass &p, const BindTarget &t, std::vector<DispatchArgs> &batch) const;

  ReduceOp r_;
};

void ReduceKernel::emit(const Pass &p, const BindTarget &t,
                        std::vector<DispatchArgs> &batch) const {
  const uint64_t per_group = p.spec.mode == ReduceMode::Workgroup ? 1 : kWorkgroupSize;
  const uint64_t per_dispatch = t.max_group_count * per_group;
  const std::string key = p.spec.key();
  const ReduceKernelSpec spec = p.spec;
  for (uint64_t first = 0; first < p.items; first += per_dispatch) {
    DispatchArgs d;
    d.key = key;
    d.source = [spec] { return generate_reduce_glsl(spec); };
    uint64_t *slot = d.push.operand;
    slot[reduce_slot::kInput] = p.from;
    slot[reduce_slot::kOutput] = p.to;
    slot[reduce_slot::kInitial] = r_.init_bits;
    slot[reduce_slot::kReduced] = uint64_t(p.reduced);
    slot[reduce_slot::kChunks] = uint64_t(p.chunks);
    slot[reduce_slot::kApplyInitial] = p.apply_init ? 1 : 0;
    slot[reduce_slot::kFirstItem] = first;
    slot[reduce_slot::kLineBegin] = uint64_t(p.line_begin);
    slot[reduce_slot::kLineEnd] = uint64_t(p.line_end);
    slot[reduce_slot::kSumBlock] = uint64_t(p.sum_block);
    slot[reduce_slot::kDepths] = p.depths;
    slot[reduce_slot::kFlagsAt] = uint64_t(p.flags_at);
    d.push.count = std::min(per_dispatch, p.items - first);
    d.push.tables = t.tables_address;
    d.meta = p.meta;
    d.groups = uint32_t((d.push.count + per_group - 1) / per_group);
    d.accesses = p.accesses;
    batch.push_back(std::move(d));
  }
}

void ReduceKernel::bind(const PlannedKernel &k, const BindTarget &t,
                        std::vector<DispatchArgs> &batch) const {
  const ReduceOp &r = r_;
  const DispatchArgs::Access read_in{0, uint64_t(k.slots[0].lo), uint64_t(k.slots[0].hi), false};
  const DispatchArgs::Access write_out{1, uint64_t(k.slots[1].lo), uint64_t(k.slots[1].hi), true};
  const Dims none;
  const Dims &outer_in = r.outer.rank ? r.outer.strides[0] : none;
  const Dims &outer_out = r.outer.rank ? r.outer.strides[1] : none;
  const uint64_t in_address = t.address(0), out_address = t.address(1);
  Pass p;
  p.spec = r.spec;
  p.from = in_address;
  p.to = out_address;
  p.reduced = r.reduced;
  if (scan()) {
    p.meta = argument_table(r.outer, outer_in, outer_out, r.inner.shape,
                            {r.inner.strides[0][0], r.inner.strides[1][0]});
    p.items = uint64_t(r.outputs);
    p.accesses = {read_in, write_out};
    // Each dispatch walks at most loop_budget elements of every line.
    for (int64_t r0 = 0; r0 < r.reduced; r0 += t.loop_budget) {
      p.line_begin = r0;
      p.line_end = std::min(r.reduced, r0 + t.loop_budget);
      emit(p, t, batch);
    }
    return;
  }
  const Dims &inner_in = r.inner.rank ? r.inner.strides[0] : none;
  if (pairwise()) {
    p.apply_init = r.has_init;
    p.meta = argument_table(r.outer, outer_in, outer_out, r.inner.shape, inner_in);
    bind_pairwise(p, t, read_in, write_out, batch);
    return;
  }
  p.items = uint64_t(r.outputs * r.chunks);
  if (r.chunks == 1) {
    p.apply_init = r.has_init;
    p.meta = argument_table(r.outer, outer_in, outer_out, r.inner.shape, inner_in);
    p.accesses = {read_in, write_out};
    emit(p, t, batch);
    return;
  }
  // Partial results, C-ordered by result then chunk.
  Dims partial_strides(r.outer.rank);
  int64_t step = r.chunks;
  for (int d = int(r.outer.rank) - 1; d >= 0; --d) {
    partial_strides[size_t(d)] = step;
    step *= r.outer.shape[size_t(d)];
  }
  const uint64_t partials = t.scratch_address + t.scratch_offset;
  const uint64_t partial_bytes = uint64_t(r.outputs * r.chunks) * dtype_info(r.spec.out).itemsize;
  const DispatchArgs::Access partial_area{kScratchSlot, t.scratch_offset,
                                          t.scratch_offset + partial_bytes, true};
  p.to = partials;
  p.chunks = r.chunks;
  p.meta = argument_table(r.outer, outer_in, partial_strides, r.inner.shape, inner_in);
  p.accesses = {read_in, partial_area};
  emit(p, t, batch);

  Pass fold;
  fold.spec = r.spec;
  fold.spec.in = r.spec.out;
  fold.spec.mode = ReduceMode::Workgroup;
  fold.spec.inner_rank = 1;
  fold.from = partials;
  fold.to = out_address;
  fold.reduced = r.chunks;
  fold.apply_init = r.has_init;
  fold.meta = argument_table(r.outer, partial_strides, outer_out, {r.chunks}, {1});
  fold.items = uint64_t(r.outputs);
  DispatchArgs::Access read_partials = partial_area;
  read_partials.write = false;
  fold.accesses = {read_partials, write_out};
  emit(fold, t, batch);
}

void ReduceKernel::bind_pairwise(Pass &p, const BindTarget &t, const DispatchArgs::Access &read_in,
                                 const DispatchArgs::Access &write_out,
                                 std::vector<DispatchArgs> &batch) const {
  const ReduceOp &r = r_;
  p.sum_block = r.block;
  p.depths = r.depth | (uint64_t(r.last_depth) << 8);
  p.items = uint64_t(r.outputs * r.slots());
  if (r.single_pass()) {
    p.accesses = {read_in, write_out};
    emit(p, t, batch);
    return;
  }
  const uint64_t values = t.scratch_address + t.scratch_offset;
  const uint64_t bytes = 2 * p.items * dtype_info(r.spec.out).itemsize;
  const DispatchArgs::Access scratch{kScratchSlot, t.scratch_offset, t.scratch_offset + bytes,
                                     true};
  const uint64_t out_address = p.to;
  p.to = values;
  p.flags_at = int64_t(p.items);
  p.accesses = {read_in, scratch};
  emit(p, t, batch);

  Pass join = p;
  join.spec.mode = ReduceMode::BlockCombine;
  join.spec.in = r.spec.out;
  join.from = values;
  join.to = out_address;
  join.items = uint64_t(r.outputs);
  DispatchArgs::Access read_scratch = scratch;
  read_scratch.write = false;
  join.accesses = {read_scratch, write_out};
  emit(join, t, batch);
}

}  // namespace

std::shared_ptr<const StandaloneKernel> make_reduce_kernel(ReduceOp r) {
  return std::make_shared<const ReduceKernel>(std::move(r));
}

}  // namespace npvk
