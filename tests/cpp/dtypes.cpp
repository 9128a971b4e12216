#include "dtypes.hpp"

namespace npvk_test {

const char *DtypeName(npvk_dtype dtype) {
  switch (dtype) {
    case NPVK_BOOL:
      return "bool";
    case NPVK_INT8:
      return "int8";
    case NPVK_INT16:
      return "int16";
    case NPVK_INT32:
      return "int32";
    case NPVK_INT64:
      return "int64";
    case NPVK_UINT8:
      return "uint8";
    case NPVK_UINT16:
      return "uint16";
    case NPVK_UINT32:
      return "uint32";
    case NPVK_UINT64:
      return "uint64";
    case NPVK_FLOAT16:
      return "float16";
    case NPVK_FLOAT32:
      return "float32";
    case NPVK_FLOAT64:
      return "float64";
    default:
      return "?";
  }
}

size_t Itemsize(npvk_dtype dtype) {
  if (dtype == NPVK_FLOAT16) return 2;
  return VisitDtype(dtype, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

bool IsFloat(npvk_dtype dtype) {
  return dtype == NPVK_FLOAT32 || dtype == NPVK_FLOAT64;
}

}  // namespace npvk_test
