// The exception barrier of the C ABI: every exported function runs its body
// through guarded(), so no C++ exception crosses into C, and each failure
// leaves its message for npvk_last_error_message() on the calling thread.
#pragma once

#include <npvk/npvk.h>

#include <string>

namespace npvk {

void set_last_error(const std::string &message);

template <typename Body>
npvk_status guarded(Body &&body) noexcept;

npvk_status status_from_current_exception() noexcept;

template <typename Body>
npvk_status guarded(Body &&body) noexcept {
  try {
    body();
    return NPVK_SUCCESS;
  } catch (...) {
    return status_from_current_exception();
  }
}

// Checks an out-pointer argument.
void require_out(const void *out, const char *name);

}  // namespace npvk
