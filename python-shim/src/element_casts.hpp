// Element casts between npvk's dtypes computed as NumPy's cast loops compute
// them, for host replay under NumPy 2, whose C API no longer hands out its
// numeric cast functions (numpy_api.hpp, numpy_cast_function).
#pragma once

#include <npvk/npvk.h>

#include "numpy_api.hpp"

namespace npvk_shim {

// The cast from `from` to `to`, or null for a dtype npvk lacks. NumPy's
// numeric casts are C conversions: to bool is `x != 0` (NaN is true),
// float to integer truncates (defined in the target's range only, as in
// NumPy), and float16 goes through npymath's conversions, which round
// correctly (a value converted through float64 first gives the same bits:
// float32 and every integer float16 can hold are exact in float64, and any
// larger one is inf in float16 whichever way it was rounded).
PyArray_VectorUnaryFunc *element_cast(npvk_dtype from, npvk_dtype to);

}  // namespace npvk_shim
