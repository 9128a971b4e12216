#include "compile/dtype.hpp"

#include <string>

#include "base/error.hpp"

namespace npvk {
namespace {

// Indexed by npvk_dtype.
const DtypeInfo kDtypes[NPVK_DTYPE_COUNT] = {
    {NPVK_BOOL, "bool", 1, DtypeKind::Bool, "uint8_t", "bool", "b1"},
    {NPVK_INT8, "int8", 1, DtypeKind::Signed, "int8_t", "int", "i1"},
    {NPVK_INT16, "int16", 2, DtypeKind::Signed, "int16_t", "int", "i2"},
    {NPVK_INT32, "int32", 4, DtypeKind::Signed, "int", "int", "i4"},
    {NPVK_INT64, "int64", 8, DtypeKind::Signed, "int64_t", "int64_t", "i8"},
    {NPVK_UINT8, "uint8", 1, DtypeKind::Unsigned, "uint8_t", "uint", "u1"},
    {NPVK_UINT16, "uint16", 2, DtypeKind::Unsigned, "uint16_t", "uint", "u2"},
    {NPVK_UINT32, "uint32", 4, DtypeKind::Unsigned, "uint", "uint", "u4"},
    {NPVK_UINT64, "uint64", 8, DtypeKind::Unsigned, "uint64_t", "uint64_t", "u8"},
    {NPVK_FLOAT16, "float16", 2, DtypeKind::Float, "uint16_t", "float", "f2"},
    {NPVK_FLOAT32, "float32", 4, DtypeKind::Float, "float", "float", "f4"},
    {NPVK_FLOAT64, "float64", 8, DtypeKind::Float, "double", "double", "f8"},
};

}  // namespace

bool dtype_valid(int dtype) {
  return dtype >= 0 && dtype < NPVK_DTYPE_COUNT;
}

const DtypeInfo &dtype_info(npvk_dtype dtype) {
  if (!dtype_valid(static_cast<int>(dtype)))
    fail(NPVK_ERR_BAD_DTYPE, "not a dtype: " + std::to_string(static_cast<int>(dtype)));
  return kDtypes[dtype];
}

}  // namespace npvk
