// Host replay of the reduction and scan family after a failed flush
// (elementwise ops replay in runtime/recovery.cpp, through the host loops
// directly; matrix products in matmul/matmul_replay.hpp). A reduction or
// scan folds with the host loop of its combining op, NumPy's own (so a sum
// is NumPy's pairwise sum over each run, and a scan rounds exactly as
// NumPy's accumulate).
#pragma once

#include <cstdint>

#include "compile/families/family.hpp"
#include "compile/families/reduce/reduce_plan.hpp"

namespace npvk {

bool reduce_replay_supported(const ReduceOp &r, const HostLoop &loop);
// bytes: the input's and the output's first element. Returns the FP flags raised.
uint32_t replay_reduce(const ReduceOp &r, const HostLoop &loop, uint8_t *const *bytes);

}  // namespace npvk
