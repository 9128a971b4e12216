// The context's side of observability: what a flush leaves for NPVK_GRAPH,
// the trace's device track and npvk_context_last_kernel_*.
#include <cstdio>
#include <fstream>

#include "core/codegen.hpp"
#include "core/context.hpp"
#include "core/graph_dot.hpp"
#include "core/op_table.hpp"

namespace npvk {
namespace {

// Long fused chains would make unreadable span names; the args hold the key.
std::string kernel_name(const FusedKernelSpec &spec) {
  constexpr size_t kNamedSteps = 4;
  std::string name;
  for (size_t i = 0; i < spec.steps.size() && i < kNamedSteps; ++i)
    name += (i ? "+" : "") + std::string(op_info(spec.steps[i].op.op).name);
  if (spec.steps.size() > kNamedSteps)
    name += "+... (" + std::to_string(spec.steps.size()) + " ops)";
  return name;
}

}  // namespace

void Context::observe_flush(const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels,
                            const vk::BatchResult &result, int64_t submit_ns) {
  if (kernels.empty()) return;
  last_kernel_ = kernels.back().spec;
  last_kernel_elements_ = uint64_t(kernels.back().space.count);
  if (!graph_dir_.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "/flush-%06llu.dot", (unsigned long long)graphs_written_++);
    // A graph that cannot be written must not fail the user's work.
    std::ofstream(graph_dir_ + name) << flush_graph_dot(ops, kernels, stats_.flushes);
  }
  Trace *trace = profiler_.trace();
  if (!trace || result.dispatch_ns.size() != 2 * kernels.size()) return;
  Trace::Batch batch;
  batch.host_submit_ns = submit_ns;
  batch.host_done_ns = Profiler::now_ns();
  batch.dispatches.reserve(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const PlannedKernel &kernel = kernels[k];
    Trace::Span span;
    span.name = kernel_name(kernel.spec);
    span.args = "\"elements\":" + std::to_string(kernel.space.count) +
                ",\"ops\":" + std::to_string(kernel.ops.size()) + ",\"flush\":" +
                std::to_string(stats_.flushes) + ",\"kernel\":\"" +
                json_escape(kernel.spec.key()) + "\"";
    span.begin_ns = result.dispatch_ns[2 * k];
    span.end_ns = result.dispatch_ns[2 * k + 1];
    batch.dispatches.push_back(std::move(span));
  }
  trace->device_batch(std::move(batch));
}

std::string Context::last_kernel_source() const {
  if (last_kernel_.steps.empty()) return "";
  return generate_glsl(last_kernel_, traits_);
}

std::string Context::last_kernel_graph() const {
  if (last_kernel_.steps.empty()) return "";
  return kernel_graph_text(last_kernel_, last_kernel_elements_);
}

}  // namespace npvk
