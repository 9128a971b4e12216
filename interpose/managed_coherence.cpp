// Coherence of managed arrays between host and device: page protection,
// the context's use and flush hooks, host accesses and faults, and syncs.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "base/error.hpp"
#include "base/options.hpp"
#include "interpose/fault_handler.hpp"
#include "interpose/managed_memory.hpp"
#include "interpose/managed_pages.hpp"
#include "interpose/syscall_guard.hpp"

namespace npvk {
namespace {

int protection_of(ManagedMemory::State s) {
  switch (s) {
    case ManagedMemory::State::Host:
      return PROT_READ | PROT_WRITE;
    case ManagedMemory::State::DeviceReads:
    case ManagedMemory::State::Shared:
      return PROT_READ;
    default:
      return PROT_NONE;
  }
}

// Linux 6.1's synchronous collapse into huge pages (older headers lack it;
// older kernels answer EINVAL, and the advice alone stays).
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

// A zeroed array that this many flushes used is one a program steps in time
// (a grid made by np.zeros): every flush changes its protection, a
// page-table walk over 4 KiB pages, and its pages then pay for huge ones.
// Heat and SOR at medium size ran 10-20% slower with their grids on 4 KiB
// pages.
constexpr uint32_t kFlushesBeforeHugePages = 3;

}  // namespace

void ManagedMemory::set_protection(Allocation &a, int prot) {
  const int old = a.prot.load(std::memory_order_relaxed);
  if (old == prot) return;
  if (mprotect(a.base, a.mapped, prot) != 0)
    fail(NPVK_ERR_INTERNAL, std::string("mprotect failed: ") + strerror(errno));
  a.prot.store(prot);
  constexpr int kOpen = PROT_READ | PROT_WRITE;
  // The host may fault on these pages from now on: the handler must be ours.
  if (prot != kOpen) ensure_fault_handler();
  if (old == kOpen)
    restricted_.fetch_add(1);
  else if (prot == kOpen)
    restricted_.fetch_sub(1);
}

void ManagedMemory::protect(Allocation &a, State state) {
  set_protection(a, protection_of(state));
  a.state = state;
}

void ManagedMemory::restrict_to(Allocation &a, State state) {
  // Pages left closed after earlier device work (after_flush) are strict
  // enough for anything.
  const int want = protection_of(state);
  if (a.prot.load(std::memory_order_relaxed) != PROT_NONE) set_protection(a, want);
  a.state = state;
}

void ManagedMemory::open_for(Allocation &a, bool write) {
  if (a.state == State::Host)
    set_protection(a, PROT_READ | PROT_WRITE);
  else if (!write && a.prot.load(std::memory_order_relaxed) == PROT_NONE &&
           (a.state == State::DeviceReads || a.state == State::Shared))
    set_protection(a, PROT_READ);
}

void ManagedMemory::before_use(Buffer &buffer, bool write, const Overwrite *overwrite) {
  Allocation &a = *static_cast<Allocation *>(buffer.managed);
  a.last_op = ctx_->ops_recorded();
  if (buffer.zero_copy) {
    if (write)
      restrict_to(a, State::DeviceWrites);
    else if (a.state == State::Host)
      restrict_to(a, State::DeviceReads);
  } else {
    // An op that writes every byte of the array and reads none (a new
    // output, or a reused allocation's) needs none of the host's bytes.
    const bool overwritten = overwrite && overwrite->lo <= 0 && overwrite->hi >= int64_t(a.size);
    if (!a.device_valid && !overwritten) {
      // The host changed the pages since the device last saw them. Queued
      // work that uses them must see the old contents, so it runs before
      // the upload. That flush comes while an op is being recorded: its
      // operands before this one must stay queued (see after_flush).
      if (a.state != State::Host) protect(a, State::Host);
      flushing_in_record_ = true;
      try {
        ctx_->host_modified(buffer, a.queued);
      } catch (...) {
        flushing_in_record_ = false;
        throw;
      }
      flushing_in_record_ = false;
    }
    a.device_valid = true;
    if (write)
      protect(a, State::Device);
    else if (a.state == State::Host)
      protect(a, State::Shared);
  }
  if (!a.queued) {
    a.queued = true;
    queued_.push_back(&a);
  }
}

void ManagedMemory::before_flush() {
  // A CPU driver (lavapipe) reaches zero-copy pages through the addresses it
  // was given. Those are the alias where there is one; otherwise the
  // program's own mapping must be accessible while the batch runs (and a
  // thread reading a pending result meanwhile can see stale data).
  for (Allocation *a : queued_)
    if (!a->alias && a->buffer && a->buffer->zero_copy && a->state != State::Host)
      set_protection(*a, PROT_READ | PROT_WRITE);
}

void ManagedMemory::after_flush() {
  // The exit-time flush must run before the Vulkan layers' and drivers'
  // static destructors. Some of their statics are made lazily, at the first
  // submission, and so are destroyed before handlers registered earlier:
  // register again once the device has run work (at_exit runs only once).
  static std::once_flag reregistered;
  std::call_once(reregistered, [] { std::atexit(at_exit); });
  // Pages stay closed after the work until the host touches them.
  ensure_fault_handler();
  std::vector<Allocation *> done;
  done.swap(queued_);
  freed_queued_.clear();  // released below, every one of them
  for (Allocation *a : done) {
    if (flushing_in_record_ && !a->freed) {
      // The op being recorded may use it, and is not in the batch that just
      // ran: releasing it now would free device memory that op reads, and a
      // zero-copy page left writable would change under it. Which of the
      // queued allocations it uses is unknown here, so all stay queued until
      // the next flush (a freed one is no operand of a new op).
      if (!a->alias && a->buffer && a->buffer->zero_copy && a->state != State::Host)
        set_protection(*a, protection_of(a->state));
      queued_.push_back(a);
      continue;
    }
    a->queued = false;
    if (a->small_pages && !a->freed && ++a->flushes == kFlushesBeforeHugePages) give_huge_pages(*a);
    // The host copy is current. With an alias the program's pages stay as
    // closed as the work left them, until the host touches them (open_for):
    // arrays that only device work uses, step after step, cost no mprotect
    // (each is a page-table walk over the array; 4 KiB pages for shared
    // memory). Without one, before_flush opened them.
    if (a->buffer && a->buffer->zero_copy) a->state = State::Host;
    if (a->freed) release_allocation(*a);
  }
}

void ManagedMemory::give_huge_pages(Allocation &a) {
  a.small_pages = false;
  if (!process_options().huge_pages) return;
  madvise(a.base, a.mapped, MADV_HUGEPAGE);
  madvise(a.base, a.mapped, MADV_COLLAPSE);
}

void ManagedMemory::before_evict(Buffer &buffer) {
  // The download writes the pages: through the alias while the program's
  // mapping stays closed, or else through the program's mapping.
  Allocation &a = *static_cast<Allocation *>(buffer.managed);
  if (!a.alias && a.state != State::Host) protect(a, State::Host);
}

void ManagedMemory::after_evict(Buffer &buffer) {
  // The pages are the only copy now: the host may use them freely, and the
  // next device use uploads them.
  Allocation &a = *static_cast<Allocation *>(buffer.managed);
  protect(a, State::Host);
  a.device_valid = false;
}

void ManagedMemory::after_reload(Buffer &buffer) {
  static_cast<Allocation *>(buffer.managed)->device_valid = true;
}

void ManagedMemory::make_host_accessible(Allocation &a, bool write) {
  switch (a.state) {
    case State::Host:
      return;
    case State::DeviceReads:
      if (write) ctx_->flush();
      return;
    case State::DeviceWrites:
      ctx_->flush();
      return;
    case State::Device:
      if (a.queued) ctx_->flush();
      // The download writes the pages: through the alias while the
      // program's mapping stays closed, so that no other thread reads them
      // half-written; without one, through the program's mapping.
      if (!a.alias) protect(a, State::Host);
      ctx_->sync_buffer(*a.buffer);
      stats_.bytes_to_host += a.mapped;
      protect(a, write ? State::Host : State::Shared);
      if (write) a.device_valid = false;
      return;
    case State::Shared:
      if (write) {
        protect(a, State::Host);
        a.device_valid = false;
      }
      return;
  }
}

void ManagedMemory::host_access(const void *ptr, uint64_t size, bool write) {
  const auto *p = static_cast<const uint8_t *>(ptr);
  const uint8_t *end = p + (size ? size : 1);
  // Every buffer export of an array asks (a Cython function takes one per
  // array argument); most ranges lie outside every managed mapping.
  if (reinterpret_cast<uintptr_t>(end) <= lowest_.load(std::memory_order_relaxed) ||
      reinterpret_cast<uintptr_t>(p) >= highest_.load(std::memory_order_relaxed))
    return;
  ContextLock lock(ctx_->mutex());
  bool handler_checked = false;
  while (p < end) {
    Allocation *a = find(p);
    if (!a) {
      // Not managed here; the next managed allocation may start within the range.
      auto it = allocations_.upper_bound(reinterpret_cast<uintptr_t>(p));
      if (it == allocations_.end() || it->first >= reinterpret_cast<uintptr_t>(end)) return;
      p = reinterpret_cast<const uint8_t *>(it->first);
      continue;
    }
    if (!handler_checked) {
      // A sync point: the program reads managed pages next. Two sigaction
      // calls, so not for ranges that hold none.
      ensure_fault_handler();
      handler_checked = true;
    }
    if (a->state != State::Host) {
      uint64_t flushes = ctx_->stats().flushes;
      {
        Profiler::Scope scope(ctx_->profiler(), Phase::SyncExplicit);
        make_host_accessible(*a, write);
      }
      if (ctx_->stats().flushes != flushes)
        note_sync(&npvk_managed_stats::host_syncs_explicit, NPVK_SYNC_EXPLICIT);
    }
    open_for(*a, write);
    p = a->base + a->mapped;
  }
}

bool ManagedMemory::needs_access(const void *ptr, uint64_t size, bool write) {
  std::lock_guard<std::mutex> index(index_mutex_);
  const auto lo = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t hi = lo + size;
  auto it = allocations_.upper_bound(lo);
  if (it != allocations_.begin()) --it;
  for (; it != allocations_.end() && it->first < hi; ++it) {
    const Allocation &a = *it->second;
    if (it->first + a.mapped <= lo) continue;
    // The protection, not the state: current pages may still be closed.
    const int prot = a.prot.load();
    if (write ? prot != (PROT_READ | PROT_WRITE) : prot == PROT_NONE) return true;
  }
  return false;
}

void ManagedMemory::syscall_access(const void *ptr, uint64_t size, bool write) {
  if (!any_restricted() || !needs_access(ptr, size, write)) return;
  host_access(ptr, size, write);
  ContextLock lock(ctx_->mutex());
  ++stats_.syscalls_guarded;
}

bool ManagedMemory::handle_fault(void *addr, bool write) {
  ContextLock lock(ctx_->mutex());
  Allocation *a = find(addr);
  if (!a) return false;
  ++stats_.faults;
  if (a->state == State::Host) {
    // Current pages left closed after device work, or another thread made
    // them accessible between the fault and this lock.
    set_protection(*a, PROT_READ | PROT_WRITE);
    return true;
  }
  uint64_t flushes = ctx_->stats().flushes;
  {
    Profiler::Scope scope(ctx_->profiler(), Phase::SyncFault);
    make_host_accessible(*a, write);
    open_for(*a, write);
  }
  if (ctx_->stats().flushes != flushes)
    note_sync(&npvk_managed_stats::host_syncs_fault, NPVK_SYNC_FAULT);
  return true;
}

void ManagedMemory::sync_all(uint64_t npvk_managed_stats::*reason, bool open_pages) {
  if (!forked_) ensure_fault_handler();  // npvk.sync(): closed pages may stay closed
  ContextLock lock(ctx_->mutex());
  bool work = ctx_->has_pending(), closed = false;
  for (auto &entry : allocations_) {
    work = work || entry.second->state != State::Host;
    closed =
        closed || entry.second->prot.load(std::memory_order_relaxed) != (PROT_READ | PROT_WRITE);
  }
  if (!work && !(open_pages && closed)) return;
  const bool fork = reason == &npvk_managed_stats::host_syncs_fork;
  const bool exit = reason == &npvk_managed_stats::host_syncs_exit;
  {
    Profiler::Scope scope(ctx_->profiler(), fork   ? Phase::SyncFork
                                            : exit ? Phase::SyncExit
                                                   : Phase::SyncExplicit);
    ctx_->flush();
    for (auto &entry : allocations_) {
      Allocation &a = *entry.second;
      if (a.state == State::Device || a.state == State::Shared) make_host_accessible(a, true);
      // Current pages left closed after device work stay so, unless asked:
      // the first host access opens them (a sync is not a page walk each).
      if (open_pages || a.state != State::Host) protect(a, State::Host);
    }
  }
  // Opening current pages is no sync.
  if (work) note_sync(reason, fork ? NPVK_SYNC_FORK : exit ? NPVK_SYNC_EXIT : NPVK_SYNC_EXPLICIT);
}

void ManagedMemory::flush_queued() {
  ContextLock lock(ctx_->mutex());
  if (!ctx_->has_pending()) return;
  {
    Profiler::Scope scope(ctx_->profiler(), Phase::SyncExplicit);
    ctx_->flush();
  }
  note_sync(&npvk_managed_stats::host_syncs_explicit, NPVK_SYNC_EXPLICIT);
}

}  // namespace npvk
