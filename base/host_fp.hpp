// The host's floating-point exception flags in npvk's terms.
#pragma once

#include <cstdint>

namespace npvk {

// The host's raised FP exceptions (fetestexcept) as NPVK_FP_* flags.
uint32_t host_fp_flags();

}  // namespace npvk
