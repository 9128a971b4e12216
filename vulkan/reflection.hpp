// Checks a kernel's SPIR-V against the push-constant layout the C++ side
// fills (SPIRV-Cross reflection), so a generator bug is caught at compile
// time instead of corrupting memory at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npvk::vk {

struct PushLayout {
  size_t size;                    // declared size of the block
  std::vector<uint32_t> offsets;  // each member's byte offset
};

// Throws NPVK_ERR_COMPILE when the module has no push-constant block or it
// differs from `expected`.
void check_push_layout(const std::vector<uint32_t> &spirv, const PushLayout &expected);

}  // namespace npvk::vk
