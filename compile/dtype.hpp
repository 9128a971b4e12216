// Facts about each dtype: size, NumPy name, and how generated GLSL stores and
// computes it. Narrow integers are stored in 8/16 bits but computed in 32, which
// gives NumPy's wrap-around on store and needs only the 8/16-bit storage features.
// float16 is stored as its bits (uint16_t) and computed in float32, rounded to
// float16 after every op (shaders/ops_half.glsl), so it needs no shaderFloat16.
#pragma once

#include <npvk/npvk.h>

#include <cstdint>

namespace npvk {

enum class DtypeKind { Bool, Signed, Unsigned, Float };

struct DtypeInfo {
  npvk_dtype dtype;
  const char *name;   // NumPy's name
  uint32_t itemsize;  // bytes
  DtypeKind kind;
  const char *glsl_storage;  // the type in buffers
  const char *glsl_compute;  // the type arithmetic happens in
  const char *suffix;        // short tag used in generated identifiers
};

bool dtype_valid(int dtype);
// Throws NPVK_ERR_BAD_DTYPE for a value that is not a dtype.
const DtypeInfo &dtype_info(npvk_dtype dtype);
inline bool is_float(npvk_dtype d) {
  return dtype_info(d).kind == DtypeKind::Float;
}
inline bool is_integer(npvk_dtype d) {
  DtypeKind k = dtype_info(d).kind;
  return k == DtypeKind::Signed || k == DtypeKind::Unsigned;
}

}  // namespace npvk
