// Where buffers' bytes live, and the device memory budget (docs/architecture.md,
// "Memory"): device buffers, wrapped host memory (zero-copy or mirrored),
// transfers between the two, and the eviction of mirrored buffers' device
// copies, least recently used first, when recorded work needs more device
// memory than the budget has left.
#pragma once

#include <npvk/npvk.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compile/fusion.hpp"
#include "runtime/buffer.hpp"
#include "runtime/profile.hpp"
#include "vulkan/device.hpp"

namespace npvk {

class Residency {
 public:
  // The context's device, which a context may make only at its first use
  // (Context::make_device): `make` returns it, making it first if needed;
  // `made` returns it or null. `info` is the context's description of it
  // (stored from an earlier process until it is made).
  struct DeviceAccess {
    std::function<vk::Device &()> make;
    std::function<vk::Device *()> made;
    const npvk_device_info *info = nullptr;
  };
  // `pending`: the context's queue (its buffers are busy); `flush` runs it.
  // `budget_text`: NPVK_DEVICE_MEMORY_BUDGET, or none for the device's figure.
  Residency(DeviceAccess device, const std::vector<RecordedOp> &pending,
            std::function<void()> flush, npvk_stats &stats, npvk_failure_stats &failures,
            Profiler &profiler, const std::optional<std::string> &budget_text);
  // The device was made: its own figure for the budget replaces the stored one.
  void device_made();
  // Imports the pages of a zero-copy wrap made before the device (no-op for
  // any other buffer); makes the device if needed.
  void import_deferred(Buffer &buffer);

  void set_observer(MemoryObserver *observer) { observer_ = observer; }

  std::shared_ptr<Buffer> create_buffer(std::shared_ptr<Context> ctx, uint64_t size);
  // `allow_import`: false forces a mirrored buffer (NPVK_ZERO_COPY=0).
  // `upload`: a mirrored buffer's device copy starts as a copy of the host
  // memory; false leaves it unwritten (the caller uploads when it is read).
  std::shared_ptr<Buffer> wrap_host(std::shared_ptr<Context> ctx, void *host, uint64_t size,
                                    bool allow_import, bool upload = true);
  void rewrap_host(Buffer &buffer, void *host);
  // Copies between a buffer's device memory and host memory.
  void transfer(Buffer &buffer, uint64_t offset, void *host, uint64_t size, bool to_device);

  // Gives the evicted mirrored buffers among an op's operands their device
  // copies back, evicting others or flushing first to keep within the budget.
  void make_resident(Buffer *const *used, size_t count);
  void make_resident(std::initializer_list<Buffer *> used) {
    make_resident(used.begin(), used.size());
  }

  uint64_t budget() const { return budget_; }
  uint64_t held() const { return held_; }
  uint64_t peak() const { return peak_held_; }
  void reset_peak() { peak_held_ = held_; }

  // Frees every buffer's device memory (release), or forgets it without
  // Vulkan (the child of a fork).
  void release_all();
  void abandon_all();

 private:
  void remember(const std::shared_ptr<Buffer> &buffer);
  bool make_room(uint64_t need, Buffer *const *keep, size_t count);
  void evict(Buffer &buffer);
  void allocate_copy(Buffer &buffer, bool upload = true);
  void inject_alloc_fault();

  vk::Device &device() { return device_.make(); }

  DeviceAccess device_;
  bool budget_given_ = false;  // NPVK_DEVICE_MEMORY_BUDGET set it
  const std::vector<RecordedOp> &pending_;
  std::function<void()> flush_;
  npvk_stats &stats_;
  npvk_failure_stats &failures_;
  Profiler &profiler_;
  MemoryObserver *observer_ = nullptr;
  std::vector<std::weak_ptr<Buffer>> buffers_;
  size_t live_buffer_estimate_ = 0;
  uint64_t budget_ = UINT64_MAX;   // bytes of mirrored buffers' device copies
  std::atomic<uint64_t> held_{0};  // charged by the copies themselves (DeviceBuffer::charge)
  uint64_t peak_held_ = 0;
  uint64_t use_clock_ = 0;  // Buffer::last_use
  bool overrun_reported_ = false;
};

}  // namespace npvk
