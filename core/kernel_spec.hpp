// The structural identity of a generated kernel. Everything that varies
// between calls of the same loop (sizes, strides, offsets, scalar values) is
// passed at dispatch time, so the key names a kernel that serves them all.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <string>

#include "core/iteration.hpp"

namespace npvk {

struct OperandSpec {
  npvk_dtype dtype = NPVK_BOOL;
  bool scalar = false;  // read from push constants, not memory
};

struct KernelSpec {
  npvk_op op = NPVK_OP_ADD;
  uint32_t nin = 0, nout = 0;
  OperandSpec operands[kMaxOperands];  // inputs, then outputs
  bool contiguous = true;  // one unit-stride dimension: no index arithmetic
  uint32_t rank = 0;       // loop rank when not contiguous

  uint32_t count() const { return nin + nout; }
  std::string key() const;  // e.g. "add(f8,f8s)->f8/c"
};

// What every kernel receives as push constants. The GLSL side is generated
// from the same constants, and SPIRV-Cross reflection checks each kernel
// against this layout.
struct PushConstants {
  uint64_t operand[kMaxOperands];  // device address (+ byte offset), or scalar bits
  uint64_t meta;                   // device address of shape and strides (strided kernels)
  uint64_t count;                  // elements to compute
  uint64_t tables;                 // device address of the math library's constant tables
  uint64_t flags;                  // device address of this dispatch's FP exception word
};
static_assert(sizeof(PushConstants) == 64, "PushConstants must match the GLSL block");

constexpr uint32_t kWorkgroupSize = 128;

}  // namespace npvk
