// The GLSL of each op's loop, from its row in the opcode table
// (compile/ops.cpp): the row's expression template or float64 math
// function, or a generator of its own (cast, comparisons of int64 with
// uint64).
#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/glsl_parts.hpp"
#include "compile/ops.hpp"

namespace npvk {
namespace glsl {

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

namespace {

// A comparison of int64 with uint64 by value (NumPy 2's qQ->? and Qq->?
// loops): a negative int64 is below every uint64; otherwise both compare as
// uint64. `o` is the row's operator.
std::string mixed_int64_comparison(const std::string &o, bool signed_first, const std::string &x,
                                   const std::string &y) {
  // The result when the signed operand is negative: the first operand is then
  // below the second (signed first) or above it (unsigned first).
  const bool below = o[0] == '<' || o == "!=";
  const bool above = o[0] == '>' || o == "!=";
  const std::string negative = signed_first ? x : y;
  const std::string when_negative = (signed_first ? below : above) ? "true" : "false";
  const std::string ux = signed_first ? "uint64_t(" + x + ")" : x;
  const std::string uy = signed_first ? y : "uint64_t(" + y + ")";
  return "(" + negative + " < int64_t(0) ? " + when_negative + " : (" + ux + " " + o + " " + uy +
         "))";
}

// Whether a template alternative's selector (before ':') names this loop's
// dtype; `rest` receives the expression after it.
bool selects(const std::string &alt, const DtypeInfo &t, std::string *rest) {
  const bool h = t.dtype == NPVK_FLOAT16;
  const struct {
    const char *tag;
    bool match;
  } selectors[] = {
      {"b:", t.kind == DtypeKind::Bool},
      {"s:", t.kind == DtypeKind::Signed},
      {"u:", t.kind == DtypeKind::Unsigned},
      {"i:", t.kind == DtypeKind::Signed || t.kind == DtypeKind::Unsigned},
      {"f:", t.kind == DtypeKind::Float},
      {"f32:", t.dtype == NPVK_FLOAT32 || h},
      {"h:", h},
  };
  for (const auto &sel : selectors) {
    const size_t n = std::char_traits<char>::length(sel.tag);
    if (alt.compare(0, n, sel.tag) == 0) {
      *rest = alt.substr(n);
      return sel.match;
    }
  }
  *rest = alt;
  return true;
}

}  // namespace

// The expression of `tmpl` (an OpInfo::glsl or OpInfo::pole template) for
// this loop, or "" when no alternative matches.
std::string expand_template(const char *tmpl, const KernelSpec &s,
                            const std::vector<std::string> &a) {
  const DtypeInfo &t = loop_type(s);
  const std::string all = tmpl;
  std::string expr;
  bool found = false;
  for (size_t begin = 0; begin <= all.size() && !found;) {
    size_t end = all.find(';', begin);
    if (end == std::string::npos) end = all.size();
    found = selects(all.substr(begin, end - begin), t, &expr);
    begin = end + 1;
  }
  if (!found) return "";
  std::string r;
  for (size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '$' || i + 1 >= expr.size()) {
      r += expr[i];
      continue;
    }
    const char c = expr[++i];
    const bool digit_next = i + 1 < expr.size() && expr[i + 1] >= '0' && expr[i + 1] <= '9';
    if (c >= '0' && c <= '9') {
      r += a.at(size_t(c - '0'));
    } else if (c == 'T' && digit_next) {
      r += dtype_info(s.operands[expr[++i] - '0'].dtype).glsl_compute;
    } else if (c == 'T') {
      r += t.glsl_compute;
    } else if (c == 'Z') {
      r += zero(t);
    } else if (c == 'B' && digit_next) {
      r += truth(t, a.at(size_t(expr[++i] - '0')));
    } else {
      fail(NPVK_ERR_INTERNAL, "bad GLSL template " + all);
    }
  }
  return r;
}

// The math of one op on loaded inputs a[0..nin), in the loop's compute type.
// Ops with two outputs return the first; a[nin] names the variable that
// receives the second (an `out` argument of their GLSL function).
std::string op_expr(const KernelSpec &s, const std::vector<std::string> &a) {
  const OpInfo &row = op_info(s.op);
  const DtypeInfo &t = loop_type(s);
  if (row.gen == OpGen::Cast) return cast_expr(t, dtype_info(s.operands[1].dtype), a[0]);
  if (row.compare && s.nin == 2 && is_mixed_int64_pair(s.operands[0].dtype, s.operands[1].dtype))
    return mixed_int64_comparison(row.compare, s.operands[0].dtype == NPVK_INT64, a[0], a[1]);
  if (row.math_f64 && t.kind == DtypeKind::Float) {
    // float32 transcendentals (and float16's, which compute as float32's):
    // computed in float64 and rounded once.
    const bool f32 = t.dtype == NPVK_FLOAT32 || t.dtype == NPVK_FLOAT16;
    if (s.exponent.kind != FixedExponent::None) {
      const std::string r = fixed_power_glsl(s.exponent, f32 ? "double(" + a[0] + ")" : a[0]);
      return f32 ? "float(" + r + ")" : r;
    }
    std::string r = std::string(f32 ? "float(" : "") + row.math_f64 + "(";
    for (size_t i = 0; i < row.nin; ++i)
      r += (i ? ", " : "") + (f32 ? "double(" + a[i] + ")" : a[i]);
    return r + (f32 ? "))" : ")");
  }
  std::string expr = row.glsl ? expand_template(row.glsl, s, a) : "";
  if (expr.empty()) fail(NPVK_ERR_UNSUPPORTED, std::string("no kernel for ") + row.name);
  return expr;
}

// True where a float op is at its pole: the infinities NumPy's loops report
// there are divisions by zero, not overflows.
std::string zero_division_test(const KernelSpec &s, const std::vector<std::string> &a) {
  const OpInfo &row = op_info(s.op);
  return row.pole ? expand_template(row.pole, s, a) : "false";
}

bool uses_math_f64(const KernelSpec &s) {
  const OpInfo &row = op_info(s.op);
  return is_float(s.operands[0].dtype) && (row.float_divmod || row.math_f64 != nullptr);
}

// Ops whose float16 result is a float16 value without rounding: bit
// operations, selections, and exact ones (floor of a half, its fraction).
bool exact_in_half(npvk_op op) {
  return op_info(op).half == HalfRule::Exact;
}

}  // namespace glsl

bool needs_float64(const KernelSpec &s) {
  for (uint32_t k = 0; k < s.count(); ++k)
    if (s.operands[k].dtype == NPVK_FLOAT64) return true;
  // Integer loops of true_divide divide in float64.
  if (op_info(s.op).rule == LoopRule::TrueDivide && !is_float(s.operands[0].dtype)) return true;
  return glsl::uses_math_f64(s);
}

}  // namespace npvk
