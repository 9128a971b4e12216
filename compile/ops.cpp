#include "compile/ops.hpp"

#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"

namespace npvk {
namespace {

constexpr bool Y = true;   // implemented
constexpr bool N = false;  // declared only
using R = LoopRule;
using H = HalfRule;
using F = FpRule;
using I = Identity;
using FF = FloatFold;
constexpr const char *M = nullptr;  // no float64 math function

// Indexed by npvk_op; loop signatures after NumPy's ufunc type lists (those
// of NumPy 2, which adds bool and integer floor, ceil and trunc to 1.24's).
// Columns: op, name, nin, nout, implemented, loop rule, kinds, GLSL template,
// float64 math function, float divmod, float16 rule, FP rule, pole, then
// for reductions reducible, identity, float fold, and for comparisons the
// operator; cast has a generator of its own.
constexpr OpInfo kOps[NPVK_OP_COUNT] = {
    {NPVK_OP_ADD, "add", 2, 1, Y, R::Same, kAll, "b:($0 || $1);($0 + $1)", M, false, H::Round,
     F::Float, nullptr, true, I::Zero, FF::Compensated},
    {NPVK_OP_SUBTRACT, "subtract", 2, 1, Y, R::Same, kNumeric, "($0 - $1)"},
    {NPVK_OP_MULTIPLY, "multiply", 2, 1, Y, R::Same, kAll, "b:($0 && $1);($0 * $1)", M, false,
     H::Round, F::Float, nullptr, true, I::One, FF::Checked},
    {NPVK_OP_TRUE_DIVIDE, "true_divide", 2, 1, Y, R::TrueDivide, kNumeric,
     "f:($0 / $1);(double($0) / double($1))", M, false, H::Round, F::Float, "$1 == $Z"},
    {NPVK_OP_FLOOR_DIVIDE, "floor_divide", 2, 1, Y, R::Same, kNumeric, "npvk_floor_divide($0, $1)",
     M, true, H::Round, F::Floors, "$1 == $Z"},
    {NPVK_OP_REMAINDER, "remainder", 2, 1, Y, R::Same, kNumeric, "npvk_remainder($0, $1)", M, true,
     H::Round, F::Divides},
    {NPVK_OP_FMOD, "fmod", 2, 1, Y, R::Same, kNumeric, "npvk_fmod($0, $1)", M, true, H::Round,
     F::Divides},
    {NPVK_OP_DIVMOD, "divmod", 2, 2, Y, R::Same, kNumeric, "npvk_divmod_pair($0, $1, $2)", M, true,
     H::Round, F::Floors, "$1 == $Z"},
    {NPVK_OP_NEGATIVE, "negative", 1, 1, Y, R::Same, kNumeric, "u:($Z - $0);(-$0)", M, false,
     H::Exact, F::None},
    {NPVK_OP_POSITIVE, "positive", 1, 1, Y, R::Same, kNumeric, "$0", M, false, H::Exact, F::None},
    {NPVK_OP_ABSOLUTE, "absolute", 1, 1, Y, R::Same, kAll,
     "f:npvk_fabs($0);s:($0 < $Z ? -$0 : $0);$0", M, false, H::Exact, F::None},
    {NPVK_OP_FABS, "fabs", 1, 1, Y, R::Same, kFloat, "npvk_fabs($0)", M, false, H::Exact, F::None},
    {NPVK_OP_SIGN, "sign", 1, 1, Y, R::Same, kNumeric, "npvk_sign($0)", M, false, H::Exact},
    {NPVK_OP_HEAVISIDE, "heaviside", 2, 1, Y, R::Same, kFloat, "npvk_heaviside($0, $1)", M, false,
     H::Exact},
    {NPVK_OP_RECIPROCAL, "reciprocal", 1, 1, Y, R::Same, kNumeric,
     "f:($T(1) / $0);npvk_reciprocal($0)", M, false, H::Round, F::Float, "$0 == $Z"},
    {NPVK_OP_SQUARE, "square", 1, 1, Y, R::Same, kNumeric, "($0 * $0)"},
    {NPVK_OP_SQRT, "sqrt", 1, 1, Y, R::Same, kFloat, "sqrt($0)"},
    {NPVK_OP_CBRT, "cbrt", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_cbrt_f64"},
    {NPVK_OP_POWER, "power", 2, 1, Y, R::Same, kNumeric, "npvk_power($0, $1)", "npvk_pow_f64",
     false, H::Round, F::Float, "$0 == $Z"},
    // NumPy 1.24 has no float16 loop of float_power (it computes in float64).
    {NPVK_OP_FLOAT_POWER, "float_power", 2, 1, Y, R::Same, kFloat, nullptr, "npvk_pow_f64", false,
     H::NoLoop, F::Float, "$0 == $Z"},
    {NPVK_OP_CONJUGATE, "conjugate", 1, 1, Y, R::Same, kNumeric, "$0", M, false, H::Exact},
    {NPVK_OP_EXP, "exp", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_exp_f64"},
    {NPVK_OP_EXP2, "exp2", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_exp2_f64"},
    {NPVK_OP_EXPM1, "expm1", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_expm1_f64"},
    {NPVK_OP_LOG, "log", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_log_f64", false, H::Round,
     F::Float, "$0 == $Z"},
    {NPVK_OP_LOG2, "log2", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_log2_f64", false, H::Round,
     F::Float, "$0 == $Z"},
    {NPVK_OP_LOG10, "log10", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_log10_f64", false, H::Round,
     F::Float, "$0 == $Z"},
    {NPVK_OP_LOG1P, "log1p", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_log1p_f64", false, H::Round,
     F::Float, "$0 == $T(-1)"},
    {NPVK_OP_LOGADDEXP, "logaddexp", 2, 1, Y, R::Same, kFloat, nullptr, "npvk_logaddexp_f64"},
    {NPVK_OP_LOGADDEXP2, "logaddexp2", 2, 1, Y, R::Same, kFloat, nullptr, "npvk_logaddexp2_f64"},
    {NPVK_OP_SIN, "sin", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_sin_f64"},
    {NPVK_OP_COS, "cos", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_cos_f64"},
    {NPVK_OP_TAN, "tan", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_tan_f64"},
    {NPVK_OP_ARCSIN, "arcsin", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_asin_f64"},
    {NPVK_OP_ARCCOS, "arccos", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_acos_f64"},
    {NPVK_OP_ARCTAN, "arctan", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_atan_f64"},
    {NPVK_OP_ARCTAN2, "arctan2", 2, 1, Y, R::Same, kFloat, nullptr, "npvk_atan2_f64"},
    {NPVK_OP_HYPOT, "hypot", 2, 1, Y, R::Same, kFloat, nullptr, "npvk_hypot_f64"},
    {NPVK_OP_SINH, "sinh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_sinh_f64"},
    {NPVK_OP_COSH, "cosh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_cosh_f64"},
    {NPVK_OP_TANH, "tanh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_tanh_f64"},
    {NPVK_OP_ARCSINH, "arcsinh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_asinh_f64"},
    {NPVK_OP_ARCCOSH, "arccosh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_acosh_f64"},
    {NPVK_OP_ARCTANH, "arctanh", 1, 1, Y, R::Same, kFloat, nullptr, "npvk_atanh_f64", false,
     H::Round, F::Float, "abs($0) == $T(1)"},
    // NumPy multiplies by the constant rounded in the loop's type: float32's is
    // float(float(pi) / 180), float64's double(pi / 180).
    {NPVK_OP_DEG2RAD, "deg2rad", 1, 1, Y, R::Same, kFloat,
     "f32:($0 * uintBitsToFloat(0x3c8efa35u));($0 * uint64BitsToDouble(0x3f91df46a2529d39ul))"},
    {NPVK_OP_RAD2DEG, "rad2deg", 1, 1, Y, R::Same, kFloat,
     "f32:($0 * uintBitsToFloat(0x42652ee0u));($0 * uint64BitsToDouble(0x404ca5dc1a63c1f8ul))"},
    {NPVK_OP_RINT, "rint", 1, 1, Y, R::Same, kFloat, "npvk_rint($0)", M, false, H::Exact},
    // NumPy 2's bool and integer loops return their input.
    {NPVK_OP_FLOOR, "floor", 1, 1, Y, R::Same, kAll, "f:floor($0);$0", M, false, H::Exact},
    {NPVK_OP_CEIL, "ceil", 1, 1, Y, R::Same, kAll, "f:ceil($0);$0", M, false, H::Exact},
    {NPVK_OP_TRUNC, "trunc", 1, 1, Y, R::Same, kAll, "f:npvk_trunc($0);$0", M, false, H::Exact},
    {NPVK_OP_COPYSIGN, "copysign", 2, 1, Y, R::Same, kFloat, "npvk_copysign($0, $1)", M, false,
     H::Exact, F::None},
    {NPVK_OP_NEXTAFTER, "nextafter", 2, 1, Y, R::Same, kFloat,
     "h:npvk_nextafter_half($0, $1);npvk_nextafter($0, $1)", M, false, H::Exact, F::NextAfter},
    {NPVK_OP_SPACING, "spacing", 1, 1, Y, R::Same, kFloat,
     "h:npvk_spacing_half($0);npvk_spacing($0)", M, false, H::Exact, F::Spacing},
    // C's int exponent: NumPy clamps an int64 one to INT_MIN..INT_MAX; anything
    // past +-4000 already gives 0 or inf.
    {NPVK_OP_LDEXP, "ldexp", 2, 1, Y, R::Ldexp, kFloat,
     "npvk_ldexp($0, int(clamp($1, $T1(-4000), $T1(4000))))"},
    {NPVK_OP_FREXP, "frexp", 1, 2, Y, R::Frexp, kFloat, "npvk_frexp($0, $1)", M, false, H::Exact},
    {NPVK_OP_MODF, "modf", 1, 2, Y, R::Same, kFloat, "npvk_modf($0, $1)", M, false, H::Exact},
    // NumPy's bool and integer loops: never NaN or infinite.
    {NPVK_OP_ISNAN, "isnan", 1, 1, Y, R::ToBool, kAll, "f:npvk_isnan($0);false"},
    {NPVK_OP_ISINF, "isinf", 1, 1, Y, R::ToBool, kAll, "f:npvk_isinf($0);false"},
    {NPVK_OP_ISFINITE, "isfinite", 1, 1, Y, R::ToBool, kAll, "f:npvk_isfinite($0);true"},
    {NPVK_OP_SIGNBIT, "signbit", 1, 1, Y, R::ToBool, kFloat, "npvk_signbit($0)"},
    {NPVK_OP_GCD, "gcd", 2, 1, Y, R::Same, kInt, "npvk_gcd($0, $1)"},
    {NPVK_OP_LCM, "lcm", 2, 1, Y, R::Same, kInt, "npvk_lcm($0, $1)"},
    {NPVK_OP_LEFT_SHIFT, "left_shift", 2, 1, Y, R::Same, kInt, "npvk_left_shift($0, $1)"},
    {NPVK_OP_RIGHT_SHIFT, "right_shift", 2, 1, Y, R::Same, kInt, "npvk_right_shift($0, $1)"},
    {NPVK_OP_BITWISE_AND, "bitwise_and", 2, 1, Y, R::Same, kBool | kInt, "b:($0 && $1);($0 & $1)",
     M, false, H::Round, F::Float, nullptr, true, I::AllOnes},
    {NPVK_OP_BITWISE_OR, "bitwise_or", 2, 1, Y, R::Same, kBool | kInt, "b:($0 || $1);($0 | $1)", M,
     false, H::Round, F::Float, nullptr, true, I::Zero},
    {NPVK_OP_BITWISE_XOR, "bitwise_xor", 2, 1, Y, R::Same, kBool | kInt, "b:($0 != $1);($0 ^ $1)",
     M, false, H::Round, F::Float, nullptr, true, I::Zero},
    {NPVK_OP_INVERT, "invert", 1, 1, Y, R::Same, kBool | kInt, "b:!$0;~$0"},
    {NPVK_OP_LOGICAL_AND, "logical_and", 2, 1, Y, R::ToBool, kAll, "($B0 && $B1)", M, false,
     H::Round, F::Float, nullptr, true, I::Bit1},
    {NPVK_OP_LOGICAL_OR, "logical_or", 2, 1, Y, R::ToBool, kAll, "($B0 || $B1)", M, false, H::Round,
     F::Float, nullptr, true, I::Zero},
    {NPVK_OP_LOGICAL_XOR, "logical_xor", 2, 1, Y, R::ToBool, kAll, "($B0 != $B1)", M, false,
     H::Round, F::Float, nullptr, true, I::Zero},
    {NPVK_OP_LOGICAL_NOT, "logical_not", 1, 1, Y, R::ToBool, kAll, "!$B0"},
    // GLSL has no ordering of bools: they compare as ints.
    {NPVK_OP_EQUAL, "equal", 2, 1, Y, R::ToBool, kAll, "($0 == $1)", M, false, H::Round, F::Float,
     nullptr, false, I::None, FF::Exact, "=="},
    {NPVK_OP_NOT_EQUAL, "not_equal", 2, 1, Y, R::ToBool, kAll, "!($0 == $1)", M, false, H::Round,
     F::Float, nullptr, false, I::None, FF::Exact, "!="},
    {NPVK_OP_LESS, "less", 2, 1, Y, R::ToBool, kAll, "b:(int($0) < int($1));($0 < $1)", M, false,
     H::Round, F::Float, nullptr, false, I::None, FF::Exact, "<"},
    {NPVK_OP_LESS_EQUAL, "less_equal", 2, 1, Y, R::ToBool, kAll,
     "b:(int($0) <= int($1));($0 <= $1)", M, false, H::Round, F::Float, nullptr, false, I::None,
     FF::Exact, "<="},
    {NPVK_OP_GREATER, "greater", 2, 1, Y, R::ToBool, kAll, "b:(int($0) > int($1));($0 > $1)", M,
     false, H::Round, F::Float, nullptr, false, I::None, FF::Exact, ">"},
    {NPVK_OP_GREATER_EQUAL, "greater_equal", 2, 1, Y, R::ToBool, kAll,
     "b:(int($0) >= int($1));($0 >= $1)", M, false, H::Round, F::Float, nullptr, false, I::None,
     FF::Exact, ">="},
    {NPVK_OP_MAXIMUM, "maximum", 2, 1, Y, R::Same, kAll,
     "b:($0 || $1);h:npvk_maximum_half($0, $1);f:npvk_maximum($0, $1);($0 >= $1 ? $0 : $1)", M,
     false, H::Exact, F::None, nullptr, true},
    {NPVK_OP_MINIMUM, "minimum", 2, 1, Y, R::Same, kAll,
     "b:($0 && $1);h:npvk_minimum_half($0, $1);f:npvk_minimum($0, $1);($0 <= $1 ? $0 : $1)", M,
     false, H::Exact, F::None, nullptr, true},
    {NPVK_OP_FMAX, "fmax", 2, 1, Y, R::Same, kAll,
     "b:($0 || $1);h:npvk_fmax_half($0, $1);f:npvk_fmax($0, $1);($0 >= $1 ? $0 : $1)", M, false,
     H::Exact, F::None, nullptr, true},
    {NPVK_OP_FMIN, "fmin", 2, 1, Y, R::Same, kAll,
     "b:($0 && $1);h:npvk_fmin_half($0, $1);f:npvk_fmin($0, $1);($0 <= $1 ? $0 : $1)", M, false,
     H::Exact, F::None, nullptr, true},
    // NumPy's clip loop: minimum(maximum(x, lo), hi), where a NaN first
    // operand wins each step (a NaN bound gives NaN for every element).
    // float16's loop keeps the first of equal operands (npy_half_ge/le).
    {NPVK_OP_CLIP, "clip", 3, 1, Y, R::Same, kAll,
     "b:(($0 || $1) && $2);h:npvk_minimum_half(npvk_maximum_half($0, $1), $2);"
     "f:npvk_minimum(npvk_maximum($0, $1), $2);"
     "(($0 >= $1 ? $0 : $1) <= $2 ? ($0 >= $1 ? $0 : $1) : $2)",
     M, false, H::Exact, F::None},
    {NPVK_OP_WHERE, "where", 3, 1, Y, R::Where, kAll, "($0 ? $1 : $2)", M, false, H::Exact,
     F::None},
    // cast_expr rounds to float16 itself.
    {NPVK_OP_CAST, "cast", 1, 1, Y, R::Cast, kAll, nullptr, M, false, H::Exact, F::None, nullptr,
     false, I::None, FF::Exact, nullptr, OpGen::Cast},
};

constexpr bool rows_in_order() {
  for (int i = 0; i < NPVK_OP_COUNT; ++i)
    if (kOps[i].op != i) return false;
  return true;
}
static_assert(rows_in_order(), "kOps[i] must describe op i");

uint8_t kind_bit(npvk_dtype d) {
  switch (dtype_info(d).kind) {
    case DtypeKind::Bool:
      return kBool;
    case DtypeKind::Signed:
      return kSigned;
    case DtypeKind::Unsigned:
      return kUnsigned;
    case DtypeKind::Float:
      return kFloat;
  }
  return 0;
}

}  // namespace

bool is_comparison(npvk_op op) {
  return op_info(op).compare != nullptr;
}

bool is_mixed_int64_pair(npvk_dtype a, npvk_dtype b) {
  return (a == NPVK_INT64 && b == NPVK_UINT64) || (a == NPVK_UINT64 && b == NPVK_INT64);
}

bool op_valid(int op) {
  return op >= 0 && op < NPVK_OP_COUNT;
}

const OpInfo &op_info(npvk_op op) {
  if (!op_valid(static_cast<int>(op)))
    fail(NPVK_ERR_INVALID_ARGUMENT, "not an opcode: " + std::to_string(static_cast<int>(op)));
  return kOps[op];
}

bool op_has_loop(const OpInfo &info, const npvk_dtype *d, uint32_t count, const char **why) {
  auto no = [&](const char *reason) {
    if (why) *why = reason;
    return false;
  };
  if (count != uint32_t(info.nin) + info.nout) return no("wrong number of operands");
  for (uint32_t i = 0; i < count; ++i) {
    if (!dtype_valid(d[i])) return no("not a dtype");
    if (d[i] == NPVK_FLOAT16 && info.half == HalfRule::NoLoop) return no("no loop for this dtype");
  }
  switch (info.rule) {
    case LoopRule::Cast:
      return true;
    case LoopRule::Where:
      if (d[0] != NPVK_BOOL) return no("the condition of where must be bool");
      if (d[1] != d[2] || d[2] != d[3]) return no("x, y and out of where must share a dtype");
      return true;
    case LoopRule::ToBool:
      // NumPy 2's comparisons of int64 with uint64 (qQ->?, Qq->?) compare
      // the values, not a common type's.
      if (info.compare && info.nin == 2 && is_mixed_int64_pair(d[0], d[1])) {
        if (d[2] != NPVK_BOOL) return no("the output must be bool");
        return true;
      }
      for (uint32_t i = 1; i < info.nin; ++i)
        if (d[i] != d[0]) return no("inputs must share a dtype");
      if (!(kind_bit(d[0]) & info.kinds)) return no("no loop for this input dtype");
      for (uint32_t i = info.nin; i < count; ++i)
        if (d[i] != NPVK_BOOL) return no("the output must be bool");
      return true;
    case LoopRule::TrueDivide:
      if (d[0] != d[1]) return no("inputs must share a dtype");
      if (!(kind_bit(d[0]) & info.kinds)) return no("no loop for this input dtype");
      if (is_float(d[0]) ? d[2] != d[0] : d[2] != NPVK_FLOAT64)
        return no("true_divide outputs float64 for integers and the input dtype for floats");
      return true;
    case LoopRule::Ldexp:
      if (!(kind_bit(d[0]) & info.kinds)) return no("no loop for this dtype");
      if (d[1] != NPVK_INT32 && d[1] != NPVK_INT64)
        return no("the exponent must be int32 or int64");
      if (d[2] != d[0]) return no("the output must have the first input's dtype");
      return true;
    case LoopRule::Frexp:
      if (!(kind_bit(d[0]) & info.kinds)) return no("no loop for this dtype");
      if (d[1] != d[0]) return no("the mantissa must have the input's dtype");
      if (d[2] != NPVK_INT32) return no("the exponent must be int32");
      return true;
    case LoopRule::Same:
      for (uint32_t i = 1; i < count; ++i)
        if (d[i] != d[0]) return no("all operands must share a dtype");
      if (!(kind_bit(d[0]) & info.kinds)) return no("no loop for this dtype");
      return true;
  }
  return no("unknown loop rule");
}

}  // namespace npvk
