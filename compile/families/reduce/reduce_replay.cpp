// Host replay of reductions and scans after a failed flush (reduce_replay.hpp).
#include "compile/families/reduce/reduce_replay.hpp"

#include <cfenv>
#include <cstring>
#include <vector>

#include "base/host_fp.hpp"
#include "compile/dtype.hpp"
#include "compile/families/reduce/reduce_plan.hpp"
#include "compile/families/replay_odometer.hpp"

namespace npvk {
namespace {

// The outer dimensions of a loop nest and its last one, as (shape, strides)
// pairs: a rank-0 space is one element.
struct Runs {
  std::vector<int64_t> outer_shape;
  std::vector<std::vector<int64_t>> outer_strides;
  int64_t length = 1;
  std::vector<int64_t> step;  // per operand, elements
};

Runs runs_of(const IterationSpace &space, size_t operands) {
  Runs r;
  r.outer_strides.assign(operands, {});
  r.step.assign(operands, 0);
  if (space.rank == 0) {
    r.length = space.count;
    return r;
  }
  const uint32_t last = space.rank - 1;
  r.outer_shape.assign(space.shape.begin(), space.shape.begin() + last);
  for (size_t k = 0; k < operands; ++k) {
    r.outer_strides[k].assign(space.strides[k].begin(), space.strides[k].begin() + last);
    r.step[k] = space.strides[k][last];
  }
  r.length = space.shape[last];
  return r;
}

}  // namespace

bool reduce_replay_supported(const ReduceOp &r, const HostLoop &loop) {
  const npvk_dtype three[3] = {r.spec.out, r.spec.out, r.spec.out};
  const npvk_dtype cast[2] = {r.spec.in, r.spec.out};
  return loop.has(r.spec.op, 2, 1, three) &&
         (r.spec.in == r.spec.out || loop.has(NPVK_OP_CAST, 1, 1, cast));
}

uint32_t replay_reduce(const ReduceOp &r, const HostLoop &loop, uint8_t *const *bytes) {
  const npvk_dtype three[3] = {r.spec.out, r.spec.out, r.spec.out};
  const npvk_dtype cast[2] = {r.spec.in, r.spec.out};
  const int64_t in_size = dtype_info(r.spec.in).itemsize,
                out_size = dtype_info(r.spec.out).itemsize;
  const bool scan = r.spec.mode == ReduceMode::Scan;
  uint32_t flags = 0;
  std::vector<uint8_t> converted;
  // One run of input elements as the combining loop wants them: in the
  // output's dtype (cast by NumPy's cast, as its buffered reduce does).
  auto run_in_out_type = [&](uint8_t *src, int64_t length, int64_t step, int64_t *bytes_step) {
    if (r.spec.in == r.spec.out) {
      *bytes_step = step * in_size;
      return src;
    }
    converted.resize(size_t(length * out_size));
    char *args[2] = {reinterpret_cast<char *>(src), reinterpret_cast<char *>(converted.data())};
    const int64_t steps[2] = {step * in_size, out_size};
    uint32_t raised = 0;
    loop.run(NPVK_OP_CAST, 1, 1, cast, args, length, steps, &raised);
    *bytes_step = out_size;
    return converted.data();
  };
  auto combine = [&](char *args[3], int64_t count, const int64_t steps[3]) {
    std::feclearexcept(FE_ALL_EXCEPT);
    uint32_t raised = 0;
    loop.run(r.spec.op, 2, 1, three, args, count, steps, &raised);
    flags |= raised | host_fp_flags();
  };
  const Runs inner = runs_of(r.inner, scan ? 2 : 1);
  const std::vector<int64_t> outer_shape(r.outer.shape.begin(), r.outer.shape.end());
  std::vector<std::vector<int64_t>> outer_strides;
  for (const Dims &s : r.outer.strides) outer_strides.emplace_back(s.begin(), s.end());
  outer_strides.resize(2, std::vector<int64_t>(outer_shape.size(), 0));
  odometer(outer_shape, outer_strides, 2, [&](const std::vector<int64_t> &at) {
    uint8_t *in = bytes[0] + at[0] * in_size;
    uint8_t *out = bytes[1] + at[1] * out_size;
    if (scan) {
      // out[0] = in[0]; out[j] = out[j - 1] op in[j], as NumPy's accumulate.
      int64_t in_step = 0;
      uint8_t *line = run_in_out_type(in, inner.length, inner.step[0], &in_step);
      const int64_t out_step = inner.step[1] * out_size;
      std::memcpy(out, line, size_t(out_size));
      if (inner.length < 2) return;
      char *args[3] = {reinterpret_cast<char *>(out), reinterpret_cast<char *>(line + in_step),
                       reinterpret_cast<char *>(out + out_step)};
      const int64_t steps[3] = {out_step, in_step, out_step};
      combine(args, inner.length - 1, steps);
      return;
    }
    // NumPy starts from `initial`, else from the op's identity (so a sum of
    // -0.0 is 0.0, as NumPy's), else from the first element.
    uint64_t start_bits = r.init_bits;
    bool started = r.has_init || reduce_identity(r.spec.op, r.spec.out, &start_bits);
    if (started) std::memcpy(out, &start_bits, size_t(out_size));
    odometer(inner.outer_shape, inner.outer_strides, 1, [&](const std::vector<int64_t> &off) {
      int64_t step = 0, length = inner.length;
      uint8_t *run = run_in_out_type(in + off[0] * in_size, length, inner.step[0], &step);
      if (!started) {
        std::memcpy(out, run, size_t(out_size));
        run += step;
        --length;
        started = true;
      }
      if (length <= 0) return;
      // NumPy's reduce loop sums each call's run pairwise: called per block
      // as NumPy's iterator calls it, or per element for the in-order sum.
      const int64_t piece = r.order == SumOrder::Sequential ? 1
                            : r.order == SumOrder::Pairwise ? r.block
                                                            : length;
      for (int64_t done = 0; done < length; done += piece) {
        char *args[3] = {reinterpret_cast<char *>(out), reinterpret_cast<char *>(run + done * step),
                         reinterpret_cast<char *>(out)};
        const int64_t steps[3] = {0, step, 0};
        combine(args, std::min(piece, length - done), steps);
      }
    });
  });
  flags &= ~uint32_t(NPVK_FP_UNDERFLOW);
  if (flags) flags |= scan ? NPVK_FP_IN_ACCUMULATE : NPVK_FP_IN_REDUCE;
  return flags;
}

}  // namespace npvk
