// The context's side of observability: what a flush leaves for NPVK_GRAPH,
// the trace's device track and npvk_context_last_kernel_*.
#include <cstdio>
#include <fstream>

#include "compile/codegen.hpp"
#include "compile/dtype.hpp"
#include "compile/ops.hpp"
#include "runtime/context.hpp"
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

std::string matmul_text(const MatmulOp &op) {
  return "matmul, " + std::string(dtype_info(op.dtype).name) + ": " + std::to_string(op.batches) +
         " x (" + std::to_string(op.m) + " x " + std::to_string(op.k) + ") @ (" +
         std::to_string(op.k) + " x " + std::to_string(op.n) + "), " + std::to_string(op.tiles()) +
         " tiles of " + std::to_string(kMatmulTile) + " x " + std::to_string(kMatmulTile) +
         ", a workgroup each\n";
}

std::string reduce_text(const ReduceOp &r) {
  if (r.spec.mode == ReduceMode::Scan)
    return reduce_method_name(r) + ", " + dtype_info(r.spec.in).name + " -> " +
           dtype_info(r.spec.out).name + ": " + std::to_string(r.outputs) + " line" +
           (r.outputs == 1 ? "" : "s") + " of " + std::to_string(r.reduced) +
           " elements, an invocation per line\n";
  return reduce_method_name(r) + ", " + dtype_info(r.spec.in).name + " -> " +
         dtype_info(r.spec.out).name + ": " + std::to_string(r.outputs) + " result" +
         (r.outputs == 1 ? "" : "s") + " of " + std::to_string(r.reduced) + " elements each, " +
         (r.spec.mode == ReduceMode::Workgroup ? "a workgroup per chunk"
                                               : "an invocation per result") +
         (r.chunks > 1
              ? ", " + std::to_string(r.chunks) + " chunks per result, then a pass folding them"
              : std::string()) +
         "\n";
}

}  // namespace

void Context::observe_flush(const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels,
                            const std::vector<size_t> &first_dispatch,
                            const vk::BatchResult &result, int64_t submit_ns) {
  if (kernels.empty()) return;
  const PlannedKernel &last = kernels.back();
  last_kernel_ = last.spec;
  last_kernel_elements_ = uint64_t(last.space.count);
  last_reduce_.reset();
  last_matmul_.reset();
  if (last.reduce) last_reduce_ = *last.reduce;
  if (last.matmul) last_matmul_ = *last.matmul;
  if (!graph_dir_.empty()) {
    char name[32];
    std::snprintf(name, sizeof name, "/flush-%06llu.dot", (unsigned long long)graphs_written_++);
    // A graph that cannot be written must not fail the user's work.
    std::ofstream(graph_dir_ + name) << flush_graph_dot(ops, kernels, stats_.flushes);
  }
  Trace *trace = profiler_.trace();
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
      if (kernel.matmul) {
        const MatmulOp &op = *kernel.matmul;
        span.name = "matmul";
        if (passes > 1)
          span.name +=
              " (" + std::to_string(d - first_dispatch[k] + 1) + "/" + std::to_string(passes) + ")";
        span.args = "\"m\":" + std::to_string(op.m) + ",\"k\":" + std::to_string(op.k) +
                    ",\"n\":" + std::to_string(op.n) +
                    ",\"batches\":" + std::to_string(op.batches) + ",\"kernel\":\"" +
                    json_escape(op.key()) + "\"";
      } else if (kernel.reduce) {
        span.name = reduce_method_name(*kernel.reduce);
        if (passes > 1)
          span.name +=
              " (" + std::to_string(d - first_dispatch[k] + 1) + "/" + std::to_string(passes) + ")";
        span.args = "\"elements\":" + std::to_string(kernel.space.count) +
                    ",\"results\":" + std::to_string(kernel.reduce->outputs) + ",\"kernel\":\"" +
                    json_escape(kernel.reduce->spec.key()) + "\"";
      } else {
        span.name = kernel_name(kernel.spec);
        span.args = "\"elements\":" + std::to_string(kernel.space.count) +
                    ",\"ops\":" + std::to_string(kernel.ops.size()) + ",\"kernel\":\"" +
                    json_escape(kernel.spec.key()) + "\"";
      }
      span.args += ",\"flush\":" + std::to_string(stats_.flushes);
      span.begin_ns = result.dispatch_ns[2 * d];
      span.end_ns = result.dispatch_ns[2 * d + 1];
      batch.dispatches.push_back(std::move(span));
    }
  }
  trace->device_batch(std::move(batch));
}

std::string Context::last_kernel_source() const {
  if (last_matmul_) return generate_matmul_glsl(*last_matmul_);
  if (last_reduce_) return generate_reduce_glsl(last_reduce_->spec);
  if (last_kernel_.steps.empty()) return "";
  return generate_glsl(last_kernel_, traits_);
}

std::string Context::last_kernel_graph() const {
  if (last_matmul_) return matmul_text(*last_matmul_);
  if (last_reduce_) return reduce_text(*last_reduce_);
  if (last_kernel_.steps.empty()) return "";
  return kernel_graph_text(last_kernel_, last_kernel_elements_);
}

}  // namespace npvk
