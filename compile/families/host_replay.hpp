// Host replay of the standalone families after a failed flush (elementwise
// ops replay in runtime/recovery.cpp, through the host loops directly). A
// reduction or scan folds with the host loop of its combining op, NumPy's own
// (so a sum is NumPy's pairwise sum over each run, and a scan rounds exactly
// as NumPy's accumulate); a matrix product has no such loop and is computed
// here, in order (within the bound docs/accuracy.md states for the device's).
#pragma once

#include <cstdint>

#include "compile/families/family.hpp"
#include "compile/matmul.hpp"
#include "compile/reduction.hpp"

namespace npvk {

bool reduce_replay_supported(const ReduceOp &r, const HostLoop &loop);
// bytes: the input's and the output's first element. Returns the FP flags raised.
uint32_t replay_reduce(const ReduceOp &r, const HostLoop &loop, uint8_t *const *bytes);
// bytes: A's, B's and C's first element.
void replay_matmul(const MatmulOp &op, uint8_t *const *bytes);

}  // namespace npvk
