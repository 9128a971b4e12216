// GLSL to SPIR-V with shaderc, at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npvk::vk {

// Throws NPVK_ERR_COMPILE with the compiler's messages and the numbered source.
std::vector<uint32_t> compile_glsl(const std::string &source, const std::string &name);

}  // namespace npvk::vk
