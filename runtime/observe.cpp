#include "runtime/observe.hpp"

#include <cstdio>
#include <fstream>

#include "compile/dtype.hpp"
#include "compile/families/elementwise/elementwise_glsl.hpp"
#include "compile/ops.hpp"
#include "runtime/graph_dot.hpp"

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

void FlushObserver::observe(const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels,
                            const std::vector<size_t> &first_dispatch,
                            const vk::BatchResult &result, int64_t submit_ns, uint64_t flush_index,
                            Profiler &profiler) {
  if (kernels.empty()) return;
  const PlannedKernel &last = kernels.back();
  last_kernel_ = last.spec;
  last_kernel_elements_ = uint64_t(last.space.count);
  last_standalone_ = last.standalone ? ops[last.ops[0]].standalone : nullptr;
  if (!graph_dir_.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "/flush-%06llu.dot", (unsigned long long)graphs_written_++);
    // A graph that cannot be written must not fail the user's work.
    std::ofstream(graph_dir_ + name) << flush_graph_dot(ops, kernels, flush_index);
  }
  Trace *trace = profiler.trace();
  if (!trace || first_dispatch.size() != kernels.size() + 1 ||
      result.dispatch_ns.size() != 2 * first_dispatch.back())
    return;
  Trace::Batch batch;
  batch.host_submit_ns = submit_ns;
  batch.host_done_ns = Profiler::now_ns();
  batch.dispatches.reserve(first_dispatch.back());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const PlannedKernel &kernel = kernels[k];
    const size_t passes = first_dispatch[k + 1] - first_dispatch[k];
    for (size_t d = first_dispatch[k]; d < first_dispatch[k + 1]; ++d) {
      Trace::Span span;
      if (kernel.standalone) {
        span.name = kernel.standalone->name();
        if (passes > 1)
          span.name +=
              " (" + std::to_string(d - first_dispatch[k] + 1) + "/" + std::to_string(passes) + ")";
        span.args = kernel.standalone->trace_args(kernel.space.count);
      } else {
        span.name = kernel_name(kernel.spec);
        span.args = "\"elements\":" + std::to_string(kernel.space.count) +
                    ",\"ops\":" + std::to_string(kernel.ops.size()) + ",\"kernel\":\"" +
                    json_escape(kernel.spec.key()) + "\"";
      }
      span.args += ",\"flush\":" + std::to_string(flush_index);
      span.begin_ns = result.dispatch_ns[2 * d];
      span.end_ns = result.dispatch_ns[2 * d + 1];
      batch.dispatches.push_back(std::move(span));
    }
  }
  trace->device_batch(std::move(batch));
}

std::string FlushObserver::last_kernel_source() const {
  if (last_standalone_) return last_standalone_->glsl();
  if (last_kernel_.steps.empty()) return "";
  return generate_glsl(last_kernel_);
}

std::string FlushObserver::last_kernel_graph() const {
  if (last_standalone_) return last_standalone_->describe();
  if (last_kernel_.steps.empty()) return "";
  return kernel_graph_text(last_kernel_, last_kernel_elements_);
}

}  // namespace npvk
