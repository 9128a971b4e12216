// The contract between generated kernels and the code that dispatches them:
// the push-constant block every kernel declares and the slot conventions.
// Shared by compile/ (which writes the GLSL side) and vulkan/ (which fills
// and checks it), so it includes nothing but the standard library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npvk {

// Memory arrays and scalars a fused kernel reads or writes. The first
// kPushSlots travel as push constants, the rest in the argument table.
constexpr uint32_t kMaxKernelSlots = 64;
constexpr uint32_t kPushSlots = 12;

// What every kernel receives as push constants. The GLSL side is generated
// from the same constants, and SPIRV-Cross reflection checks each kernel
// against this layout. 128 bytes is the least every Vulkan device offers.
struct PushConstants {
  uint64_t operand[kPushSlots];  // device address (+ byte offset), or scalar bits
  // Device address of the argument table: slots past kPushSlots, then the
  // loop's shape and each slot's strides (strided kernels).
  uint64_t meta;
  uint64_t count;   // elements to compute
  uint64_t tables;  // device address of the math library's constant tables
  uint64_t flags;   // device address of this dispatch's FP exception words, one per step
};
static_assert(sizeof(PushConstants) == 128, "PushConstants must match the GLSL block");

constexpr uint32_t kWorkgroupSize = 128;

}  // namespace npvk
