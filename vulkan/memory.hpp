// Device buffers: device-local memory (discrete GPUs), host-visible memory
// (unified-memory and CPU devices), or imported host pages
// (VK_EXT_external_memory_host, zero-copy). Every buffer has a device address,
// which kernels reach through GL_EXT_buffer_reference.
#pragma once

#include <atomic>
#include <cstdint>

#include "vulkan/device.hpp"

namespace npvk::vk {

enum class MemoryPlacement {
  DeviceLocal,  // fastest for kernels; host-visible as well where the device is unified
  HostVisible,  // mapped, for staging and kernel arguments
};

class DeviceBuffer {
 public:
  DeviceBuffer(Device &device, uint64_t size, MemoryPlacement placement);
  // Imports [host, host+size); both must be aligned to the device's
  // minImportedHostPointerAlignment.
  DeviceBuffer(Device &device, void *host, uint64_t size);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  VkDeviceAddress address() const { return address_; }
  // Host pointer to the memory, or nullptr when it is not host-visible.
  void *mapped() const { return mapped_; }
  bool imported() const { return imported_; }
  // Counts size() in `*held` for as long as the buffer lives: the device
  // memory budget sees every way a device copy goes away (eviction, a freed
  // buffer, a released context) without each of them telling it.
  void charge(std::atomic<uint64_t> *held) {
    held_ = held;
    held_->fetch_add(size_);
  }

 private:
  void create(uint64_t size, const void *import_next);
  void bind(const VkMemoryRequirements &req, uint32_t type_bits, VkMemoryPropertyFlags want,
            VkMemoryPropertyFlags avoid, const void *import_next);
  Device &device_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  VkDeviceAddress address_ = 0;
  void *mapped_ = nullptr;
  bool imported_ = false;
  std::atomic<uint64_t> *held_ = nullptr;
};

}  // namespace npvk::vk
