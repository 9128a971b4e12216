// Compute pipelines for generated kernels. Kernels take everything through
// push constants (device addresses, sizes, scalars), so one pipeline layout
// without descriptor sets serves all of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "vulkan/device.hpp"
#include "vulkan/kernel_cache.hpp"

namespace npvk::vk {

class PipelineFactory {
 public:
  // `push_size`: bytes of push constants every kernel declares.
  PipelineFactory(Device &device, KernelCache &cache, uint32_t push_size);
  ~PipelineFactory();  // writes the pipeline cache back to disk
  PipelineFactory(const PipelineFactory &) = delete;
  PipelineFactory &operator=(const PipelineFactory &) = delete;

  VkPipeline create(const std::vector<uint32_t> &spirv);
  // Writes the driver's pipeline cache to the disk cache, if a pipeline was
  // made since it was read or last written and the cache grew (a program
  // that makes only pipelines the cache holds wrote it at every exit).
  void save();
  void destroy(VkPipeline pipeline);
  // A CPU driver (lavapipe) compiles a pipeline to machine code at its first
  // dispatch, on its one queue thread, inside the flush that needed it. A
  // dispatch of no workgroups, from the thread that built the pipeline, has
  // it compiled now instead, while other threads still build theirs.
  void compile_machine_code(VkPipeline pipeline);
  VkPipelineLayout layout() const { return layout_; }

 private:
  std::string cache_name() const;
  Device &device_;
  KernelCache &cache_;
  uint32_t push_size_;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::atomic<bool> unsaved_{false};  // pipelines made since the last load or save
  size_t stored_size_ = 0;            // bytes of the cache as read or last written
};

}  // namespace npvk::vk
