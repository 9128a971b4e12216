// Integer arithmetic as NumPy's loops do it: wrapping modulo 2^bits, with C++'s undefined
// cases (signed overflow, MIN / -1, x / 0) spelled out.
#ifndef NPVK_TESTS_CPP_REFERENCE_INT_HPP
#define NPVK_TESTS_CPP_REFERENCE_INT_HPP

#include <limits>
#include <type_traits>

namespace npvk_test {

// An unsigned type at least as wide as both T and int, so arithmetic on it never promotes to a
// signed type and never overflows in the undefined sense.
template <class T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <class T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <class T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

// Quotient truncated toward zero, with MIN / -1 wrapping to MIN; b != 0.
template <class T>
T TruncDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return WrapSub<T>(0, a);
  }
  return static_cast<T>(a / b);
}

// C's %, sign of a; b != 0. MIN % -1 is 0.
template <class T>
T TruncRem(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_REFERENCE_INT_HPP
