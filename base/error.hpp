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

// A built message would be built on every call, failing or not: those
// checks use NPVK_REQUIRE, which builds it only on failure.
void require(bool condition, npvk_status status, const std::string &message) = delete;

// A literal message becomes a string only when the check fails (most
// messages are longer than the small-string buffer: an allocation per check).
inline void require(bool condition, npvk_status status, const char *message) {
  if (!condition) fail(status, message);
}

}  // namespace npvk

// require() for messages built from values: the message expression is
// evaluated only when the check fails, so the recording path, which checks
// every operand of every op, builds no strings.
#define NPVK_REQUIRE(condition, status, message)         \
  do {                                                   \
    if (!(condition)) ::npvk::fail((status), (message)); \
  } while (false)

namespace npvk {}  // namespace npvk
