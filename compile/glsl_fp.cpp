// The floating-point exceptions of generated kernels: NaN and infinity bit
// tests, and each op's flag code after its row's FpRule and pole
// (compile/ops.cpp; docs/architecture.md, "FP exceptions").
#include <string>
#include <utility>
#include <vector>

#include "compile/dtype.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/ops.hpp"

namespace npvk::glsl {

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
  return op_info(s.op).fp == FpRule::Spacing && s.operands[0].dtype == NPVK_FLOAT16 ? 0 : s.nin;
}
uint32_t finite_inputs(const KernelSpec &s) {
  return op_info(s.op).fp == FpRule::NextAfter ? 1 : nan_inputs(s);
}

std::string fp_flags_code(const KernelSpec &s, const std::vector<std::string> &a,
                          const std::string &flags) {
  const DtypeInfo &in = loop_type(s);
  const DtypeInfo &res = result_type(s);
  const FpRule rule = op_info(s.op).fp;
  std::string code;
  if (rule == FpRule::None) return code;
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
  } else if (is_integer(in.dtype) && (rule == FpRule::Divides || rule == FpRule::Floors)) {
    code += "    uint fpe = (" + a[1] + " == " + zero(in) + ") ? 1u : 0u;\n";
    if (rule == FpRule::Floors && in.kind == DtypeKind::Signed) {
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
//
// Only a quiet NaN counts as a NaN: a signaling NaN operand is "infinite", so
// the (quiet) NaN it leads to is new and raises invalid, as NumPy's loops do
// on x86, where a signaling NaN operand raises invalid. Arithmetic never
// makes a signaling NaN. That makes the class a matter of the magnitude's
// high 32-bit word alone (the quiet bit is there), and two compares rather
// than selects: in-place kernels compute it for every operand of every
// element, and on llvmpipe the 64-bit NaN test made `a += b` on 5e6 float64
// 2.3x the cost of the same kernel without flags (10.5 against 4.5 ms;
// 5.5-6.5 ms this way).
std::string fp_class(const DtypeInfo &d, const std::string &x) {
  if (d.kind != DtypeKind::Float && std::string(d.glsl_compute) != "double") return "0u";
  const bool wide = std::string(d.glsl_compute) == "double";
  const std::string magnitude = wide ? "(unpackDouble2x32(" + x + ").y & 0x7fffffffu)"
                                     : "(floatBitsToUint(" + x + ") & 0x7fffffffu)";
  const std::string infinity = wide ? "0x7ff00000u" : "0x7f800000u";
  const std::string quiet_nan = wide ? "0x7ff80000u" : "0x7fc00000u";
  return "(uint(" + magnitude + " >= " + infinity + ") + 2u * uint(" + magnitude +
         " >= " + quiet_nan + "))";
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
  const bool floors = is_float(s.operands[0].dtype) && op_info(s.op).fp == FpRule::Floors;
  const std::string infinity = floors ? "(t == 1u ? 10u : (1u << t))" : "(1u << t)";
  if (pole == "false") return code + "    " + acc + " |= " + infinity + ";\n";
  return code + "    " + acc + " |= (t == 1u && (" + pole + ")) ? 16u : " + infinity + ";\n";
}

std::string fp_flags_publish(const std::string &acc, const std::string &flags) {
  return "  {\n    uint f = ((" + acc + " & 2u) != 0u ? 2u : 0u) | ((" + acc +
         " & 12u) != 0u ? 8u : 0u) | ((" + acc + " & 16u) != 0u ? 1u : 0u);\n" +
         "    if (f != 0u) atomicOr(FpFlags(" + flags + ").v, f);\n  }\n";
}

bool carries_nonfinite(const KernelSpec &op, uint32_t input) {
  switch (op.op) {
    case NPVK_OP_ADD:
    case NPVK_OP_SUBTRACT:
    case NPVK_OP_MULTIPLY:
    case NPVK_OP_HYPOT:  // hypot(inf, NaN) is inf
      return true;
    case NPVK_OP_TRUE_DIVIDE:  // x / inf is 0
    case NPVK_OP_COPYSIGN:
      return input == 0;
    case NPVK_OP_NEGATIVE:
    case NPVK_OP_POSITIVE:
    case NPVK_OP_ABSOLUTE:
    case NPVK_OP_FABS:
    case NPVK_OP_SQUARE:
    case NPVK_OP_SQRT:  // sqrt(-inf) is NaN
    case NPVK_OP_CBRT:
    case NPVK_OP_RINT:
    case NPVK_OP_FLOOR:
    case NPVK_OP_CEIL:
    case NPVK_OP_TRUNC:
    case NPVK_OP_LOG:  // log(-inf) is NaN
    case NPVK_OP_LOG2:
    case NPVK_OP_LOG10:
    case NPVK_OP_LOG1P:
    case NPVK_OP_DEG2RAD:
    case NPVK_OP_RAD2DEG:
      return true;
    case NPVK_OP_POWER:
    case NPVK_OP_FLOAT_POWER:
      // inf**n, (-inf)**0.5 and NaN**n are not finite; x**-1 of inf is 0,
      // and the general pow has x**0 == 1.
      return input == 0 && (op.exponent.kind == FixedExponent::Half ||
                            (op.exponent.kind == FixedExponent::Integer && op.exponent.n > 0));
    default:
      return false;
  }
}

std::vector<bool> nonfinite_tested(const FusedKernelSpec &s, const std::vector<bool> &checked) {
  const size_t n = s.steps.size();
  // Who reads each step's result: (reading step, its input), in order.
  std::vector<std::vector<std::pair<size_t, uint32_t>>> readers(n);
  std::vector<long> writer(s.slots.size(), -1);  // -1: loaded, not computed
  for (size_t c = 0; c < n; ++c) {
    const FusedKernelSpec::Step &st = s.steps[c];
    for (uint32_t k = 0; k < st.op.nin; ++k)
      if (writer[st.slot[k]] >= 0) readers[size_t(writer[st.slot[k]])].push_back({c, k});
    for (uint32_t k = st.op.nin; k < st.op.count(); ++k) writer[st.slot[k]] = long(c);
  }
  std::vector<bool> tested(n, false), detected(n, false);
  for (size_t j = n; j-- > 0;) {
    bool carried = false;
    // A reader covers one output only, so ops with two keep their tests.
    for (const auto &[c, k] : readers[j])
      carried = carried || (s.steps[j].op.nout == 1 && checked[c] && detected[c] &&
                            carries_nonfinite(s.steps[c].op, k));
    tested[j] = checked[j] && !carried;
    detected[j] = tested[j] || carried;
  }
  return tested;
}

}  // namespace npvk::glsl
