// Vulkan instances, the capabilities npvk uses of each physical device, and
// the device choice (NPVK_DEVICE, else discrete > integrated > virtual > CPU).
#pragma once

#include <npvk/npvk.h>

#include <memory>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "vulkan/loader.hpp"

namespace npvk::vk {

struct DeviceCaps {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  npvk_device_info info{};  // what the C ABI reports
  bool has_memory_budget = false;
  // VK_EXT_memory_budget's budget for the largest device-local heap, at the
  // time of the query; 0 without the extension.
  uint64_t local_heap_budget = 0;
  uint32_t compute_queue_family = 0;
  VkPhysicalDeviceMemoryProperties memory{};
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE]{};
  uint32_t timestamp_valid_bits = 0;
};

class Instance {
 public:
  // `validation`: enable VK_LAYER_KHRONOS_validation; throws if it is missing.
  // `disabled`: features reported absent (Options::disable_features); the
  // one-argument form reads NPVK_DISABLE_FEATURES now.
  Instance(bool validation, const DisabledFeatures &disabled);
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  const Functions &fn() const { return fn_; }
  VkInstance handle() const { return instance_; }
  const std::vector<DeviceCaps> &devices() const { return devices_; }
  // Index into devices() for a selector (see npvk_device_select); a null or
  // empty one means `fallback` (Options::device), and an empty fallback the
  // best device. The one-argument form reads NPVK_DEVICE now.
  uint32_t select(const char *selector, const std::string &fallback) const;
  uint32_t select(const char *selector) const;
  // The device NPVK_DEVICE=local-rank gives a process of local rank `rank`
  // (-1: none, the best device).
  uint32_t select_for_rank(long rank) const;
  uint64_t validation_messages() const;

 private:
  Functions fn_{};
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<DeviceCaps> devices_;
  struct Counter;
  std::unique_ptr<Counter> counter_;
};

// The launcher's local rank, -1 when no variable sets one; `variable` (if
// given) gets the name of the variable that did, or null.
long local_rank(const char **variable = nullptr);

// A process-wide instance without validation, for device queries.
const Instance &shared_instance();

}  // namespace npvk::vk
