#include "vulkan/loader.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

Functions g_global;
std::once_flag g_once;
std::string g_load_error;

void open_loader() {
  const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
  void *lib = nullptr;
  for (const char *name : names)
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!lib) {
    const char *err = dlerror();
    g_load_error = std::string("no Vulkan loader (libvulkan.so.1): ") + (err ? err : "not found") +
                   "; install the Vulkan loader (Debian: libvulkan1) and a driver "
                   "(mesa-vulkan-drivers provides lavapipe, a CPU implementation)";
    return;
  }
  g_global.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!g_global.vkGetInstanceProcAddr) {
    g_load_error = "the Vulkan loader has no vkGetInstanceProcAddr";
    return;
  }
#define NPVK_LOAD(name) \
  g_global.name = reinterpret_cast<PFN_##name>(g_global.vkGetInstanceProcAddr(nullptr, #name));
  NPVK_VK_GLOBAL_FUNCTIONS(NPVK_LOAD)
#undef NPVK_LOAD
  if (!g_global.vkCreateInstance) g_load_error = "the Vulkan loader has no vkCreateInstance";
}

}  // namespace

const Functions &global_functions() {
  std::call_once(g_once, open_loader);
  if (!g_load_error.empty()) fail(NPVK_ERR_NO_DEVICE, g_load_error);
  return g_global;
}

void load_instance_functions(VkInstance instance, Functions &f) {
  f = global_functions();
#define NPVK_LOAD(name) \
  f.name = reinterpret_cast<PFN_##name>(f.vkGetInstanceProcAddr(instance, #name));
  NPVK_VK_INSTANCE_FUNCTIONS(NPVK_LOAD)
#undef NPVK_LOAD
}

void load_device_functions(VkDevice device, Functions &f) {
#define NPVK_LOAD(name) f.name = reinterpret_cast<PFN_##name>(f.vkGetDeviceProcAddr(device, #name));
  NPVK_VK_DEVICE_FUNCTIONS(NPVK_LOAD)
#undef NPVK_LOAD
}

void check(VkResult result, const char *what) {
  if (result == VK_SUCCESS) return;
  std::string msg = std::string(what) + " failed: VkResult " + std::to_string(result);
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      fail(NPVK_ERR_OUT_OF_HOST_MEMORY, msg + " (out of host memory)");
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
      fail(NPVK_ERR_OUT_OF_DEVICE_MEMORY, msg + " (out of device memory)");
    case VK_ERROR_DEVICE_LOST:
      fail(NPVK_ERR_DEVICE_LOST, msg + " (device lost)");
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_INITIALIZATION_FAILED:
      fail(NPVK_ERR_NO_DEVICE, msg + " (no usable Vulkan driver)");
    case VK_ERROR_INVALID_EXTERNAL_HANDLE:
      fail(NPVK_ERR_INVALID_ARGUMENT, msg + " (host memory cannot be imported)");
    default:
      fail(NPVK_ERR_VULKAN, msg);
  }
}

}  // namespace npvk::vk
