// Handle values for the C ABI. A handle is a 64-bit id whose top byte names
// the kind of object; ids are never reused, so a stale or forged handle is
// found missing in the table and reported instead of dereferenced.
#pragma once

#include <cstdint>
#include <memory>

namespace npvk {

enum class HandleKind : uint8_t { Context = 1, Buffer = 2, View = 3 };

uint64_t handle_add(HandleKind kind, std::shared_ptr<void> object);
// Throws NPVK_ERR_INVALID_HANDLE if `id` is not a live handle of `kind`.
std::shared_ptr<void> handle_get(HandleKind kind, uint64_t id);
// Returns the object that was removed; throws like handle_get.
std::shared_ptr<void> handle_remove(HandleKind kind, uint64_t id);

template <typename T>
std::shared_ptr<T> handle_object(HandleKind kind, uint64_t id) {
  return std::static_pointer_cast<T>(handle_get(kind, id));
}

}  // namespace npvk
