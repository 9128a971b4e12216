// Device buffers: device-local memory (discrete GPUs), host-visible memory
// (unified-memory and CPU devices), or imported host pages
// (VK_EXT_external_memory_host, zero-copy). Every buffer has a device address,
// which kernels reach through GL_EXT_buffer_reference.
#pragma once

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
};

}  // namespace npvk::vk
