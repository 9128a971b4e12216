// The flags pass of fused kernels (FusedKernelSpec::FlagsLoop::Deferred):
// a kernel whose invocations all saw finite results runs once; one that saw
// a NaN or an infinity asks (kFlagsPassWanted) for a second kernel that
// recomputes its elements, storing nothing, and computes each op's flags.
// docs/architecture.md, "FP exceptions".
#pragma once

#include <cstddef>
#include <vector>

#include "compile/fusion.hpp"
#include "vulkan/executor.hpp"

namespace npvk {

class KernelStore;

// Defers the flags loop of every fused kernel whose inputs no later kernel
// of the batch writes (the pass reads them after the whole batch ran);
// the others keep it in the kernel. `ops`: the flush's recorded ops.
void choose_flags_loops(std::vector<PlannedKernel> &kernels, const std::vector<RecordedOp> &ops);

// After `batch` ran: runs the flags pass of every kernel that asked for it
// and ORs its words into `result.fp_flags`, clearing the requests.
// `first_dispatch`: each kernel's first dispatch in `batch`, then the end.
void run_flags_passes(const std::vector<PlannedKernel> &kernels,
                      const std::vector<size_t> &first_dispatch,
                      const std::vector<vk::Dispatch> &batch, KernelStore &store,
                      vk::Executor &executor, vk::BatchResult &result);

}  // namespace npvk
