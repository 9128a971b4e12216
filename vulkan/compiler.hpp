// GLSL to SPIR-V with shaderc, at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npvk::vk {

// Throws NPVK_ERR_COMPILE with the compiler's messages and the numbered source.
// The module is shrink()-ed.
std::vector<uint32_t> compile_glsl(const std::string &source, const std::string &name);

// The same kernel in fewer words: function variables promoted to values,
// dead code and debug names dropped (the module itself where that fails).
std::vector<uint32_t> shrink(std::vector<uint32_t> spirv);

}  // namespace npvk::vk
