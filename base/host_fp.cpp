#include "base/host_fp.hpp"

#include <npvk/npvk.h>

#include <cfenv>

namespace npvk {

uint32_t host_fp_flags() {
  const int raised = std::fetestexcept(FE_ALL_EXCEPT);
  uint32_t flags = 0;
  if (raised & FE_DIVBYZERO) flags |= NPVK_FP_DIVIDE_BY_ZERO;
  if (raised & FE_OVERFLOW) flags |= NPVK_FP_OVERFLOW;
  if (raised & FE_UNDERFLOW) flags |= NPVK_FP_UNDERFLOW;
  if (raised & FE_INVALID) flags |= NPVK_FP_INVALID;
  return flags;
}

}  // namespace npvk
