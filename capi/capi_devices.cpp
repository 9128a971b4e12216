// Versions, status and dtype names, and device queries.
#include <cstring>

#include "capi/capi_common.hpp"
#include "compile/dtype.hpp"
#include "vulkan/physical_device.hpp"

using namespace npvk;

extern "C" {

NPVK_API uint32_t npvk_abi_version(void) {
  return NPVK_ABI_VERSION;
}

NPVK_API const char *npvk_version_string(void) {
  return NPVK_VERSION_STRING;
}

NPVK_API const char *npvk_status_string(npvk_status status) {
  switch (status) {
    case NPVK_SUCCESS:
      return "NPVK_SUCCESS";
    case NPVK_ERR_INVALID_ARGUMENT:
      return "NPVK_ERR_INVALID_ARGUMENT";
    case NPVK_ERR_INVALID_HANDLE:
      return "NPVK_ERR_INVALID_HANDLE";
    case NPVK_ERR_BAD_DTYPE:
      return "NPVK_ERR_BAD_DTYPE";
    case NPVK_ERR_SHAPE_MISMATCH:
      return "NPVK_ERR_SHAPE_MISMATCH";
    case NPVK_ERR_OUT_OF_BOUNDS:
      return "NPVK_ERR_OUT_OF_BOUNDS";
    case NPVK_ERR_UNSUPPORTED:
      return "NPVK_ERR_UNSUPPORTED";
    case NPVK_ERR_NO_DEVICE:
      return "NPVK_ERR_NO_DEVICE";
    case NPVK_ERR_OUT_OF_HOST_MEMORY:
      return "NPVK_ERR_OUT_OF_HOST_MEMORY";
    case NPVK_ERR_OUT_OF_DEVICE_MEMORY:
      return "NPVK_ERR_OUT_OF_DEVICE_MEMORY";
    case NPVK_ERR_DEVICE_LOST:
      return "NPVK_ERR_DEVICE_LOST";
    case NPVK_ERR_COMPILE:
      return "NPVK_ERR_COMPILE";
    case NPVK_ERR_VULKAN:
      return "NPVK_ERR_VULKAN";
    case NPVK_ERR_INTERNAL:
      return "NPVK_ERR_INTERNAL";
  }
  return "NPVK_ERR_UNKNOWN_STATUS";
}

NPVK_API npvk_status npvk_dtype_info(npvk_dtype dtype, const char **name, uint32_t *itemsize) {
  return guarded([&] {
    const DtypeInfo &info = dtype_info(dtype);
    if (name) *name = info.name;
    if (itemsize) *itemsize = info.itemsize;
  });
}

NPVK_API npvk_status npvk_device_count(uint32_t *out) {
  return guarded([&] {
    require_out(out, "out");
    vk::global_functions();  // no loader at all: NPVK_ERR_NO_DEVICE
    try {
      *out = uint32_t(vk::shared_instance().devices().size());
    } catch (const Error &e) {
      // A loader without any driver refuses to make an instance: no devices.
      if (e.status() != NPVK_ERR_NO_DEVICE) throw;
      *out = 0;
    }
  });
}

NPVK_API npvk_status npvk_device_get_info(uint32_t index, npvk_device_info *out) {
  return guarded([&] {
    require_out(out, "out");
    const auto &devices = vk::shared_instance().devices();
    NPVK_REQUIRE(index < devices.size(), NPVK_ERR_INVALID_ARGUMENT,
                 "device index " + std::to_string(index) + " is out of range (" +
                     std::to_string(devices.size()) + " devices)");
    copy_sized(out, devices[index].info);
  });
}

NPVK_API npvk_status npvk_device_select(const char *selector, uint32_t *out) {
  return guarded([&] {
    require_out(out, "out");
    *out = vk::shared_instance().select(selector);
  });
}

NPVK_API npvk_status npvk_device_local_rank(int64_t *rank, const char **variable) {
  return guarded([&] {
    require_out(rank, "rank");
    *rank = vk::local_rank(variable);
  });
}

NPVK_API npvk_status npvk_device_select_for_rank(int64_t rank, uint32_t *out) {
  return guarded([&] {
    require_out(out, "out");
    *out = vk::shared_instance().select_for_rank(rank < 0 ? -1 : long(rank));
  });
}

}  // extern "C"
