// The device memory budget (docs/architecture.md, "Memory"): mirrored
// buffers' device copies are freed to host memory, least recently used first,
// when the work being recorded needs more device memory than the budget has
// left. Zero-copy buffers hold no device copies, and npvk_buffer_create's
// memory has no host copy to fall back on, so neither is counted.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "runtime/context.hpp"

namespace npvk {
namespace {

// "512M", "2G", "4096": bytes with an optional binary K/M/G suffix.
bool parse_bytes(const char *text, uint64_t *out) {
  char *end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || *text == '-') return false;
  unsigned shift = 0;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case '\0':
      break;
    default:
      return false;
  }
  if (shift && *++end == 'B') ++end;  // "512MB" reads as meant
  if (*end != '\0' || value > (UINT64_MAX >> shift)) return false;
  *out = uint64_t(value) << shift;
  return true;
}

}  // namespace

void Context::set_budget_from_environment() {
  // VK_EXT_memory_budget's figure allows for what other processes hold;
  // without it, the heap's size is the most there can be.
  budget_ = device_->caps().local_heap_budget;
  if (!budget_) budget_ = device_->info().device_local_bytes;
  if (!budget_) budget_ = UINT64_MAX;
  if (const char *env = std::getenv("NPVK_DEVICE_MEMORY_BUDGET")) {
    if (!parse_bytes(env, &budget_))
      std::fprintf(stderr,
                   "npvk: NPVK_DEVICE_MEMORY_BUDGET=%s is not a byte count (e.g. 512M); ignored\n",
                   env);
  }
}

void Context::make_resident(Buffer *const *used, size_t count) {
  ++use_clock_;
  uint64_t need = 0;
  for (size_t i = 0; i < count; ++i) {
    Buffer *b = used[i];
    if (!b) continue;
    if (b->evicted && b->last_use != use_clock_) need += b->size();  // once per buffer
    b->last_use = use_clock_;
  }
  if (need == 0) return;
  if (!make_room(need, used, count) && !pending_.empty()) {
    // The queued work's own buffers fill the budget: run it, so that they
    // can be evicted, rather than fail.
    flush();
    ++stats_.budget_flushes;
    make_room(need, used, count);
  }
  if (held_ + need > budget_) {
    ++stats_.budget_overruns;
    if (!overrun_reported_)
      std::fprintf(stderr,
                   "npvk: an operation's operands need more device memory than "
                   "NPVK_DEVICE_MEMORY_BUDGET (%llu bytes) allows; it runs over the budget "
                   "(counted in budget_overruns)\n",
                   static_cast<unsigned long long>(budget_));
    overrun_reported_ = true;
  }
  for (size_t i = 0; i < count; ++i) {
    if (!used[i] || !used[i]->evicted) continue;
    inject_alloc_fault();
    allocate_copy(*used[i]);
  }
}

bool Context::make_room(uint64_t need, Buffer *const *keep, size_t count) {
  if (held_ + need <= budget_) return true;
  // Queued work reads and writes the copies it was recorded with.
  std::unordered_set<const Buffer *> busy(keep, keep + count);
  for (const RecordedOp &op : pending_)
    for (const View &v : op.operands)
      if (v.buffer) busy.insert(v.buffer.get());
  std::vector<std::shared_ptr<Buffer>> idle;
  for (const std::weak_ptr<Buffer> &weak : buffers_)
    if (std::shared_ptr<Buffer> b = weak.lock())
      if (b->mirrored() && b->device && !busy.count(b.get())) idle.push_back(std::move(b));
  std::sort(idle.begin(), idle.end(),
            [](const std::shared_ptr<Buffer> &x, const std::shared_ptr<Buffer> &y) {
              return x->last_use < y->last_use;
            });
  for (const std::shared_ptr<Buffer> &b : idle) {
    if (held_ + need <= budget_) break;
    evict(*b);
  }
  return held_ + need <= budget_;
}

void Context::evict(Buffer &buffer) {
  if (buffer.managed && observer_) observer_->before_evict(buffer);
  if (buffer.device_newer) {
    transfer(buffer, 0, buffer.host, buffer.size(), false);
    buffer.device_newer = false;
  }
  ++stats_.evictions;
  stats_.bytes_evicted += buffer.device->size();
  buffer.device.reset();
  buffer.evicted = true;
  if (buffer.managed && observer_) observer_->after_evict(buffer);
}

void Context::allocate_copy(Buffer &buffer) {
  auto copy =
      std::make_unique<vk::DeviceBuffer>(*device_, buffer.size(), vk::MemoryPlacement::DeviceLocal);
  copy->charge(&held_);
  buffer.device = std::move(copy);
  try {
    transfer(buffer, 0, buffer.host, buffer.size(), true);
  } catch (...) {
    buffer.device.reset();
    throw;
  }
  buffer.evicted = false;
  buffer.device_newer = false;
  peak_held_ = std::max<uint64_t>(peak_held_, held_);
  if (buffer.managed && observer_) observer_->after_reload(buffer);
}

}  // namespace npvk
