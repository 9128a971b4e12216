#include "compile/families/elementwise/elementwise_binding.hpp"

#include <algorithm>

namespace npvk {

uint32_t grid_stride_groups(uint64_t wanted, const BindTarget &target) {
  // llvmpipe ends a loop nest after 65535 iterations in all, inner loops
  // included (fmod's long division takes up to ~200 per element): enough
  // workgroups that no invocation's grid-stride loop visits more than 256
  // elements.
  const uint64_t needed = (wanted + 255) / 256;
  return uint32_t(std::min<uint64_t>(
      wanted, std::min(std::max(target.preferred_groups, needed), target.max_group_count)));
}

DispatchArgs bind_elementwise(const PlannedKernel &k, const BindTarget &target) {
  DispatchArgs d;
  d.key = k.spec.key();
  const FusedKernelSpec *spec = &k.spec;
  // Called while `k` lives: the runtime compiles during the flush that planned it.
  d.source = [spec] { return generate_glsl(*spec); };
  d.push.count = uint64_t(k.space.count);
  d.push.tables = target.tables_address;
  d.flag_words = uint32_t(k.spec.steps.size());
  // Slots past the push constants lead the argument table.
  if (k.slots.size() > kPushSlots) d.meta.resize(k.slots.size() - kPushSlots);
  for (size_t s = 0; s < k.slots.size(); ++s) {
    const SlotBinding &b = k.slots[s];
    uint64_t value = 0;
    if (k.spec.slots[s].scalar) {
      value = b.view->scalar_bits;
    } else {
      const bool store = b.written && k.spec.slots[s].stored;
      if (!b.read && !store) continue;  // a contracted temporary
      value = target.address(s);
      d.accesses.push_back({int(s), uint64_t(b.lo), uint64_t(b.hi), store});
    }
    if (s < kPushSlots)
      d.push.operand[s] = value;
    else
      d.meta[s - kPushSlots] = int64_t(value);
  }
  if (!k.space.contiguous) {
    d.meta.insert(d.meta.end(), k.space.shape.begin(), k.space.shape.end());
    for (const Dims &strides : k.space.strides)
      d.meta.insert(d.meta.end(), strides.begin(), strides.end());
    if (k.spec.narrow_index)
      for (int64_t extent : k.space.shape)
        d.meta.push_back(int64_t(division_magic(uint32_t(extent))));
  }
  uint64_t groups = (uint64_t(k.space.count) + kWorkgroupSize - 1) / kWorkgroupSize;
  d.groups = grid_stride_groups(groups, target);
  return d;
}

}  // namespace npvk
