#version 460
// One explicit heat-equation step: the hand-fused reference for the stencil
// kernel npvk generates from bench/programs/heat_equation.py. Writes the
// interior of `next` from the 5-point stencil of `u`, with the operations in
// step_numpy()'s order (`precise`: no fma contraction, so the result is the
// same to the bit). No FP exception flags and no division per element: each
// subgroup owns one contiguous run of the interior (in row-major order, as the
// generated kernels split their index space) and walks it a subgroup-width at
// a time, each lane carrying its position and stepping over the two boundary
// columns when it wraps to the next row.
//
// Push constants (reference_prelude.glsl): operand[0] = address
// of u, operand[1] = of next (both (n+2) x (n+2), C order), operand[2] = n,
// operand[3] = the bits of alpha; count = n * n (interior elements).
#include "reference_prelude.glsl"

void main() {
  uint first, end, lanes;
  subgroup_run(uint(pc.count), first, end, lanes);
  const uint n = uint(pc.operand[2]), stride = n + 2u;
  F64 u = F64(pc.operand[0]), next = F64(pc.operand[1]);
  const double alpha = uint64BitsToDouble(pc.operand[3]);
  // The lane's first interior element: one division per invocation. A step
  // of `lanes` (at most 128) wraps past the row end at most once when n >= lanes;
  // the loop below wraps as often as needed otherwise.
  uint i = first + gl_SubgroupInvocationID;
  uint col = i % n;
  uint at = (i / n + 1u) * stride + 1u + col;
  for (; i < end; i += lanes) {
    const double center = u.v[at];
    // u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
    precise double lap =
        (((u.v[at + stride] + u.v[at - stride]) + u.v[at + 1u]) + u.v[at - 1u]) - 4.0LF * center;
    precise double updated = center + alpha * lap;
    next.v[at] = updated;
    col += lanes;
    at += lanes;
    while (col >= n) {
      col -= n;
      at += 2u;  // over the right and left boundary cells
    }
  }
}
