#include "vulkan/device.hpp"

#include <vector>

#include "base/error.hpp"

namespace npvk::vk {

Device::Device(std::unique_ptr<Instance> instance, uint32_t device_index)
    : instance_(std::move(instance)), caps_(instance_->devices().at(device_index)) {
  fn_ = instance_->fn();
  const npvk_device_info &info = caps_.info;

  // Enable every capability npvk can use that the device has; the code
  // generator consults npvk_device_info to stay inside them.
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.bufferDeviceAddress = VK_TRUE;
  f12.storageBuffer8BitAccess = info.storage8;
  f12.shaderInt8 = info.int8;
  f12.shaderFloat16 = info.float16;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.storageBuffer16BitAccess = info.storage16;
  f11.pNext = &f12;
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  feats.features.shaderFloat64 = info.float64;
  feats.features.shaderInt64 = info.int64;
  feats.features.shaderInt16 = info.int16;
  feats.pNext = &f11;

  std::vector<const char *> extensions;
  if (info.host_memory_import) extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = caps_.compute_queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &feats;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = uint32_t(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  vk::check(fn_.vkCreateDevice(caps_.handle, &dci, nullptr, &device_), "vkCreateDevice");
  load_device_functions(device_, fn_);
  fn_.vkGetDeviceQueue(device_, caps_.compute_queue_family, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = caps_.compute_queue_family;
  check(fn_.vkCreateCommandPool(device_, &pci, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  check(fn_.vkAllocateCommandBuffers(device_, &cai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(fn_.vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence");
}

Device::~Device() {
  if (device_) {
    fn_.vkDeviceWaitIdle(device_);
    if (fence_) fn_.vkDestroyFence(device_, fence_, nullptr);
    if (pool_) fn_.vkDestroyCommandPool(device_, pool_, nullptr);
    fn_.vkDestroyDevice(device_, nullptr);
  }
}

void Device::check(VkResult result, const char *what) {
  if (result == VK_ERROR_DEVICE_LOST) lost_ = true;
  vk::check(result, what);
}

VkCommandBuffer Device::begin_commands() {
  require(!lost_, NPVK_ERR_DEVICE_LOST, "the Vulkan device was lost earlier");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(fn_.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  return cmd_;
}

void Device::submit_and_wait(VkCommandBuffer cmd) {
  check(fn_.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  check(fn_.vkResetFences(device_, 1, &fence_), "vkResetFences");
  check(fn_.vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
  check(fn_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void Device::submit_and_wait_from_worker(const std::function<void(VkCommandBuffer)> &record) {
  require(!lost_, NPVK_ERR_DEVICE_LOST, "the Vulkan device was lost earlier");
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = caps_.compute_queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  auto release = [&] {
    if (fence) fn_.vkDestroyFence(device_, fence, nullptr);
    if (pool) fn_.vkDestroyCommandPool(device_, pool, nullptr);  // frees its command buffer
  };
  try {
    check(fn_.vkCreateCommandPool(device_, &pci, nullptr, &pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check(fn_.vkAllocateCommandBuffers(device_, &cai, &cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(fn_.vkCreateFence(device_, &fci, nullptr, &fence), "vkCreateFence");
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(fn_.vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    record(cmd);
    check(fn_.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    {
      std::lock_guard<std::mutex> turn(worker_submit_);
      check(fn_.vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
    }
    check(fn_.vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  } catch (...) {
    release();
    throw;
  }
  release();
}

void Device::submit_and_wait(const std::function<void(VkCommandBuffer)> &record) {
  VkCommandBuffer cmd = begin_commands();
  record(cmd);
  submit_and_wait(cmd);
}

}  // namespace npvk::vk
