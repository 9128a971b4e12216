// The page mappings of managed arrays (managed_pages.cpp): their sizes, huge
// pages, shoulders, and the pair of mappings that gives the device an alias.
#pragma once

#include <cstdint>

namespace npvk {

// Transparent huge pages for large arrays. Every flush changes the
// protection of each queued array, and the kernel walks one page-table entry
// per 4 KiB page to do it (in a paravirtualised guest, each entry is a
// hypercall-priced update): measured 22% of a fused kernel's run time for a
// 16 MB array on lavapipe. A 2 MiB-aligned, 2 MiB-multiple mapping lets the
// kernel use huge pages (where THP is "madvise" or "always"), so one entry
// covers 512 pages; fewer faults and TLB misses in the kernels too.
constexpr uint64_t kHugePage = 2ull << 20;

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

// The bytes mapped for an array of `size` bytes: whole pages of `page` bytes
// (whole huge pages from kHugePage on), with a gap after the array.
uint64_t mapping_size(uint64_t size, uint64_t page);

// The read-only bytes mapped right after a mapping of `mapped` bytes.
uint64_t shoulder_size(uint64_t mapped);

// Maps `mapped` bytes read-write: private anonymous memory when fd < 0,
// otherwise the shared pages of the file fd; and `shoulder` bytes of
// read-only zero pages right after them.
uint8_t *map_pages(uint64_t mapped, int fd = -1, Pages pages = Pages::Huge, uint64_t shoulder = 0);

// Two mappings of the same fresh pages: `user` for the program and `alias`
// for the device. A flush can then run on the alias while the program's
// mapping stays closed, so another thread that reads a pending result faults
// and waits for it instead of reading the pages half-written (lavapipe works
// on host memory through the addresses it was given; protection is per
// mapping, not per thread). Returns false where memfd is unavailable.
bool map_pair(uint64_t mapped, uint8_t **user, uint8_t **alias, Pages pages = Pages::Huge,
              uint64_t shoulder = 0);

}  // namespace npvk
