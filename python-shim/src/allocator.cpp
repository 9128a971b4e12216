// The NEP 49 data allocator: arrays of at least NPVK_MIN_BYTES / 256 get
// managed memory (page-aligned mappings that the device can use in place);
// smaller ones come from NumPy's own default handler, with its cache of small
// blocks: the same speed, and the same reuse of freed blocks, as without npvk
// (dask's tokenize hashes the uninitialised 0-d data of np.ma.masked_all(());
// from malloc, two such arrays hashed alike and a graph key repeated).
// (Not mimalloc: Debian's libmimalloc.so replaces malloc for the whole process
// once loaded, and lavapipe's LLVM then frees a pointer glibc never made.)
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "numpy_api.hpp"
#include "shim.hpp"

namespace npvk_shim {
namespace {

// Arrays from this size on get managed memory: at most an eighth of
// NPVK_MIN_BYTES, so that the bool result of a comparison on float64 arrays
// at the threshold is managed, and down to one page (an mmap each is cheap
// there), so that a time step's small state vectors (N-body's positions and
// velocities) can take device results without syncing. 4 KiB at the default
// 1 MiB; the settings table (base/options.cpp, NPVK_MIN_BYTES) states it.
uint64_t managed_from() {
  const uint64_t min = settings().min_bytes;
  return std::min<uint64_t>(min / 8, std::max<uint64_t>(4096, min / 256));
}

thread_local bool t_force_managed = false;
// Threads now in force_managed(true): the thread-local flag (a call into the
// dynamic loader from a Python extension) is read only while some are.
std::atomic<int> g_threads_forcing{0};

bool forcing_managed() {
  return g_threads_forcing.load(std::memory_order_relaxed) != 0 && t_force_managed;
}

// Mid-size arrays (from managed_from() to an eighth of NPVK_MIN_BYTES) are
// managed only while the program sends work to the device: a device op
// counted within the last kQuietAllocations such allocations. They are
// managed so that device results can land in them without a sync; where
// nothing goes to the device they only cost a mapping and its page faults
// each (skimage's radon tests, no device work at all: 3.12 s plain, 3.43
// with them managed, 3.2 without). A time step allocates a few; with 4096
// the tail after the last device op reached far into host-only work: in
// scikit-learn's suite 2048 managed allocations in its ridge tests, each a
// memfd, two mappings and two munmaps, and each munmap an interrupt to the
// other core, where OpenBLAS's thread spun (those tests 1.35x plain, 1.16x
// with 256; N-body at medium 1.75-1.92x NumPy either way).
constexpr uint32_t kQuietAllocations = 256;
std::atomic<uint64_t> g_ops_seen{0};
std::atomic<uint32_t> g_quiet_allocations{kQuietAllocations};  // none yet: quiet

bool device_in_use() {
  const uint64_t ops = device_ops_counted();
  if (ops != g_ops_seen.load(std::memory_order_relaxed)) {
    g_ops_seen.store(ops, std::memory_order_relaxed);
    g_quiet_allocations.store(0, std::memory_order_relaxed);
    return true;
  }
  if (g_quiet_allocations.load(std::memory_order_relaxed) >= kQuietAllocations) return false;
  g_quiet_allocations.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool wants_managed(uint64_t size) {
  if (forcing_managed()) return true;
  if (size < managed_from()) return false;
  return size >= settings().min_bytes / 8 || device_in_use();
}

// Whether `ptr` is the start of a managed allocation. Those start on a page;
// NumPy's small blocks, at nearly every free, almost never do.
bool is_managed(void *ptr, uint64_t *size) {
  constexpr uintptr_t kPageMask = 4096 - 1;
  if (!ptr || (reinterpret_cast<uintptr_t>(ptr) & kPageMask) != 0) return false;
  int found = 0;
  void *base = nullptr;
  return npvk_managed_lookup(ptr, &found, &base, size) == NPVK_SUCCESS && found && base == ptr;
}

// NumPy's default handler (PyDataMem_DefaultHandler), taken at the first
// capsule: it outlives every array, being NumPy's own.
const PyDataMem_Handler *g_numpy = nullptr;

void *numpy_allocate(size_t size, bool zero) {
  return zero ? g_numpy->allocator.calloc(g_numpy->allocator.ctx, 1, size)
              : g_numpy->allocator.malloc(g_numpy->allocator.ctx, size);
}

void *allocate(uint64_t size, bool zero) {
  // NumPy's small arrays, nearly every allocation: its own handler at once.
  if (size < managed_from() && !forcing_managed()) return numpy_allocate(size, zero);
  int active = 0;
  // The program's first array of some size: the device it will likely want
  // is made from now on, without the rest of the delay.
  if (size >= managed_from()) prepare_binding_now();
  // The first managed allocation binds the device (context() does).
  if (settings().enabled && wants_managed(size) && context().id &&
      npvk_managed_active(&active) == NPVK_SUCCESS && active) {
    void *p = nullptr;
    if (npvk_managed_alloc(size, zero, &p) == NPVK_SUCCESS) return p;
    // No managed memory to be had: an ordinary allocation still works.
  }
  return numpy_allocate(size, zero);
}

void *shim_malloc(void *, size_t size) {
  return allocate(size, false);
}

void *shim_calloc(void *, size_t nelem, size_t elsize) {
  size_t size = 0;
  if (__builtin_mul_overflow(nelem, elsize, &size)) return nullptr;
  return allocate(size, true);
}

void numpy_free(void *ptr, size_t size) {
  g_numpy->allocator.free(g_numpy->allocator.ctx, ptr, size);
}

// `size`: what NumPy allocated the block with (its cache files it by that).
void shim_free(void *, void *ptr, size_t size) {
  if (!ptr) return;
  uint64_t managed_size = 0;
  if (is_managed(ptr, &managed_size))
    npvk_managed_free(ptr);
  else
    numpy_free(ptr, size);
}

void *shim_realloc(void *, void *ptr, size_t new_size) {
  if (!ptr) return allocate(new_size, false);
  uint64_t old_size = 0;
  bool managed = is_managed(ptr, &old_size);
  if (!managed && new_size < managed_from())
    return g_numpy->allocator.realloc(g_numpy->allocator.ctx, ptr, new_size);
  // NumPy's realloc gives no size: its blocks are malloc's (a cached one too).
  if (!managed) old_size = malloc_usable_size(ptr);
  void *fresh = allocate(new_size, false);
  if (!fresh) return nullptr;
  // Reading managed memory may fault; the fault handler makes it current.
  std::memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
  if (managed)
    npvk_managed_free(ptr);
  else
    std::free(ptr);  // not into NumPy's cache: its size is not known
  return fresh;
}

PyDataMem_Handler g_handler = {
    "npvk",
    1,
    {nullptr, shim_malloc, shim_calloc, shim_realloc, shim_free},
};

}  // namespace

bool force_managed(bool on) {
  const bool was = t_force_managed;
  if (on != was) g_threads_forcing.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
  t_force_managed = on;
  return was;
}

PyObject *make_allocator_capsule() {
  if (!g_numpy) {
    g_numpy = static_cast<const PyDataMem_Handler *>(
        PyCapsule_GetPointer(PyDataMem_DefaultHandler, "mem_handler"));
    if (!g_numpy) return nullptr;
  }
  return PyCapsule_New(&g_handler, "mem_handler", nullptr);
}

}  // namespace npvk_shim
