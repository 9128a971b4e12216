#include "compile/codegen.hpp"

#include <set>
#include <sstream>
#include <tuple>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/ops.hpp"

namespace npvk {

const char *embedded_shader(const char *name);  // generated from shaders/*.glsl

namespace glsl {

std::string shader_text(const char *name) {
  const char *text = embedded_shader(name);
  require(text != nullptr, NPVK_ERR_INTERNAL, std::string("missing embedded shader ") + name);
  return text;
}

// The compute type an op's loop works in, which is its first input's.
const DtypeInfo &loop_type(const KernelSpec &s) {
  return dtype_info(s.operands[0].dtype);
}

// The float64 math function an op's float loops call (float32 computes in
// float64 and rounds once), or null.
const char *math_f64_function(npvk_op op) {
  switch (op) {
    case NPVK_OP_EXP:
      return "npvk_exp_f64";
    case NPVK_OP_LOG:
      return "npvk_log_f64";
    case NPVK_OP_POWER:
    case NPVK_OP_FLOAT_POWER:
      return "npvk_pow_f64";
    case NPVK_OP_EXP2:
      return "npvk_exp2_f64";
    case NPVK_OP_EXPM1:
      return "npvk_expm1_f64";
    case NPVK_OP_LOG2:
      return "npvk_log2_f64";
    case NPVK_OP_LOG10:
      return "npvk_log10_f64";
    case NPVK_OP_LOG1P:
      return "npvk_log1p_f64";
    case NPVK_OP_LOGADDEXP:
      return "npvk_logaddexp_f64";
    case NPVK_OP_LOGADDEXP2:
      return "npvk_logaddexp2_f64";
    case NPVK_OP_CBRT:
      return "npvk_cbrt_f64";
    case NPVK_OP_SIN:
      return "npvk_sin_f64";
    case NPVK_OP_COS:
      return "npvk_cos_f64";
    case NPVK_OP_TAN:
      return "npvk_tan_f64";
    case NPVK_OP_ARCSIN:
      return "npvk_asin_f64";
    case NPVK_OP_ARCCOS:
      return "npvk_acos_f64";
    case NPVK_OP_ARCTAN:
      return "npvk_atan_f64";
    case NPVK_OP_ARCTAN2:
      return "npvk_atan2_f64";
    case NPVK_OP_HYPOT:
      return "npvk_hypot_f64";
    case NPVK_OP_SINH:
      return "npvk_sinh_f64";
    case NPVK_OP_COSH:
      return "npvk_cosh_f64";
    case NPVK_OP_TANH:
      return "npvk_tanh_f64";
    case NPVK_OP_ARCSINH:
      return "npvk_asinh_f64";
    case NPVK_OP_ARCCOSH:
      return "npvk_acosh_f64";
    case NPVK_OP_ARCTANH:
      return "npvk_atanh_f64";
    default:
      return nullptr;
  }
}

bool uses_math_f64(const KernelSpec &s) {
  if (!is_float(s.operands[0].dtype)) return false;
  switch (s.op) {
    case NPVK_OP_FMOD:
    case NPVK_OP_REMAINDER:
    case NPVK_OP_FLOOR_DIVIDE:
    case NPVK_OP_DIVMOD:
      return true;
    default:
      return math_f64_function(s.op) != nullptr;
  }
}

// "C(0)" in the compute type of `d`.
std::string zero(const DtypeInfo &d) {
  return std::string(d.glsl_compute) + "(0)";
}

// C's truthiness of a value in compute type `d`; NaN is true.
std::string truth(const DtypeInfo &d, const std::string &x) {
  switch (d.kind) {
    case DtypeKind::Bool:
      return x;
    case DtypeKind::Float:
      return "!(" + x + " == " + zero(d) + ")";
    default:
      return "(" + x + " != " + zero(d) + ")";
  }
}

std::string cast_expr(const DtypeInfo &from, const DtypeInfo &to, const std::string &x) {
  // float16 values are exact in float32, from which NumPy converts them on.
  // To float16, NumPy rounds float64 once (npy_double_to_half) and everything
  // else through float32 (npy_float_to_half((float)x)).
  if (from.dtype == NPVK_FLOAT16 && to.dtype == NPVK_FLOAT64)
    return "npvk_half_to_double(" + x + ")";
  if (from.dtype == NPVK_FLOAT16 && to.dtype != NPVK_FLOAT16)
    return cast_expr(dtype_info(NPVK_FLOAT32), to, x);
  if (to.dtype == NPVK_FLOAT16 && from.dtype != NPVK_FLOAT16) {
    if (from.dtype == NPVK_FLOAT64) return "npvk_double_to_half(" + x + ")";
    return "npvk_round_half(" + cast_expr(from, dtype_info(NPVK_FLOAT32), x) + ")";
  }
  if (to.kind == DtypeKind::Bool) return truth(from, x);
  if (from.kind == DtypeKind::Bool) return std::string(to.glsl_compute) + "(" + x + " ? 1 : 0)";
  if (from.kind == DtypeKind::Float && to.kind != DtypeKind::Float) {
    // C's float-to-integer conversion as x86 compilers emit it for NumPy: via
    // a signed integer wide enough for the target, then truncation.
    switch (to.dtype) {
      case NPVK_UINT8:
      case NPVK_UINT16:
        return "uint(int(" + x + "))";
      case NPVK_UINT32:
        return "uint(int64_t(" + x + "))";
      default:
        return std::string(to.glsl_compute) + "(" + x + ")";
    }
  }
  if (std::string(from.glsl_compute) == to.glsl_compute) return x;
  return std::string(to.glsl_compute) + "(" + x + ")";
}

// A comparison of int64 with uint64 by value (NumPy 2's qQ->? and Qq->?
// loops): a negative int64 is below every uint64; otherwise both compare as
// uint64.
static std::string mixed_int64_comparison(npvk_op op, bool signed_first, const std::string &x,
                                          const std::string &y) {
  const char *o = op == NPVK_OP_EQUAL        ? "=="
                  : op == NPVK_OP_NOT_EQUAL  ? "!="
                  : op == NPVK_OP_LESS       ? "<"
                  : op == NPVK_OP_LESS_EQUAL ? "<="
                  : op == NPVK_OP_GREATER    ? ">"
                                             : ">=";
  // The result when the signed operand is negative: the first operand is then
  // below the second (signed first) or above it (unsigned first).
  const bool below = op == NPVK_OP_LESS || op == NPVK_OP_LESS_EQUAL || op == NPVK_OP_NOT_EQUAL;
  const bool above =
      op == NPVK_OP_GREATER || op == NPVK_OP_GREATER_EQUAL || op == NPVK_OP_NOT_EQUAL;
  const std::string negative = signed_first ? x : y;
  const std::string when_negative = (signed_first ? below : above) ? "true" : "false";
  const std::string ux = signed_first ? "uint64_t(" + x + ")" : x;
  const std::string uy = signed_first ? y : "uint64_t(" + y + ")";
  return "(" + negative + " < int64_t(0) ? " + when_negative + " : (" + ux + " " + o + " " + uy +
         "))";
}

// The math of one op on loaded inputs a[0..nin), in the loop's compute type.
// Ops with two outputs return the first; a[nin] names the variable that
// receives the second (an `out` argument of their GLSL function).
std::string op_expr(const KernelSpec &s, const std::vector<std::string> &a) {
  const DtypeInfo &t = loop_type(s);
  const bool b = t.kind == DtypeKind::Bool, f = t.kind == DtypeKind::Float;
  const bool u = t.kind == DtypeKind::Unsigned;
  // float16 loops compute as float32's (the caller rounds the result).
  const bool h = t.dtype == NPVK_FLOAT16;
  const bool f32 = t.dtype == NPVK_FLOAT32 || h;
  auto call = [&](const char *fn, size_t n) {
    std::string r = std::string(fn) + "(";
    for (size_t i = 0; i < n; ++i) r += (i ? ", " : "") + a[i];
    return r + ")";
  };
  // float32 transcendentals: computed in float64 and rounded once.
  auto math = [&](const char *fn64, size_t n) {
    if (!f32) return call(fn64, n);
    std::string r = std::string("float(") + fn64 + "(";
    for (size_t i = 0; i < n; ++i) r += (i ? ", " : "") + std::string("double(") + a[i] + ")";
    return r + "))";
  };
  auto bin = [&](const char *o) { return "(" + a[0] + " " + o + " " + a[1] + ")"; };
  // GLSL has no ordering of bools.
  auto cmp = [&](const char *o) {
    return b ? "(int(" + a[0] + ") " + o + " int(" + a[1] + "))" : bin(o);
  };
  if (s.nin == 2 && is_comparison(s.op) &&
      is_mixed_int64_pair(s.operands[0].dtype, s.operands[1].dtype))
    return mixed_int64_comparison(s.op, s.operands[0].dtype == NPVK_INT64, a[0], a[1]);
  switch (s.op) {
    case NPVK_OP_ADD:
      return b ? bin("||") : bin("+");
    case NPVK_OP_SUBTRACT:
      return bin("-");
    case NPVK_OP_MULTIPLY:
      return b ? bin("&&") : bin("*");
    case NPVK_OP_TRUE_DIVIDE:
      return f ? bin("/") : "(double(" + a[0] + ") / double(" + a[1] + "))";
    case NPVK_OP_FLOOR_DIVIDE:
      return call("npvk_floor_divide", 2);
    case NPVK_OP_REMAINDER:
      return call("npvk_remainder", 2);
    case NPVK_OP_FMOD:
      return call("npvk_fmod", 2);
    case NPVK_OP_DIVMOD:
      return call("npvk_divmod_pair", 3);
    case NPVK_OP_MODF:
      return call("npvk_modf", 2);
    case NPVK_OP_FREXP:
      return call("npvk_frexp", 2);
    case NPVK_OP_NEGATIVE:
      return u ? "(" + zero(t) + " - " + a[0] + ")" : "(-" + a[0] + ")";
    case NPVK_OP_POSITIVE:
      return a[0];
    case NPVK_OP_ABSOLUTE:
      if (f) return call("npvk_fabs", 1);
      if (t.kind == DtypeKind::Signed)
        return "(" + a[0] + " < " + zero(t) + " ? -" + a[0] + " : " + a[0] + ")";
      return a[0];
    case NPVK_OP_FABS:
      return call("npvk_fabs", 1);
    case NPVK_OP_SQUARE:
      return "(" + a[0] + " * " + a[0] + ")";
    case NPVK_OP_SQRT:
      return call("sqrt", 1);
    case NPVK_OP_POWER:
      return f ? math("npvk_pow_f64", 2) : call("npvk_power", 2);
    case NPVK_OP_CONJUGATE:
      return a[0];
    case NPVK_OP_SIGN:
      return call("npvk_sign", 1);
    case NPVK_OP_HEAVISIDE:
      return call("npvk_heaviside", 2);
    case NPVK_OP_RECIPROCAL:
      return f ? "(" + std::string(t.glsl_compute) + "(1) / " + a[0] + ")"
               : call("npvk_reciprocal", 1);
    // NumPy multiplies by the constant rounded in the loop's type: float32's is
    // float(float(pi) / 180), float64's double(pi / 180).
    case NPVK_OP_DEG2RAD:
      return "(" + a[0] +
             (f32 ? " * uintBitsToFloat(0x3c8efa35u))"
                  : " * uint64BitsToDouble(0x3f91df46a2529d39ul))");
    case NPVK_OP_RAD2DEG:
      return "(" + a[0] +
             (f32 ? " * uintBitsToFloat(0x42652ee0u))"
                  : " * uint64BitsToDouble(0x404ca5dc1a63c1f8ul))");
    case NPVK_OP_NEXTAFTER:
      return call(h ? "npvk_nextafter_half" : "npvk_nextafter", 2);
    case NPVK_OP_SPACING:
      return call(h ? "npvk_spacing_half" : "npvk_spacing", 1);
    case NPVK_OP_LDEXP: {
      // C's int exponent: NumPy clamps an int64 one to INT_MIN..INT_MAX; anything past
      // +-4000 already gives 0 or inf.
      const std::string e = dtype_info(s.operands[1].dtype).glsl_compute;
      return "npvk_ldexp(" + a[0] + ", int(clamp(" + a[1] + ", " + e + "(-4000), " + e +
             "(4000))))";
    }
    case NPVK_OP_GCD:
      return call("npvk_gcd", 2);
    case NPVK_OP_LCM:
      return call("npvk_lcm", 2);
    case NPVK_OP_MAXIMUM:
    case NPVK_OP_FMAX:
      if (b) return bin("||");
      if (h) return call(s.op == NPVK_OP_MAXIMUM ? "npvk_maximum_half" : "npvk_fmax_half", 2);
      if (f) return call(s.op == NPVK_OP_MAXIMUM ? "npvk_maximum" : "npvk_fmax", 2);
      return "(" + a[0] + " >= " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
    case NPVK_OP_MINIMUM:
    case NPVK_OP_FMIN:
      if (b) return bin("&&");
      if (h) return call(s.op == NPVK_OP_MINIMUM ? "npvk_minimum_half" : "npvk_fmin_half", 2);
      if (f) return call(s.op == NPVK_OP_MINIMUM ? "npvk_minimum" : "npvk_fmin", 2);
      return "(" + a[0] + " <= " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
    case NPVK_OP_CLIP: {
      // NumPy's clip loop: minimum(maximum(x, lo), hi), where a NaN first
      // operand wins each step (a NaN bound gives NaN for every element).
      // float16's loop keeps the first of equal operands (npy_half_ge/le).
      if (b) return "((" + a[0] + " || " + a[1] + ") && " + a[2] + ")";
      if (h)
        return "npvk_minimum_half(npvk_maximum_half(" + a[0] + ", " + a[1] + "), " + a[2] + ")";
      if (f) return "npvk_minimum(npvk_maximum(" + a[0] + ", " + a[1] + "), " + a[2] + ")";
      const std::string low = "(" + a[0] + " >= " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
      return "(" + low + " <= " + a[2] + " ? " + low + " : " + a[2] + ")";
    }
    case NPVK_OP_EQUAL:
      return bin("==");
    case NPVK_OP_NOT_EQUAL:
      return "!" + bin("==");
    case NPVK_OP_LESS:
      return cmp("<");
    case NPVK_OP_LESS_EQUAL:
      return cmp("<=");
    case NPVK_OP_GREATER:
      return cmp(">");
    case NPVK_OP_GREATER_EQUAL:
      return cmp(">=");
    case NPVK_OP_LOGICAL_AND:
      return "(" + truth(t, a[0]) + " && " + truth(t, a[1]) + ")";
    case NPVK_OP_LOGICAL_OR:
      return "(" + truth(t, a[0]) + " || " + truth(t, a[1]) + ")";
    case NPVK_OP_LOGICAL_XOR:
      return "(" + truth(t, a[0]) + " != " + truth(t, a[1]) + ")";
    case NPVK_OP_LOGICAL_NOT:
      return "!" + truth(t, a[0]);
    case NPVK_OP_BITWISE_AND:
      return b ? bin("&&") : bin("&");
    case NPVK_OP_BITWISE_OR:
      return b ? bin("||") : bin("|");
    case NPVK_OP_BITWISE_XOR:
      return b ? bin("!=") : bin("^");
    case NPVK_OP_INVERT:
      return b ? "!" + a[0] : "~" + a[0];
    case NPVK_OP_LEFT_SHIFT:
      return call("npvk_left_shift", 2);
    case NPVK_OP_RIGHT_SHIFT:
      return call("npvk_right_shift", 2);
    // NumPy 2's bool and integer loops return their input.
    case NPVK_OP_FLOOR:
      return f ? call("floor", 1) : a[0];
    case NPVK_OP_CEIL:
      return f ? call("ceil", 1) : a[0];
    case NPVK_OP_TRUNC:
      return f ? call("trunc", 1) : a[0];
    case NPVK_OP_RINT:
      return call("roundEven", 1);
    case NPVK_OP_COPYSIGN:
      return call("npvk_copysign", 2);
    // NumPy's bool and integer loops: never NaN or infinite.
    case NPVK_OP_ISNAN:
      return f ? call("npvk_isnan", 1) : "false";
    case NPVK_OP_ISINF:
      return f ? call("npvk_isinf", 1) : "false";
    case NPVK_OP_ISFINITE:
      return f ? call("npvk_isfinite", 1) : "true";
    case NPVK_OP_SIGNBIT:
      return call("npvk_signbit", 1);
    case NPVK_OP_WHERE:
      return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    case NPVK_OP_CAST:
      return cast_expr(t, dtype_info(s.operands[1].dtype), a[0]);
    default:
      if (const char *fn = f ? math_f64_function(s.op) : nullptr)
        return math(fn, op_info(s.op).nin);
      fail(NPVK_ERR_UNSUPPORTED, std::string("no kernel for ") + op_info(s.op).name);
  }
}

// The compute type of the op's result (the first output).
const DtypeInfo &result_type(const KernelSpec &s) {
  return dtype_info(s.operands[s.nin].dtype);
}

// A scalar slot's value from its 64 bits.
std::string scalar_load(const DtypeInfo &d, const std::string &bits) {
  switch (d.dtype) {
    case NPVK_BOOL:
      return "(" + bits + " != 0ul)";
    case NPVK_FLOAT16:
      return "npvk_half_to_float(uint(" + bits + "))";
    case NPVK_FLOAT32:
      return "uintBitsToFloat(uint(" + bits + "))";
    case NPVK_FLOAT64:
      return "uint64BitsToDouble(" + bits + ")";
    case NPVK_UINT64:
      return bits;
    default:
      return std::string(d.glsl_compute) + "(" + bits + ")";
  }
}

std::string element_ref(const DtypeInfo &d, const std::string &base, const std::string &offset) {
  return std::string("Ref_") + d.suffix + "(" + base + " + uint64_t(" + offset + ") * " +
         std::to_string(d.itemsize) + "ul).v";
}

void emit_int_template(std::ostringstream &out, const char *type, bool is_signed, int bits) {
  out << "#define NPVK_T " << type << "\n#define NPVK_SIGNED " << (is_signed ? 1 : 0)
      << "\n#define NPVK_BITS " << bits << "\n"
      << shader_text("ops_int.glsl") << "\n#undef NPVK_T\n#undef NPVK_SIGNED\n#undef NPVK_BITS\n";
}

void emit_float_template(std::ostringstream &out, bool f64, bool divmod) {
  if (f64) {
    out << "#define NPVK_F double\n#define NPVK_U uint64_t\n"
           "#define NPVK_TO_BITS(x) doubleBitsToUint64(x)\n"
           "#define NPVK_FROM_BITS(x) uint64BitsToDouble(x)\n"
           "#define NPVK_SIGN_MASK 0x8000000000000000ul\n"
           "#define NPVK_EXP_MASK 0x7ff0000000000000ul\n"
           "#define NPVK_FMOD npvk_fmod_f64\n";
  } else {
    out << "#define NPVK_F float\n#define NPVK_U uint\n"
           "#define NPVK_TO_BITS(x) floatBitsToUint(x)\n"
           "#define NPVK_FROM_BITS(x) uintBitsToFloat(x)\n"
           "#define NPVK_SIGN_MASK 0x80000000u\n"
           "#define NPVK_EXP_MASK 0x7f800000u\n"
           "#define NPVK_FMOD npvk_fmod_f32\n";
  }
  out << shader_text("ops_float.glsl") << "\n";
  if (divmod) out << shader_text("ops_float_divmod.glsl") << "\n";
  out << "#undef NPVK_F\n#undef NPVK_U\n#undef NPVK_TO_BITS\n#undef NPVK_FROM_BITS\n"
         "#undef NPVK_SIGN_MASK\n#undef NPVK_EXP_MASK\n#undef NPVK_FMOD\n";
}

// Bit tests that no driver optimisation can fold away.
std::string is_nan(const DtypeInfo &d, const std::string &x) {
  if (d.kind != DtypeKind::Float && std::string(d.glsl_compute) != "double") return "false";
  return std::string(d.glsl_compute) == "double"
             ? "((doubleBitsToUint64(" + x + ") & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL)"
             : "((floatBitsToUint(" + x + ") & 0x7fffffffu) > 0x7f800000u)";
}
std::string is_finite(const DtypeInfo &d, const std::string &x) {
  if (d.kind != DtypeKind::Float && std::string(d.glsl_compute) != "double") return "true";
  // The exponent is in the high word: 32-bit operations are cheaper on some
  // devices (lavapipe) than 64-bit ones.
  return std::string(d.glsl_compute) == "double"
             ? "((unpackDouble2x32(" + x + ").y & 0x7ff00000u) != 0x7ff00000u)"
             : "((floatBitsToUint(" + x + ") & 0x7f800000u) != 0x7f800000u)";
}

// True where a float op is at its pole: the infinities NumPy's loops report
// there are divisions by zero, not overflows.
std::string zero_division_test(const KernelSpec &s, const std::vector<std::string> &a) {
  const DtypeInfo &in = loop_type(s);
  switch (s.op) {
    case NPVK_OP_TRUE_DIVIDE:
    case NPVK_OP_FLOOR_DIVIDE:
    case NPVK_OP_DIVMOD:
      return a[1] + " == " + zero(in);
    case NPVK_OP_LOG:
    case NPVK_OP_LOG2:
    case NPVK_OP_LOG10:
    case NPVK_OP_RECIPROCAL:
    case NPVK_OP_POWER:
    case NPVK_OP_FLOAT_POWER:
      return a[0] + " == " + zero(in);
    case NPVK_OP_LOG1P:
      return a[0] + " == " + std::string(in.glsl_compute) + "(-1)";
    case NPVK_OP_ARCTANH:
      return "abs(" + a[0] + ") == " + std::string(in.glsl_compute) + "(1)";
    default:
      return "false";
  }
}

// The floating-point exceptions NumPy's loop would raise for this element,
// OR-ed into the dispatch's flag word (docs/ops.md, "Floating-point errors"):
// a NaN from non-NaN inputs is invalid; an infinity from finite inputs is a
// division by zero where the op divides by (or takes the log of, or raises to
// a negative power) zero, else an overflow. Integer division by zero is a
// division by zero; signed floor_divide of MIN by -1 is an overflow (NumPy's
// loop warns; remainder and fmod of it are 0 and quiet). Underflow is not
// reported (NumPy ignores it by default).
//
// An infinity counts as brought only from the first finite_inputs(s)
// operands, a NaN from the first nan_inputs(s): nextafter overflows when a
// finite x steps to inf (toward y = inf), and NumPy's half spacing raises
// invalid for a NaN too (npy_half_spacing).
uint32_t nan_inputs(const KernelSpec &s) {
  return s.op == NPVK_OP_SPACING && s.operands[0].dtype == NPVK_FLOAT16 ? 0 : s.nin;
}
uint32_t finite_inputs(const KernelSpec &s) {
  return s.op == NPVK_OP_NEXTAFTER ? 1 : nan_inputs(s);
}

std::string fp_flags_code(const KernelSpec &s, const std::vector<std::string> &a,
                          const std::string &flags) {
  const DtypeInfo &in = loop_type(s);
  const DtypeInfo &res = result_type(s);
  std::string code;
  if (s.op == NPVK_OP_CAST || s.op == NPVK_OP_WHERE) return code;
  if (res.kind == DtypeKind::Float || std::string(res.glsl_compute) == "double") {
    std::string any_nan = "false", all_finite = "true";
    for (uint32_t k = 0; k < nan_inputs(s); ++k) any_nan += " || " + is_nan(in, a[k]);
    for (uint32_t k = 0; k < finite_inputs(s); ++k) all_finite += " && " + is_finite(in, a[k]);
    const std::string zero_division = zero_division_test(s, a);
    // Only a NaN or infinite result can raise anything: one test of the
    // result's exponent per element, the rest in the rare branch.
    code += "    if (!" + is_finite(res, "r") + ") {\n";
    code += "    uint fpe = 0u;\n";
    code += "    if (" + is_nan(res, "r") + " && !(" + any_nan + ")) fpe |= 8u;\n";
    code += "    if (!" + is_nan(res, "r") + " && (" + all_finite + ")) fpe |= (" + zero_division +
            ") ? 1u : 2u;\n";
    code += "    if (fpe != 0u) atomicOr(FpFlags(" + flags + ").v, fpe);\n    }\n";
    return code;
  } else if (is_integer(in.dtype) && (s.op == NPVK_OP_FLOOR_DIVIDE || s.op == NPVK_OP_REMAINDER ||
                                      s.op == NPVK_OP_FMOD || s.op == NPVK_OP_DIVMOD)) {
    code += "    uint fpe = (" + a[1] + " == " + zero(in) + ") ? 1u : 0u;\n";
    const bool floors = s.op == NPVK_OP_FLOOR_DIVIDE || s.op == NPVK_OP_DIVMOD;
    if (floors && in.kind == DtypeKind::Signed) {
      // MIN is written as -MAX - 1: the literal MIN itself overflows in GLSL.
      const std::string t = in.glsl_compute, l = in.itemsize == 8 ? "l" : "";
      const std::string max = std::to_string((uint64_t(1) << (in.itemsize * 8 - 1)) - 1);
      code += "    if (" + a[1] + " == " + t + "(-1) && " + a[0] + " == " + t + "(-" + max + l +
              ") - " + t + "(1)) fpe |= 2u;\n";
    }
  } else {
    return code;
  }
  // Rare, so the atomic costs nothing in the common case.
  code += "    if (fpe != 0u) atomicOr(FpFlags(" + flags + ").v, fpe);\n";
  return code;
}

// Each op's FP exceptions on one element, without a branch (used where the
// element cannot be recomputed; see generate_glsl). A float value's class
// is 0 finite, 1 infinite, 3 NaN. An op raises only what its operands did
// not bring: t = class(r) & ~(operands' classes) is 1 for a new infinity
// (overflow, or division by zero at the op's pole) and 2 or 3 for a new NaN
// (invalid). Each op ORs 1 << t into a register of its own, which
// fp_flags_publish turns into NumPy's flag bits once per invocation.
std::string fp_class(const DtypeInfo &d, const std::string &x) {
  if (d.kind != DtypeKind::Float && std::string(d.glsl_compute) != "double") return "0u";
  return "(" + is_finite(d, x) + " ? 0u : (" + is_nan(d, x) + " ? 3u : 1u))";
}

std::string fp_flags_accumulate(const KernelSpec &s, const std::vector<std::string> &a,
                                const std::vector<std::string> &operand_class,
                                const std::string &result_class, const std::string &acc) {
  std::string brought = "0u";
  for (uint32_t k = 0; k < nan_inputs(s); ++k)
    brought += " | " + (k < finite_inputs(s) ? operand_class[k]
                                             : "(" + operand_class[k] + " == 3u ? 3u : 0u)");
  std::string code = "    uint t = " + result_class + " & ~(" + brought + ");\n";
  const std::string pole = zero_division_test(s, a);
  // npy_divmod's quotient that overflows also raises invalid: its rounding
  // step computes inf - floor(inf).
  const bool floors =
      is_float(s.operands[0].dtype) && (s.op == NPVK_OP_FLOOR_DIVIDE || s.op == NPVK_OP_DIVMOD);
  const std::string infinity = floors ? "(t == 1u ? 10u : (1u << t))" : "(1u << t)";
  if (pole == "false") return code + "    " + acc + " |= " + infinity + ";\n";
  return code + "    " + acc + " |= (t == 1u && (" + pole + ")) ? 16u : " + infinity + ";\n";
}

std::string fp_flags_publish(const std::string &acc, const std::string &flags) {
  return "  {\n    uint f = ((" + acc + " & 2u) != 0u ? 2u : 0u) | ((" + acc +
         " & 12u) != 0u ? 8u : 0u) | ((" + acc + " & 16u) != 0u ? 1u : 0u);\n" +
         "    if (f != 0u) atomicOr(FpFlags(" + flags + ").v, f);\n  }\n";
}

}  // namespace glsl

using namespace glsl;

namespace glsl {

// Ops whose float16 result is a float16 value without rounding: bit
// operations, selections, and exact ones (floor of a half, its fraction).
bool exact_in_half(npvk_op op) {
  switch (op) {
    case NPVK_OP_POSITIVE:
    case NPVK_OP_NEGATIVE:
    case NPVK_OP_ABSOLUTE:
    case NPVK_OP_FABS:
    case NPVK_OP_CONJUGATE:
    case NPVK_OP_SIGN:
    case NPVK_OP_HEAVISIDE:
    case NPVK_OP_COPYSIGN:
    case NPVK_OP_MAXIMUM:
    case NPVK_OP_MINIMUM:
    case NPVK_OP_FMAX:
    case NPVK_OP_FMIN:
    case NPVK_OP_CLIP:
    case NPVK_OP_NEXTAFTER:
    case NPVK_OP_SPACING:
    case NPVK_OP_FLOOR:
    case NPVK_OP_CEIL:
    case NPVK_OP_TRUNC:
    case NPVK_OP_RINT:
    case NPVK_OP_MODF:
    case NPVK_OP_FREXP:
    case NPVK_OP_WHERE:
    case NPVK_OP_CAST:  // cast_expr rounds
      return true;
    default:
      return false;
  }
}

}  // namespace glsl

bool needs_float64(const KernelSpec &s) {
  for (uint32_t k = 0; k < s.count(); ++k)
    if (s.operands[k].dtype == NPVK_FLOAT64) return true;
  // Integer loops divide in float64.
  if (s.op == NPVK_OP_TRUE_DIVIDE && !is_float(s.operands[0].dtype)) return true;
  return uses_math_f64(s);
}

std::string KernelSpec::key() const {
  std::string k = op_info(op).name;
  k += "(";
  for (uint32_t i = 0; i < count(); ++i) {
    if (i == nin)
      k += ")->";
    else if (i)
      k += ",";
    k += dtype_info(operands[i].dtype).suffix;
    if (operands[i].scalar) k += "s";
  }
  return k + (contiguous ? "/c" : "/r" + std::to_string(rank));
}

std::string FusedKernelSpec::key() const {
  std::string k = "s:";
  for (size_t i = 0; i < slots.size(); ++i) {
    k += (i ? "," : "") + std::string(dtype_info(slots[i].dtype).suffix);
    if (slots[i].scalar) k += "s";
    if (!slots[i].stored) k += "-";
  }
  k += "|";
  for (size_t j = 0; j < steps.size(); ++j) {
    const KernelSpec &op = steps[j].op;
    k += (j ? ";" : "") + std::string(op_info(op.op).name) + "(";
    for (uint32_t i = 0; i < op.count(); ++i) {
      if (i == op.nin)
        k += ")->";
      else if (i)
        k += ",";
      k += std::to_string(steps[j].slot[i]);
    }
  }
  return k + (contiguous ? "/c" : "/r" + std::to_string(rank) + (narrow_index ? "n" : ""));
}

namespace glsl {

void Templates::add(const KernelSpec &op) {
  const DtypeInfo &loop = loop_type(op);
  math_f64 = math_f64 || uses_math_f64(op);
  for (uint32_t k = 0; k < op.count(); ++k)
    if (op.operands[k].dtype == NPVK_FLOAT16) {
      half = true;
      float_type[0] = true;  // the half helpers use the float32 ones
    }
  if (op.op == NPVK_OP_CAST) {
    const npvk_dtype from = op.operands[0].dtype, to = op.operands[1].dtype;
    half_f64 = half_f64 || (from == NPVK_FLOAT64 && to == NPVK_FLOAT16) ||
               (from == NPVK_FLOAT16 && to == NPVK_FLOAT64);
  }
  if (loop.kind == DtypeKind::Float) {
    const int f64 = loop.dtype == NPVK_FLOAT64;
    float_type[f64] = true;
    divmod[f64] = divmod[f64] || op.op == NPVK_OP_FMOD || op.op == NPVK_OP_REMAINDER ||
                  op.op == NPVK_OP_FLOOR_DIVIDE || op.op == NPVK_OP_DIVMOD;
  } else if (loop.kind != DtypeKind::Bool) {
    ints.emplace(loop.glsl_compute, loop.kind == DtypeKind::Signed, loop.itemsize == 8 ? 64 : 32);
  }
}

void Templates::emit(std::ostringstream &out) const {
  // The math library reads its constant tables from a buffer: a dynamically
  // indexed GLSL constant array is copied into every invocation's private
  // memory on some drivers (lavapipe), which costs more than the math.
  if (math_f64)
    out << "#define NPVK_F64_TABLES pc.tables\n" << shader_text("math_f64.glsl") << "\n";
  for (int f64 = 0; f64 < 2; ++f64)
    if (float_type[f64]) emit_float_template(out, f64 != 0, divmod[f64]);
  if (half)
    out << (half_f64 ? "#define NPVK_HALF_F64\n" : "") << shader_text("ops_half.glsl") << "\n";
  for (const auto &t : ints)
    emit_int_template(out, std::get<0>(t).c_str(), std::get<1>(t), std::get<2>(t));
}

void emit_prologue(std::ostringstream &out, const std::string &key,
                   const std::set<npvk_dtype> &stored) {
  out << "#version 460\n// npvk kernel " << key << "\n"
      << "#extension GL_EXT_buffer_reference : require\n"
         "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
         "#extension GL_EXT_shader_8bit_storage : require\n"
         "#extension GL_EXT_shader_16bit_storage : require\n"
      << "layout(local_size_x = " << kWorkgroupSize << ") in;\n";
  for (npvk_dtype d : stored) {
    const DtypeInfo &di = dtype_info(d);
    out << "layout(buffer_reference, std430, buffer_reference_align = " << di.itemsize
        << ") buffer Ref_" << di.suffix << " { " << di.glsl_storage << " v; };\n";
  }
  out << "layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Meta "
         "{ int64_t v[]; };\n"
      << "layout(push_constant, std430) uniform Push {\n  uint64_t operand[" << kPushSlots
      << "];\n  uint64_t meta;\n  uint64_t count;\n  uint64_t tables;\n  uint64_t flags;\n} pc;\n"
      << "layout(buffer_reference, std430, buffer_reference_align = 4) buffer FpFlags { uint v; "
         "};\n";
}

std::string storage_value(const DtypeInfo &d, const std::string &r) {
  if (d.dtype == NPVK_FLOAT16) return "uint16_t(npvk_float_to_half_bits(" + r + "))";
  return d.kind == DtypeKind::Bool ? "uint8_t(" + r + " ? 1 : 0)"
                                   : std::string(d.glsl_storage) + "(" + r + ")";
}

// A stored element as a loop reads it, in its compute type.
std::string loaded_value(const DtypeInfo &d, const std::string &stored) {
  if (d.kind == DtypeKind::Bool) return "(" + stored + " != uint8_t(0))";
  if (d.dtype == NPVK_FLOAT16) return "npvk_half_to_float(uint(" + stored + "))";
  return std::string(d.glsl_compute) + "(" + stored + ")";
}

}  // namespace glsl

std::string generate_glsl(const FusedKernelSpec &s, const DeviceTraits &traits) {
  (void)traits;
  const uint32_t nslots = uint32_t(s.slots.size());
  require(nslots <= kMaxKernelSlots && !s.steps.empty(), NPVK_ERR_INTERNAL,
          "a kernel needs 1 to " + std::to_string(kMaxKernelSlots) + " slots and a step");
  std::ostringstream out;
  // Which memory slots the loop loads from or stores to.
  std::vector<bool> loaded(nslots, false), touched(nslots, false);
  // Slots an element loads and then overwrites (in-place updates).
  std::vector<bool> overwritten(nslots, false);
  {
    std::vector<bool> written(nslots, false);
    for (const FusedKernelSpec::Step &st : s.steps) {
      for (uint32_t k = 0; k < st.op.nin; ++k)
        if (!written[st.slot[k]] && !s.slots[st.slot[k]].scalar) loaded[st.slot[k]] = true;
      for (uint32_t k = st.op.nin; k < st.op.count(); ++k) written[st.slot[k]] = true;
    }
    for (uint32_t k = 0; k < nslots; ++k) {
      touched[k] = loaded[k] || (written[k] && s.slots[k].stored);
      overwritten[k] = loaded[k] && written[k] && s.slots[k].stored;
    }
  }
  std::set<npvk_dtype> stored_types;
  for (uint32_t k = 0; k < nslots; ++k)
    if (touched[k]) stored_types.insert(s.slots[k].dtype);
  emit_prologue(out, s.key(), stored_types);
  // Only a slot's last write in the kernel is stored: no other invocation
  // reads it meanwhile (the planner guarantees), and this one has the value
  // in a register.
  std::vector<size_t> last_write(nslots, 0);
  for (size_t j = 0; j < s.steps.size(); ++j)
    for (uint32_t k = s.steps[j].op.nin; k < s.steps[j].op.count(); ++k)
      last_write[s.steps[j].slot[k]] = j;
  Templates templates;
  for (const FusedKernelSpec::Step &st : s.steps) templates.add(st.op);
  templates.emit(out);

  // Slots past the push constants come first in the argument table.
  const uint32_t extra = nslots > kPushSlots ? nslots - kPushSlots : 0;
  out << "void main() {\n"
      << "  const uint64_t step = uint64_t(gl_NumWorkGroups.x) * " << kWorkgroupSize << "ul;\n";
  if (extra || !s.contiguous) out << "  Meta m = Meta(pc.meta);\n";
  // Each slot's address or scalar bits, and the value of scalars, once per
  // invocation; memory values per element.
  std::vector<std::string> base(nslots), value(nslots);
  for (uint32_t k = 0; k < nslots; ++k) {
    if (!touched[k] && !s.slots[k].scalar) continue;
    base[k] = "p" + std::to_string(k);
    out << "  const uint64_t " << base[k] << " = "
        << (k < kPushSlots ? "pc.operand[" + std::to_string(k) + "]"
                           : "uint64_t(m.v[" + std::to_string(k - kPushSlots) + "])")
        << ";\n";
    if (!s.slots[k].scalar) continue;
    const DtypeInfo &d = dtype_info(s.slots[k].dtype);
    value[k] = "c" + std::to_string(k);
    out << "  const " << d.glsl_compute << " " << value[k] << " = " << scalar_load(d, base[k])
        << ";\n";
  }
  // Floating-point exceptions. A float op raises something only where its
  // result is NaN or infinite, which is rare, but llvmpipe runs both sides
  // of every branch under a lane mask: a per-element rare branch costs what
  // the element costs. So the loop only notes whether any result was not
  // finite, and a second loop runs after it, in the invocations that noted
  // one, that loads the operands again and computes each op's flags,
  // storing nothing. On llvmpipe its masked-off body costs one element per
  // invocation. Ops that depend on a value the element overwrote in place
  // ("tainted": an accumulation `s += x`) cannot be recomputed there; they
  // compute their flags in the first loop, without a branch, from the
  // classes of their values (fp_flags_accumulate). Each op's flags gather in
  // a register, published after the loops by one atomic per op per
  // invocation.
  auto float_flags = [](const KernelSpec &op) {
    const DtypeInfo &res = result_type(op);
    return op.op != NPVK_OP_CAST && op.op != NPVK_OP_WHERE &&
           (res.kind == DtypeKind::Float || std::string(res.glsl_compute) == "double");
  };
  std::vector<bool> tainted_step(s.steps.size(), false);
  bool any_rare_flags = false;
  {
    std::vector<bool> tainted = overwritten;
    for (size_t j = 0; j < s.steps.size(); ++j) {
      const FusedKernelSpec::Step &st = s.steps[j];
      for (uint32_t k = 0; k < st.op.nin; ++k)
        tainted_step[j] = tainted_step[j] || tainted[st.slot[k]];
      for (uint32_t k = st.op.nin; k < st.op.count(); ++k) tainted[st.slot[k]] = tainted_step[j];
      any_rare_flags |= float_flags(st.op) && !tainted_step[j];
    }
  }
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (float_flags(s.steps[j].op)) out << "  uint fl" << j << " = 0u;\n";
  if (any_rare_flags) out << "  uint nonfinite = 0u;\n";

  auto emit_loop = [&](bool rare) {
    out << "  for (uint64_t i = uint64_t(gl_GlobalInvocationID.x); i < pc.count; i += step) {\n";
    std::vector<std::string> offset(nslots, "i");
    if (!s.contiguous) {
      // Shape, then each slot's element strides, as the planner merged them.
      const char *index_t = s.narrow_index ? "uint" : "int64_t";
      out << "    " << index_t << " rest = " << index_t << "(i);\n";
      for (uint32_t k = 0; k < nslots; ++k) {
        if (!touched[k]) continue;
        offset[k] = "o" + std::to_string(k);
        out << "    int64_t " << offset[k] << " = 0l;\n";
      }
      for (int d = int(s.rank) - 1; d >= 0; --d) {
        out << "    {\n      " << index_t << " extent = " << index_t << "(m.v[" << extra + d
            << "]);\n";
        if (d > 0 && s.narrow_index) {
          // No CPU has a vector integer division: a multiply by the extent's
          // magic number and a shift (division_magic()) instead.
          out << "      uint64_t magic = uint64_t(m.v[" << extra + s.rank * (nslots + 1) + d
              << "]);\n"
              << "      uint q = uint((uint64_t(rest) * (magic & 0xFFFFFFFFul)) >> (magic >> "
                 "32));\n"
              << "      int64_t c = int64_t(rest - q * extent);\n"
              << "      rest = q;\n";
        } else {
          out << "      int64_t c = int64_t(" << (d == 0 ? "rest" : "rest % extent") << ");\n";
          if (d > 0) out << "      rest /= extent;\n";
        }
        for (uint32_t k = 0; k < nslots; ++k)
          if (touched[k])
            out << "      " << offset[k] << " += c * m.v[" << extra + s.rank * (k + 1) + d
                << "];\n";
        out << "    }\n";
      }
    }
    for (uint32_t k = 0; k < nslots; ++k) {
      if (s.slots[k].scalar) continue;
      const DtypeInfo &d = dtype_info(s.slots[k].dtype);
      value[k] = "v" + std::to_string(k);
      out << "    " << d.glsl_compute << " " << value[k];
      if (loaded[k] && !(rare && overwritten[k]))
        out << " = " << loaded_value(d, element_ref(d, base[k], offset[k]));
      out << ";\n";
    }
    for (size_t j = 0; j < s.steps.size(); ++j) {
      if (rare && tainted_step[j]) continue;
      const FusedKernelSpec::Step &st = s.steps[j];
      const KernelSpec &op = st.op;
      out << "    {  // " << op_info(op.op).name << "\n";
      std::vector<std::string> args;
      for (uint32_t k = 0; k < op.nin; ++k) {
        const DtypeInfo &d = dtype_info(op.operands[k].dtype);
        std::string name = "a" + std::to_string(k);
        out << "    " << d.glsl_compute << " " << name << " = " << value[st.slot[k]] << ";\n";
        args.push_back(name);
      }
      // `precise` forbids the driver from contracting or reassociating, which
      // would change the last bit compared with NumPy; it also keeps fused
      // ops from merging into one another. Output k is r, r1, ...: a second
      // output is an `out` argument of the op's function.
      std::vector<std::string> results;
      auto precise_decl = [](const DtypeInfo &d) {
        return std::string(d.kind == DtypeKind::Float ? "precise " : "") + d.glsl_compute;
      };
      for (uint32_t k = op.nin; k < op.count(); ++k) {
        results.push_back(k == op.nin ? "r" : "r" + std::to_string(k - op.nin));
        if (k > op.nin) {
          out << "    " << precise_decl(dtype_info(op.operands[k].dtype)) << " " << results.back()
              << ";\n";
          args.push_back(results.back());
        }
      }
      const DtypeInfo &res = result_type(op);
      out << "    " << precise_decl(res) << " r = " << op_expr(op, args) << ";\n";
      // A float16 result is the float32 one rounded, after every op (NumPy's
      // half loops); ops whose results are float16 values already skip it.
      for (uint32_t k = op.nin; k < op.count(); ++k)
        if (op.operands[k].dtype == NPVK_FLOAT16 && !(k == op.nin && exact_in_half(op.op)) &&
            !(k > op.nin && op.op == NPVK_OP_MODF))
          out << "    " << results[k - op.nin] << " = npvk_round_half(" << results[k - op.nin]
              << ");\n";
      args.resize(op.nin);
      if (float_flags(op) && (rare || tainted_step[j])) {
        std::vector<std::string> operand_class;
        for (uint32_t k = 0; k < op.nin; ++k)
          operand_class.push_back(fp_class(dtype_info(op.operands[k].dtype), args[k]));
        // Each output raises what it brings; the first's pole test serves all.
        for (uint32_t k = op.nin; k < op.count(); ++k)
          out << "    {\n"
              << fp_flags_accumulate(
                     op, args, operand_class,
                     fp_class(dtype_info(op.operands[k].dtype), results[k - op.nin]),
                     "fl" + std::to_string(j))
              << "    }\n";
      } else if (float_flags(op)) {
        for (uint32_t k = op.nin; k < op.count(); ++k)
          out << "    nonfinite |= uint(!"
              << is_finite(dtype_info(op.operands[k].dtype), results[k - op.nin]) << ");\n";
      } else if (!rare) {
        out << fp_flags_code(op, args, "pc.flags + " + std::to_string(4 * j) + "ul");
      }
      for (uint32_t k = op.nin; k < op.count(); ++k) {
        const uint32_t slot = st.slot[k];
        const DtypeInfo &d = dtype_info(s.slots[slot].dtype);
        const bool store = !rare && s.slots[slot].stored && last_write[slot] == j;
        if (d.dtype == NPVK_FLOAT16) {
          // Already a float16 value (rounded above): converted only to be stored.
          if (store)
            out << "    " << element_ref(d, base[slot], offset[slot]) << " = "
                << storage_value(d, results[k - op.nin]) << ";\n";
          out << "    " << value[slot] << " = " << results[k - op.nin] << ";\n";
          continue;
        }
        std::string t = "t" + std::to_string(k);
        out << "    " << d.glsl_storage << " " << t << " = "
            << storage_value(d, results[k - op.nin]) << ";\n";
        if (store) out << "    " << element_ref(d, base[slot], offset[slot]) << " = " << t << ";\n";
        out << "    " << value[slot] << " = " << loaded_value(d, t) << ";\n";
      }
      out << "    }\n";
    }
    out << "  }\n";
  };
  emit_loop(false);
  if (any_rare_flags) {
    out << "  if (nonfinite != 0u) {\n";
    emit_loop(true);
    out << "  }\n";
  }
  for (size_t j = 0; j < s.steps.size(); ++j)
    if (float_flags(s.steps[j].op))
      out << fp_flags_publish("fl" + std::to_string(j),
                              "pc.flags + " + std::to_string(4 * j) + "ul");
  out << "}\n";
  return out.str();
}

}  // namespace npvk
