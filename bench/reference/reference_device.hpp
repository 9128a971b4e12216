// What the reference kernels need of a Vulkan device, built on npvk's own
// vulkan/ layer: the device npvk would pick (NPVK_DEVICE), float64 arrays in
// the kind of memory npvk's arrays live in, pipelines from GLSL files that
// include npvk's shader library, and timed batches through npvk's executor
// (one timestamp pair per dispatch, barriers where dispatches overlap).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vulkan/executor.hpp"
#include "vulkan/kernel_cache.hpp"
#include "vulkan/memory.hpp"
#include "vulkan/pipeline.hpp"

namespace npvk::bench {

// A float64 array the kernels reach by device address. Where the device can
// import host memory (lavapipe, and npvk's managed arrays there) it is
// 2 MiB-aligned host memory with huge pages requested, as npvk's managed
// memory; otherwise device-local memory, through a staging copy if the host
// cannot map it.
class Array {
 public:
  Array(vk::Device &device, uint64_t elements);
  ~Array();
  Array(const Array &) = delete;
  Array &operator=(const Array &) = delete;

  uint64_t address() const { return buffer_->address(); }
  uint64_t elements() const { return elements_; }
  const vk::DeviceBuffer &buffer() const { return *buffer_; }
  void upload(const std::vector<double> &values);
  std::vector<double> download();

 private:
  vk::Device &device_;
  uint64_t elements_;
  void *host_ = nullptr;  // the imported mapping, if any
  uint64_t host_bytes_ = 0;
  std::unique_ptr<vk::DeviceBuffer> buffer_;
};

class ReferenceDevice {
 public:
  // `validation`: the Khronos validation layer (NPVK_VALIDATION=1 in ctest).
  explicit ReferenceDevice(bool validation);
  ~ReferenceDevice();

  vk::Device &device() { return *device_; }
  const npvk_device_info &info() const { return device_->info(); }
  // Compiles the GLSL file at `path`; `#include "x.glsl"` takes x.glsl from
  // the same directory, else npvk's embedded shaders/x.glsl.
  VkPipeline pipeline(const std::string &path);
  // Workgroups for `wanted`: npvk's own cap (256 on a CPU device, where a few
  // threads run the groups; the device's limit otherwise).
  uint32_t groups(uint64_t wanted) const;
  // The address of npvk's math tables (PushConstants::tables).
  uint64_t tables() const { return tables_->address(); }
  // Runs the dispatches as one submission. Returns each dispatch's device
  // seconds (empty without timestamp queries).
  std::vector<double> run(std::vector<vk::Dispatch> &batch);
  uint64_t validation_messages() const;

 private:
  std::unique_ptr<vk::Device> device_;
  vk::KernelCache no_cache_{""};
  std::unique_ptr<vk::PipelineFactory> pipelines_;
  std::unique_ptr<vk::Executor> executor_;
  std::unique_ptr<vk::DeviceBuffer> tables_;
  std::vector<VkPipeline> created_;
};

// A dispatch's declared memory access (the executor places barriers by them).
vk::Access access(const Array &array, bool write);

}  // namespace npvk::bench
