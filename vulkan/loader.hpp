// Vulkan entry points, loaded at run time from libvulkan.so.1. Opening the
// loader ourselves (rather than linking it) lets a machine with no Vulkan at
// all get NPVK_ERR_NO_DEVICE from the C ABI instead of failing to load npvk.
#pragma once

#include <vulkan/vulkan.h>

namespace npvk::vk {

#define NPVK_VK_GLOBAL_FUNCTIONS(X)      \
  X(vkCreateInstance)                    \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)  \
  X(vkEnumerateInstanceVersion)

#define NPVK_VK_INSTANCE_FUNCTIONS(X)         \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)                      \
  X(vkCreateDebugUtilsMessengerEXT)           \
  X(vkDestroyDebugUtilsMessengerEXT)

#define NPVK_VK_DEVICE_FUNCTIONS(X)         \
  X(vkDestroyDevice)                        \
  X(vkGetDeviceQueue)                       \
  X(vkDeviceWaitIdle)                       \
  X(vkCreateBuffer)                         \
  X(vkDestroyBuffer)                        \
  X(vkGetBufferMemoryRequirements)          \
  X(vkAllocateMemory)                       \
  X(vkFreeMemory)                           \
  X(vkBindBufferMemory)                     \
  X(vkMapMemory)                            \
  X(vkUnmapMemory)                          \
  X(vkGetBufferDeviceAddress)               \
  X(vkGetMemoryHostPointerPropertiesEXT)    \
  X(vkCreateShaderModule)                   \
  X(vkDestroyShaderModule)                  \
  X(vkCreatePipelineLayout)                 \
  X(vkDestroyPipelineLayout)                \
  X(vkCreateComputePipelines)               \
  X(vkDestroyPipeline)                      \
  X(vkCreatePipelineCache)                  \
  X(vkDestroyPipelineCache)                 \
  X(vkGetPipelineCacheData)                 \
  X(vkCreateCommandPool)                    \
  X(vkDestroyCommandPool)                   \
  X(vkResetCommandPool)                     \
  X(vkAllocateCommandBuffers)               \
  X(vkBeginCommandBuffer)                   \
  X(vkEndCommandBuffer)                     \
  X(vkCmdBindPipeline)                      \
  X(vkCmdPushConstants)                     \
  X(vkCmdDispatch)                          \
  X(vkCmdPipelineBarrier)                   \
  X(vkCmdCopyBuffer)                        \
  X(vkCmdFillBuffer)                        \
  X(vkCmdWriteTimestamp)                    \
  X(vkCmdResetQueryPool)                    \
  X(vkCreateQueryPool)                      \
  X(vkDestroyQueryPool)                     \
  X(vkGetQueryPoolResults)                  \
  X(vkCreateFence)                          \
  X(vkDestroyFence)                         \
  X(vkResetFences)                          \
  X(vkWaitForFences)                        \
  X(vkQueueSubmit)

struct Functions {
#define NPVK_DECLARE(name) PFN_##name name = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  NPVK_VK_GLOBAL_FUNCTIONS(NPVK_DECLARE)
  NPVK_VK_INSTANCE_FUNCTIONS(NPVK_DECLARE)
  NPVK_VK_DEVICE_FUNCTIONS(NPVK_DECLARE)
#undef NPVK_DECLARE
};

// Opens the loader once per process; throws NPVK_ERR_NO_DEVICE without one.
// The returned table has the global functions filled in.
const Functions &global_functions();
void load_instance_functions(VkInstance instance, Functions &f);
void load_device_functions(VkDevice device, Functions &f);

// Throws the npvk::Error that matches a failed VkResult; `what` names the call.
void check(VkResult result, const char *what);

}  // namespace npvk::vk
