// Host replay of the matrix product family after a failed flush. A matrix
// product has no host loop of NumPy's to call, so it is computed here, in
// order (within the bound docs/accuracy.md states for the device's).
#pragma once

#include <cstdint>

#include "compile/families/matmul/matmul_plan.hpp"

namespace npvk {

// bytes: A's, B's and C's first element.
void replay_matmul(const MatmulOp &op, uint8_t *const *bytes);

}  // namespace npvk
