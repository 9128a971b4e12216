// GLSL 460 source for a kernel of one or more fused elementwise ops: buffer
// references for every array, push constants for addresses, sizes and
// scalars, and NumPy's loop semantics from shaders/*.glsl.
#pragma once

#include <string>

#include "compile/kernel_spec.hpp"

namespace npvk {

// What the runtime knows of the device when it admits a kernel.
struct DeviceTraits {
  bool float64 = true;  // shaderFloat64: kernels that needs_float64() can run
};

// The traits do not enter the GLSL, so the kernel key leaves them out: a
// float32 transcendental always computes in float64 and rounds once (as
// NumPy's loops round once), and a device without float64 is kept from such
// kernels by needs_float64() before any is generated. So generate_glsl
// takes no traits. It reads nothing but the spec (no process-wide setting:
// the planner puts NPVK_VECTOR_ACCESS in FusedKernelSpec::vector_access),
// so the same key always gets the same source.
std::string generate_glsl(const FusedKernelSpec &spec);
// Whether the kernel has a flags loop (FusedKernelSpec::flags_loop): a float
// op with flags that does not depend on a value the element overwrote.
bool has_flags_loop(const FusedKernelSpec &spec);
// Whether the kernel needs float64 arithmetic (so a device without it cannot run it).
bool needs_float64(const KernelSpec &spec);

}  // namespace npvk
