// vulkan/ may include base/, vulkan/, the push-constant contract and Vulkan.
#include <vulkan/vulkan.h>

#include "base/error.hpp"
#include "compile/kernel_abi.hpp"
#include "vulkan/device.hpp"
