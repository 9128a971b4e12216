#include "capi/barrier.hpp"

#include <new>

#include "base/error.hpp"

namespace npvk {
namespace {

thread_local std::string t_last_error;

}  // namespace

void set_last_error(const std::string &message) {
  try {
    t_last_error = message;
  } catch (...) {
    t_last_error.clear();  // no memory for the message: an empty one beats a crash
  }
}

npvk_status status_from_current_exception() noexcept {
  try {
    throw;
  } catch (const Error &e) {
    set_last_error(e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    set_last_error("out of host memory");
    return NPVK_ERR_OUT_OF_HOST_MEMORY;
  } catch (const std::exception &e) {
    set_last_error(std::string("internal error: ") + e.what());
    return NPVK_ERR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return NPVK_ERR_INTERNAL;
  }
}

void require_out(const void *out, const char *name) {
  // Every call with an out-argument checks one: the message is built only
  // when it fails (a column sum's 1e5 loop calls each looked a pointer up).
  NPVK_REQUIRE(out != nullptr, NPVK_ERR_INVALID_ARGUMENT, std::string(name) + " is null");
}

}  // namespace npvk

extern "C" NPVK_API const char *npvk_last_error_message(void) {
  return npvk::t_last_error.c_str();
}
