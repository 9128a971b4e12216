// GLSL for the matrix product family: the tiled kernel of a planned
// MatmulOp, a function of the op alone.
#pragma once

#include <string>

#include "compile/families/matmul/matmul_plan.hpp"

namespace npvk {

std::string generate_matmul_glsl(const MatmulOp &op);

}  // namespace npvk
