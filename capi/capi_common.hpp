// Lookups shared by the C ABI's source files.
#pragma once

#include <npvk/npvk.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "base/error.hpp"
#include "capi/barrier.hpp"
#include "capi/handles.hpp"
#include "compile/view.hpp"
#include "runtime/buffer.hpp"
#include "runtime/context.hpp"

namespace npvk {

inline std::shared_ptr<Context> get_context(npvk_context h) {
  return handle_object<Context>(HandleKind::Context, h.id);
}
inline std::shared_ptr<Buffer> get_buffer(npvk_buffer h) {
  return handle_object<Buffer>(HandleKind::Buffer, h.id);
}
inline std::shared_ptr<View> get_view(npvk_view h) {
  return handle_object<View>(HandleKind::View, h.id);
}

// A scalar operand holding the value of `dtype` at `value` (capi_views.cpp).
View scalar_view(const std::shared_ptr<Context> &ctx, npvk_dtype dtype, const void *value);
std::shared_ptr<View> make_scalar_view(const std::shared_ptr<Context> &ctx, npvk_dtype dtype,
                                       const void *value);

// Copies a struct that carries its own size: at most what both sides know.
template <typename T>
void copy_sized(T *out, const T &value) {
  require(out->struct_size >= sizeof(uint32_t), NPVK_ERR_INVALID_ARGUMENT,
          "struct_size is not set");
  uint32_t caller_size = out->struct_size;
  std::memcpy(out, &value, std::min<size_t>(caller_size, sizeof(T)));
  out->struct_size = uint32_t(std::min<size_t>(caller_size, sizeof(T)));
}

}  // namespace npvk
