// Powers whose exponent is a scalar known when the op is recorded: x**3 in
// a polynomial, x**-1, x**0.5. Those get code of their own (a double-double
// product chain, a reciprocal, a square root: shaders/math_f64.glsl) instead
// of the general exp(y*log|x|), about 30x cheaper, so the exponent becomes
// part of the kernel's identity (its key). docs/accuracy.md has the accuracy.
#pragma once

#include <cstdint>
#include <string>

namespace npvk {

struct KernelSpec;
struct View;

struct FixedExponent {
  enum Kind : uint8_t { None, Integer, Half };
  Kind kind = None;
  int8_t n = 0;  // Integer: 2..8, or -8..-1

  bool operator==(const FixedExponent &o) const { return kind == o.kind && n == o.n; }
  // "" for None, else "^3", "^-1", "^0.5": appended to the op's name in keys.
  std::string key_suffix() const;
};

// The fixed form of a float power or float_power whose exponent (input 1) is
// this scalar view, or None.
FixedExponent fixed_exponent_of(const KernelSpec &spec, const View &exponent);

// The float64 GLSL of x**exponent for a fixed exponent (x: a double).
std::string fixed_power_glsl(const FixedExponent &exponent, const std::string &x);

}  // namespace npvk
