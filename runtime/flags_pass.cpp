#include "runtime/flags_pass.hpp"

#include "compile/codegen.hpp"
#include "compile/kernel_abi.hpp"
#include "runtime/buffer.hpp"
#include "runtime/kernel_store.hpp"

namespace npvk {
namespace {

struct Extent {
  const Buffer *buffer;
  int64_t lo, hi;
  bool overlaps(const Extent &o) const { return buffer == o.buffer && lo < o.hi && o.lo < hi; }
};

// What a kernel may write: a fused kernel's stored slots, or its ops' outputs.
std::vector<Extent> writes_of(const PlannedKernel &k, const std::vector<RecordedOp> &ops) {
  std::vector<Extent> out;
  if (!k.standalone) {
    for (size_t s = 0; s < k.slots.size(); ++s)
      if (k.slots[s].written && k.spec.slots[s].stored && k.slots[s].view->buffer)
        out.push_back({k.slots[s].view->buffer.get(), k.slots[s].lo, k.slots[s].hi});
    return out;
  }
  for (size_t i : k.ops) {
    const RecordedOp &op = ops[i];
    for (size_t o = op.spec.nin; o < op.operands.size(); ++o)
      if (op.operands[o].buffer) out.push_back({op.operands[o].buffer.get(), op.lo[o], op.hi[o]});
  }
  return out;
}

}  // namespace

void choose_flags_loops(std::vector<PlannedKernel> &kernels, const std::vector<RecordedOp> &ops) {
  // Writes of kernels i+1.. as the loop walks back from the last kernel.
  std::vector<Extent> later;
  for (size_t i = kernels.size(); i-- > 0;) {
    PlannedKernel &k = kernels[i];
    if (!k.standalone) {
      bool untouched = true;
      for (size_t s = 0; s < k.slots.size() && untouched; ++s) {
        const SlotBinding &b = k.slots[s];
        if (!b.read || k.spec.slots[s].scalar || !b.view->buffer) continue;
        const Extent read{b.view->buffer.get(), b.lo, b.hi};
        for (const Extent &w : later) untouched = untouched && !w.overlaps(read);
      }
      // The kernel's own in-place writes are no obstacle: ops that read an
      // overwritten slot compute their flags in the main loop (codegen).
      k.spec.flags_loop =
          untouched ? FusedKernelSpec::FlagsLoop::Deferred : FusedKernelSpec::FlagsLoop::InKernel;
    }
    const std::vector<Extent> w = writes_of(k, ops);
    later.insert(later.end(), w.begin(), w.end());
  }
}

void run_flags_passes(const std::vector<PlannedKernel> &kernels,
                      const std::vector<size_t> &first_dispatch,
                      const std::vector<vk::Dispatch> &batch, KernelStore &store,
                      vk::Executor &executor, vk::BatchResult &result) {
  std::vector<vk::Dispatch> passes;
  std::vector<size_t> words;  // each pass's kernel's first flag word in result.fp_flags
  size_t word = 0;
  for (size_t i = 0, d = 0; i < kernels.size(); ++i) {
    for (; d < first_dispatch[i]; ++d) word += batch[d].flag_words;
    const PlannedKernel &k = kernels[i];
    if (k.standalone || k.spec.flags_loop != FusedKernelSpec::FlagsLoop::Deferred ||
        !(result.fp_flags[word] & kFlagsPassWanted))
      continue;
    result.fp_flags[word] &= ~kFlagsPassWanted;
    FusedKernelSpec spec = k.spec;
    spec.flags_loop = FusedKernelSpec::FlagsLoop::FlagsPass;
    vk::Dispatch pass = batch[first_dispatch[i]];
    pass.pipeline = store.pipeline(spec.key(), [&spec] { return generate_glsl(spec); });
    for (vk::Access &a : pass.accesses) a.write = false;
    passes.push_back(std::move(pass));
    words.push_back(word);
  }
  if (passes.empty()) return;
  vk::BatchResult flags = executor.run(passes);
  for (size_t p = 0, at = 0; p < passes.size(); at += passes[p++].flag_words)
    for (uint32_t w = 0; w < passes[p].flag_words; ++w)
      result.fp_flags[words[p] + w] |= flags.fp_flags[at + w];
  result.device_seconds += flags.device_seconds;
  result.barriers += flags.barriers;
}

}  // namespace npvk
