#include "runtime/host/fused_replay.hpp"

#include <algorithm>
#include <cfenv>

#include "base/host_fp.hpp"
#include "compile/dtype.hpp"
#include "runtime/buffer.hpp"
#include "runtime/host/host_workers.hpp"

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
                      const HostLoop &loop, std::vector<uint8_t> &scratch, FpErrors &errors,
                      bool split, uint64_t &on_workers) {
  const FusedKernelSpec &spec = k.spec;
  const IterationSpace &sp = k.space;
  const uint32_t rank = sp.rank;
  const size_t n = spec.slots.size(), steps_count = spec.steps.size();
  const int64_t row_elements = rank ? sp.shape[rank - 1] : sp.count;
  if (row_elements <= 0) return 0;

  // Per slot: its bytes in memory, the byte step along a row, and where in
  // a part's scratch a contracted value lives (-1: it is written to memory,
  // if at all).
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

  // The work is rows times blocks per row; each part takes a run of them,
  // with a scratch of its own.
  const int64_t blocks_per_row = (row_elements + kBlockElements - 1) / kBlockElements;
  const int64_t units = sp.count / row_elements * blocks_per_row;
  const int parts =
      split ? int(std::min<int64_t>(HostWorkers::parts_of(sp.count * int64_t(steps_count)), units))
            : 1;
  if (scratch.size() < scratch_bytes * size_t(parts)) scratch.resize(scratch_bytes * size_t(parts));
  std::vector<uint32_t> flags(steps_count * size_t(parts), 0);

  on_workers += HostWorkers::run_parts(parts, [&](int part) {
    uint8_t *my_scratch = scratch.data() + scratch_bytes * size_t(part);
    uint32_t *my_flags = flags.data() + steps_count * size_t(part);
    std::vector<char *> row(n), at(n);
    std::vector<int64_t> step(n);
    int64_t current_row = -1;
    // FP status flags are sticky: cleared once, then read after each loop
    // call and cleared again only when one was raised, so each is the step's
    // own.
    std::feclearexcept(FE_ALL_EXCEPT);
    const int64_t end = units * (part + 1) / parts;
    for (int64_t unit = units * part / parts; unit < end; ++unit) {
      const int64_t r = unit / blocks_per_row, first = unit % blocks_per_row * kBlockElements;
      if (r != current_row) {
        // The row's start: its index over the outer dimensions, in C order.
        current_row = r;
        for (size_t s = 0; s < n; ++s) row[s] = base[s];
        int64_t rest = r;
        for (uint32_t d = rank > 1 ? rank - 1 : 0; d-- > 0;) {
          const int64_t index = rest % sp.shape[d];
          rest /= sp.shape[d];
          for (size_t s = 0; s < n; ++s)
            if (row[s] && !spec.slots[s].scalar) row[s] += index * sp.strides[s][d] * item[s];
        }
      }
      const int64_t count = std::min(kBlockElements, row_elements - first);
      // A slot's value is in memory until a step of this block writes it.
      for (size_t s = 0; s < n; ++s) {
        at[s] = row[s] ? row[s] + first * row_step[s] : nullptr;
        step[s] = row_step[s];
      }
      for (size_t i = 0; i < steps_count; ++i) {
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
            at[s] = reinterpret_cast<char *>(my_scratch) + scratch_at[s];
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
          my_flags[i] |= raised;
          std::feclearexcept(FE_ALL_EXCEPT);
        }
      }
    }
  });
  for (size_t i = 0; i < steps_count; ++i) {
    uint32_t raised = 0;
    for (int part = 0; part < parts; ++part) raised |= flags[steps_count * size_t(part) + i];
    const RecordedOp &op = ops[k.ops[i]];
    errors.note(op.spec.op, raised & ~uint32_t(NPVK_FP_UNDERFLOW), op.thread, op.serial);
  }
  return unwritten;
}

}  // namespace npvk
