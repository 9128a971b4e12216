// Managed memory at exit and across fork: current host pages for the child,
// which gets private copies of the arrays and no device.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "interpose/managed_memory.hpp"
#include "interpose/managed_pages.hpp"

namespace npvk {
namespace {

bool g_fork_locked = false;
int g_fork_pipe[2] = {-1, -1};

}  // namespace

void ManagedMemory::at_exit() {
  static std::atomic<bool> ran{false};
  if (ran.exchange(true)) return;
  ManagedMemory *mm = instance_;
  if (!mm || mm->forked_) return;
  try {
    mm->sync_all(&npvk_managed_stats::host_syncs_exit, true);
    ContextLock lock(mm->ctx_->mutex());
    mm->ctx_->save_caches();
    mm->ctx_->profiler().finish_environment_trace();
  } catch (...) {
    // Nothing left to report to at exit.
  }
}

void ManagedMemory::before_fork() {
  ManagedMemory *mm = instance_;
  if (!mm || mm->forked_) return;
  mm->ctx_->mutex().lock();  // held across fork, released on both sides
  g_fork_locked = true;
  try {
    // The child cannot use the device: it must inherit current host pages.
    mm->sync_all(&npvk_managed_stats::host_syncs_fork, true);
  } catch (...) {
  }
  // The parent waits until the child has its own copy of the shared pages
  // (after_fork_child), so that nothing the parent does after fork() returns
  // reaches the child.
  g_fork_pipe[0] = g_fork_pipe[1] = -1;
  for (auto &entry : mm->allocations_)
    if (entry.second->alias) {
      if (pipe2(g_fork_pipe, O_CLOEXEC) != 0) g_fork_pipe[0] = g_fork_pipe[1] = -1;
      break;
    }
}

void ManagedMemory::after_fork_parent() {
  if (g_fork_pipe[0] >= 0) {
    close(g_fork_pipe[1]);
    char done;
    // One byte, or end of file if the child died first.
    while (read(g_fork_pipe[0], &done, 1) < 0 && errno == EINTR) {
    }
    close(g_fork_pipe[0]);
    g_fork_pipe[0] = g_fork_pipe[1] = -1;
  }
  if (g_fork_locked) {
    g_fork_locked = false;
    instance_->ctx_->mutex().unlock();
  }
}

void ManagedMemory::privatize(Allocation &a) {
  // Shared pages would go on showing the parent's later changes: copy the
  // array's pages (not the unused tail of the mapping) into private memory
  // and move that over the program's mapping.
  uint8_t *copy = map_pages(a.mapped);
  if (!copy) return;  // out of memory: the child sees the shared pages
  std::memcpy(copy, a.base, std::min(a.mapped, (a.size + page_ - 1) / page_ * page_));
  if (mremap(copy, a.mapped, a.mapped, MREMAP_MAYMOVE | MREMAP_FIXED, a.base) == MAP_FAILED) {
    munmap(copy, a.mapped);
    return;
  }
  a.alias = nullptr;  // not inherited (MADV_DONTFORK)
}

void ManagedMemory::after_fork_child() {
  ManagedMemory *mm = instance_;
  if (!mm || !g_fork_locked) return;
  g_fork_locked = false;
  mm->forked_ = true;
  mm->ctx_->abandon();
  for (auto &entry : mm->allocations_) {
    Allocation &a = *entry.second;
    if (a.buffer) new std::shared_ptr<Buffer>(std::move(a.buffer));  // see release_allocation
    a.queued = false;
    mm->protect(a, State::Host);
    if (a.alias) mm->privatize(a);
  }
  for (auto &entry : mm->spare_) {
    Allocation &a = *entry.second;
    if (a.buffer) new std::shared_ptr<Buffer>(std::move(a.buffer));
    munmap(a.base, a.mapped + a.shoulder);  // nobody's memory; the alias was not inherited
    delete &a;
  }
  mm->spare_.clear();
  mm->spare_bytes_ = 0;
  mm->queued_.clear();
  mm->freed_queued_.clear();
  if (g_fork_pipe[1] >= 0) {
    char done = 1;
    while (write(g_fork_pipe[1], &done, 1) < 0 && errno == EINTR) {
    }
    close(g_fork_pipe[0]);
    close(g_fork_pipe[1]);
    g_fork_pipe[0] = g_fork_pipe[1] = -1;
  }
  // glibc records a mutex's owner by thread id, which differs in the child:
  // unlocking would fail, so the child starts with a fresh mutex instead.
  mm->ctx_->mutex().reset_in_forked_child();
}

}  // namespace npvk
