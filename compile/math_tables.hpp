// The constant tables of the float64 math library (shaders/math_f64.glsl),
// which kernels read from a device buffer at the address NPVK_F64_TABLES.
// The layout is the library's own; shaders/math_f64_tables.cpp provides the
// data from the same generator as the GLSL.
#pragma once

#include <vector>

namespace npvk {

const std::vector<double> &math_f64_table_data();

}  // namespace npvk
