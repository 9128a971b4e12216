// GLSL for the reduction and scan family: one kernel of a ReduceKernelSpec
// (per-thread or workgroup reduction, a cast pass, or a scan), a function of
// the spec alone.
#pragma once

#include <string>

#include "compile/families/reduce/reduce_plan.hpp"

namespace npvk {

std::string generate_reduce_glsl(const ReduceKernelSpec &spec);

}  // namespace npvk
