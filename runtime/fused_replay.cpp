#include "runtime/fused_replay.hpp"

#include <algorithm>
#include <cfenv>

#include "base/host_fp.hpp"
#include "compile/dtype.hpp"
#include "runtime/buffer.hpp"

namespace npvk {
namespace {

// Elements per block: with a dozen 8-byte values in scratch, 200 KB, which
// stays in a core's L2 cache between one step and the next.
constexpr int64_t kBlockElements = 2048;

// Shorter rows are replayed op by op: each step then costs a loop call per
// row and block, about what NumPy's own loop spends on a few hundred elements.
constexpr int64_t kMinRowElements = 512;

}  // namespace

uint8_t *host_address(const View &v) {
  if (v.scalar) return reinterpret_cast<uint8_t *>(const_cast<uint64_t *>(&v.scalar_bits));
  if (!v.buffer) return nullptr;
  // Pages not imported yet: the host memory itself (a zero-copy wrap).
  if (v.buffer->import_deferred) return static_cast<uint8_t *>(v.buffer->host) + v.offset;
  if (!v.buffer->device) return nullptr;
  auto *base = static_cast<uint8_t *>(v.buffer->device->mapped());
  return base ? base + v.offset : nullptr;
}

bool replays_fused(const PlannedKernel &k) {
  if (k.standalone || k.spec.steps.size() < 2) return false;
  const IterationSpace &sp = k.space;
  return (sp.rank ? sp.shape[sp.rank - 1] : sp.count) >= kMinRowElements;
}

uint64_t replay_fused(const PlannedKernel &k, const std::vector<RecordedOp> &ops,
                      const HostLoop &loop, std::vector<uint8_t> &scratch, FpErrors &errors) {
  const FusedKernelSpec &spec = k.spec;
  const IterationSpace &sp = k.space;
  const uint32_t rank = sp.rank;
  const size_t n = spec.slots.size();
  const int64_t row_elements = rank ? sp.shape[rank - 1] : sp.count;

  // Per slot: its bytes in memory, the byte step along a row, and where in
  // scratch a contracted value lives (-1: it is written to memory, if at all).
  std::vector<char *> base(n);
  std::vector<int64_t> item(n), row_step(n), scratch_at(n, -1);
  size_t scratch_bytes = 0;
  uint64_t unwritten = 0;
  for (size_t s = 0; s < n; ++s) {
    const FusedKernelSpec::Slot &slot = spec.slots[s];
    item[s] = int64_t(dtype_info(slot.dtype).itemsize);
    base[s] = reinterpret_cast<char *>(host_address(*k.slots[s].view));
    row_step[s] = slot.scalar || rank == 0 ? 0 : sp.strides[s][rank - 1] * item[s];
    if (!slot.scalar && !slot.stored && k.slots[s].written) {
      scratch_at[s] = int64_t(scratch_bytes);
      // A cache line apart: NumPy takes an output that ends where an input
      // starts as overlapping it, and runs a slower loop with other bits.
      scratch_bytes += size_t(kBlockElements * item[s] + 64 + 63) / 64 * 64;
      unwritten += uint64_t(sp.count * item[s]);
    }
  }
  if (scratch.size() < scratch_bytes) scratch.resize(scratch_bytes);

  std::vector<uint32_t> flags(spec.steps.size(), 0);
  std::vector<int64_t> index(rank > 1 ? rank - 1 : 0, 0);  // odometer over the outer dimensions
  std::vector<char *> row(n), at(n);
  std::vector<int64_t> step(n);
  // FP status flags are sticky: cleared once, then read after each loop call
  // and cleared again only when one was raised, so each is the step's own.
  std::feclearexcept(FE_ALL_EXCEPT);
  while (row_elements > 0) {
    for (size_t s = 0; s < n; ++s) {
      row[s] = base[s];
      if (spec.slots[s].scalar) continue;
      for (size_t d = 0; d < index.size(); ++d) row[s] += index[d] * sp.strides[s][d] * item[s];
    }
    for (int64_t first = 0; first < row_elements; first += kBlockElements) {
      const int64_t count = std::min(kBlockElements, row_elements - first);
      // A slot's value is in memory until a step of this block writes it.
      for (size_t s = 0; s < n; ++s) {
        at[s] = row[s] ? row[s] + first * row_step[s] : nullptr;
        step[s] = row_step[s];
      }
      for (size_t i = 0; i < spec.steps.size(); ++i) {
        // The slots come from the kernel's step, the loop from the recorded
        // op: what NumPy's call asked for.
        const FusedKernelSpec::Step &st = spec.steps[i];
        const KernelSpec &recorded = ops[k.ops[i]].spec;
        const uint32_t nin = recorded.nin, operands = recorded.count();
        char *args[kMaxOperands];
        int64_t steps[kMaxOperands];
        npvk_dtype dtypes[kMaxOperands];
        for (uint32_t j = 0; j < operands; ++j) {
          const uint8_t s = st.slot[j];
          if (j >= nin && scratch_at[s] >= 0) {
            at[s] = reinterpret_cast<char *>(scratch.data()) + scratch_at[s];
            step[s] = item[s];
          }
          args[j] = at[s];
          steps[j] = step[s];
          dtypes[j] = recorded.operands[j].dtype;
        }
        uint32_t raised = 0;
        loop.run(recorded.op, nin, recorded.nout, dtypes, args, count, steps, &raised);
        raised |= host_fp_flags();
        if (raised) {
          flags[i] |= raised;
          std::feclearexcept(FE_ALL_EXCEPT);
        }
      }
    }
    size_t d = index.size();
    while (d > 0 && ++index[d - 1] == sp.shape[d - 1]) index[--d] = 0;
    if (d == 0) break;
  }
  for (size_t i = 0; i < spec.steps.size(); ++i) {
    const RecordedOp &op = ops[k.ops[i]];
    errors.note(op.spec.op, flags[i] & ~uint32_t(NPVK_FP_UNDERFLOW), op.thread);
  }
  return unwritten;
}

}  // namespace npvk
