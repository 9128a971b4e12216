#include "vulkan/memory.hpp"

#include <string>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

constexpr VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
    VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

// Vulkan forbids empty buffers; a zero-byte npvk buffer still gets an address.
uint64_t physical_size(uint64_t size) {
  return size ? size : 16;
}

}  // namespace

DeviceBuffer::DeviceBuffer(Device &device, uint64_t size, MemoryPlacement placement)
    : device_(device), size_(size) {
  const npvk_device_info &info = device.info();
  NPVK_REQUIRE(physical_size(size) <= info.max_memory_allocation_size,
               NPVK_ERR_OUT_OF_DEVICE_MEMORY,
               "a buffer of " + std::to_string(size) + " bytes exceeds the device's " +
                   "maxMemoryAllocationSize of " + std::to_string(info.max_memory_allocation_size));
  create(physical_size(size), nullptr);
  VkMemoryRequirements req{};
  device.fn().vkGetBufferMemoryRequirements(device.handle(), buffer_, &req);
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  if (placement == MemoryPlacement::HostVisible) {
    bind(req, req.memoryTypeBits, host, 0, nullptr);
  } else if (info.unified_memory) {
    // Unified memory: device-local and mappable, so transfers are memcpy.
    bind(req, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host, 0, nullptr);
  } else {
    bind(req, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, nullptr);
  }
}

DeviceBuffer::DeviceBuffer(Device &device, void *host, uint64_t size)
    : device_(device), size_(size), imported_(true) {
  const npvk_device_info &info = device.info();
  uint64_t align = info.min_imported_host_pointer_alignment;
  require(info.host_memory_import && align && reinterpret_cast<uintptr_t>(host) % align == 0 &&
              size % align == 0 && size > 0,
          NPVK_ERR_INVALID_ARGUMENT, "host memory cannot be imported here");
  VkExternalMemoryBufferCreateInfo ext{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO};
  ext.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  create(size, &ext);
  VkMemoryHostPointerPropertiesEXT host_props{VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  device.check(device.fn().vkGetMemoryHostPointerPropertiesEXT(
                   device.handle(), VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, host,
                   &host_props),
               "vkGetMemoryHostPointerPropertiesEXT");
  VkMemoryRequirements req{};
  device.fn().vkGetBufferMemoryRequirements(device.handle(), buffer_, &req);
  VkImportMemoryHostPointerInfoEXT import{VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT};
  import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  import.pHostPointer = host;
  req.size = size;
  bind(req, req.memoryTypeBits & host_props.memoryTypeBits, 0, 0, &import);
  mapped_ = host;
}

void DeviceBuffer::create(uint64_t size, const void *next) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.pNext = next;
  bci.size = size;
  bci.usage = kUsage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  device_.check(device_.fn().vkCreateBuffer(device_.handle(), &bci, nullptr, &buffer_),
                "vkCreateBuffer");
}

void DeviceBuffer::bind(const VkMemoryRequirements &req, uint32_t type_bits,
                        VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid,
                        const void *import_next) {
  const VkPhysicalDeviceMemoryProperties &mem = device_.caps().memory;
  int chosen = -1;
  for (uint32_t t = 0; t < mem.memoryTypeCount && chosen < 0; ++t) {
    VkMemoryPropertyFlags flags = mem.memoryTypes[t].propertyFlags;
    if ((type_bits & (1u << t)) && (flags & want) == want && !(flags & avoid)) chosen = int(t);
  }
  if (chosen < 0) {
    // Host-visible device-local memory may be absent; fall back to device-local only.
    VkMemoryPropertyFlags local = want & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    for (uint32_t t = 0; t < mem.memoryTypeCount && chosen < 0; ++t)
      if ((type_bits & (1u << t)) && (mem.memoryTypes[t].propertyFlags & local) == local &&
          local != want)
        chosen = int(t);
  }
  if (chosen < 0) {
    device_.fn().vkDestroyBuffer(device_.handle(), buffer_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    fail(NPVK_ERR_UNSUPPORTED, "no memory type fits this buffer");
  }
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.pNext = import_next;
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.pNext = &flags;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = uint32_t(chosen);
  VkResult r = device_.fn().vkAllocateMemory(device_.handle(), &ai, nullptr, &memory_);
  if (r != VK_SUCCESS) {
    device_.fn().vkDestroyBuffer(device_.handle(), buffer_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    device_.check(r, "vkAllocateMemory");
  }
  device_.check(device_.fn().vkBindBufferMemory(device_.handle(), buffer_, memory_, 0),
                "vkBindBufferMemory");
  VkBufferDeviceAddressInfo bai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  bai.buffer = buffer_;
  address_ = device_.fn().vkGetBufferDeviceAddress(device_.handle(), &bai);
  if (!import_next && (mem.memoryTypes[chosen].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
    device_.check(
        device_.fn().vkMapMemory(device_.handle(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_),
        "vkMapMemory");
}

DeviceBuffer::~DeviceBuffer() {
  const Functions &fn = device_.fn();
  if (mapped_ && !imported_) fn.vkUnmapMemory(device_.handle(), memory_);
  if (buffer_) fn.vkDestroyBuffer(device_.handle(), buffer_, nullptr);
  if (memory_) fn.vkFreeMemory(device_.handle(), memory_, nullptr);
  if (held_) held_->fetch_sub(size_);
}

}  // namespace npvk::vk
