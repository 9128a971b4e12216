// A planned elementwise kernel run on the host with the host loops (NumPy's
// own), as the device would run it: all of its steps over one block of
// elements before the next block, with the values it contracts kept in a
// small scratch block that stays in the CPU's caches. Replaying the steps one
// by one over whole arrays instead writes every temporary to memory, and in a
// guest whose fresh pages fault slowly that cost more than the work itself
// (docs/architecture.md, "Host replay").
#pragma once

#include <cstdint>
#include <vector>

#include "compile/families/family.hpp"
#include "compile/fusion.hpp"
#include "runtime/fp_errors.hpp"

namespace npvk {

// Where the host reaches an operand's bytes: its mapping, which on a
// unified-memory or CPU device is the memory the kernels use (zero-copy
// buffers map the user's own pages); a scalar's value; null if neither.
uint8_t *host_address(const View &v);

// Whether replay_fused is worth it for `k`: more than one step, and rows long
// enough that a loop call per step and block costs little beside its work.
bool replays_fused(const PlannedKernel &k);

// Runs kernel `k` of `ops` block by block; `scratch` is reused between calls
// (kept warm). FP exceptions raised by each step go to `errors` as that
// step's op. Returns the bytes of contracted values, which it never wrote.
// `split`: its blocks are shared among the host workers (host_workers.hpp),
// and the parts they ran are added to `on_workers`.
uint64_t replay_fused(const PlannedKernel &k, const std::vector<RecordedOp> &ops,
                      const HostLoop &loop, std::vector<uint8_t> &scratch, FpErrors &errors,
                      bool split, uint64_t &on_workers);

}  // namespace npvk
