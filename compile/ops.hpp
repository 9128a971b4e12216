// The opcode table: one row per op holds every fact about it, after NumPy's
// generate_umath.py (`class Ufunc`): its NumPy name and arity, which dtype
// combinations have a loop (see docs/ops.md), whether npvk implements it, how
// its GLSL is produced, its float16 rule, its floating-point-exception rule
// and, for reductions, its identity. Adding a unary float op is one row here
// plus its GLSL function in shaders/.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>

namespace npvk {

// Which operands share a dtype and which dtypes a loop exists for.
enum class LoopRule : uint8_t {
  Same,        // every operand has one dtype T, T in the op's kinds
  ToBool,      // inputs share T in kinds; outputs are bool
  TrueDivide,  // floats: Same; integers: TT -> float64 (computed in float64)
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

// How GLSL is produced for an op (compile/glsl_ops.cpp).
enum class OpGen : uint8_t {
  Template,  // OpInfo::glsl; float loops call OpInfo::math_f64 where it is set
  Cast,      // cast_expr: NumPy's conversions between any two dtypes
};

// What float16 loops do with the float32 result they compute (NumPy's
// `astype={'e':'f'}`: computed in float32, rounded to float16 once).
enum class HalfRule : uint8_t {
  Round,   // round each float16 output to float16 after the op
  Exact,   // the result already is a float16 value (bit operations, selections, floor)
  NoLoop,  // NumPy has no float16 loop
};

// Which floating-point exceptions an op raises (docs/ops.md,
// "Floating-point errors"). Float results: a NaN from no NaN input is
// invalid, an infinity from finite inputs overflow (division by zero where
// OpInfo::pole holds). The variants name which inputs bring a NaN or an
// infinity and what integer loops raise.
enum class FpRule : uint8_t {
  Float,      // every input brings its NaN and infinity; integer loops raise nothing
  None,       // raises nothing: cast, where, and ops whose result is an operand's
              // value up to its sign (negative, absolute, copysign, maximum, clip...),
              // so never a new infinity or NaN; their kernels carry no flag code
  NextAfter,  // only x brings an infinity: a finite x stepping to inf overflows
  Spacing,    // float16 (npy_half_spacing): a NaN input raises invalid too
  Divides,    // integer loops: division by zero where the divisor is 0 (remainder, fmod)
  Floors,     // Divides, signed MIN // -1 overflows, and a float quotient that
              // overflows also raises invalid (floor_divide, divmod: npy_divmod)
};

// A reduction's identity, as bits of the result dtype.
enum class Identity : uint8_t {
  None,     // none (maximum, minimum: the first element starts the fold)
  Zero,     // 0
  One,      // the number 1 in the dtype
  Bit1,     // the bits 1 (logical_and: true)
  AllOnes,  // every bit set (bitwise_and)
};

// How a float reduction folds (compile/families/reduce/reduce_glsl.cpp).
enum class FloatFold : uint8_t {
  Exact,        // no flags (max, min, logical and bitwise ops)
  Checked,      // reports overflow and invalid (multiply)
  Compensated,  // Neumaier-compensated, reports overflow and invalid (add)
};

struct OpInfo {
  npvk_op op;  // kOps[i].op == i
  const char *name;
  uint8_t nin;
  uint8_t nout;
  bool implemented;
  LoopRule rule;
  uint8_t kinds;
  // GLSL (OpGen::Template): alternatives separated by ';', the first whose
  // selector matches the loop's dtype wins: "b:" bool, "s:" signed, "u:"
  // unsigned, "i:" integer, "f:" float, "f32:" float32 or float16, "h:"
  // float16, none: any. $0..$3 are the operands (a second output is an
  // `out` argument), $T the loop's compute type, $T1 operand 1's, $Z zero
  // in $T, $B0/$B1 C's truthiness of $0/$1.
  const char *glsl;
  // The float64 function (shaders/math_f64.glsl) a float loop calls: float32
  // computes in float64 and rounds once. Null: the template serves floats too.
  const char *math_f64 = nullptr;
  // Float loops call shaders/ops_float_divmod.glsl (which uses math_f64.glsl).
  bool float_divmod = false;
  HalfRule half = HalfRule::Round;
  FpRule fp = FpRule::Float;
  // Where a float op is at its pole (its infinities are divisions by zero,
  // not overflows), a template over the inputs like `glsl`. Null: no pole.
  const char *pole = nullptr;
  // Reductions and scans.
  bool reducible = false;
  Identity identity = Identity::None;
  FloatFold fold = FloatFold::Exact;
  // Comparisons: the GLSL operator; (int64, uint64) pairs compare by value.
  const char *compare = nullptr;
  OpGen gen = OpGen::Template;
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
