// A Vulkan instance and device made ahead of the first context, on a thread
// of its own (npvk_device_prepare). Loading lavapipe (its LLVM) and creating
// its device take 30-40 ms, about a fifth of a small pandas or scikit-learn
// program's whole extra time under NPVK=1. Made while the program imports
// its libraries, they slowed those imports by about as much (the Python
// package asks for it only with NPVK_PREPARE_DEVICE=1). A context takes the prepared device
// only if it would have chosen the same one itself, with the same settings:
// NPVK_DEVICE or a launcher's rank set after the preparation still count.
#pragma once

#include <cstdint>
#include <memory>

#include "base/options.hpp"
#include "vulkan/device.hpp"

namespace npvk::vk {

// Starts preparing the device that `selector` (a context's option; null for
// none) and the environment's settings choose now, with the validation layer
// where `validation` or NPVK_VALIDATION asks. Returns at once; a second call
// does nothing. Failures are silent: the context meets them itself.
// `delay_ms`: the thread waits that long before it loads the driver, so that
// a process that ends sooner (an import-only one) never loads it; a call
// with no delay, or a context taking the device, ends the wait early, and
// end_preparation during it cancels the preparation.
void prepare_device(const char *selector, bool validation, uint32_t delay_ms = 0);

// Waits for the preparation to end and frees a device no context took.
// Needed before exit() while it may run: the exit handlers of the driver's
// libraries (LLVM's), loaded after any npvk could register, would run under
// the preparing thread.
void end_preparation();

// The prepared device, when one was prepared with these settings and they
// still choose it; else null (then the caller creates its own). Waits while
// the preparation runs. Null in the child of a fork: Vulkan objects do not
// cross fork.
std::unique_ptr<Device> take_prepared_device(bool validation, const DisabledFeatures &disabled,
                                             const char *selector, const std::string &env_selector);

}  // namespace npvk::vk
