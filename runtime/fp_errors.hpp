// The FP exceptions raised by work that ran (on the device or replayed on the
// host), one entry per op and method, until the caller takes them (npvk.h).
#pragma once

#include <npvk/npvk.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace npvk {

class FpErrors {
 public:
  void note(npvk_op op, uint32_t flags) {
    if (!flags) return;
    const uint32_t id = uint32_t(op);
    constexpr uint32_t kMethod = NPVK_FP_IN_REDUCE | NPVK_FP_IN_ACCUMULATE;
    auto it = std::find_if(errors_.begin(), errors_.end(), [&](const npvk_fp_error &e) {
      return e.op == id && (e.flags & kMethod) == (flags & kMethod);
    });
    if (it != errors_.end())
      it->flags |= flags;
    else
      errors_.push_back({id, flags});
  }
  std::vector<npvk_fp_error> take() {
    std::vector<npvk_fp_error> errors;
    errors.swap(errors_);
    return errors;
  }

 private:
  std::vector<npvk_fp_error> errors_;
};

}  // namespace npvk
