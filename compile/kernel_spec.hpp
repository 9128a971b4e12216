// The structural identity of a generated kernel. Everything that varies
// between calls of the same loop (sizes, strides, offsets, scalar values) is
// passed at dispatch time, so the key names a kernel that serves them all.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compile/fixed_exponent.hpp"
#include "compile/iteration.hpp"
#include "compile/kernel_abi.hpp"

namespace npvk {

struct OperandSpec {
  npvk_dtype dtype = NPVK_BOOL;
  bool scalar = false;  // read from push constants, not memory
};

// One elementwise op with its loop's dtypes: what op_table validates and
// codegen turns into an expression.
struct KernelSpec {
  npvk_op op = NPVK_OP_ADD;
  uint32_t nin = 0, nout = 0;
  OperandSpec operands[kMaxOperands];  // inputs, then outputs
  bool contiguous = true;              // one unit-stride dimension: no index arithmetic
  uint32_t rank = 0;                   // loop rank when not contiguous
  FixedExponent exponent;              // power: a scalar exponent with code of its own

  uint32_t count() const { return nin + nout; }
  std::string key() const;  // e.g. "add(f8,f8s)->f8/c"
};

// Ops in one fused kernel: bounds the shader's size and its compile time.
constexpr uint32_t kMaxFusedSteps = 160;

// A kernel that runs a sequence of elementwise ops ("steps") over one
// iteration space, element by element. A step's operands are slots; a slot
// written by one step and read by a later one is forwarded in registers, and
// a slot whose contents nobody reads after the kernel is never stored
// (contracted).
struct FusedKernelSpec {
  struct Slot {
    npvk_dtype dtype = NPVK_BOOL;
    bool scalar = false;
    bool stored = true;  // false: a contracted temporary, written only in registers
  };
  struct Step {
    KernelSpec op;                    // op and dtypes (contiguous/rank unused)
    uint8_t slot[kMaxOperands] = {};  // inputs, then outputs
  };
  std::vector<Slot> slots;
  std::vector<Step> steps;
  bool contiguous = true;
  uint32_t rank = 0;
  // Fewer than 2^31 elements: the loop index is split into coordinates with
  // 32-bit division, which CPU drivers vectorise (64-bit division they
  // call a library routine for, lane by lane).
  bool narrow_index = false;
  // Fewer than 2^31 elements, and every slot's element offsets (its extent
  // in elements from its first element, either way) below 2^31: the loop
  // index, coordinates, strides and offsets are 32-bit. CPU drivers then
  // use twice the lanes per vector register and no 64-bit multiplies.
  bool narrow_offsets = false;
  // A contiguous kernel takes kVectorWidth elements per invocation through
  // vector loads and stores (NPVK_VECTOR_ACCESS, which the planner reads):
  // in the spec, not read by the generator, so that the GLSL is a function
  // of the spec alone and the key names the variant ("/cv").
  bool vector_access = false;
  // Where each op's flags are computed for the invocations whose results
  // were not all finite (generate_glsl): in a second loop of the kernel, or
  // in a separate flags kernel dispatched only after a kernel reported one
  // (kFlagsPassWanted). Deferred keeps the second loop out of the kernel
  // that runs every time: llvmpipe pays for its masked-off body, and
  // compiles it. It needs the kernel's inputs unchanged until the flags
  // pass, which the runtime checks (no later kernel of the batch writes them).
  enum class FlagsLoop : uint8_t {
    InKernel,   // the second loop follows the main loop
    Deferred,   // the main loop only; kFlagsPassWanted asks for the flags pass
    FlagsPass,  // the flags pass: the second loop alone, over every element
  };
  FlagsLoop flags_loop = FlagsLoop::InKernel;

  std::string key() const;  // e.g. "s:f8,f8s,f8-|add(0,1)->2;exp(2)->2/c"
};

}  // namespace npvk
