#include "runtime/graph_dot.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "compile/dtype.hpp"
#include "compile/ops.hpp"

namespace npvk {
namespace {

// An array node stands for the same elements wherever they appear: buffer,
// byte offset and dtype.
using ArrayKey = std::tuple<const Buffer *, uint64_t, npvk_dtype>;

ArrayKey key_of(const View &v) {
  return {v.buffer.get(), v.offset, v.dtype};
}

std::string shape_text(const View &v) {
  std::string s = "(";
  for (uint32_t d = 0; d < v.ndim; ++d) s += (d ? "," : "") + std::to_string(v.shape[d]);
  return s + (v.ndim == 1 ? ",)" : ")");
}

std::string signature(const KernelSpec &spec) {
  std::string s;
  for (uint32_t k = 0; k < spec.count(); ++k) {
    if (k == spec.nin)
      s += "->";
    else if (k)
      s += ",";
    s += dtype_info(spec.operands[k].dtype).name;
    if (spec.operands[k].scalar) s += " scalar";
  }
  return s;
}

}  // namespace

std::string scalar_text(npvk_dtype dtype, uint64_t bits) {
  char buf[64];
  const DtypeInfo &info = dtype_info(dtype);
  if (dtype == NPVK_FLOAT64 || dtype == NPVK_FLOAT32) {
    double d = 0;
    if (dtype == NPVK_FLOAT64) {
      std::memcpy(&d, &bits, sizeof d);
    } else {
      float f = 0;
      uint32_t low = uint32_t(bits);
      std::memcpy(&f, &low, sizeof f);
      d = f;
    }
    std::snprintf(buf, sizeof buf, "%.17g", d);
  } else if (info.kind == DtypeKind::Signed) {
    std::snprintf(buf, sizeof buf, "%lld", (long long)int64_t(bits));
  } else if (info.kind == DtypeKind::Bool) {
    return bits ? "True" : "False";
  } else {
    std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)bits);
  }
  return buf;
}

std::string flush_graph_dot(const std::vector<RecordedOp> &ops,
                            const std::vector<PlannedKernel> &kernels, uint64_t flush_index) {
  std::set<ArrayKey> contracted;
  for (const PlannedKernel &k : kernels)
    for (size_t s = 0; s < k.slots.size(); ++s)
      if (!k.spec.slots[s].scalar && !k.spec.slots[s].stored && k.slots[s].view)
        contracted.insert(key_of(*k.slots[s].view));

  std::string out = "digraph flush_" + std::to_string(flush_index) + " {\n";
  out += "  label=\"npvk flush " + std::to_string(flush_index) + ": " + std::to_string(ops.size()) +
         " op" + (ops.size() == 1 ? "" : "s") + ", " + std::to_string(kernels.size()) + " kernel" +
         (kernels.size() == 1 ? "" : "s") +
         "\";\n  rankdir=LR;\n  node [fontname=\"monospace\", fontsize=10];\n";
  for (size_t k = 0; k < kernels.size(); ++k) {
    const PlannedKernel &kernel = kernels[k];
    const std::string elements = ", " + std::to_string(kernel.space.count) + " elements";
    const std::string what = kernel.standalone ? kernel.standalone->summary(kernel.space.count)
                                               : std::to_string(kernel.ops.size()) + " op" +
                                                     (kernel.ops.size() == 1 ? "" : "s") + elements;
    out += "  subgraph cluster_k" + std::to_string(k) + " {\n    label=\"kernel " +
           std::to_string(k) + ": " + what + "\";\n    style=rounded; color=blue;\n";
    for (size_t i : kernel.ops)
      out += "    op" + std::to_string(i) + " [shape=box, label=\"#" + std::to_string(i) + " " +
             (ops[i].standalone ? ops[i].standalone->name() : op_info(ops[i].spec.op).name) +
             "\\n" + signature(ops[i].spec) + "\"];\n";
    out += "  }\n";
  }

  std::map<ArrayKey, std::string> arrays;
  std::string edges;
  size_t scalars = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const RecordedOp &op = ops[i];
    for (uint32_t k = 0; k < op.spec.count(); ++k) {
      const View &v = op.operands[k];
      std::string node;
      if (v.scalar) {
        node = "s" + std::to_string(scalars++);
        out += "  " + node + " [shape=plaintext, label=\"" + scalar_text(v.dtype, v.scalar_bits) +
               "\"];\n";
      } else {
        auto [it, added] = arrays.emplace(key_of(v), "a" + std::to_string(arrays.size()));
        node = it->second;
        if (added) {
          const bool dead = contracted.count(key_of(v)) != 0;
          out += "  " + node + " [shape=ellipse" + (dead ? ", style=dashed" : "") + ", label=\"" +
                 node + " " + dtype_info(v.dtype).name + shape_text(v) +
                 (dead ? "\\ncontracted" : "") + "\"];\n";
        }
      }
      const std::string op_node = "op" + std::to_string(i);
      edges += "  " + (k < op.spec.nin ? node + " -> " + op_node : op_node + " -> " + node) + ";\n";
    }
  }
  return out + edges + "}\n";
}

std::string kernel_graph_text(const FusedKernelSpec &spec, uint64_t elements) {
  std::string out =
      std::to_string(spec.steps.size()) + " op" + (spec.steps.size() == 1 ? "" : "s") + " over " +
      std::to_string(elements) + " elements, " +
      (spec.contiguous ? std::string("contiguous") : "strided, rank " + std::to_string(spec.rank)) +
      "\n";
  for (size_t s = 0; s < spec.slots.size(); ++s) {
    const FusedKernelSpec::Slot &slot = spec.slots[s];
    out += "  s" + std::to_string(s) + " " + dtype_info(slot.dtype).name +
           (slot.scalar   ? " scalar"
            : slot.stored ? " array"
                          : " contracted temporary") +
           "\n";
  }
  for (size_t i = 0; i < spec.steps.size(); ++i) {
    const FusedKernelSpec::Step &step = spec.steps[i];
    out += "  step " + std::to_string(i) + ": " + op_info(step.op.op).name + "(";
    for (uint32_t k = 0; k < step.op.count(); ++k) {
      if (k == step.op.nin)
        out += ") -> ";
      else if (k)
        out += ", ";
      out += "s" + std::to_string(step.slot[k]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace npvk
