// Managed arrays' mappings: allocation, spare mappings kept for reuse (and cut
// to size), freeing, and the buffer that wraps an array's pages.
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "base/error.hpp"
#include "interpose/managed_memory.hpp"
#include "interpose/managed_pages.hpp"
#include "interpose/syscall_guard.hpp"

namespace npvk {
namespace {

// A spare below a huge page serves a request at most 1/kSmallSpareSlack smaller
// (take_spare).
constexpr uint64_t kSmallSpareSlack = 4;

}  // namespace

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

}  // namespace npvk
