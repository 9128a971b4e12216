// GLSL 460 source for a kernel of one or more fused elementwise ops: buffer
// references for every array, push constants for addresses, sizes and
// scalars, and NumPy's loop semantics from shaders/*.glsl.
#pragma once

#include <string>

#include "compile/kernel_spec.hpp"

namespace npvk {

struct DeviceTraits {
  bool float64 = true;  // float32 transcendentals go through float64 when present
};

std::string generate_glsl(const FusedKernelSpec &spec, const DeviceTraits &traits);
// Whether the kernel needs float64 arithmetic (so a device without it cannot run it).
bool needs_float64(const KernelSpec &spec);

}  // namespace npvk
