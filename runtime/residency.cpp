// The device memory budget (docs/architecture.md, "Memory"): mirrored
// buffers' device copies are freed to host memory, least recently used first,
// when the work being recorded needs more device memory than the budget has
// left. Zero-copy buffers hold no device copies, and npvk_buffer_create's
// memory has no host copy to fall back on, so neither is counted.
#include "runtime/residency.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "base/error.hpp"
#include "base/options.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/recovery.hpp"

namespace npvk {

Residency::Residency(DeviceAccess device, const std::vector<RecordedOp> &pending,
                     std::function<void()> flush, npvk_stats &stats, npvk_failure_stats &failures,
                     Profiler &profiler, const std::optional<std::string> &budget_text)
    : device_(std::move(device)),
      pending_(pending),
      flush_(std::move(flush)),
      stats_(stats),
      failures_(failures),
      profiler_(profiler) {
  if (budget_text) {
    budget_given_ = parse_byte_count(*budget_text, &budget_);
    if (!budget_given_)
      std::fprintf(stderr,
                   "npvk: NPVK_DEVICE_MEMORY_BUDGET=%s is not a byte count (e.g. 512M); ignored\n",
                   budget_text->c_str());
  }
  if (!budget_given_) {
    budget_ = device_.info->device_local_bytes;  // until the device is made
    if (!budget_) budget_ = UINT64_MAX;
    if (device_.made()) device_made();
  }
}

void Residency::device_made() {
  if (budget_given_) return;
  // VK_EXT_memory_budget's figure allows for what other processes hold;
  // without it, the heap's size is the most there can be.
  const vk::Device &d = device();
  budget_ = d.caps().local_heap_budget;
  if (!budget_) budget_ = d.info().device_local_bytes;
  if (!budget_) budget_ = UINT64_MAX;
}

void Residency::import_deferred(Buffer &buffer) {
  if (!buffer.import_deferred) return;
  buffer.device = std::make_unique<vk::DeviceBuffer>(device(), buffer.host, buffer.size());
  buffer.import_deferred = false;
}

std::shared_ptr<Buffer> Residency::create_buffer(std::shared_ptr<Context> ctx, uint64_t size) {
  inject_alloc_fault();
  auto buffer = std::make_shared<Buffer>(std::move(ctx), size);
  buffer->device =
      std::make_unique<vk::DeviceBuffer>(device(), size, vk::MemoryPlacement::DeviceLocal);
  if (void *p = buffer->device->mapped()) {
    std::memset(p, 0, size);
  } else {
    VkBuffer handle = buffer->device->handle();
    device().submit_and_wait([&](VkCommandBuffer cmd) {
      device().fn().vkCmdFillBuffer(cmd, handle, 0, VK_WHOLE_SIZE, 0);
    });
  }
  remember(buffer);
  return buffer;
}

void Residency::remember(const std::shared_ptr<Buffer> &buffer) {
  // release() frees the memory of buffers that outlive the context's handle.
  if (buffers_.size() >= 2 * live_buffer_estimate_ + 64) {
    buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(),
                                  [](const std::weak_ptr<Buffer> &w) { return w.expired(); }),
                   buffers_.end());
    live_buffer_estimate_ = buffers_.size();
  }
  buffers_.push_back(buffer);
}

std::shared_ptr<Buffer> Residency::wrap_host(std::shared_ptr<Context> ctx, void *host,
                                             uint64_t size, bool allow_import, bool upload) {
  inject_alloc_fault();
  require(host != nullptr, NPVK_ERR_INVALID_ARGUMENT, "host memory is null");
  auto buffer = std::make_shared<Buffer>(std::move(ctx), size);
  buffer->host = host;
  const npvk_device_info &info = *device_.info;
  const uint64_t align = info.min_imported_host_pointer_alignment;
  const bool importable = allow_import && info.host_memory_import && align && size > 0 &&
                          reinterpret_cast<uintptr_t>(host) % align == 0 && size % align == 0;
  if (importable && info.type != NPVK_DEVICE_DISCRETE_GPU && !device_.made()) {
    // The context has no device yet: the pages are imported at their first
    // device use, and work that stays on the host never needs them imported.
    buffer->zero_copy = true;
    buffer->import_deferred = true;
    remember(buffer);
    return buffer;
  }
  std::unique_ptr<vk::DeviceBuffer> imported;
  if (importable) {
    try {
      imported = std::make_unique<vk::DeviceBuffer>(device(), host, size);
    } catch (const Error &) {
      // Some memory (read-only or device mappings) cannot be imported: mirror it.
    }
  }
  // Kernels on a discrete GPU would cross the bus for every access of
  // imported pages, so there the pages serve only as the transfer endpoint.
  if (imported && info.type != NPVK_DEVICE_DISCRETE_GPU) {
    buffer->device = std::move(imported);
    buffer->zero_copy = true;
  } else {
    buffer->host_pages = std::move(imported);
    // A copy that does not fit the budget now is made at its first device
    // use, where queued work can be flushed to make room.
    if (make_room(size, nullptr, 0))
      allocate_copy(*buffer, upload);
    else
      buffer->evicted = true;
  }
  remember(buffer);
  return buffer;
}

void Residency::rewrap_host(Buffer &buffer, void *host) {
  require(buffer.zero_copy && pending_.empty(), NPVK_ERR_INTERNAL,
          "rewrap_host needs an idle zero-copy buffer");
  if (!buffer.import_deferred)
    buffer.device = std::make_unique<vk::DeviceBuffer>(device(), host, buffer.size());
  buffer.host = host;
}

void Residency::transfer(Buffer &buffer, uint64_t offset, void *host, uint64_t size,
                         bool to_device) {
  if (size == 0) return;
  Profiler::Scope scope(profiler_, to_device ? Phase::ToDevice : Phase::ToHost);
  if (buffer.import_deferred) {
    // Not imported yet: the host pages are the only copy.
    uint8_t *bytes = static_cast<uint8_t *>(buffer.host) + offset;
    if (bytes == host) return;
    if (to_device)
      std::memcpy(bytes, host, size);
    else
      std::memcpy(host, bytes, size);
    return;
  }
  vk::DeviceBuffer &dev = *buffer.device;
  if (void *mapped = dev.mapped()) {
    uint8_t *device_bytes = static_cast<uint8_t *>(mapped) + offset;
    if (device_bytes == host) return;  // zero-copy: the same bytes
    if (to_device)
      std::memcpy(device_bytes, host, size);
    else
      std::memcpy(host, device_bytes, size);
  } else {
    // Copy through host pages the device can reach: the wrapped pages
    // themselves when imported, else a staging buffer.
    std::unique_ptr<vk::DeviceBuffer> staging;
    vk::DeviceBuffer *endpoint = nullptr;
    uint64_t endpoint_offset = 0;
    if (buffer.host_pages && static_cast<uint8_t *>(buffer.host) + offset == host) {
      endpoint = buffer.host_pages.get();
      endpoint_offset = offset;
    } else {
      staging =
          std::make_unique<vk::DeviceBuffer>(device(), size, vk::MemoryPlacement::HostVisible);
      endpoint = staging.get();
      if (to_device) std::memcpy(staging->mapped(), host, size);
    }
    VkBufferCopy region{};
    region.size = size;
    region.srcOffset = to_device ? endpoint_offset : offset;
    region.dstOffset = to_device ? offset : endpoint_offset;
    VkBuffer src = to_device ? endpoint->handle() : dev.handle();
    VkBuffer dst = to_device ? dev.handle() : endpoint->handle();
    device().submit_and_wait([&](VkCommandBuffer cmd) {
      device().fn().vkCmdCopyBuffer(cmd, src, dst, 1, &region);
      if (!to_device) {
        // Make the transfer's writes visible to the host before we read them.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        device().fn().vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                                           nullptr);
      }
    });
    if (!to_device && staging) std::memcpy(host, staging->mapped(), size);
  }
  (to_device ? stats_.bytes_to_device : stats_.bytes_to_host) += size;
}

void Residency::make_resident(Buffer *const *used, size_t count) {
  ++use_clock_;
  uint64_t need = 0;
  for (size_t i = 0; i < count; ++i) {
    Buffer *b = used[i];
    if (!b) continue;
    if (b->evicted && b->last_use != use_clock_) need += b->size();  // once per buffer
    b->last_use = use_clock_;
  }
  if (need == 0) return;
  if (!make_room(need, used, count) && !pending_.empty()) {
    // The queued work's own buffers fill the budget: run it, so that they
    // can be evicted, rather than fail.
    flush_();
    ++stats_.budget_flushes;
    make_room(need, used, count);
  }
  if (held_ + need > budget_) {
    ++stats_.budget_overruns;
    if (!overrun_reported_)
      std::fprintf(stderr,
                   "npvk: an operation's operands need more device memory than "
                   "NPVK_DEVICE_MEMORY_BUDGET (%llu bytes) allows; it runs over the budget "
                   "(counted in budget_overruns)\n",
                   static_cast<unsigned long long>(budget_));
    overrun_reported_ = true;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!used[i] || !used[i]->evicted) continue;
    inject_alloc_fault();
    allocate_copy(*used[i]);
  }
}

bool Residency::make_room(uint64_t need, Buffer *const *keep, size_t count) {
  if (held_ + need <= budget_) return true;
  // Queued work reads and writes the copies it was recorded with.
  std::unordered_set<const Buffer *> busy(keep, keep + count);
  for (const RecordedOp &op : pending_)
    for (const View &v : op.operands)
      if (v.buffer) busy.insert(v.buffer.get());
  std::vector<std::shared_ptr<Buffer>> idle;
  for (const std::weak_ptr<Buffer> &weak : buffers_)
    if (std::shared_ptr<Buffer> b = weak.lock())
      if (b->mirrored() && b->device && !busy.count(b.get())) idle.push_back(std::move(b));
  std::sort(idle.begin(), idle.end(),
            [](const std::shared_ptr<Buffer> &x, const std::shared_ptr<Buffer> &y) {
              return x->last_use < y->last_use;
            });
  for (const std::shared_ptr<Buffer> &b : idle) {
    if (held_ + need <= budget_) break;
    evict(*b);
  }
  return held_ + need <= budget_;
}

void Residency::evict(Buffer &buffer) {
  if (buffer.managed && observer_) observer_->before_evict(buffer);
  if (buffer.device_newer) {
    transfer(buffer, 0, buffer.host, buffer.size(), false);
    buffer.device_newer = false;
  }
  ++stats_.evictions;
  stats_.bytes_evicted += buffer.device->size();
  buffer.device.reset();
  buffer.evicted = true;
  if (buffer.managed && observer_) observer_->after_evict(buffer);
}

void Residency::allocate_copy(Buffer &buffer, bool upload) {
  auto copy =
      std::make_unique<vk::DeviceBuffer>(device(), buffer.size(), vk::MemoryPlacement::DeviceLocal);
  copy->charge(&held_);
  buffer.device = std::move(copy);
  try {
    if (upload) transfer(buffer, 0, buffer.host, buffer.size(), true);
  } catch (...) {
    buffer.device.reset();
    throw;
  }
  buffer.evicted = false;
  buffer.device_newer = false;
  peak_held_ = std::max<uint64_t>(peak_held_, held_);
  if (buffer.managed && observer_) observer_->after_reload(buffer);
}

void Residency::inject_alloc_fault() {
  if (!fault::fire(fault::Kind::Alloc)) return;
  const char *what = "out of device memory (injected by NPVK_FAULT=alloc)";
  count_failure(failures_, &npvk_failure_stats::alloc_failures, NPVK_ERR_OUT_OF_DEVICE_MEMORY,
                what);
  fail(NPVK_ERR_OUT_OF_DEVICE_MEMORY, what);
}

void Residency::release_all() {
  for (auto &weak : buffers_) {
    if (auto buffer = weak.lock()) {
      buffer->device.reset();
      buffer->host_pages.reset();
      buffer->evicted = false;
      buffer->import_deferred = false;
    }
  }
  buffers_.clear();
}

void Residency::abandon_all() {
  for (auto &weak : buffers_) {
    if (auto buffer = weak.lock()) {
      buffer->device.release();
      buffer->host_pages.release();
      buffer->import_deferred = false;
    }
  }
  buffers_.clear();
}

}  // namespace npvk
