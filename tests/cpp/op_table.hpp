// docs/ops.md's table, as data: which loops each op has, and every opcode's NumPy name and
// arity. The tests check the library against this, and the library against NumPy through it.
#ifndef NPVK_TESTS_CPP_OP_TABLE_HPP
#define NPVK_TESTS_CPP_OP_TABLE_HPP

#include <npvk/npvk.h>

#include <cstdint>
#include <string>
#include <vector>

namespace npvk_test {

struct Loop {
  npvk_op op;
  uint32_t nin;
  std::vector<npvk_dtype> dtypes;  // inputs, then outputs (as npvk_op_supported takes them)
};

struct OpSignature {
  const char *name;  // NumPy's
  uint32_t nin;
  uint32_t nout;
};

// For every opcode below NPVK_OP_COUNT.
const OpSignature &Signature(npvk_op op);

// Every loop docs/ops.md lists, and those of one op.
const std::vector<Loop> &DocumentedLoops();
// The float16 loops docs/ops.md adds to those: every float32 loop with float16 in place of
// float32, except float_power, and casts between float16 and every dtype. They are tested
// against NumPy itself (tests/python/test_float16.py), not by C++ cases.
const std::vector<Loop> &Float16Loops();
std::vector<Loop> DocumentedLoops(npvk_op op);
// Whether docs/ops.md lists the op at all (the library must then report implemented == 1).
bool IsDocumented(npvk_op op);

// "add_int8", "true_divide_int32" (the output dtype follows from the inputs), "where_float32"
// (the condition is always bool), "cast_int8_to_float64", "ldexp_float32_int64".
std::string LoopName(const Loop &loop);

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_OP_TABLE_HPP
