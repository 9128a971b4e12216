// The page mappings of managed arrays: sizes, huge pages, shoulders and alias
// pairs (managed_pages.hpp).
#include "interpose/managed_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "base/options.hpp"

namespace npvk {
namespace {

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

}  // namespace

uint64_t mapping_size(uint64_t size, uint64_t page) {
  const uint64_t bytes = size ? size : 1;
  uint64_t mapped = (bytes + kGapAfterArray + page - 1) / page * page;
  if (mapped >= kHugePage) {
    mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (mapped - bytes < kGapAfterArray) mapped += page;
  }
  return mapped;
}

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

uint8_t *map_pages(uint64_t mapped, int fd, Pages pages, uint64_t shoulder) {
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
// `shoulder`: of the program's mapping (map_pages).
bool map_pair(uint64_t mapped, uint8_t **user, uint8_t **alias, Pages pages, uint64_t shoulder) {
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

}  // namespace npvk
