// What a flush ran, for people: the recorded ops, the arrays they read and
// write, and the kernels the fusion planner made of them (NPVK_GRAPH writes
// one Graphviz DOT file per flush; npvk_context_last_kernel_graph describes
// the last kernel in text).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compile/fusion.hpp"

namespace npvk {

// One cluster per kernel; arrays are ellipses (dashed when the kernel never
// stores them: contracted temporaries), scalars plain text.
std::string flush_graph_dot(const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels, uint64_t flush_index);

// A kernel's slots and steps, one line each.
std::string kernel_graph_text(const FusedKernelSpec &spec, uint64_t elements);

// A scalar view's value as its dtype prints it.
std::string scalar_text(npvk_dtype dtype, uint64_t bits);

}  // namespace npvk
