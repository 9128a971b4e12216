// ManagedMemory's life: enabling it, the sync hook, and the program's threads
// (which decide whether arrays get an alias mapping).
#include "interpose/managed_memory.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/error.hpp"
#include "base/options.hpp"
#include "interpose/fault_handler.hpp"
#include "interpose/managed_pages.hpp"
#include "interpose/syscall_guard.hpp"
#include "runtime/host/host_workers.hpp"

namespace npvk {
namespace {

std::mutex g_enable_mutex;

// Threads besides the caller's when npvk_managed_threads_are_pools was called.
std::atomic<int> g_pool_threads{0};

// Threads of this process now (/proc/self/stat, field 20), or 0 if unknown.
// npvk's own host workers are left out: they are no thread of the program's.
int thread_count() {
  FILE *f = std::fopen("/proc/self/stat", "r");
  if (!f) return 0;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // The command name (field 2) may hold spaces: fields count from its ')'.
  const char *p = std::strrchr(buf, ')');
  for (int field = 2; p && field < 20; ++field) p = std::strchr(p + 1, ' ');
  return p ? std::max(0, std::atoi(p + 1) - HostWorkers::threads_started()) : 0;
}

}  // namespace

namespace {
// Read on every host sync, set rarely: a torn pair would call a new hook
// with the old argument, so both change under the hook lock.
std::mutex g_hook_mutex;
npvk_sync_hook g_sync_hook = nullptr;
void *g_sync_user = nullptr;
}  // namespace

void ManagedMemory::set_sync_hook(npvk_sync_hook hook, void *user) {
  std::lock_guard<std::mutex> guard(g_hook_mutex);
  g_sync_hook = hook;
  g_sync_user = user;
}

void ManagedMemory::note_sync(uint64_t npvk_managed_stats::*counter, npvk_sync_reason reason) {
  ++(stats_.*counter);
  std::lock_guard<std::mutex> guard(g_hook_mutex);
  if (g_sync_hook) g_sync_hook(uint32_t(reason), g_sync_user);
}

ManagedMemory &ManagedMemory::enable(const npvk_context_options *options) {
  std::lock_guard<std::mutex> guard(g_enable_mutex);
  if (instance_) {
    require(!instance_->forked_, NPVK_ERR_UNSUPPORTED,
            "managed memory is unavailable in the child of a fork");
    ContextLock lock(instance_->ctx_->mutex());
    instance_->active_ = true;
    install_fault_handler();
    install_syscall_guard();
    return *instance_;
  }
  // The driver's own threads (lavapipe's) are not the program's, nor are
  // library pools the caller vouched for (NumPy's OpenBLAS starts one thread
  // per core at import: counted, they gave every single-threaded program
  // shared mappings, which get no huge pages, and 32 MiB then cost 0.7 ms
  // per mprotect).
  const int before = thread_count();
  const int pools = std::min(g_pool_threads.load(), std::max(0, before - 1));
  // The device is made when work first needs it, where an earlier process
  // stored its description (Context::create); its threads are counted then.
  std::shared_ptr<Context> ctx = Context::create(options, /*device_when_needed=*/true);
  const int driver_threads = std::max(0, thread_count() - before);
  // Never destroyed: arrays may be freed during interpreter shutdown, after
  // every static destructor of ours would have run.
  auto *mm = new ManagedMemory(std::move(ctx));
  mm->driver_threads_ = driver_threads + pools;
  if (mm->alias_mode_ == AliasMode::Auto && before - pools > 1) mm->threaded_ = true;
  mm->ctx_->set_observer(mm);
  install_fault_handler();
  install_syscall_guard();
  std::atexit(at_exit);
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  instance_ = mm;
  return *mm;
}

ManagedMemory::ManagedMemory(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {
  long page = sysconf(_SC_PAGESIZE);
  if (page > 0) page_ = uint64_t(page);
  stats_.struct_size = sizeof(npvk_managed_stats);
  // NPVK_PAGE_ALIAS: 0 never, 1 always, unset: once the program runs more
  // than one thread (docs/architecture.md, "Managed memory").
  switch (process_options().page_alias) {
    case PageAlias::Never:
      alias_mode_ = AliasMode::Never;
      break;
    case PageAlias::Always:
      alias_mode_ = AliasMode::Always;
      break;
    case PageAlias::Auto:
      break;
  }
}

void ManagedMemory::set_active(bool active) {
  {
    ContextLock lock(ctx_->mutex());
    if (!active && active_ && !forked_) sync_all(&npvk_managed_stats::host_syncs_explicit, true);
    active_ = active;
  }
  // Every page is read-write now, and only device work protects pages again.
  if (!active) remove_syscall_guard();
}

bool ManagedMemory::wants_alias() {
  if (alias_mode_ != AliasMode::Auto) return alias_mode_ == AliasMode::Always;
  // A fresh mapping (this is not on the spare path): worth one small read
  // to notice threads that threads_starting() was not told about.
  if (!threaded_ && thread_count() - driver_threads_ > 1) threads_starting();
  return threaded_;
}

void ManagedMemory::threads_are_pools() {
  g_pool_threads = std::max(0, thread_count() - 1);
}

void ManagedMemory::threads_starting() {
  if (alias_mode_ != AliasMode::Auto || threaded_.load()) return;
  ContextLock lock(ctx_->mutex());
  if (threaded_ || forked_) return;
  threaded_ = true;
  // Every allocation made so far gets its alias now, before a second
  // thread can read one while a flush runs. Spares without one are dropped.
  ctx_->flush();
  for (auto it = spare_.begin(); it != spare_.end();) {
    Allocation *a = it->second;
    if (a->alias) {
      ++it;
      continue;
    }
    spare_bytes_ -= a->mapped;
    it = spare_.erase(it);
    unmap(*a);
  }
  for (auto &entry : allocations_) give_alias(*entry.second);
}

void ManagedMemory::give_alias(Allocation &a) {
  if (a.alias || a.freed || (a.buffer && !a.buffer->zero_copy)) return;
  protect(a, State::Host);
  uint8_t *user = nullptr, *alias = nullptr;
  if (!map_pair(a.mapped, &user, &alias)) return;
  std::memcpy(alias, a.base, a.mapped);
  // The shared pages replace the private ones at the same address.
  if (mremap(user, a.mapped, a.mapped, MREMAP_MAYMOVE | MREMAP_FIXED, a.base) == MAP_FAILED) {
    munmap(user, a.mapped);
    munmap(alias, a.mapped);
    return;
  }
  if (a.buffer) {
    try {
      ctx_->rewrap_host(*a.buffer, alias);
    } catch (const Error &) {
      // The device goes on reaching the pages through the program's
      // mapping, which before_flush then opens, as without an alias.
      munmap(alias, a.mapped);
      return;
    }
  }
  a.alias = alias;
}

// The context makes its device after binding (at its first device work):
// the driver's threads are not the program's.
void ManagedMemory::before_device_made() {
  threads_before_device_ = thread_count();
}

void ManagedMemory::after_device_made() {
  driver_threads_ += std::max(0, thread_count() - threads_before_device_);
}

}  // namespace npvk
