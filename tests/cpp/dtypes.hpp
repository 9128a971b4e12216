// The C++ type behind each npvk dtype, so references can be written as templates.
#ifndef NPVK_TESTS_CPP_DTYPES_HPP
#define NPVK_TESTS_CPP_DTYPES_HPP

#include <npvk/npvk.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace npvk_test {

template <class T>
struct Tag {
  using type = T;
};

// float16 is left out: its loops are tested against NumPy itself
// (tests/python/test_float16.py), having no C++ type to write references in.
inline const std::vector<npvk_dtype> &TestedDtypes() {
  static const std::vector<npvk_dtype> kDtypes = {
      NPVK_BOOL,   NPVK_INT8,   NPVK_INT16,  NPVK_INT32,   NPVK_INT64,  NPVK_UINT8,
      NPVK_UINT16, NPVK_UINT32, NPVK_UINT64, NPVK_FLOAT32, NPVK_FLOAT64};
  return kDtypes;
}

// Calls f(Tag<T>{}) with the C++ type of `dtype`. bool is stored as one byte holding 0 or 1,
// which is exactly how the compilers we build with lay out `bool`.
template <class F>
decltype(auto) VisitDtype(npvk_dtype dtype, F &&f) {
  switch (dtype) {
    case NPVK_BOOL:
      return f(Tag<bool>{});
    case NPVK_INT8:
      return f(Tag<int8_t>{});
    case NPVK_INT16:
      return f(Tag<int16_t>{});
    case NPVK_INT32:
      return f(Tag<int32_t>{});
    case NPVK_INT64:
      return f(Tag<int64_t>{});
    case NPVK_UINT8:
      return f(Tag<uint8_t>{});
    case NPVK_UINT16:
      return f(Tag<uint16_t>{});
    case NPVK_UINT32:
      return f(Tag<uint32_t>{});
    case NPVK_UINT64:
      return f(Tag<uint64_t>{});
    case NPVK_FLOAT32:
      return f(Tag<float>{});
    case NPVK_FLOAT64:
      return f(Tag<double>{});
    default:
      break;
  }
  throw std::invalid_argument("no C++ type for dtype " + std::to_string(static_cast<int>(dtype)));
}

template <class T>
constexpr npvk_dtype DtypeOf() {
  if constexpr (std::is_same_v<T, bool>) return NPVK_BOOL;
  if constexpr (std::is_same_v<T, int8_t>) return NPVK_INT8;
  if constexpr (std::is_same_v<T, int16_t>) return NPVK_INT16;
  if constexpr (std::is_same_v<T, int32_t>) return NPVK_INT32;
  if constexpr (std::is_same_v<T, int64_t>) return NPVK_INT64;
  if constexpr (std::is_same_v<T, uint8_t>) return NPVK_UINT8;
  if constexpr (std::is_same_v<T, uint16_t>) return NPVK_UINT16;
  if constexpr (std::is_same_v<T, uint32_t>) return NPVK_UINT32;
  if constexpr (std::is_same_v<T, uint64_t>) return NPVK_UINT64;
  if constexpr (std::is_same_v<T, float>) return NPVK_FLOAT32;
  if constexpr (std::is_same_v<T, double>) return NPVK_FLOAT64;
}

template <class T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsBool = std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T>;

// NumPy's dtype name ("float64").
const char *DtypeName(npvk_dtype dtype);
size_t Itemsize(npvk_dtype dtype);
bool IsFloat(npvk_dtype dtype);

using Bytes = std::vector<uint8_t>;

template <class T>
T Load(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void Store(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <class T>
Bytes ToBytes(const std::vector<T> &values) {
  Bytes out(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) Store<T>(out.data() + i * sizeof(T), values[i]);
  return out;
}

template <class T>
std::vector<T> FromBytes(const Bytes &bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) out[i] = Load<T>(bytes.data() + i * sizeof(T));
  return out;
}

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_DTYPES_HPP
