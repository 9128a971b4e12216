// The chosen device's description, kept from one process to the next so that
// a context can start without making the device (docs/architecture.md,
// "Device binding and many devices", the device made when needed). Loading
// lavapipe and creating its device take 30-40 ms; a program whose recorded
// work all runs on the host (the cost model's choice) never needs them.
//
// The description is stored in the kernel cache's directory under a
// fingerprint of everything that chooses the device and shapes what it
// reports: the selector and NPVK_DEVICE, the launcher's local rank, the
// validation layer, NPVK_DISABLE_FEATURES, the environment variables the
// Vulkan loader and the drivers read, the driver manifests and the libraries
// they name (size and time of change), and the GPU device nodes. A change
// to any of them is a miss: the context then makes its device at once, as
// before, and stores what it found.
#pragma once

#include <npvk/npvk.h>

#include <string>

#include "base/options.hpp"

namespace npvk::vk {

struct DeviceChoice {
  std::string selector;      // the context's option (empty: none)
  std::string env_selector;  // NPVK_DEVICE as the context read it
  bool validation = false;
  DisabledFeatures disabled;
};

// Empty when the choice cannot be fingerprinted (a bad rank variable: the
// context meets that error itself).
std::string device_fingerprint(const DeviceChoice &choice);

// What is stored: the description, and what making the device took (its
// driver loaded, the instance and the device created, the context's parts
// that need it), which the cost model weighs while the device is not made.
struct StoredDevice {
  npvk_device_info info{};
  uint64_t make_ns = 0;
};

// The stored device for `fingerprint` in `cache_dir`; false on a miss.
bool load_device_info(const std::string &cache_dir, const std::string &fingerprint,
                      StoredDevice *out);
void store_device_info(const std::string &cache_dir, const std::string &fingerprint,
                       const StoredDevice &device);

}  // namespace npvk::vk
