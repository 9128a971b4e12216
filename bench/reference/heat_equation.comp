#version 460
// One explicit heat-equation step: the hand-fused reference for the stencil
// kernel npvk generates from bench/programs/heat_equation.py. Writes the
// interior of `next` from the 5-point stencil of `u`, with the operations in
// step_numpy()'s order (`precise`: no fma contraction, so the result is the
// same to the bit). No FP exception flags and no per-element index splitting:
// a workgroup owns whole rows and its invocations walk each row 128 columns
// at a time, so every subgroup reads and writes adjacent elements.
//
// Push constants: npvk's block (compile/kernel_abi.hpp). operand[0] = address
// of u, operand[1] = of next (both (n+2) x (n+2), C order), operand[2] = the
// row length n + 2, operand[3] = the bits of alpha; count = n (interior rows
// and columns).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 128) in;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer F64 { double v[]; };
layout(push_constant, std430) uniform Push {
  uint64_t operand[12];
  uint64_t meta;
  uint64_t count;
  uint64_t tables;
  uint64_t flags;
} pc;

void main() {
  const uint n = uint(pc.count);
  const uint stride = uint(pc.operand[2]);
  const uint rows = (n + gl_NumWorkGroups.x - 1u) / gl_NumWorkGroups.x;
  const uint row_begin = gl_WorkGroupID.x * rows;
  const uint row_end = min(row_begin + rows, n);
  F64 u = F64(pc.operand[0]), next = F64(pc.operand[1]);
  const double alpha = uint64BitsToDouble(pc.operand[3]);
  for (uint row = row_begin; row < row_end; ++row) {
    const uint line = (row + 1u) * stride + 1u;  // interior element (row, 0)
    for (uint j = gl_LocalInvocationID.x; j < n; j += 128u) {
      const uint at = line + j;
      const double center = u.v[at];
      // u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
      precise double lap =
          (((u.v[at + stride] + u.v[at - stride]) + u.v[at + 1u]) + u.v[at - 1u]) - 4.0LF * center;
      precise double updated = center + alpha * lap;
      next.v[at] = updated;
    }
  }
}
