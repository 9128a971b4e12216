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
constexpr uint32_t kMaxKernelSlots = 128;
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
// Set in a fused kernel's first FP exception word by an invocation that saw
// a NaN or an infinity, where the kernel leaves each op's flags to a
// separate flags pass (FusedKernelSpec::FlagsLoop::Deferred). Not a
// NumPy flag bit (npvk_fp_flag uses 1..8).
constexpr uint32_t kFlagsPassWanted = 0x40000000u;

// What PushConstants::operand[i] holds in a reduction or scan kernel
// (compile/families/reduce/reduce_glsl.cpp reads them, compile/families/reduce/reduce_binding.cpp
// fills them). The argument table: the outer shape, the outer input and output strides, the inner
// shape and the inner strides.
namespace reduce_slot {
enum : uint32_t {
  kInput = 0,         // the input's address
  kOutput = 1,        // the output's, or the scratch partials'
  kInitial = 2,       // `initial`'s bits in the output dtype
  kReduced = 3,       // elements per result
  kChunks = 4,        // chunks per result
  kApplyInitial = 5,  // whether to combine `initial`
  kFirstItem = 6,     // the first result (chunk, line) of this dispatch
  kLineBegin = 7,     // a scan's elements [begin, end) of each line in this dispatch
  kLineEnd = 8,
  kSumBlock = 9,  // a pairwise sum's elements per block
  kDepths = 10,   // its full blocks' split depth | the last block's << 8
  kFlagsAt = 11,  // where its subtrees' input classes follow their values, in elements
};
}  // namespace reduce_slot

// What PushConstants::operand[i] holds in a matrix product kernel
// (compile/families/matmul/matmul_glsl.cpp). The argument table: A's, B's and C's two core
// strides, then the batch shape and the three operands' batch strides.
namespace matmul_slot {
enum : uint32_t { kA = 0, kB = 1, kC = 2, kM = 3, kK = 4, kN = 5, kFirstTile = 6 };
}  // namespace matmul_slot

}  // namespace npvk
