// The flags pass of fused kernels (FusedKernelSpec::FlagsLoop::Deferred):
// a kernel whose invocations all saw finite results runs once; one that saw
// a NaN or an infinity asks (kFlagsPassWanted) for a second kernel that
// recomputes its elements, storing nothing, and computes each op's flags.
// The pass reads the kernel's inputs again, so it must run before anything
// overwrites them: a batch is submitted in segments, cut before each kernel
// that writes what an earlier kernel of its segment read (a time-step loop:
// one segment per step). docs/architecture.md, "FP exceptions".
#pragma once

#include <cstddef>
#include <vector>

#include "compile/fusion.hpp"
#include "vulkan/executor.hpp"

namespace npvk {

class KernelStore;

// Defers the flags loop of every fused kernel, and returns where the batch
// is cut: the first kernel of each segment but the first. `ops`: the
// flush's recorded ops.
std::vector<size_t> choose_flags_loops(std::vector<PlannedKernel> &kernels,
                                       const std::vector<RecordedOp> &ops);

// Runs `batch` segment by segment, each followed by the flags passes its
// kernels asked for, whose words are ORed into the result's (the requests
// cleared). `first_dispatch`: each kernel's first dispatch in `batch`, then
// the end; `cuts`: from choose_flags_loops.
vk::BatchResult run_with_flags_passes(const std::vector<PlannedKernel> &kernels,
                                      const std::vector<size_t> &first_dispatch,
                                      std::vector<vk::Dispatch> &batch,
                                      const std::vector<size_t> &cuts, KernelStore &store,
                                      vk::Executor &executor);

}  // namespace npvk
