// The elementwise family: a fused chain of elementwise ops over one
// iteration space (compile/fusion.hpp plans it, compile/families/elementwise/elementwise_glsl.hpp
// writes its GLSL). Operand slots go to push constants, the rest and the strides to the argument
// table.
#pragma once

#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/families/family.hpp"
#include "compile/fusion.hpp"

namespace npvk {

DispatchArgs bind_elementwise(const PlannedKernel &kernel, const BindTarget &target);

// Workgroups for a grid-stride dispatch that wants `wanted` of them.
uint32_t grid_stride_groups(uint64_t wanted, const BindTarget &target);

}  // namespace npvk
