#include "vulkan/physical_device.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "base/options.hpp"

namespace npvk::vk {

struct Instance::Counter {
  std::atomic<uint64_t> messages{0};
};

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  // Tests treat any message as a failure, so count every one and show it.
  static_cast<std::atomic<uint64_t> *>(user)->fetch_add(1);
  std::fprintf(stderr, "npvk: Vulkan validation (severity %d): %s\n", int(severity),
               data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

bool has_extension(const std::vector<VkExtensionProperties> &exts, const char *name) {
  for (const auto &e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

void copy_string(char *dst, size_t cap, const char *src) {
  std::snprintf(dst, cap, "%s", src ? src : "");
}

// NPVK_DISABLE_FEATURES=float64,int64 (test-only): report these shader
// features as absent, so that a machine whose driver has them can show what
// npvk does on one that lacks them (the logical device is then created
// without them too, and the validation layer sees any kernel that uses one).
void mask_disabled_features(npvk_device_info &info, const DisabledFeatures &disabled) {
  if (disabled.float64) info.float64 = 0;
  if (disabled.int64) info.int64 = 0;
  for (const std::string &name : disabled.unknown)
    std::fprintf(stderr, "npvk: NPVK_DISABLE_FEATURES: unknown feature '%s' ignored\n",
                 name.c_str());
}

DeviceCaps query_device(const Functions &fn, VkPhysicalDevice pd, uint32_t index,
                        const DisabledFeatures &disabled) {
  DeviceCaps caps;
  caps.handle = pd;
  npvk_device_info &info = caps.info;
  info.struct_size = sizeof(npvk_device_info);
  info.index = index;

  uint32_t ext_count = 0;
  fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> exts(ext_count);
  fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &ext_count, exts.data());
  bool host_import = has_extension(exts, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  caps.has_memory_budget = has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  VkPhysicalDeviceProperties base{};
  fn.vkGetPhysicalDeviceProperties(pd, &base);
  bool v12 = base.apiVersion >= VK_API_VERSION_1_2;

  VkPhysicalDeviceExternalMemoryHostPropertiesEXT host_props{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  if (v12) {
    props.pNext = &p11;
    p11.pNext = &p12;
    if (host_import) p12.pNext = &host_props;
  }
  fn.vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 feats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (v12) {
    feats.pNext = &f11;
    f11.pNext = &f12;
  }
  fn.vkGetPhysicalDeviceFeatures2(pd, &feats);

  copy_string(info.name, sizeof info.name, base.deviceName);
  if (v12) {
    copy_string(info.driver_name, sizeof info.driver_name, p12.driverName);
    copy_string(info.driver_info, sizeof info.driver_info, p12.driverInfo);
    std::memcpy(info.driver_uuid, p11.driverUUID, VK_UUID_SIZE);
    info.subgroup_size = p11.subgroupSize;
  }
  std::memcpy(caps.pipeline_cache_uuid, base.pipelineCacheUUID, VK_UUID_SIZE);
  switch (base.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      info.type = NPVK_DEVICE_INTEGRATED_GPU;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      info.type = NPVK_DEVICE_DISCRETE_GPU;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      info.type = NPVK_DEVICE_VIRTUAL_GPU;
      break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      info.type = NPVK_DEVICE_CPU;
      break;
    default:
      info.type = NPVK_DEVICE_OTHER;
      break;
  }
  info.vendor_id = base.vendorID;
  info.device_id = base.deviceID;
  info.api_version = base.apiVersion;
  info.float64 = feats.features.shaderFloat64;
  info.int64 = feats.features.shaderInt64;
  mask_disabled_features(info, disabled);
  info.int16 = feats.features.shaderInt16;
  info.float16 = v12 && f12.shaderFloat16;
  info.int8 = v12 && f12.shaderInt8;
  info.storage8 = v12 && f12.storageBuffer8BitAccess;
  info.storage16 = v12 && f11.storageBuffer16BitAccess;
  info.buffer_device_address = v12 && f12.bufferDeviceAddress;
  info.host_memory_import = host_import;
  info.max_push_constants_size = base.limits.maxPushConstantsSize;
  info.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
  info.max_workgroup_count_x = base.limits.maxComputeWorkGroupCount[0];
  info.max_memory_allocation_size = v12 ? p11.maxMemoryAllocationSize : (1ull << 30);
  info.min_imported_host_pointer_alignment =
      host_import ? host_props.minImportedHostPointerAlignment : 0;
  info.timestamp_period_ns = base.limits.timestampPeriod;

  fn.vkGetPhysicalDeviceMemoryProperties(pd, &caps.memory);
  bool all_local_visible = true, any_local = false;
  for (uint32_t h = 0; h < caps.memory.memoryHeapCount; ++h) {
    const VkMemoryHeap &heap = caps.memory.memoryHeaps[h];
    if (!(heap.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    any_local = true;
    info.device_local_bytes = std::max<uint64_t>(info.device_local_bytes, heap.size);
    bool visible = false;
    for (uint32_t t = 0; t < caps.memory.memoryTypeCount; ++t) {
      const VkMemoryType &type = caps.memory.memoryTypes[t];
      if (type.heapIndex == h && (type.propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        visible = true;
    }
    all_local_visible = all_local_visible && visible;
  }
  info.unified_memory = any_local && all_local_visible;
  if (caps.has_memory_budget) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 mem2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    mem2.pNext = &budget;
    fn.vkGetPhysicalDeviceMemoryProperties2(pd, &mem2);
    for (uint32_t h = 0; h < caps.memory.memoryHeapCount; ++h)
      if ((caps.memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
          caps.memory.memoryHeaps[h].size == info.device_local_bytes)
        caps.local_heap_budget = std::max(caps.local_heap_budget, budget.heapBudget[h]);
  }

  uint32_t qf_count = 0;
  fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &qf_count, nullptr);
  std::vector<VkQueueFamilyProperties> qfs(qf_count);
  fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &qf_count, qfs.data());
  bool found_queue = false;
  // Prefer a compute queue without graphics: on discrete GPUs it is the async one.
  for (int pass = 0; pass < 2 && !found_queue; ++pass) {
    for (uint32_t q = 0; q < qf_count; ++q) {
      bool compute = qfs[q].queueFlags & VK_QUEUE_COMPUTE_BIT;
      bool graphics = qfs[q].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (compute && (pass == 1 || !graphics)) {
        caps.compute_queue_family = q;
        caps.timestamp_valid_bits = qfs[q].timestampValidBits;
        found_queue = true;
        break;
      }
    }
  }
  info.timestamps = found_queue && caps.timestamp_valid_bits > 0;

  const char *reason = nullptr;
  if (!v12)
    reason = "needs Vulkan 1.2";
  else if (!found_queue)
    reason = "has no compute queue";
  else if (!info.buffer_device_address)
    reason = "lacks bufferDeviceAddress";
  else if (!info.int64)
    reason = "lacks shaderInt64";
  else if (!info.storage8 || !info.storage16)
    reason = "lacks 8/16-bit storage buffers";
  info.usable = reason == nullptr;
  copy_string(info.unusable_reason, sizeof info.unusable_reason, reason);
  return caps;
}

int type_rank(uint32_t type) {
  switch (type) {
    case NPVK_DEVICE_DISCRETE_GPU:
      return 0;
    case NPVK_DEVICE_INTEGRATED_GPU:
      return 1;
    case NPVK_DEVICE_VIRTUAL_GPU:
      return 2;
    case NPVK_DEVICE_CPU:
      return 3;
    default:
      return 4;
  }
}

std::string lower(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Instance::Instance(bool validation)
    : Instance(validation, Options::from_environment().disable_features) {}

Instance::Instance(bool validation, const DisabledFeatures &disabled)
    : counter_(std::make_unique<Counter>()) {
  const Functions &global = global_functions();
  uint32_t api = VK_API_VERSION_1_0;
  if (global.vkEnumerateInstanceVersion) global.vkEnumerateInstanceVersion(&api);
  if (api < VK_API_VERSION_1_2)
    fail(NPVK_ERR_NO_DEVICE, "the Vulkan loader supports only Vulkan " +
                                 std::to_string(VK_API_VERSION_MAJOR(api)) + "." +
                                 std::to_string(VK_API_VERSION_MINOR(api)) + "; npvk needs 1.2");

  std::vector<const char *> layers, extensions;
  if (validation) {
    uint32_t n = 0;
    global.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    global.vkEnumerateInstanceLayerProperties(&n, props.data());
    bool found = std::any_of(props.begin(), props.end(), [](const VkLayerProperties &p) {
      return std::strcmp(p.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    require(found, NPVK_ERR_UNSUPPORTED,
            "validation was requested but VK_LAYER_KHRONOS_validation is not installed "
            "(Debian: vulkan-validationlayers)");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "npvk";
  app.pEngineName = "npvk";
  app.apiVersion = VK_API_VERSION_1_3 <= api ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkDebugUtilsMessengerCreateInfoEXT dci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dci.pfnUserCallback = on_validation_message;
  dci.pUserData = &counter_->messages;
  if (validation) ci.pNext = &dci;  // also catches messages of vkCreate/DestroyInstance
  check(global.vkCreateInstance(&ci, nullptr, &instance_), "vkCreateInstance");
  load_instance_functions(instance_, fn_);
  if (validation && fn_.vkCreateDebugUtilsMessengerEXT)
    check(fn_.vkCreateDebugUtilsMessengerEXT(instance_, &dci, nullptr, &messenger_),
          "vkCreateDebugUtilsMessengerEXT");

  uint32_t count = 0;
  check(fn_.vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> pds(count);
  check(fn_.vkEnumeratePhysicalDevices(instance_, &count, pds.data()),
        "vkEnumeratePhysicalDevices");
  for (uint32_t i = 0; i < count; ++i) devices_.push_back(query_device(fn_, pds[i], i, disabled));
}

Instance::~Instance() {
  if (messenger_) fn_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) fn_.vkDestroyInstance(instance_, nullptr);
}

uint64_t Instance::validation_messages() const {
  return counter_->messages.load();
}

// The launcher's local rank (the process's slot on this machine): Open MPI,
// MPICH/Hydra, Slurm, then a Dask worker's slot (set by npvk.dask); -1 when
// none is set, so a lone process keeps the best device.
long local_rank(const char **variable) {
  if (variable) *variable = nullptr;
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "NPVK_LOCAL_RANK"}) {
    const char *value = std::getenv(name);
    if (!value || !*value) continue;
    char *end = nullptr;
    long rank = std::strtol(value, &end, 10);
    NPVK_REQUIRE(*end == '\0' && rank >= 0, NPVK_ERR_NO_DEVICE,
                 std::string(name) + "=" + value + " is not a local rank (a whole number >= 0)");
    if (variable) *variable = name;
    return rank;
  }
  return -1;
}

namespace {

// NPVK_DEVICE=local-rank, the default: among the usable devices of the best
// type (discrete > integrated > virtual > CPU), the one at local rank modulo
// their count, so each process a launcher starts on a node gets its own.
uint32_t by_local_rank(const std::vector<DeviceCaps> &devices, long rank) {
  int best = -1;
  for (uint32_t i = 0; i < devices.size(); ++i) {
    if (!devices[i].info.usable) continue;
    if (best < 0 || type_rank(devices[i].info.type) < type_rank(devices[best].info.type))
      best = int(i);
  }
  NPVK_REQUIRE(best >= 0, NPVK_ERR_NO_DEVICE,
               std::string("no usable Vulkan device; device 0 (") + devices[0].info.name + ") " +
                   devices[0].info.unusable_reason);
  std::vector<uint32_t> peers;
  for (uint32_t i = 0; i < devices.size(); ++i)
    if (devices[i].info.usable &&
        type_rank(devices[i].info.type) == type_rank(devices[best].info.type))
      peers.push_back(i);
  if (rank < 0) return peers.front();
  return peers[size_t(rank) % peers.size()];
}

}  // namespace

uint32_t Instance::select(const char *selector) const {
  return select(selector, Options::from_environment().device);
}

uint32_t Instance::select(const char *selector, const std::string &fallback) const {
  require(!devices_.empty(), NPVK_ERR_NO_DEVICE,
          "the Vulkan loader found no device; install a driver (mesa-vulkan-drivers provides "
          "lavapipe, a CPU implementation)");
  std::string sel = selector ? selector : "";
  if (sel.empty()) sel = fallback;
  auto check_usable = [&](uint32_t i) {
    const npvk_device_info &info = devices_[i].info;
    NPVK_REQUIRE(info.usable, NPVK_ERR_NO_DEVICE,
                 std::string("device ") + std::to_string(i) + " (" + info.name + ") " +
                     info.unusable_reason);
    return i;
  };
  if (lower(sel) == "local-rank") return by_local_rank(devices_, local_rank());
  if (!sel.empty()) {
    bool numeric = std::all_of(sel.begin(), sel.end(), [](char c) { return std::isdigit(c); });
    if (numeric) {
      unsigned long index = std::strtoul(sel.c_str(), nullptr, 10);
      NPVK_REQUIRE(index < devices_.size(), NPVK_ERR_NO_DEVICE,
                   "NPVK_DEVICE=" + sel + ": no device has that index (devices: " +
                       std::to_string(devices_.size()) + ", numbered from 0)");
      return check_usable(uint32_t(index));
    }
    for (uint32_t i = 0; i < devices_.size(); ++i)
      if (lower(devices_[i].info.name).find(lower(sel)) != std::string::npos)
        return check_usable(i);
    fail(NPVK_ERR_NO_DEVICE, "no device name contains \"" + sel + "\" (see npvk-info)");
  }
  return by_local_rank(devices_, local_rank());
}

uint32_t Instance::select_for_rank(long rank) const {
  require(!devices_.empty(), NPVK_ERR_NO_DEVICE, "the Vulkan loader found no device");
  return by_local_rank(devices_, rank);
}

const Instance &shared_instance() {
  // Created on first use and kept for the process: device queries are cheap then.
  static std::mutex mutex;
  static std::unique_ptr<Instance> instance;
  std::lock_guard<std::mutex> lock(mutex);
  if (!instance) instance = std::make_unique<Instance>(false);
  return *instance;
}

}  // namespace npvk::vk
