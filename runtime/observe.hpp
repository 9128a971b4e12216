// The context's side of observability: what a flush leaves for NPVK_GRAPH,
// the trace's device track and npvk_context_last_kernel_* (explain).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/fusion.hpp"
#include "runtime/profile.hpp"
#include "vulkan/executor.hpp"

namespace npvk {

class FlushObserver {
 public:
  void set_graph_dir(std::string dir) { graph_dir_ = std::move(dir); }
  // After flush number `flush_index` ran: its graph, its device spans, and
  // its last kernel. Kernel i ran dispatches [first_dispatch[i], first_dispatch[i + 1]).
  void observe(const std::vector<RecordedOp> &ops, const std::vector<PlannedKernel> &kernels,
               const std::vector<size_t> &first_dispatch, const vk::BatchResult &result,
               int64_t submit_ns, uint64_t flush_index, Profiler &profiler);
  std::string last_kernel_source() const;
  std::string last_kernel_graph() const;

 private:
  std::string graph_dir_;  // NPVK_GRAPH
  uint64_t graphs_written_ = 0;
  FusedKernelSpec last_kernel_;
  uint64_t last_kernel_elements_ = 0;
  // Set when the last kernel was a reduction, scan or matrix product.
  std::shared_ptr<const StandaloneKernel> last_standalone_;
};

}  // namespace npvk
