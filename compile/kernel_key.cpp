// Kernel keys: the structural identity of an elementwise kernel, which
// names its compiled pipeline (see compile/kernel_spec.hpp).
#include <string>

#include "compile/dtype.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/ops.hpp"

namespace npvk {

std::string KernelSpec::key() const {
  std::string k = op_info(op).name + exponent.key_suffix();
  k += "(";
  for (uint32_t i = 0; i < count(); ++i) {
    if (i == nin)
      k += ")->";
    else if (i)
      k += ",";
    k += dtype_info(operands[i].dtype).suffix;
    if (operands[i].scalar) k += "s";
  }
  return k + (contiguous ? "/c" : "/r" + std::to_string(rank));
}

std::string FusedKernelSpec::key() const {
  std::string k = "s:";
  for (size_t i = 0; i < slots.size(); ++i) {
    k += (i ? "," : "") + std::string(dtype_info(slots[i].dtype).suffix);
    if (slots[i].scalar) k += "s";
    if (!slots[i].stored) k += "-";
  }
  k += "|";
  for (size_t j = 0; j < steps.size(); ++j) {
    const KernelSpec &op = steps[j].op;
    k += (j ? ";" : "") + std::string(op_info(op.op).name) + op.exponent.key_suffix() + "(";
    for (uint32_t i = 0; i < op.count(); ++i) {
      if (i == op.nin)
        k += ")->";
      else if (i)
        k += ",";
      k += std::to_string(steps[j].slot[i]);
    }
  }
  const char *flags = flags_loop == FlagsLoop::Deferred    ? "/fd"
                      : flags_loop == FlagsLoop::FlagsPass ? "/fp"
                                                           : "";
  return k +
         (contiguous ? (vector_access ? "/cv" : "/c")
                     : "/r" + std::to_string(rank) + (narrow_index ? "n" : "")) +
         (narrow_offsets ? "o" : "") + flags;
}

}  // namespace npvk
