#include "runtime/host/host_executor.hpp"

#include <algorithm>
#include <cfenv>
#include <cstring>
#include <string>

#include "base/host_fp.hpp"
#include "compile/dtype.hpp"
#include "runtime/buffer.hpp"
#include "runtime/host/fused_replay.hpp"
#include "runtime/host/host_workers.hpp"

namespace npvk {
namespace {

// Whether running the batch a second time, over whatever part of it ran,
// gives the same results: no op writes bytes that it or an earlier op reads.
bool safe_to_rerun(const std::vector<RecordedOp> &ops) {
  struct Range {
    const Buffer *buffer;
    int64_t lo, hi;
  };
  std::vector<Range> reads;
  for (const RecordedOp &op : ops) {
    const uint32_t nin = op.spec.nin;
    for (uint32_t k = 0; k < nin; ++k)
      if (!op.operands[k].scalar)
        reads.push_back({op.operands[k].buffer.get(), op.lo[k], op.hi[k]});
    for (uint32_t k = nin; k < op.operands.size(); ++k)
      for (const Range &r : reads)
        if (r.buffer == op.operands[k].buffer.get() && op.lo[k] < r.hi && r.lo < op.hi[k])
          return false;
  }
  return true;
}

}  // namespace

bool HostExecutor::loops_exist(const RecordedOp &op) const {
  npvk_dtype dtypes[kMaxOperands];
  for (size_t k = 0; k < op.operands.size(); ++k) dtypes[k] = op.spec.operands[k].dtype;
  return loop_.has(op.spec.op, op.spec.nin, op.spec.nout, dtypes);
}

bool HostExecutor::can_run_elementwise(const std::vector<RecordedOp> &ops) const {
  if (!loop_.fn) return false;
  for (const RecordedOp &op : ops) {
    if (op.standalone) return false;
    for (const View &v : op.operands)
      if (!v.scalar && (!host_address(v) || v.buffer->mirrored())) return false;
    if (!loops_exist(op)) return false;
  }
  return true;
}

bool HostExecutor::can_replay(const std::vector<RecordedOp> &ops, bool may_have_run) const {
  bool possible = loop_.fn != nullptr && (!may_have_run || safe_to_rerun(ops));
  for (size_t i = 0; possible && i < ops.size(); ++i) {
    const RecordedOp &op = ops[i];
    for (const View &v : op.operands) possible = possible && host_address(v) != nullptr;
    possible =
        possible && (op.standalone ? op.standalone->replay_supported(loop_) : loops_exist(op));
  }
  return possible;
}

void HostExecutor::run(const std::vector<RecordedOp> &ops, FpErrors &errors) {
  // The loops raise FP exceptions as NumPy's do; they are reported like the
  // device's, and the flushing thread's own status is left as it was.
  std::fexcept_t saved;
  std::fegetexceptflag(&saved, FE_ALL_EXCEPT);
  for (const RecordedOp &op : ops) replay_op(op, errors);
  std::fesetexceptflag(&saved, FE_ALL_EXCEPT);
}

uint64_t HostExecutor::run(const std::vector<RecordedOp> &ops,
                           const std::vector<PlannedKernel> &kernels, FpErrors &errors) {
  uint64_t unwritten = 0;
  std::fexcept_t saved;
  std::fegetexceptflag(&saved, FE_ALL_EXCEPT);
  // Kernels hold consecutive ops in order (an op over no elements has none).
  for (const PlannedKernel &k : kernels) {
    if (replays_fused(k)) {
      unwritten += replay_fused(k, ops, loop_, scratch_, errors, split_, parts_on_workers_);
      continue;
    }
    for (size_t i : k.ops) replay_op(ops[i], errors);
  }
  std::fesetexceptflag(&saved, FE_ALL_EXCEPT);
  return unwritten;
}

void HostExecutor::replay_op(const RecordedOp &op, FpErrors &errors) {
  if (!op.standalone) {
    replay_elementwise(op, errors);
    return;
  }
  uint8_t *bytes[3] = {};
  for (size_t k = 0; k < op.operands.size() && k < 3; ++k) bytes[k] = host_address(op.operands[k]);
  errors.note(op.spec.op, op.standalone->replay(loop_, bytes), op.thread, op.serial);
}

void HostExecutor::replay_elementwise(const RecordedOp &op, FpErrors &errors) {
  const size_t n = op.operands.size();
  npvk_dtype dtypes[kMaxOperands];
  char *base[kMaxOperands];
  int64_t item[kMaxOperands];
  for (size_t k = 0; k < n; ++k) {
    dtypes[k] = op.spec.operands[k].dtype;
    base[k] = reinterpret_cast<char *>(host_address(op.operands[k]));
    item[k] = int64_t(dtype_info(dtypes[k]).itemsize);
  }
  const IterationSpace &sp = op.space;
  const uint32_t rank = sp.rank;
  const int64_t inner = rank ? sp.shape[rank - 1] : sp.count;
  if (inner <= 0) return;
  int64_t steps[kMaxOperands]{};
  for (size_t k = 0; k < n && rank; ++k) steps[k] = sp.strides[k][rank - 1] * item[k];

  // One loop call per row, or, where there are fewer rows than parts, per
  // piece of a row (a multiple of 2048 elements: the pieces keep the row's
  // alignment, which picks NumPy's SIMD path).
  const int64_t rows = sp.count / inner;
  const int wanted = split_ ? HostWorkers::parts_of(sp.count) : 1;
  const int64_t pieces_per_row = rows >= wanted ? 1 : (wanted + rows - 1) / rows;
  const int64_t piece = (inner / pieces_per_row + 2047) / 2048 * 2048;
  const int64_t pieces = pieces_per_row > 1 ? (inner + piece - 1) / piece : 1;
  const int64_t units = rows * pieces;
  const int parts = int(std::min<int64_t>(wanted, units));
  std::vector<uint32_t> flags(size_t(parts), 0);
  parts_on_workers_ += HostWorkers::run_parts(parts, [&](int part) {
    // FP status flags are sticky: cleared once before the rows and read once
    // after them (per row, the two cost more than a 10-element loop).
    std::feclearexcept(FE_ALL_EXCEPT);
    uint32_t raised_here = 0;
    const int64_t end = units * (part + 1) / parts;
    for (int64_t unit = units * part / parts; unit < end; ++unit) {
      const int64_t first = pieces > 1 ? unit % pieces * piece : 0;
      int64_t rest = unit / pieces;
      char *args[kMaxOperands];
      for (size_t k = 0; k < n; ++k) args[k] = base[k] + first * steps[k];
      // The row's start: its index over the outer dimensions, in C order.
      for (uint32_t d = rank > 1 ? rank - 1 : 0; d-- > 0;) {
        const int64_t index = rest % sp.shape[d];
        rest /= sp.shape[d];
        for (size_t k = 0; k < n; ++k) args[k] += index * sp.strides[k][d] * item[k];
      }
      uint32_t raised = 0;
      loop_.run(op.spec.op, op.spec.nin, op.spec.nout, dtypes, args,
                pieces > 1 ? std::min(piece, inner - first) : inner, steps, &raised);
      raised_here |= raised;
    }
    flags[size_t(part)] = raised_here | host_fp_flags();
  });
  uint32_t raised = 0;
  for (uint32_t f : flags) raised |= f;
  raised &= ~uint32_t(NPVK_FP_UNDERFLOW);  // the device never reports it either
  errors.note(op.spec.op, raised, op.thread, op.serial);
}

}  // namespace npvk
