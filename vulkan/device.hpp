// A logical device with one compute queue and the features npvk uses enabled,
// plus small helpers for one-off command submissions.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

#include "vulkan/physical_device.hpp"

namespace npvk::vk {

class Device {
 public:
  Device(std::unique_ptr<Instance> instance, uint32_t device_index);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Functions &fn() const { return fn_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  const DeviceCaps &caps() const { return caps_; }
  const npvk_device_info &info() const { return caps_.info; }
  const Instance &instance() const { return *instance_; }

  // Records commands with `record`, submits them and waits. Used for transfers
  // that the caller needs finished before it returns.
  void submit_and_wait(const std::function<void(VkCommandBuffer)> &record);
  // Submits a recorded command buffer and waits on a fence.
  void submit_and_wait(VkCommandBuffer cmd);
  VkCommandBuffer begin_commands();
  // The same from other threads (KernelStore::prepare's), each with a command
  // pool of its own; their submissions take turns on the queue. The device's
  // owner must not submit meanwhile.
  void submit_and_wait_from_worker(const std::function<void(VkCommandBuffer)> &record);
  // Set once the device reports VK_ERROR_DEVICE_LOST; every later call fails fast.
  bool lost() const { return lost_; }
  void check(VkResult result, const char *what);

 private:
  std::unique_ptr<Instance> instance_;
  DeviceCaps caps_;
  Functions fn_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool lost_ = false;
  std::mutex worker_submit_;
};

}  // namespace npvk::vk
