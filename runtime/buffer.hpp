// An npvk buffer: device memory, or host memory that the device uses in place
// (zero-copy import) or mirrors.
#pragma once

#include <cstdint>
#include <memory>

#include "compile/fusion_fences.hpp"
#include "compile/view.hpp"
#include "vulkan/memory.hpp"

namespace npvk {

class Context;
class Buffer;

// Told about recorded work on buffers it manages (Buffer::managed set), so it
// can keep host pages coherent (interpose/managed_coherence.cpp). Called with the
// context's lock held.
class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  // Before an operation that reads or writes `buffer` is queued. `overwrite`
  // is the byte range [lo, hi) of the buffer that the op writes whole and
  // does not read (a new output), or null: those bytes of the host memory
  // need no upload, which the op would overwrite anyway.
  struct Overwrite {
    int64_t lo, hi;
  };
  virtual void before_use(Buffer &buffer, bool write, const Overwrite *overwrite) = 0;
  // Around the execution of every flushed batch.
  virtual void before_flush() = 0;
  virtual void after_flush() = 0;
  // Around eviction of a mirrored buffer's device copy (core/context_budget.cpp):
  // the host memory must be writable for the download, and afterwards it is
  // the only copy.
  virtual void before_evict(Buffer &buffer) = 0;
  virtual void after_evict(Buffer &buffer) = 0;
  // A device copy was made again from the host memory: the two are equal.
  virtual void after_reload(Buffer &buffer) = 0;
  // Around the making of a context's device after the context itself
  // (Context::make_device): the driver starts threads of its own then.
  virtual void before_device_made() {}
  virtual void after_device_made() {}
};

class Buffer {
 public:
  Buffer(std::shared_ptr<Context> ctx, uint64_t size) : ctx_(std::move(ctx)), size_(size) {}

  Context &ctx() const { return *ctx_; }
  const std::shared_ptr<Context> &ctx_ptr() const { return ctx_; }
  uint64_t size() const { return size_; }
  // A wrap whose kernels work on a device copy of the host memory.
  bool mirrored() const { return host && !zero_copy; }
  // False once the memory was freed; an evicted buffer still has its data.
  bool has_memory() const { return device || evicted || import_deferred; }

  // Where kernels read and write. Null once the context was released.
  std::unique_ptr<vk::DeviceBuffer> device;
  // Wrapped host memory (null for device buffers).
  void *host = nullptr;
  // The device works on the host pages themselves.
  bool zero_copy = false;
  // A zero-copy wrap made before the context made its device: `device` is
  // null and the pages are imported at the buffer's first device use
  // (Residency::import_deferred). The host memory holds the data.
  bool import_deferred = false;
  // A mirrored wrap whose device copy was freed to keep within the device
  // memory budget (core/context_budget.cpp): `device` is null, the host
  // memory holds the data, and the next device use uploads it again.
  bool evicted = false;
  // When recorded work last used it, in the context's use clock: least
  // recently used copies are evicted first.
  uint64_t last_use = 0;
  // A mirrored wrap on a discrete GPU: the host pages imported as the transfer
  // endpoint, so uploads and downloads need no staging copy.
  std::unique_ptr<vk::DeviceBuffer> host_pages;
  // A mirrored wrap whose device copy was written since the host last saw it.
  bool device_newer = false;
  // Set by the observer of managed memory: its record of this buffer.
  void *managed = nullptr;
  // The owner freed the memory while recorded work still used it: nothing
  // after that work reads the contents, so stores into it may be left out.
  bool discarded = false;
  // Bumped when managed memory hands the memory to a new array while queued
  // work still uses it for the old one (docs/architecture.md, "Managed
  // memory"): values of an older generation are dead once their readers ran,
  // and `discarded` speaks of the newest.
  uint32_t generation = 0;
  // The latest recorded op that wrote it: a later op that reads other
  // elements of those bytes cannot share that op's kernel (FenceTracker).
  LastWrite last_write;

 private:
  std::shared_ptr<Context> ctx_;
  uint64_t size_;
};

// Validates a strided view of `buffer` (see npvk_view_create) and makes it:
// on the stack (a caller that records it and lets it go), or shared (a handle).
View strided_view(const std::shared_ptr<Buffer> &buffer, uint64_t offset, npvk_dtype dtype,
                  uint32_t ndim, const int64_t *shape, const int64_t *strides);
std::shared_ptr<View> make_view(const std::shared_ptr<Buffer> &buffer, uint64_t offset,
                                npvk_dtype dtype, uint32_t ndim, const int64_t *shape,
                                const int64_t *strides);

}  // namespace npvk
