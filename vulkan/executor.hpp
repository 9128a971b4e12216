// Runs a batch of recorded dispatches as one command-buffer submission, with a
// pipeline barrier only where a dispatch touches bytes that an earlier one in
// the same barrier interval wrote (or writes bytes it read), and a timestamp
// pair around each dispatch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "compile/kernel_abi.hpp"
#include "vulkan/device.hpp"
#include "vulkan/memory.hpp"

namespace npvk::vk {

struct Access {
  const void *resource;  // identity of the memory (one per buffer)
  uint64_t lo, hi;       // byte range [lo, hi)
  bool write;
};

struct Dispatch {
  VkPipeline pipeline = VK_NULL_HANDLE;
  PushConstants push{};
  std::vector<int64_t> meta;  // copied to the argument arena; push.meta is set at run
  uint32_t groups = 0;
  uint32_t flag_words = 1;  // FP exception words (one per fused op); push.flags is set at run
  std::vector<Access> accesses;
};

struct BatchResult {
  uint64_t barriers = 0;
  double device_seconds = 0;
  std::vector<uint32_t>
      fp_flags;  // every dispatch's flag words, in order: the FP exceptions raised
  // Each dispatch's begin and end on the device clock, in ns (empty without
  // timestamps): the device track of a trace.
  std::vector<int64_t> dispatch_ns;
};

class Executor {
 public:
  Executor(Device &device, VkPipelineLayout layout);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  // Submits and waits. Throws on device loss or out-of-memory; the batch is
  // then not run.
  BatchResult run(std::vector<Dispatch> &batch);

 private:
  void reserve_queries(uint32_t count);
  void reserve_arguments(uint64_t bytes);
  void reserve_flags(uint64_t count);
  Device &device_;
  VkPipelineLayout layout_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
  std::unique_ptr<DeviceBuffer> arguments_;
  std::unique_ptr<DeviceBuffer> flags_;  // the flag words of a batch
};

}  // namespace npvk::vk
