#include "runtime/flags_pass.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/kernel_abi.hpp"
#include "runtime/buffer.hpp"
#include "runtime/kernel_store.hpp"

namespace npvk {
namespace {

struct Extent {
  const Buffer *buffer;
  int64_t lo, hi;
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

// What a fused kernel's flags pass reads again.
std::vector<Extent> reads_of(const PlannedKernel &k) {
  std::vector<Extent> in;
  for (size_t s = 0; s < k.slots.size() && !k.standalone; ++s) {
    const SlotBinding &b = k.slots[s];
    if (b.read && !k.spec.slots[s].scalar && b.view->buffer)
      in.push_back({b.view->buffer.get(), b.lo, b.hi});
  }
  return in;
}

// Runs the flags passes of kernels [from, to), whose dispatches ran with
// result words starting at `word`.
void run_passes(const std::vector<PlannedKernel> &kernels,
                const std::vector<size_t> &first_dispatch, const std::vector<vk::Dispatch> &batch,
                size_t from, size_t to, size_t word, std::vector<uint32_t> &words,
                KernelStore &store, vk::Executor &executor, vk::BatchResult &result) {
  std::vector<vk::Dispatch> passes;
  std::vector<size_t> at;  // each pass's kernel's first flag word in `words`
  for (size_t i = from, d = first_dispatch[from]; i < to; ++i) {
    for (; d < first_dispatch[i]; ++d) word += batch[d].flag_words;
    const PlannedKernel &k = kernels[i];
    if (k.standalone || k.spec.flags_loop != FusedKernelSpec::FlagsLoop::Deferred ||
        !(words[word] & kFlagsPassWanted))
      continue;
    words[word] &= ~kFlagsPassWanted;
    FusedKernelSpec spec = k.spec;
    spec.flags_loop = FusedKernelSpec::FlagsLoop::FlagsPass;
    vk::Dispatch pass = batch[first_dispatch[i]];
    pass.pipeline = store.pipeline(spec.key(), [&spec] { return generate_glsl(spec); });
    for (vk::Access &a : pass.accesses) a.write = false;
    passes.push_back(std::move(pass));
    at.push_back(word);
  }
  if (passes.empty()) return;
  vk::BatchResult flags = executor.run(passes);
  for (size_t p = 0, w0 = 0; p < passes.size(); w0 += passes[p++].flag_words)
    for (uint32_t w = 0; w < passes[p].flag_words; ++w) words[at[p] + w] |= flags.fp_flags[w0 + w];
  result.device_seconds += flags.device_seconds;
  result.barriers += flags.barriers;
}

}  // namespace

std::vector<size_t> choose_flags_loops(std::vector<PlannedKernel> &kernels,
                                       const std::vector<RecordedOp> &ops) {
  std::vector<size_t> cuts;
  // What the current segment's flags passes may read, per buffer as one
  // byte range covering all (a false overlap costs a submission, not a
  // result; a flush of thousands of kernels stays linear).
  std::unordered_map<const Buffer *, std::pair<int64_t, int64_t>> reread;
  for (size_t i = 0; i < kernels.size(); ++i) {
    PlannedKernel &k = kernels[i];
    bool hazard = false;
    for (const Extent &w : writes_of(k, ops)) {
      auto r = reread.find(w.buffer);
      hazard = hazard || (r != reread.end() && w.lo < r->second.second && r->second.first < w.hi);
    }
    if (hazard) {
      cuts.push_back(i);
      reread.clear();
    }
    // A kernel without a flags loop never asks for a pass (its in-place ops
    // compute their flags in the main loop), nor does its own writes' order
    // matter to its pass.
    if (k.standalone || !has_flags_loop(k.spec)) continue;
    k.spec.flags_loop = FusedKernelSpec::FlagsLoop::Deferred;
    for (const Extent &r : reads_of(k)) {
      auto [at, fresh] = reread.try_emplace(r.buffer, r.lo, r.hi);
      if (!fresh)
        at->second = {std::min(at->second.first, r.lo), std::max(at->second.second, r.hi)};
    }
  }
  return cuts;
}

vk::BatchResult run_with_flags_passes(const std::vector<PlannedKernel> &kernels,
                                      const std::vector<size_t> &first_dispatch,
                                      std::vector<vk::Dispatch> &batch,
                                      const std::vector<size_t> &cuts, KernelStore &store,
                                      vk::Executor &executor) {
  vk::BatchResult result;
  std::vector<size_t> bounds{0};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back(kernels.size());
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    const size_t from = bounds[s], to = bounds[s + 1];
    std::vector<vk::Dispatch> part(batch.begin() + long(first_dispatch[from]),
                                   batch.begin() + long(first_dispatch[to]));
    vk::BatchResult r = executor.run(part);
    const size_t word = result.fp_flags.size();
    result.fp_flags.insert(result.fp_flags.end(), r.fp_flags.begin(), r.fp_flags.end());
    result.dispatch_ns.insert(result.dispatch_ns.end(), r.dispatch_ns.begin(), r.dispatch_ns.end());
    result.device_seconds += r.device_seconds;
    result.barriers += r.barriers;
    run_passes(kernels, first_dispatch, batch, from, to, word, result.fp_flags, store, executor,
               result);
  }
  return result;
}

}  // namespace npvk
