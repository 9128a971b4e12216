#include "interpose/managed_memory.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>

#include "base/error.hpp"
#include "base/options.hpp"
#include "interpose/fault_handler.hpp"
#include "interpose/syscall_guard.hpp"
#include "runtime/host/host_workers.hpp"

namespace npvk {
namespace {

std::mutex g_enable_mutex;
bool g_fork_locked = false;
int g_fork_pipe[2] = {-1, -1};

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

// Transparent huge pages for large arrays. Every flush changes the
// protection of each queued array, and the kernel walks one page-table entry
// per 4 KiB page to do it (in a paravirtualised guest, each entry is a
// hypercall-priced update): measured 22% of a fused kernel's run time for a
// 16 MB array on lavapipe. A 2 MiB-aligned, 2 MiB-multiple mapping lets the
// kernel use huge pages (where THP is "madvise" or "always"), so one entry
// covers 512 pages; fewer faults and TLB misses in the kernels too.
constexpr uint64_t kHugePage = 2ull << 20;
// A spare below a huge page serves a request at most 1/kSmallSpareSlack smaller
// (take_spare).
constexpr uint64_t kSmallSpareSlack = 4;

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

// Bytes past every array's end that no array uses. The kernel places a new
// mapping right below the last one, or fills a hole that fits it exactly, so
// an array whose size was a multiple of the page size could end where the
// next one began, and NumPy takes an output that ends where an input starts
// as overlapping it: its SIMD loops then run their scalar loop, which is
// slower and, for exp and log, gives other bits than NumPy's loops give
// malloc's arrays (a block header always separates those). A small array's
// mapping has the gap in its last page; a large one's is whole huge pages,
// and one small page more where the array fills them (a 4 MiB array once
// ended where a 2 MiB one, mapped in the hole a cut spare left, began).
constexpr uint64_t kGapAfterArray = 64;

uint64_t mapping_size(uint64_t size, uint64_t page) {
  const uint64_t bytes = size ? size : 1;
  uint64_t mapped = (bytes + kGapAfterArray + page - 1) / page * page;
  if (mapped >= kHugePage) {
    mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (mapped - bytes < kGapAfterArray) mapped += page;
  }
  return mapped;
}

// Which pages a new mapping asks for. NumPy's own large arrays get
// MADV_HUGEPAGE where it allocates them unfilled (np.empty, every ufunc's
// output), and 4 KiB pages where calloc fills them (np.zeros, and so the
// outputs of SciPy's filters): npvk does the same. In a guest whose balloon
// takes back every free 2 MiB block at once, a huge page's first touch costs
// 3-5 ms there, and the program that writes a zeroed array itself (SciPy's C
// loops) gains nothing from it; 4 KiB pages come from the guest's fragments,
// warm. scipy.ndimage's example, 12 rounds each: 0.75-0.80 s a run, steady,
// against 0.77-1.01 s with huge zeroed arrays, by which run came before it
// (docs/architecture.md, "Pages").
enum class Pages { Huge, Small };

// Read-only zero pages of npvk's own right after the program's mapping of
// each array, its "shoulder". Libraries read a little past the arrays they
// are given: a SIMD tail, or one element past a strided vector, which lands
// up to one stride (a leading dimension, at most the array's own extent)
// past the last element. Next to a malloc'd block that is heap memory, and
// nobody notices. A managed array is a mapping of its own, and the kernel
// maps a new one right below the last: where that was a thread's stack, the
// stack's guard page (PROT_NONE) followed the array, or a hole where a
// neighbour had been unmapped, and such a read killed the process. Debian
// 12's OpenBLAS (0.3.21) reads x[n] in cgemv_n/zgemv_n (fixed upstream after
// OpenMathLib/OpenBLAS issue 5000), and LAPACK's ?lahef passes it a row of
// its workspace: scipy.linalg.ldl of a complex matrix read up to one leading
// dimension past the workspace f2py allocated through NumPy. Address space
// only: PROT_READ and MAP_NORESERVE pages are not committed, and a read maps
// the kernel's zero page.
uint64_t shoulder_size(uint64_t mapped) {
  return std::min(mapped, kHugePage);
}

// Maps `mapped` bytes read-write: private anonymous memory when fd < 0,
// otherwise the shared pages of the file fd; and `shoulder` bytes of
// read-only zero pages right after them.
uint8_t *map_pages(uint64_t mapped, int fd = -1, Pages pages = Pages::Huge, uint64_t shoulder = 0) {
  const int kind = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED;
  const uint64_t align = mapped >= kHugePage ? kHugePage : 0;
  if (!align && !shoulder) {
    void *p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, kind, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
  }
  // Reserve the mapping, its shoulder and, for huge pages, one huge page
  // more; map at the (aligned) address inside, open the shoulder for reads,
  // and trim both ends.
  const uint64_t reserved = mapped + shoulder + align;
  void *p = mmap(nullptr, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = align ? (start + kHugePage - 1) / kHugePage * kHugePage : start;
  void *q = mmap(reinterpret_cast<void *>(aligned), mapped, PROT_READ | PROT_WRITE,
                 kind | MAP_FIXED, fd, 0);
  if (q == MAP_FAILED ||
      (shoulder && mprotect(reinterpret_cast<void *>(aligned + mapped), shoulder, PROT_READ))) {
    munmap(p, reserved);
    return nullptr;
  }
  if (aligned > start) munmap(p, aligned - start);
  const uintptr_t used = aligned + mapped + shoulder;
  if (start + reserved > used) munmap(reinterpret_cast<void *>(used), start + reserved - used);
  // Advice only; shared memory gets huge pages only where the system's shmem
  // setting allows them.
  if (align && process_options().huge_pages && pages == Pages::Huge)
    madvise(q, mapped, MADV_HUGEPAGE);
  return static_cast<uint8_t *>(q);
}

// Two mappings of the same fresh pages: `user` for the program and `alias`
// for the device. A flush can then run on the alias while the program's
// mapping stays closed, so another thread that reads a pending result faults
// and waits for it instead of reading the pages half-written (lavapipe works
// on host memory through the addresses it was given; protection is per
// mapping, not per thread). Returns false where memfd is unavailable.
// `shoulder`: of the program's mapping (map_pages).
bool map_pair(uint64_t mapped, uint8_t **user, uint8_t **alias, Pages pages = Pages::Huge,
              uint64_t shoulder = 0) {
  int fd = memfd_create("npvk-array", MFD_CLOEXEC);
  if (fd < 0) return false;
  *user = *alias = nullptr;
  if (ftruncate(fd, off_t(mapped)) == 0) {
    *user = map_pages(mapped, fd, pages, shoulder);
    *alias = map_pages(mapped, fd, pages);
  }
  close(fd);  // the mappings keep the pages
  if (*user && *alias) {
    // The child of a fork gets a private copy of the user mapping instead
    // (after_fork_child) and no device.
    madvise(*alias, mapped, MADV_DONTFORK);
    return true;
  }
  if (*user) munmap(*user, mapped + shoulder);
  if (*alias) munmap(*alias, mapped);
  return false;
}

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

void *ManagedMemory::allocate(uint64_t size, bool zero) {
  uint64_t mapped = mapping_size(size, page_);
  rescan_syscall_guard();
  {
    ContextLock lock(ctx_->mutex());
    if (Allocation *a = take_freed_queued(size, zero)) return a->base;
    if (Allocation *a = take_spare(mapped)) {
      if (zero) {
        set_protection(*a, PROT_READ | PROT_WRITE);  // written under the lock
        std::memset(a->base, 0, size);
      }
      a->size = size;
      a->device_valid = false;  // the host may write it without a fault
      {
        std::lock_guard<std::mutex> index(index_mutex_);
        allocations_[reinterpret_cast<uintptr_t>(a->base)] = a;
      }
      ++stats_.allocations;
      ++stats_.live_allocations;
      stats_.live_bytes += size;
      return a->base;
    }
    // No spare to reuse, so fresh pages: the oldest spares of at least as
    // many bytes go first, and the kernel hands their pages, faulted in
    // already, to the new mapping. Pages it never gave out before cost up to
    // 20x more to fault in under a hypervisor (a fresh 64 MiB fill took 8 or
    // 150 ms by the run), and kept spares of other sizes made npvk meet them
    // where NumPy, which frees, did not (scipy.ndimage's example: compute
    // 0.62 s without spares, 1.00 with them, 0.66 plain). Same-size reuse,
    // which time-stepped programs live on, is untouched.
    if (mapped >= kHugePage)
      for (uint64_t released = 0; released < mapped && !spare_.empty();)
        released += unmap_oldest_spare();
  }
  uint8_t *p = nullptr, *alias = nullptr;
  const Pages pages = zero ? Pages::Small : Pages::Huge;
  const uint64_t shoulder = shoulder_size(mapped);
  if (!wants_alias() || !map_pair(mapped, &p, &alias, pages, shoulder))
    p = map_pages(mapped, -1, pages, shoulder);
  if (!p)
    fail(NPVK_ERR_OUT_OF_HOST_MEMORY,
         "mmap of " + std::to_string(mapped) + " bytes failed: " + strerror(errno));
  auto *a = new Allocation();
  a->base = p;
  a->alias = alias;
  a->size = size;
  a->mapped = mapped;
  a->shoulder = shoulder;
  a->small_pages = pages == Pages::Small && mapped >= kHugePage && !alias;
  ContextLock lock(ctx_->mutex());
  {
    std::lock_guard<std::mutex> index(index_mutex_);
    allocations_[reinterpret_cast<uintptr_t>(p)] = a;
    // Widened before the pointer is returned, so any lookup of it sees it.
    const auto lo = reinterpret_cast<uintptr_t>(p);
    if (lo < lowest_.load()) lowest_ = lo;
    if (lo + mapped > highest_.load()) highest_ = lo + mapped;
  }
  ++stats_.allocations;
  ++stats_.live_allocations;
  stats_.live_bytes += size;
  return p;
}

ManagedMemory::Allocation *ManagedMemory::take_spare(uint64_t mapped) {
  // The most recently freed mapping of this size: its lines may still be
  // in the CPU's caches. Taking the oldest cycled a program's temporaries
  // through every spare (9 spares of 16 MB made np.ones 3.4x slower).
  auto fit = spare_.equal_range(mapped);
  if (fit.first == fit.second) {
    // Else the smallest larger huge-page spare, cut to size: its pages are
    // faulted in already, and those it no longer needs go back to the
    // kernel, which hands them to the next fresh mapping. Fresh pages are
    // what a program pays for most in a guest (above, kHugePage), and a
    // spare kept beside a fresh mapping made npvk's footprint larger than
    // NumPy's: scipy.ndimage's example faulted 380 MB of huge pages against
    // NumPy's 254 MB of distinct ones, and in a guest that hands a process
    // the pages the one before it freed, a program that needs more than
    // that gets pages never touched (3-5 ms per huge page, against 0.3).
    auto larger = spare_.upper_bound(mapped);
    if (larger == spare_.end()) return nullptr;
    // Below a huge page the smallest larger spare is taken whole, where it
    // is at most a quarter larger: loops over shrinking row slices (Gaussian
    // elimination, LU by rows) free a temporary a few pages larger than the
    // next, and fresh pages for each (a fault and a zero-fill per page) cost
    // more than the loop's arithmetic: 600 x 600 elimination spent half its
    // time in the kernel's page allocator, 3x NumPy, whose heap reuses the
    // block. The unused tail stays the allocation's, read-write, like the
    // gap after every array.
    if (mapped < kHugePage && larger->first > mapped + mapped / kSmallSpareSlack) return nullptr;
    fit = spare_.equal_range(larger->first);
  }
  auto spare = std::prev(fit.second);
  Allocation *a = spare->second;
  spare_.erase(spare);
  spare_bytes_ -= a->mapped;
  if (a->mapped > mapped && mapped >= kHugePage) cut_to(*a, mapped);
  return a;
}

void ManagedMemory::cut_to(Allocation &a, uint64_t mapped) {
  // Its device buffer covered the whole mapping.
  drop_buffer(a);
  const uint64_t tail = a.mapped - mapped;
  // An alias pair's pages belong to its memfd: unmapping both tails would
  // keep them, so they are removed from the file first.
  if (a.alias) {
    madvise(a.alias + mapped, tail, MADV_REMOVE);
    munmap(a.alias + mapped, tail);
  }
  // The program's tail becomes the new end's shoulder (an mmap over it
  // frees its pages), never reaching past the old one; the rest goes.
  uint8_t *end = a.base + mapped;
  const uint64_t rest = tail + a.shoulder;
  uint64_t shoulder = std::min(shoulder_size(mapped), rest);
  if (mmap(end, shoulder, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
           0) == MAP_FAILED)
    shoulder = 0;
  if (rest > shoulder) munmap(end + shoulder, rest - shoulder);
  a.mapped = mapped;
  a.shoulder = shoulder;
}

ManagedMemory::Allocation *ManagedMemory::take_freed_queued(uint64_t size, bool zero) {
  // Its queued work runs in order before any later op, and the host reaching
  // its pages syncs as for any queued array: to the program it is a new
  // array whose contents are undefined, as malloc's are. Not one that a
  // kernel may still share with the next op: two values in one buffer there
  // would change the kernel's slots (a different kernel to compile).
  if (zero || forked_) return nullptr;
  auto range = freed_queued_.equal_range(size);
  for (auto it = range.first; it != range.second; ++it) {
    Allocation *a = it->second;
    if (ctx_->may_fuse_with_next(a->last_op)) continue;
    freed_queued_.erase(it);
    a->freed = false;
    if (a->buffer) {
      a->buffer->discarded = false;
      ++a->buffer->generation;
    }
    ++stats_.allocations;
    ++stats_.live_allocations;
    stats_.live_bytes += size;
    return a;
  }
  return nullptr;
}

ManagedMemory::Allocation *ManagedMemory::find(const void *ptr) {
  auto key = reinterpret_cast<uintptr_t>(ptr);
  auto it = allocations_.upper_bound(key);
  if (it == allocations_.begin()) return nullptr;
  --it;
  Allocation *a = it->second;
  if (key >= it->first + a->mapped || a->freed) return nullptr;
  return a;
}

void ManagedMemory::free(void *ptr) {
  ContextLock lock(ctx_->mutex());
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  require(it != allocations_.end() && !it->second->freed, NPVK_ERR_INVALID_ARGUMENT,
          "npvk_managed_free: not the start of a managed allocation");
  Allocation *a = it->second;
  stats_.live_allocations -= 1;
  stats_.live_bytes -= a->size;
  if (a->queued) {
    // Queued work still reads or writes it: unmap after that work has run.
    a->freed = true;
    if (a->buffer) a->buffer->discarded = true;
    freed_queued_.emplace(a->size, a);
    return;
  }
  release_allocation(*a);
}

uint64_t ManagedMemory::unmap_oldest_spare() {
  auto oldest = spare_.begin();
  for (auto it = spare_.begin(); it != spare_.end(); ++it)
    if (it->second->spare_since < oldest->second->spare_since) oldest = it;
  Allocation *old = oldest->second;
  const uint64_t bytes = old->mapped;
  spare_bytes_ -= bytes;
  spare_.erase(oldest);
  unmap(*old);
  return bytes;
}

void ManagedMemory::release_allocation(Allocation &a) {
  {
    std::lock_guard<std::mutex> index(index_mutex_);
    allocations_.erase(reinterpret_cast<uintptr_t>(a.base));
  }
  // Keep recently freed mappings, with their device buffers, for the next
  // allocation of the same size: NumPy programs free and remake same-sized
  // temporaries all the time, and fresh pages cost a fault and a zero-fill
  // each (on a CPU device, inside the kernels that first touch them).
  if (!forked_ && a.mapped <= kMaxSpareBytes) {
    // Room for it: the spares kept longest go. Refusing the newest kept
    // stale sizes for good once the spares were full, and the next array of
    // a just-freed one's size took fresh pages (tests/python/test_coherence.py,
    // most recent first, after a few hundred other tests).
    while (!spare_.empty() &&
           (spare_.size() >= kMaxSpares || spare_bytes_ + a.mapped > kMaxSpareBytes))
      unmap_oldest_spare();
    // An alias's pages may stay closed: a temporary that only device work
    // writes is reused without an mprotect either way (allocate() opens a
    // spare it must zero). The program's mapping of one without an alias is
    // what uploads read, so it opens now.
    if (a.alias)
      a.state = State::Host;
    else
      protect(a, State::Host);
    a.freed = false;
    a.queued = false;
    if (a.buffer) {
      a.buffer->discarded = false;
      // Reuse uploads the pages (device_valid is cleared): an eviction of
      // the copy in the meantime need not download what nobody reads.
      a.buffer->device_newer = false;
    }
    a.spare_since = ++spare_clock_;
    spare_.emplace(a.mapped, &a);
    spare_bytes_ += a.mapped;
    return;
  }
  unmap(a);
}

void ManagedMemory::drop_buffer(Allocation &a) {
  if (!a.buffer) return;
  if (forked_) {
    // The parent's Vulkan objects must not be destroyed here: leak them.
    new std::shared_ptr<Buffer>(std::move(a.buffer));
    return;
  }
  a.buffer->device.reset();
  a.buffer->host_pages.reset();
  a.buffer->evicted = false;
  a.buffer->import_deferred = false;
  a.buffer->managed = nullptr;
  a.buffer.reset();
}

void ManagedMemory::unmap(Allocation &a) {
  drop_buffer(a);
  munmap(a.base, a.mapped + a.shoulder);
  if (a.alias) munmap(a.alias, a.mapped);
  delete &a;
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

std::shared_ptr<Buffer> ManagedMemory::buffer_of(Allocation &a) {
  if (!a.buffer) {
    // The pages are current (a new buffer means no device work used them).
    // A mirrored buffer's copy is uploaded at its first use that reads them
    // (before_use): an op that only writes the array needs no upload.
    if (a.state != State::Host) protect(a, State::Host);
    a.buffer = ctx_->wrap_host(a.alias ? a.alias : a.base, a.mapped, false);
    a.buffer->managed = &a;
    a.device_valid = false;
  }
  return a.buffer;
}

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

// The context makes its device after binding (at its first device work):
// the driver's threads are not the program's.
void ManagedMemory::before_device_made() {
  threads_before_device_ = thread_count();
}

void ManagedMemory::after_device_made() {
  driver_threads_ += std::max(0, thread_count() - threads_before_device_);
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
