// Observability: profile, trace, flush graphs, the last kernel, sync and flush hooks.
#include <cstdio>
#include <fstream>
#include <string>

#include "capi/capi_common.hpp"
#include "interpose/managed_memory.hpp"
#include "runtime/recorder.hpp"

using namespace npvk;

namespace {

// The "size query" convention: copy what fits, always NUL-terminate, tell the
// full length.
void copy_text(const std::string &text, char *out, size_t capacity, size_t *length) {
  require_out(length, "length");
  require(out || capacity == 0, NPVK_ERR_INVALID_ARGUMENT, "out is null");
  *length = text.size();
  if (capacity == 0) return;
  size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

npvk_status context_text(npvk_context h, std::string (Context::*text)() const, char *out,
                         size_t capacity, size_t *length) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    copy_text(((*ctx).*text)(), out, capacity, length);
  });
}

}  // namespace

extern "C" {

NPVK_API npvk_status npvk_context_get_profile(npvk_context h, npvk_profile *out) {
  return guarded([&] {
    require_out(out, "out");
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    copy_sized(out, ctx->profiler().snapshot());
  });
}

NPVK_API npvk_status npvk_context_write_profile(npvk_context h, const char *path) {
  return guarded([&] {
    auto ctx = get_context(h);
    std::string text;
    {
      ContextLock lock(ctx->mutex());
      const npvk_stats stats = ctx->stats();
      const npvk_profile profile = ctx->profiler().snapshot();
      text = path ? profile_json(stats, profile) + "\n" : profile_text(stats, profile);
    }
    if (!path) {
      std::fputs(text.c_str(), stderr);
      return;
    }
    std::ofstream out(path, std::ios::trunc);
    out << text;
    NPVK_REQUIRE(bool(out), NPVK_ERR_INVALID_ARGUMENT, std::string("cannot write ") + path);
  });
}

NPVK_API npvk_status npvk_context_trace_begin(npvk_context h) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->check_usable();
    ctx->profiler().trace_begin();
  });
}

NPVK_API npvk_status npvk_context_trace_end(npvk_context h, const char *path) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->profiler().trace_end(path ? path : "");
  });
}

NPVK_API npvk_status npvk_context_set_graph_dir(npvk_context h, const char *dir) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->set_graph_dir(dir ? dir : "");
  });
}

NPVK_API npvk_status npvk_context_last_kernel_source(npvk_context h, char *out, size_t capacity,
                                                     size_t *length) {
  return context_text(h, &Context::last_kernel_source, out, capacity, length);
}

NPVK_API npvk_status npvk_context_last_kernel_graph(npvk_context h, char *out, size_t capacity,
                                                    size_t *length) {
  return context_text(h, &Context::last_kernel_graph, out, capacity, length);
}

NPVK_API npvk_status npvk_context_set_flush_hook(npvk_context h, npvk_flush_hook hook, void *user) {
  return guarded([&] {
    auto ctx = get_context(h);
    ContextLock lock(ctx->mutex());
    ctx->set_flush_hook(hook, user);
  });
}

// No lock: the serial is the calling thread's own.
NPVK_API npvk_status npvk_context_last_op(npvk_context h, uint64_t *serial) {
  return guarded([&] {
    require_out(serial, "serial");
    *serial = get_context(h)->last_op_of_this_thread();
  });
}

NPVK_API uint64_t npvk_thread_last_op(void) {
  return Recorder::last_serial_of_this_thread_anywhere();
}

NPVK_API npvk_status npvk_managed_set_sync_hook(npvk_sync_hook hook, void *user) {
  return guarded([&] { ManagedMemory::set_sync_hook(hook, user); });
}

}  // extern "C"
