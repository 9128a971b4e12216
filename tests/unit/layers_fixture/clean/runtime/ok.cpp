// runtime/ may include base/, compile/, vulkan/ and runtime/.
#include "base/error.hpp"
#include "compile/fusion.hpp"
#include "runtime/context.hpp"
#include "vulkan/device.hpp"
