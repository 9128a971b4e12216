// An npvk buffer: device memory, or host memory that the device uses in place
// (zero-copy import) or mirrors.
#pragma once

#include <cstdint>
#include <memory>

#include "vulkan/memory.hpp"

namespace npvk {

class Context;

class Buffer {
 public:
  Buffer(std::shared_ptr<Context> ctx, uint64_t size) : ctx_(std::move(ctx)), size_(size) {}

  Context &ctx() const { return *ctx_; }
  const std::shared_ptr<Context> &ctx_ptr() const { return ctx_; }
  uint64_t size() const { return size_; }

  // Where kernels read and write. Null once the context was released.
  std::unique_ptr<vk::DeviceBuffer> device;
  // Wrapped host memory (null for device buffers).
  void *host = nullptr;
  // The device works on the host pages themselves.
  bool zero_copy = false;
  // A mirrored wrap on a discrete GPU: the host pages imported as the transfer
  // endpoint, so uploads and downloads need no staging copy.
  std::unique_ptr<vk::DeviceBuffer> host_pages;
  // A mirrored wrap whose device copy was written since the host last saw it.
  bool device_newer = false;

 private:
  std::shared_ptr<Context> ctx_;
  uint64_t size_;
};

}  // namespace npvk
