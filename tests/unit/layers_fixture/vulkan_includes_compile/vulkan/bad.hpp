// Breaks one rule: of compile/, vulkan/ may see only compile/kernel_abi.hpp.
#include "compile/fusion.hpp"
