#include "compile/fusion.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "base/options.hpp"
#include "compile/dtype.hpp"

namespace npvk {
namespace {

bool same_elements(const View &a, const Dims &a_strides, const View &b, const Dims &b_strides) {
  return a.buffer == b.buffer && a.offset == b.offset && a.dtype == b.dtype &&
         a_strides == b_strides;
}

bool same_scalar(const View &a, const View &b) {
  return a.scalar && b.scalar && a.dtype == b.dtype && a.scalar_bits == b.scalar_bits;
}

// Builds one kernel from consecutive ops; add() refuses an op that cannot
// join, and the caller starts the next kernel with it.
class KernelBuilder {
 public:
  explicit KernelBuilder(PlannedKernel &k) : k_(k) {}

  // Whether the last add() failed only because the kernel is full.
  bool full() const { return full_; }

  bool add(const RecordedOp &op, size_t index) {
    full_ = k_.ops.size() >= kMaxFusedSteps;
    if (full_) return false;
    const bool flat = in_memory_order(op.space);
    // The loop the slots walk: the kernel's so far, or this op's where the
    // kernel's ops were all in memory order and this one is not (rebased:
    // their slots walk the new shape in C order, which is the same pairing
    // of elements).
    bool rebase = false, c_order = false;
    if (!k_.ops.empty() && op.space.full_shape != k_.shape) {
      if (!loops_pair_up(k_.shape, flat_, op.space.full_shape, flat)) return false;
      rebase = !flat;
      c_order = flat;  // this op's arrays walk the kernel's shape in C order
    }
    const Dims shape = k_.ops.empty() || rebase ? op.space.full_shape : k_.shape;
    const Dims in_order = c_order_strides(shape), none(shape.size(), 0);
    std::vector<Dims> before_rebase;
    if (rebase)
      for (SlotBinding &b : k_.slots) {
        before_rebase.push_back(b.strides);
        b.strides = b.view->scalar ? none : in_order;
      }
    auto refuse = [&] {
      for (size_t s = 0; s < before_rebase.size(); ++s) k_.slots[s].strides = before_rebase[s];
      return false;
    };
    const uint32_t n = uint32_t(op.operands.size());
    uint8_t slot[kMaxOperands];
    std::vector<SlotBinding> added;
    for (uint32_t k = 0; k < n; ++k) {
      const View &v = op.operands[k];
      const Dims &strides = v.scalar ? none : c_order ? in_order : op.space.full_strides[k];
      const bool write = k >= op.spec.nin;
      int found = find(v, strides, added);
      if (found >= 0) {
        // A slot so far only read becomes written: every other view of its
        // bytes in the kernel now races with it.
        if (write && !v.scalar && !written_slot(size_t(found), added) &&
            conflicts(v, op.lo[k], op.hi[k], write, added, found))
          return refuse();
      } else {
        if (!v.scalar && conflicts(v, op.lo[k], op.hi[k], write, added, -1)) return refuse();
        SlotBinding b;
        b.view = &v;
        b.lo = op.lo[k];
        b.hi = op.hi[k];
        b.strides = strides;
        added.push_back(std::move(b));
        found = int(k_.slots.size() + added.size() - 1);
      }
      slot[k] = uint8_t(found);
    }
    full_ = k_.slots.size() + added.size() > kMaxKernelSlots;
    if (full_) return refuse();

    // Commit.
    flat_ = (k_.ops.empty() || flat_) && flat;
    k_.shape = shape;
    for (SlotBinding &b : added) {
      FusedKernelSpec::Slot s;
      s.dtype = b.view->dtype;
      s.scalar = b.view->scalar;
      k_.spec.slots.push_back(s);
      k_.slots.push_back(std::move(b));
    }
    FusedKernelSpec::Step step;
    step.op = op.spec;
    for (uint32_t k = 0; k < n; ++k) {
      step.slot[k] = slot[k];
      SlotBinding &b = k_.slots[slot[k]];
      if (k >= op.spec.nin) {
        b.written = true;
        // The slot holds what was written last: where an allocation freed by
        // an earlier op of the kernel was reused (a new Buffer::generation),
        // whether the slot is stored is the new array's question, not the
        // freed one's (contract). skimage's hsv2rgb wrote its `p` over the
        // bytes of an image rescaled earlier in the kernel, and lost it.
        b.view = &op.operands[k];
      } else if (!b.written)
        b.read = true;  // read before any write: loaded from memory
    }
    k_.spec.steps.push_back(step);
    k_.ops.push_back(index);
    return true;
  }

 private:
  int find(const View &v, const Dims &strides, const std::vector<SlotBinding> &added) const {
    auto match = [&](const SlotBinding &b) {
      return v.scalar ? same_scalar(*b.view, v)
                      : !b.view->scalar && same_elements(*b.view, b.strides, v, strides);
    };
    for (size_t s = 0; s < k_.slots.size(); ++s)
      if (match(k_.slots[s])) return int(s);
    for (size_t s = 0; s < added.size(); ++s)
      if (match(added[s])) return int(k_.slots.size() + s);
    return -1;
  }

  // Different elements of the same bytes, one of them written: invocations
  // would race, so the op needs a kernel of its own (after a barrier).
  bool written_slot(size_t index, const std::vector<SlotBinding> &added) const {
    return index < k_.slots.size() ? k_.slots[index].written
                                   : added[index - k_.slots.size()].written;
  }

  // `self`: the slot that `v` is (not a conflict with itself), or -1.
  bool conflicts(const View &v, int64_t lo, int64_t hi, bool write,
                 const std::vector<SlotBinding> &added, int self) const {
    const SlotBinding *own = nullptr;
    if (self >= 0)
      own = size_t(self) < k_.slots.size() ? &k_.slots[size_t(self)]
                                           : &added[size_t(self) - k_.slots.size()];
    auto clash = [&](const SlotBinding &b) {
      if (&b == own || b.view->scalar || b.view->buffer != v.buffer) return false;
      if (!write && !b.written) return false;
      if (hi <= b.lo || b.hi <= lo) return false;
      return !views_interleave_apart(*b.view, v);
    };
    return std::any_of(k_.slots.begin(), k_.slots.end(), clash) ||
           std::any_of(added.begin(), added.end(), clash);
  }

  PlannedKernel &k_;
  bool flat_ = false;  // every op so far is in memory order (k_.shape is {count})
  bool full_ = false;
};

// One value of a buffer: its memory may hold several arrays in turn
// (Buffer::generation).
using ValueKey = std::pair<const Buffer *, uint32_t>;
ValueKey value_key(const View &v) {
  return {v.buffer.get(), v.generation};
}

// Where to end a full kernel: after the op (from its second half on) whose
// cut leaves the fewest dead temporaries written before it and read after it
// (each would have to be stored and loaded again), the latest on ties. A
// time-step loop's steps then end at step boundaries, where only the state
// arrays cross, so every kernel of the loop is the same kernel: one
// compilation instead of one per phase of the loop against the limit
// (measured: Black-Scholes compiled 8 kernels for 10 steps, 1 with this).
size_t best_cut(const std::vector<RecordedOp> &ops, const std::vector<size_t> &kernel,
                const DeadValue &dead) {
  // How far past the cut a read counts: about the next kernel.
  const size_t horizon = 2 * kMaxFusedSteps;
  size_t best = kernel.size() - 1, best_cost = SIZE_MAX;
  std::map<ValueKey, bool> written;  // dead temporaries written so far
  for (size_t p = 0; p < kernel.size(); ++p) {
    const RecordedOp &op = ops[kernel[p]];
    for (size_t k = op.spec.nin; k < op.operands.size(); ++k) {
      const View &v = op.operands[k];
      if (v.buffer && !v.scalar && !written.count(value_key(v))) written[value_key(v)] = dead(v);
    }
    if (p < kernel.size() / 2) continue;
    size_t cost = 0;
    std::map<ValueKey, bool> counted;
    const size_t end = std::min(ops.size(), kernel[p] + 1 + horizon);
    for (size_t j = kernel[p] + 1; j < end; ++j)
      for (size_t k = 0; k < ops[j].spec.nin; ++k) {
        const ValueKey b = value_key(ops[j].operands[k]);
        auto w = written.find(b);
        if (w != written.end() && w->second && !counted[b]) {
          counted[b] = true;
          ++cost;
        }
      }
    if (cost <= best_cost) {
      best_cost = cost;
      best = p;
    }
  }
  return best;
}

// Stores that nothing needs: the slot's buffer is dead and no later kernel
// reads it. (Reads inside the kernel are forwarded in registers.)
void contract(std::vector<PlannedKernel> &kernels, const std::vector<RecordedOp> &ops,
              const DeadValue &dead) {
  // By the ops' own views: a slot names one value of its bytes (the last
  // written), and may have read another before.
  std::map<ValueKey, size_t> last_reader;
  for (size_t g = 0; g < kernels.size(); ++g)
    for (size_t index : kernels[g].ops) {
      const RecordedOp &op = ops[index];
      for (size_t k = 0; k < op.spec.nin; ++k)
        if (op.operands[k].buffer && !op.operands[k].scalar)
          last_reader[value_key(op.operands[k])] = g;
    }
  std::map<ValueKey, bool> dead_cache;
  for (size_t g = 0; g < kernels.size(); ++g) {
    PlannedKernel &k = kernels[g];
    if (k.standalone) continue;  // its result is what the caller asked for
    for (size_t s = 0; s < k.slots.size(); ++s) {
      const SlotBinding &b = k.slots[s];
      if (!b.written) continue;
      const ValueKey value = value_key(*b.view);
      auto reader = last_reader.find(value);
      if (reader != last_reader.end() && reader->second > g) continue;
      auto known = dead_cache.find(value);
      bool is_dead =
          known != dead_cache.end() ? known->second : (dead_cache[value] = dead(*b.view));
      if (!is_dead) continue;
      k.spec.slots[s].stored = false;
      k.contracted_bytes += uint64_t(b.hi - b.lo);
    }
  }
}

// A reduction's or matrix product's kernel: the slots only tell
// contraction and the barriers what it reads and writes.
PlannedKernel standalone_kernel(const RecordedOp &op, size_t index) {
  PlannedKernel k;
  k.standalone = op.standalone.get();
  k.ops.push_back(index);
  for (uint32_t i = 0; i < op.operands.size(); ++i) {
    SlotBinding b;
    b.view = &op.operands[i];
    b.lo = op.lo[i];
    b.hi = op.hi[i];
    (i < op.spec.nin ? b.read : b.written) = true;
    FusedKernelSpec::Slot slot;
    slot.dtype = b.view->dtype;
    k.spec.slots.push_back(slot);
    k.slots.push_back(std::move(b));
  }
  k.space.count = op.space.count;
  return k;
}

}  // namespace

std::vector<PlannedKernel> plan_kernels(const std::vector<RecordedOp> &ops, bool fuse,
                                        uint64_t min_fuse_elements, const DeadValue &dead) {
  std::vector<PlannedKernel> kernels;
  std::unique_ptr<KernelBuilder> builder;
  std::map<ValueKey, bool> dead_values;
  auto is_dead = [&](const View &v) {
    auto known = dead_values.find(value_key(v));
    return known != dead_values.end() ? known->second : (dead_values[value_key(v)] = dead(v));
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].space.count == 0) continue;
    if (ops[i].standalone) {
      kernels.push_back(standalone_kernel(ops[i], i));
      builder.reset();
      continue;
    }
    const bool fusible = fuse && uint64_t(ops[i].space.count) >= min_fuse_elements;
    if (fusible && builder && builder->add(ops[i], i)) continue;
    if (fusible && builder && builder->full()) {
      const std::vector<size_t> ops_so_far = kernels.back().ops;
      const size_t cut = best_cut(ops, ops_so_far, is_dead);
      if (cut + 1 < ops_so_far.size()) {
        // Rebuild the kernel up to the cut; planning resumes after it.
        kernels.back() = PlannedKernel();
        builder = std::make_unique<KernelBuilder>(kernels.back());
        for (size_t p = 0; p <= cut; ++p) builder->add(ops[ops_so_far[p]], ops_so_far[p]);
        builder.reset();
        i = ops_so_far[cut];
        continue;
      }
    }
    kernels.emplace_back();
    builder = std::make_unique<KernelBuilder>(kernels.back());
    builder->add(ops[i], i);  // one op always fits an empty kernel
    if (!fusible) builder.reset();
  }
  if (fuse) contract(kernels, ops, dead);

  for (PlannedKernel &k : kernels) {
    if (k.standalone) continue;
    OperandDims strides;
    OperandFlags unit_stride(k.slots.size());
    for (size_t s = 0; s < k.slots.size(); ++s) {
      const bool memory = !k.spec.slots[s].scalar && (k.slots[s].read || k.spec.slots[s].stored);
      strides.push_back(memory ? k.slots[s].strides : Dims(k.slots[s].strides.size(), 0));
      unit_stride[s] = memory;
    }
    k.space = merge_dimensions(k.shape, strides, unit_stride);
    k.spec.contiguous = k.space.contiguous;
    k.spec.rank = k.space.contiguous ? 0 : k.space.rank;
    k.spec.narrow_index = !k.space.contiguous && k.space.count < (int64_t(1) << 31);
    k.spec.narrow_offsets = offsets_fit_int32(k.space);
    // Off by default (NPVK_VECTOR_ACCESS): buffer-reference vectors measured
    // no faster on lavapipe, and Black-Scholes far slower
    // (docs/architecture.md).
    k.spec.vector_access = k.space.contiguous && process_options().vector_access;
  }
  return kernels;
}

}  // namespace npvk
