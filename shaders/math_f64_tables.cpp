// Placeholder until the math library moves its tables to a buffer.
#include "core/math_tables.hpp"

namespace npvk {

const std::vector<double> &math_f64_table_data() {
  static const std::vector<double> data;
  return data;
}

}  // namespace npvk
