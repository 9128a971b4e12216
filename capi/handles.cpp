#include "capi/handles.hpp"

#include <pthread.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "base/error.hpp"

namespace npvk {
namespace {

struct Table {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::shared_ptr<void>> objects;
  uint64_t next = 1;
};

Table &table() {
  // Leaked on purpose: handles may be released from atexit handlers and
  // static destructors of the caller, after our own statics would be gone.
  static Table *t = new Table();
  return *t;
}

// fork() while another thread looks up a handle would leave the child a
// table whose lock no thread will release, and the child's first call into
// the ABI would wait forever (test_stress.py's fork under load, about one
// run in 50 on Mesa 25). So the forking thread holds the lock across the
// fork. Registered when the library loads, before managed memory registers
// its own handlers: prepare handlers run in reverse order, so its flush runs
// first and this lock is taken last (no section under it takes another lock).
struct ForkSafeTable {
  ForkSafeTable() {
    table();
    pthread_atfork([] { table().mutex.lock(); }, [] { table().mutex.unlock(); },
                   [] { table().mutex.unlock(); });
  }
} const g_fork_safe_table;

const char *kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Context:
      return "context";
    case HandleKind::Buffer:
      return "buffer";
    case HandleKind::View:
      return "view";
  }
  return "object";
}

[[noreturn]] void invalid(HandleKind kind, uint64_t id) {
  std::string msg = std::string("invalid ") + kind_name(kind) + " handle " + std::to_string(id);
  uint8_t actual = uint8_t(id >> 56);
  if (id == 0)
    msg += " (zero: never created)";
  else if (actual != uint8_t(kind) && actual >= 1 && actual <= 3)
    msg += std::string(" (it is a ") + kind_name(HandleKind(actual)) + " handle)";
  else
    msg += " (released or never created)";
  fail(NPVK_ERR_INVALID_HANDLE, msg);
}

}  // namespace

uint64_t handle_add(HandleKind kind, std::shared_ptr<void> object) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  uint64_t id = (uint64_t(kind) << 56) | t.next++;
  t.objects.emplace(id, std::move(object));
  return id;
}

std::shared_ptr<void> handle_get(HandleKind kind, uint64_t id) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.objects.find(id);
  if (it == t.objects.end() || uint8_t(id >> 56) != uint8_t(kind)) invalid(kind, id);
  return it->second;
}

std::shared_ptr<void> handle_remove(HandleKind kind, uint64_t id) {
  Table &t = table();
  std::shared_ptr<void> object;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.objects.find(id);
    if (it == t.objects.end() || uint8_t(id >> 56) != uint8_t(kind)) invalid(kind, id);
    object = std::move(it->second);
    t.objects.erase(it);
  }
  return object;  // destroyed by the caller, outside the table's lock
}

}  // namespace npvk
