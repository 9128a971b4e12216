#include "compare.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace npvk_test {
namespace {

// Maps a float's bits onto a line where adjacent floats differ by one and -0.0 meets +0.0.
template <class T, class I>
int64_t Ordinal(T v) {
  I bits;
  std::memcpy(&bits, &v, sizeof(T));
  const I magnitude = bits & std::numeric_limits<I>::max();
  return bits < 0 ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
}

template <class T>
bool FloatsMatch(T expected, T got, const Tolerance &tol) {
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (expected == 0 && got == 0 && tol.signed_zero_equal) return true;
  if (std::is_same_v<T, float> && std::fpclassify(expected) == FP_SUBNORMAL && got == 0) {
    return true;
  }
  if (std::memcmp(&expected, &got, sizeof(T)) == 0) return true;
  if (tol.ulps == 0) return false;
  // Infinities and zeros are exact results of special cases, never rounding neighbours.
  if (std::isinf(expected) || std::isinf(got)) return false;
  return UlpDistance(expected, got) <= tol.ulps;
}

}  // namespace

uint64_t UlpDistance(double a, double b) {
  int64_t d = Ordinal<double, int64_t>(a) - Ordinal<double, int64_t>(b);
  return d < 0 ? static_cast<uint64_t>(-d) : static_cast<uint64_t>(d);
}

uint64_t UlpDistance(float a, float b) {
  int64_t d = Ordinal<float, int32_t>(a) - Ordinal<float, int32_t>(b);
  return d < 0 ? static_cast<uint64_t>(-d) : static_cast<uint64_t>(d);
}

bool ElementsMatch(npvk_dtype dtype, const uint8_t *expected, const uint8_t *got,
                   const Tolerance &tol) {
  switch (dtype) {
    case NPVK_FLOAT32:
      return FloatsMatch(Load<float>(expected), Load<float>(got), tol);
    case NPVK_FLOAT64:
      return FloatsMatch(Load<double>(expected), Load<double>(got), tol);
    default:
      return std::memcmp(expected, got, Itemsize(dtype)) == 0;
  }
}

std::string FormatElement(npvk_dtype dtype, const uint8_t *p) {
  char text[96];
  switch (dtype) {
    case NPVK_BOOL: {
      // Show the raw byte: a device writing 2 into a bool must be visible as such.
      uint8_t b = p[0];
      if (b > 1) {
        std::snprintf(text, sizeof text, "bool(byte %u)", b);
        return text;
      }
      return b ? "true" : "false";
    }
    case NPVK_FLOAT32: {
      float v = Load<float>(p);
      uint32_t bits = Load<uint32_t>(p);
      std::snprintf(text, sizeof text, "%.9g (0x%08" PRIx32 ")", v, bits);
      return text;
    }
    case NPVK_FLOAT64: {
      double v = Load<double>(p);
      uint64_t bits = Load<uint64_t>(p);
      std::snprintf(text, sizeof text, "%.17g (0x%016" PRIx64 ")", v, bits);
      return text;
    }
    default:
      return VisitDtype(dtype, [&](auto tag) -> std::string {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_signed_v<T>) {
          return std::to_string(static_cast<long long>(Load<T>(p)));
        } else {
          return std::to_string(static_cast<unsigned long long>(Load<T>(p)));
        }
      });
  }
}

}  // namespace npvk_test
