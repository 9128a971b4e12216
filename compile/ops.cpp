#include "compile/ops.hpp"

#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"

namespace npvk {
namespace {

constexpr bool Y = true;   // implemented
constexpr bool N = false;  // declared only
using R = LoopRule;

// Indexed by npvk_op; loop signatures after NumPy's ufunc type lists (those
// of NumPy 2, which adds bool and integer floor, ceil and trunc to 1.24's).
const OpInfo kOps[NPVK_OP_COUNT] = {
    {NPVK_OP_ADD, "add", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_SUBTRACT, "subtract", 2, 1, Y, R::Same, kNumeric},
    {NPVK_OP_MULTIPLY, "multiply", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_TRUE_DIVIDE, "true_divide", 2, 1, Y, R::TrueDivide, kNumeric},
    {NPVK_OP_FLOOR_DIVIDE, "floor_divide", 2, 1, Y, R::Same, kNumeric},
    {NPVK_OP_REMAINDER, "remainder", 2, 1, Y, R::Same, kNumeric},
    {NPVK_OP_FMOD, "fmod", 2, 1, Y, R::Same, kNumeric},
    {NPVK_OP_DIVMOD, "divmod", 2, 2, Y, R::Same, kNumeric},
    {NPVK_OP_NEGATIVE, "negative", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_POSITIVE, "positive", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_ABSOLUTE, "absolute", 1, 1, Y, R::Same, kAll},
    {NPVK_OP_FABS, "fabs", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_SIGN, "sign", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_HEAVISIDE, "heaviside", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_RECIPROCAL, "reciprocal", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_SQUARE, "square", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_SQRT, "sqrt", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_CBRT, "cbrt", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_POWER, "power", 2, 1, Y, R::Same, kNumeric},
    {NPVK_OP_FLOAT_POWER, "float_power", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_CONJUGATE, "conjugate", 1, 1, Y, R::Same, kNumeric},
    {NPVK_OP_EXP, "exp", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_EXP2, "exp2", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_EXPM1, "expm1", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOG, "log", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOG2, "log2", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOG10, "log10", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOG1P, "log1p", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOGADDEXP, "logaddexp", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_LOGADDEXP2, "logaddexp2", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_SIN, "sin", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_COS, "cos", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_TAN, "tan", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCSIN, "arcsin", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCCOS, "arccos", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCTAN, "arctan", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCTAN2, "arctan2", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_HYPOT, "hypot", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_SINH, "sinh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_COSH, "cosh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_TANH, "tanh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCSINH, "arcsinh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCCOSH, "arccosh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_ARCTANH, "arctanh", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_DEG2RAD, "deg2rad", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_RAD2DEG, "rad2deg", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_RINT, "rint", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_FLOOR, "floor", 1, 1, Y, R::Same, kAll},
    {NPVK_OP_CEIL, "ceil", 1, 1, Y, R::Same, kAll},
    {NPVK_OP_TRUNC, "trunc", 1, 1, Y, R::Same, kAll},
    {NPVK_OP_COPYSIGN, "copysign", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_NEXTAFTER, "nextafter", 2, 1, Y, R::Same, kFloat},
    {NPVK_OP_SPACING, "spacing", 1, 1, Y, R::Same, kFloat},
    {NPVK_OP_LDEXP, "ldexp", 2, 1, Y, R::Ldexp, kFloat},
    {NPVK_OP_FREXP, "frexp", 1, 2, Y, R::Frexp, kFloat},
    {NPVK_OP_MODF, "modf", 1, 2, Y, R::Same, kFloat},
    {NPVK_OP_ISNAN, "isnan", 1, 1, Y, R::ToBool, kAll},
    {NPVK_OP_ISINF, "isinf", 1, 1, Y, R::ToBool, kAll},
    {NPVK_OP_ISFINITE, "isfinite", 1, 1, Y, R::ToBool, kAll},
    {NPVK_OP_SIGNBIT, "signbit", 1, 1, Y, R::ToBool, kFloat},
    {NPVK_OP_GCD, "gcd", 2, 1, Y, R::Same, kInt},
    {NPVK_OP_LCM, "lcm", 2, 1, Y, R::Same, kInt},
    {NPVK_OP_LEFT_SHIFT, "left_shift", 2, 1, Y, R::Same, kInt},
    {NPVK_OP_RIGHT_SHIFT, "right_shift", 2, 1, Y, R::Same, kInt},
    {NPVK_OP_BITWISE_AND, "bitwise_and", 2, 1, Y, R::Same, kBool | kInt},
    {NPVK_OP_BITWISE_OR, "bitwise_or", 2, 1, Y, R::Same, kBool | kInt},
    {NPVK_OP_BITWISE_XOR, "bitwise_xor", 2, 1, Y, R::Same, kBool | kInt},
    {NPVK_OP_INVERT, "invert", 1, 1, Y, R::Same, kBool | kInt},
    {NPVK_OP_LOGICAL_AND, "logical_and", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_LOGICAL_OR, "logical_or", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_LOGICAL_XOR, "logical_xor", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_LOGICAL_NOT, "logical_not", 1, 1, Y, R::ToBool, kAll},
    {NPVK_OP_EQUAL, "equal", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_NOT_EQUAL, "not_equal", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_LESS, "less", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_LESS_EQUAL, "less_equal", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_GREATER, "greater", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_GREATER_EQUAL, "greater_equal", 2, 1, Y, R::ToBool, kAll},
    {NPVK_OP_MAXIMUM, "maximum", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_MINIMUM, "minimum", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_FMAX, "fmax", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_FMIN, "fmin", 2, 1, Y, R::Same, kAll},
    {NPVK_OP_CLIP, "clip", 3, 1, Y, R::Same, kAll},
    {NPVK_OP_WHERE, "where", 3, 1, Y, R::Where, kAll},
    {NPVK_OP_CAST, "cast", 1, 1, Y, R::Cast, kAll},
};

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
  switch (op) {
    case NPVK_OP_EQUAL:
    case NPVK_OP_NOT_EQUAL:
    case NPVK_OP_LESS:
    case NPVK_OP_LESS_EQUAL:
    case NPVK_OP_GREATER:
    case NPVK_OP_GREATER_EQUAL:
      return true;
    default:
      return false;
  }
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
    // NumPy 1.24 has no float16 loop of float_power (it computes in float64).
    if (d[i] == NPVK_FLOAT16 && info.op == NPVK_OP_FLOAT_POWER) return no("no loop for this dtype");
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
      if (is_comparison(info.op) && info.nin == 2 && is_mixed_int64_pair(d[0], d[1])) {
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
