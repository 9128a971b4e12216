// The kernels a context has built: in memory by key, on disk as SPIR-V (by a
// hash of the source, driver and npvk version), and the driver's pipeline
// cache beside them.
#pragma once

#include <npvk/npvk.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/profile.hpp"
#include "vulkan/device.hpp"
#include "vulkan/kernel_cache.hpp"
#include "vulkan/pipeline.hpp"

namespace npvk {

class KernelStore {
 public:
  // `cache_dir` empty: no disk cache. `debug_dir` (NPVK_DEBUG_KERNEL_DIR):
  // every generated source is written there, and a hand-edited one stands in
  // for it. Counts go to `stats`, compile spans to `profiler`.
  KernelStore(vk::Device &device, const std::string &cache_dir,
              std::optional<std::string> debug_dir, npvk_stats &stats, Profiler &profiler);
  ~KernelStore();
  KernelStore(const KernelStore &) = delete;
  KernelStore &operator=(const KernelStore &) = delete;

  // The pipeline of kernel `key`; `source` gives its GLSL when it is built.
  VkPipeline pipeline(const std::string &key, const std::function<std::string()> &source);
  // Builds the pipelines of the kernels a flush needs that are not built
  // yet, several at once (one thread per core): a CPU driver compiles each
  // to machine code on the calling thread, seconds for a flush's new
  // kernels, which a single thread would pay one after another.
  struct Wanted {
    std::string key;
    std::function<std::string()> source;
  };
  void prepare(const std::vector<Wanted> &wanted);
  VkPipelineLayout layout() const { return pipelines_->layout(); }
  uint64_t disk_rejects() const { return cache_ ? cache_->rejects() : 0; }
  // Writes the pipeline cache to disk now (it is also written at release).
  void save();  // nothing after abandon()
  // Destroys every pipeline (release), or forgets them without Vulkan (the
  // child of a fork).
  void release();
  void abandon();

 private:
  // SPIR-V from the disk cache (`from_disk`) or compiled; safe to call from
  // several threads at once (it counts nothing).
  std::vector<uint32_t> spirv_for(std::string source, const std::string &key, bool &from_disk);

  vk::Device &device_;
  std::unique_ptr<vk::KernelCache> cache_;
  std::unique_ptr<vk::PipelineFactory> pipelines_;
  std::unordered_map<std::string, VkPipeline> kernels_;
  std::unordered_set<std::string> prepared_;  // built by prepare(), not yet asked for
  std::optional<std::string> debug_dir_;
  npvk_stats &stats_;
  Profiler &profiler_;
};

}  // namespace npvk
