#include "compile/fixed_exponent.hpp"

#include <cmath>
#include <cstring>

#include "compile/dtype.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/view.hpp"

namespace npvk {
namespace {

// The scalar's value as a double; NaN for a dtype that cannot hold 0.5 or 3.
double float_value(npvk_dtype dtype, uint64_t bits) {
  switch (dtype) {
    case NPVK_FLOAT64: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case NPVK_FLOAT32: {
      const uint32_t b = uint32_t(bits);
      float f;
      std::memcpy(&f, &b, sizeof f);
      return f;
    }
    case NPVK_FLOAT16: {
      // Normal halves only (every exponent of interest is one).
      const int e = int(bits >> 10 & 0x1f);
      if (e == 0 || e == 31) return NAN;
      const double m = 1.0 + double(bits & 0x3ff) / 1024.0;
      return ((bits >> 15 & 1) ? -1.0 : 1.0) * std::ldexp(m, e - 15);
    }
    default:
      return NAN;
  }
}

}  // namespace

std::string FixedExponent::key_suffix() const {
  switch (kind) {
    case Integer:
      return "^" + std::to_string(int(n));
    case Half:
      return "^0.5";
    case None:
      break;
  }
  return "";
}

FixedExponent fixed_exponent_of(const KernelSpec &spec, const View &exponent) {
  FixedExponent f;
  if (spec.op != NPVK_OP_POWER && spec.op != NPVK_OP_FLOAT_POWER) return f;
  if (spec.nin != 2 || !exponent.scalar || !is_float(spec.operands[0].dtype)) return f;
  const double y = float_value(exponent.dtype, exponent.scalar_bits);
  if (y == 0.5) {
    f.kind = FixedExponent::Half;
  } else if (y == std::trunc(y) && ((y >= 2 && y <= 8) || (y >= -8 && y <= -1))) {
    f.kind = FixedExponent::Integer;
    f.n = int8_t(y);
  }
  return f;
}

std::string fixed_power_glsl(const FixedExponent &exponent, const std::string &x) {
  if (exponent.kind == FixedExponent::Half) return "npvk_f64_pow_half(" + x + ")";
  // 1/x is pow(x, -1) with every special case of C99's pow, correctly rounded.
  if (exponent.n == -1) return "(1.0LF / " + x + ")";
  return "npvk_f64_powi(" + x + ", " + std::to_string(int(exponent.n)) + ")";
}

}  // namespace npvk
