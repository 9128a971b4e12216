// The one exception type of the runtime. The C ABI barrier (capi/barrier.cpp)
// turns it into a status code and a per-thread message; nothing else may escape.
#pragma once

#include <npvk/npvk.h>

#include <stdexcept>
#include <string>

namespace npvk {

class Error : public std::runtime_error {
 public:
  Error(npvk_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  npvk_status status() const { return status_; }

 private:
  npvk_status status_;
};

[[noreturn]] inline void fail(npvk_status status, const std::string &message) {
  throw Error(status, message);
}

inline void require(bool condition, npvk_status status, const std::string &message) {
  if (!condition) fail(status, message);
}

}  // namespace npvk
