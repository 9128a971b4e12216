// Managed memory: host allocations that the device may own for a while, kept
// coherent by page protection (see docs/architecture.md, "Managed memory").
//
// Each allocation is its own page-aligned mapping. Its state says who may
// touch the pages:
//   Host          the host copy is current; pages read-write.
//   DeviceReads   (zero-copy) queued work reads the pages; read-only.
//   DeviceWrites  (zero-copy) queued work writes the pages; no access.
//   Shared        (mirrored) host and device copies are equal; read-only.
//   Device        (mirrored) the device copy is newer; no access.
// A host access that the protection forbids faults; the fault handler
// (fault_handler.cpp) calls make_host_accessible, which runs the queued work,
// copies data back where needed, and relaxes the protection.
#pragma once

#include <npvk/npvk.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/buffer.hpp"
#include "runtime/context.hpp"

namespace npvk {

class ManagedMemory : public MemoryObserver {
 public:
  enum class State { Host, DeviceReads, DeviceWrites, Shared, Device };

  struct Allocation {
    uint8_t *base = nullptr;
    // A second mapping of the same pages, through which the device and the
    // runtime reach them while the program's mapping is closed (null where
    // memfd was unavailable, and in the child of a fork).
    uint8_t *alias = nullptr;
    uint64_t size = 0;    // what the caller asked for
    uint64_t mapped = 0;  // page multiple
    // Read-only zero pages of npvk's own right after `mapped` (map_pages):
    // a library's read a little past the array finds them, as it finds heap
    // memory past a malloc'd block. Unmapped with the allocation.
    uint64_t shoulder = 0;
    std::atomic<State> state{State::Host};
    // The protection of the program's mapping: what the state needs, or
    // stricter (closed after device work until the host touches the pages).
    // Atomic: the syscall guard reads it without the context lock.
    std::atomic<int> prot{PROT_READ | PROT_WRITE};
    std::shared_ptr<Buffer> buffer;  // made on first device use
    bool device_valid = false;       // mirrored: the device copy holds the data
    bool queued = false;             // some queued work uses it
    bool freed = false;              // freed by the caller; unmapped after the flush
    uint64_t last_op = 0;            // Context::ops_recorded() at its last recorded use
    uint64_t spare_since = 0;        // when it became a spare (spare_clock_)
    // Zero-filled at allocation, so mapped without huge pages (map_pages);
    // given them after kFlushesBeforeHugePages flushes that used it.
    bool small_pages = false;
    uint32_t flushes = 0;
  };

  // The process-wide instance, or null before the first enable(). Inline:
  // asked at every free and ufunc loop call.
  static ManagedMemory *instance() { return instance_; }
  static ManagedMemory &enable(const npvk_context_options *options);

  const std::shared_ptr<Context> &context() const { return ctx_; }
  bool active() const { return active_ && !forked_; }
  void set_active(bool active);

  void *allocate(uint64_t size, bool zero);
  void free(void *ptr);
  // The allocation containing `ptr`, or null. Caller holds the context lock.
  Allocation *find(const void *ptr);
  // False when `ptr` lies outside every mapping this process ever made for
  // an allocation, so that it cannot be managed. Lock-free: NumPy's small
  // arrays (malloc's) are looked up at every free and every ufunc loop call,
  // and the context lock cost more than a 10-element loop.
  bool may_hold(const void *ptr) const {
    const auto p = reinterpret_cast<uintptr_t>(ptr);
    return p >= lowest_.load(std::memory_order_relaxed) &&
           p < highest_.load(std::memory_order_relaxed);
  }
  // The device buffer of an allocation (made on first use).
  std::shared_ptr<Buffer> buffer_of(Allocation &a);
  // Make [ptr, ptr+size) current for the host, writable when `write`.
  void host_access(const void *ptr, uint64_t size, bool write);
  // Called by the syscall guard before the kernel reads (write: false) or
  // writes [ptr, ptr+size): takes the context lock only when that range
  // holds managed pages the call could not access.
  void syscall_access(const void *ptr, uint64_t size, bool write);
  // Called before the program starts another thread (the shim wraps
  // Python's thread start): in the automatic alias mode, every allocation
  // gets its alias now.
  void threads_starting();
  // The threads besides the caller that run now are worker pools
  // (npvk_managed_threads_are_pools); read when managed memory is enabled.
  static void threads_are_pools();
  bool any_restricted() const { return restricted_.load(std::memory_order_relaxed) != 0; }
  // Called by the fault handler: returns false when `addr` is not ours.
  bool handle_fault(void *addr, bool write);
  // Runs all queued work and makes every allocation current; `open_pages`
  // also opens pages left closed after device work (disable, fork, exit).
  void sync_all(uint64_t npvk_managed_stats::*reason, bool open_pages);
  // Runs all queued work and nothing more (npvk_managed_flush): results stay
  // where the work left them until the host touches them.
  void flush_queued();

  npvk_managed_stats stats() const { return stats_; }
  static void set_sync_hook(npvk_sync_hook hook, void *user);

  // MemoryObserver
  void before_use(Buffer &buffer, bool write, const Overwrite *overwrite) override;
  void before_flush() override;
  void after_flush() override;
  void before_evict(Buffer &buffer) override;
  void after_evict(Buffer &buffer) override;
  void after_reload(Buffer &buffer) override;
  void before_device_made() override;
  void after_device_made() override;

 private:
  explicit ManagedMemory(std::shared_ptr<Context> ctx);
  // Sets the state, and exactly the protection it needs.
  void protect(Allocation &a, State state);
  // Sets the state, leaving pages that are closed closed.
  void restrict_to(Allocation &a, State state);
  // Opens what a host access needs, as far as the state allows.
  void open_for(Allocation &a, bool write);
  void set_protection(Allocation &a, int prot);
  bool needs_access(const void *ptr, uint64_t size, bool write);
  void make_host_accessible(Allocation &a, bool write);
  void release_allocation(Allocation &a);
  // A freed allocation that queued work still uses, for a new one of `size`
  // (counted as made), or null.
  Allocation *take_freed_queued(uint64_t size, bool zero);
  // Whether a new allocation gets an alias mapping.
  bool wants_alias();
  // Frees the mappings and the device buffer, and deletes the record.
  void unmap(Allocation &a);
  // Unmaps the spare kept longest (there is one); returns its bytes.
  uint64_t unmap_oldest_spare();
  // A spare for a mapping of `mapped` bytes, taken out of spare_ and cut to
  // that size, or null. Caller holds the context lock.
  Allocation *take_spare(uint64_t mapped);
  // Unmaps the pages of `a` past `mapped` bytes; its device buffer goes.
  void cut_to(Allocation &a, uint64_t mapped);
  // Releases the device buffer of `a`, if any (leaked in a fork's child).
  void drop_buffer(Allocation &a);
  // Asks for huge pages for a small-page allocation now (and collapses its
  // pages into them where the kernel can).
  void give_huge_pages(Allocation &a);
  // Moves an allocation onto a new pair of mappings (its data copied).
  void give_alias(Allocation &a);
  // In the child of a fork: replaces the shared pages with a private copy.
  void privatize(Allocation &a);
  // Counts a host sync and tells the sync hook (npvk_managed_set_sync_hook).
  void note_sync(uint64_t npvk_managed_stats::*counter, npvk_sync_reason reason);
  static void at_exit();
  static void before_fork();
  static void after_fork_parent();
  static void after_fork_child();

  static inline ManagedMemory *instance_ = nullptr;
  std::shared_ptr<Context> ctx_;
  // By base address. Changed with both the context lock and index_mutex_
  // held, so either lock suffices to read it.
  std::map<uintptr_t, Allocation *> allocations_;
  std::mutex index_mutex_;
  // The span of every mapping made for an allocation (may_hold); it only grows.
  std::atomic<uintptr_t> lowest_{UINTPTR_MAX};
  std::atomic<uintptr_t> highest_{0};
  // How many allocations have pages the host cannot read and write: while
  // there are none, the syscall guard returns at once.
  std::atomic<uint64_t> restricted_{0};
  std::vector<Allocation *> queued_;             // used by queued work since the last flush
  std::multimap<uint64_t, Allocation *> spare_;  // freed mappings kept for reuse, by size
  // Freed while queued work still uses them (released after the flush), by
  // size (docs/architecture.md, "Managed memory": reuse before the flush).
  std::multimap<uint64_t, Allocation *> freed_queued_;
  uint64_t spare_bytes_ = 0;
  uint64_t spare_clock_ = 0;
  static constexpr size_t kMaxSpares = 64;
  static constexpr uint64_t kMaxSpareBytes = 512ull << 20;
  npvk_managed_stats stats_{};
  bool flushing_in_record_ = false;  // before_use flushes while an op is recorded
  bool active_ = true;
  bool forked_ = false;
  enum class AliasMode { Never, Always, Auto };
  AliasMode alias_mode_ = AliasMode::Auto;  // NPVK_PAGE_ALIAS
  // Auto: whether the program has run a second thread; allocations made
  // since have aliases, and those made before got one then.
  std::atomic<bool> threaded_{false};
  // Threads that are not the program's: the device's driver started them,
  // or they ran as library pools when managed memory was enabled.
  int driver_threads_ = 0;
  int threads_before_device_ = 0;  // before_device_made's count
  uint64_t page_ = 4096;
};

}  // namespace npvk
