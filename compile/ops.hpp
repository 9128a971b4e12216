// The opcode table: each op's NumPy name, arity and loop signatures (which
// dtype combinations have a loop, see docs/ops.md), and whether npvk
// implements it yet.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>

namespace npvk {

// Which operands share a dtype and which dtypes a loop exists for.
enum class LoopRule {
  Same,        // every operand has one dtype T, T in the op's kinds
  ToBool,      // inputs share T in kinds; outputs are bool
  TrueDivide,  // floats: Same; integers: TT -> float64
  Where,       // (bool, T, T) -> T for any T
  Cast,        // any dtype -> any dtype
  Ldexp,       // (T, int32 or int64) -> T, T in kinds
  Frexp,       // T -> (T, int32), T in kinds
};

// Bit set of dtype kinds.
enum KindMask : uint8_t {
  kBool = 1,
  kSigned = 2,
  kUnsigned = 4,
  kFloat = 8,
  kInt = kSigned | kUnsigned,
  kNumeric = kInt | kFloat,
  kAll = kBool | kNumeric,
};

struct OpInfo {
  npvk_op op;
  const char *name;
  uint8_t nin;
  uint8_t nout;
  bool implemented;
  LoopRule rule;
  uint8_t kinds;
};

bool op_valid(int op);
// equal, not_equal, less, less_equal, greater, greater_equal.
bool is_comparison(npvk_op op);
// (int64, uint64) or (uint64, int64): the one pair of differing input dtypes
// a comparison has a loop for.
bool is_mixed_int64_pair(npvk_dtype a, npvk_dtype b);
// Throws NPVK_ERR_INVALID_ARGUMENT for a value that is not an opcode.
const OpInfo &op_info(npvk_op op);
// Whether the op has a loop for these dtypes (inputs, then outputs), ignoring
// device capabilities. `why` receives a reason when it has none.
bool op_has_loop(const OpInfo &info, const npvk_dtype *dtypes, uint32_t count, const char **why);

}  // namespace npvk
