// Breaks one rule: vulkan/ is below runtime/.
#include "runtime/context.hpp"
