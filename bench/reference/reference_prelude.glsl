// What both reference kernels declare, included after their #version line:
// npvk's push-constant block (compile/kernel_abi.hpp), so npvk's executor
// dispatches them, float64 arrays by device address, and the
// subgroup-contiguous split of npvk's generated kernels.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(buffer_reference, std430, buffer_reference_align = 8) buffer F64 { double v[]; };
layout(push_constant, std430) uniform Push {
  uint64_t operand[12];
  uint64_t meta;
  uint64_t count;
  uint64_t tables;
  uint64_t flags;
} pc;

// This subgroup's run [first, end) of `count` elements, which it walks
// `lanes` at a time so that its lanes always touch adjacent elements. Each
// workgroup takes a block of a multiple of 128 and splits it evenly between
// its subgroups (32-bit: the problems here have fewer than 2^32 elements).
void subgroup_run(uint count, out uint first, out uint end, out uint lanes) {
  const uint groups = gl_NumWorkGroups.x;
  const uint block = ((count + groups - 1u) / groups + 127u) / 128u * 128u;
  const uint part = block / gl_NumSubgroups;
  lanes = min(gl_SubgroupSize, 128u);
  first = gl_WorkGroupID.x * block + gl_SubgroupID * part;
  end = min(first + part, count);
}
