// Element comparison with a stated tolerance, and readable element formatting for failures.
#ifndef NPVK_TESTS_CPP_COMPARE_HPP
#define NPVK_TESTS_CPP_COMPARE_HPP

#include <cstdint>
#include <string>

#include "dtypes.hpp"

namespace npvk_test {

struct Tolerance {
  // 0: bit-identical (docs/ops.md's default). Any NaN equals any NaN in every mode, because
  // NumPy itself does not promise payloads.
  uint32_t ulps = 0;
  // maximum/minimum may return either zero when comparing -0.0 with 0.0 (NumPy's own SIMD loops
  // do), so there the sign of a zero result is not checked.
  bool signed_zero_equal = false;
};

inline Tolerance Exact() {
  return Tolerance{};
}
inline Tolerance Ulps(uint32_t n) {
  return Tolerance{n, false};
}

// True when `got` is an acceptable result for `expected`. An expected float32 subnormal also
// accepts a zero: lavapipe reports shaderDenormPreserveFloat32 = false and docs/ops.md lets it
// flush them.
bool ElementsMatch(npvk_dtype dtype, const uint8_t *expected, const uint8_t *got,
                   const Tolerance &tol);

// The distance in units in the last place between two finite floats of the same sign class.
uint64_t UlpDistance(double a, double b);
uint64_t UlpDistance(float a, float b);

// "-2.5 (0xc004000000000000)" for floats, "-3" for integers, "true" for bool.
std::string FormatElement(npvk_dtype dtype, const uint8_t *p);

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_COMPARE_HPP
