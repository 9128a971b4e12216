#include "element_casts.hpp"

#include <numpy/halffloat.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace npvk_shim {
namespace {

struct Half {
  uint16_t bits;
};

// Storage type of each npvk dtype, in npvk_dtype order.
template <int D>
struct Storage;
template <>
struct Storage<NPVK_BOOL> {
  using type = uint8_t;
};
template <>
struct Storage<NPVK_INT8> {
  using type = int8_t;
};
template <>
struct Storage<NPVK_INT16> {
  using type = int16_t;
};
template <>
struct Storage<NPVK_INT32> {
  using type = int32_t;
};
template <>
struct Storage<NPVK_INT64> {
  using type = int64_t;
};
template <>
struct Storage<NPVK_UINT8> {
  using type = uint8_t;
};
template <>
struct Storage<NPVK_UINT16> {
  using type = uint16_t;
};
template <>
struct Storage<NPVK_UINT32> {
  using type = uint32_t;
};
template <>
struct Storage<NPVK_UINT64> {
  using type = uint64_t;
};
template <>
struct Storage<NPVK_FLOAT16> {
  using type = Half;
};
template <>
struct Storage<NPVK_FLOAT32> {
  using type = float;
};
template <>
struct Storage<NPVK_FLOAT64> {
  using type = double;
};

// A stored element as a value of the arithmetic type T.
template <typename T, typename S>
T value_of(S x) {
  return static_cast<T>(x);
}
template <typename T>
T value_of(Half x) {
  return static_cast<T>(npy_half_to_double(x.bits));
}

template <int From, int To>
typename Storage<To>::type convert(typename Storage<From>::type x) {
  using S = typename Storage<From>::type;
  if constexpr (To == NPVK_BOOL) {
    if constexpr (std::is_same_v<S, Half>)
      return npy_half_iszero(x.bits) ? 0 : 1;
    else
      return x != S(0) ? 1 : 0;
  } else if constexpr (To == NPVK_FLOAT16) {
    if constexpr (std::is_same_v<S, Half>)
      return x;
    else
      return Half{npy_double_to_half(static_cast<double>(x))};
  } else if constexpr (From == NPVK_BOOL) {
    return static_cast<typename Storage<To>::type>(x != 0);
  } else {
    return value_of<typename Storage<To>::type>(x);
  }
}

template <int From, int To>
void cast_loop(void *in, void *out, npy_intp n, void *, void *) {
  using S = typename Storage<From>::type;
  using D = typename Storage<To>::type;
  const char *src = static_cast<const char *>(in);
  char *dst = static_cast<char *>(out);
  for (npy_intp i = 0; i < n; ++i) {
    S x;
    std::memcpy(&x, src + i * sizeof(S), sizeof(S));
    const D y = convert<From, To>(x);
    std::memcpy(dst + i * sizeof(D), &y, sizeof(D));
  }
}

template <int From, int... To>
PyArray_VectorUnaryFunc *cast_to(int to, std::integer_sequence<int, To...>) {
  PyArray_VectorUnaryFunc *found = nullptr;
  ((found = to == To ? &cast_loop<From, To> : found), ...);
  return found;
}

template <int... From>
PyArray_VectorUnaryFunc *cast_from(int from, int to, std::integer_sequence<int, From...> all) {
  PyArray_VectorUnaryFunc *found = nullptr;
  ((found = from == From ? cast_to<From>(to, all) : found), ...);
  return found;
}

}  // namespace

PyArray_VectorUnaryFunc *element_cast(npvk_dtype from, npvk_dtype to) {
  if (from < 0 || from >= NPVK_DTYPE_COUNT || to < 0 || to >= NPVK_DTYPE_COUNT) return nullptr;
  return cast_from(int(from), int(to), std::make_integer_sequence<int, NPVK_DTYPE_COUNT>());
}

}  // namespace npvk_shim
