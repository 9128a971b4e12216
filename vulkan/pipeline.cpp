#include "vulkan/pipeline.hpp"

#include "base/error.hpp"
#include "base/hash.hpp"

namespace npvk::vk {

PipelineFactory::PipelineFactory(Device &device, KernelCache &cache, uint32_t push_size)
    : device_(device), cache_(cache), push_size_(push_size) {
  const Functions &fn = device.fn();
  require(push_size <= device.info().max_push_constants_size, NPVK_ERR_UNSUPPORTED,
          "the device offers fewer push-constant bytes than npvk's kernels use");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
  VkPipelineLayoutCreateInfo lci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  lci.pushConstantRangeCount = 1;
  lci.pPushConstantRanges = &range;
  device.check(fn.vkCreatePipelineLayout(device.handle(), &lci, nullptr, &layout_),
               "vkCreatePipelineLayout");

  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  auto blob = cache_.load_blob(cache_name());
  if (blob) {
    pci.initialDataSize = blob->size();
    pci.pInitialData = blob->data();
  }
  stored_size_ = pci.initialDataSize;
  if (fn.vkCreatePipelineCache(device.handle(), &pci, nullptr, &pipeline_cache_) != VK_SUCCESS) {
    // The driver refused the stored blob: start empty.
    pci.initialDataSize = stored_size_ = 0;
    pci.pInitialData = nullptr;
    device.check(fn.vkCreatePipelineCache(device.handle(), &pci, nullptr, &pipeline_cache_),
                 "vkCreatePipelineCache");
  }
}

PipelineFactory::~PipelineFactory() {
  save();
  const Functions &fn = device_.fn();
  if (pipeline_cache_) fn.vkDestroyPipelineCache(device_.handle(), pipeline_cache_, nullptr);
  if (layout_) fn.vkDestroyPipelineLayout(device_.handle(), layout_, nullptr);
}

void PipelineFactory::save() {
  const Functions &fn = device_.fn();
  size_t size = 0;
  if (!unsaved_.exchange(false)) return;
  if (!pipeline_cache_ || !cache_.enabled() || device_.lost() ||
      fn.vkGetPipelineCacheData(device_.handle(), pipeline_cache_, &size, nullptr) != VK_SUCCESS ||
      size == 0 || size == stored_size_)
    return;
  std::vector<uint8_t> data(size);
  if (fn.vkGetPipelineCacheData(device_.handle(), pipeline_cache_, &size, data.data()) ==
      VK_SUCCESS) {
    data.resize(size);
    cache_.store_blob(cache_name(), data);
    stored_size_ = size;
  }
}

std::string PipelineFactory::cache_name() const {
  // One blob per driver build: the UUID changes with the driver.
  const auto &uuid = device_.caps().pipeline_cache_uuid;
  return "pipelines-" + hash128(uuid, sizeof uuid).hex();
}

VkPipeline PipelineFactory::create(const std::vector<uint32_t> &spirv) {
  const Functions &fn = device_.fn();
  VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smci.codeSize = spirv.size() * 4;
  smci.pCode = spirv.data();
  VkShaderModule module = VK_NULL_HANDLE;
  device_.check(fn.vkCreateShaderModule(device_.handle(), &smci, nullptr, &module),
                "vkCreateShaderModule");
  VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = module;
  cci.stage.pName = "main";
  cci.layout = layout_;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult r =
      fn.vkCreateComputePipelines(device_.handle(), pipeline_cache_, 1, &cci, nullptr, &pipeline);
  fn.vkDestroyShaderModule(device_.handle(), module, nullptr);
  device_.check(r, "vkCreateComputePipelines");
  unsaved_ = true;
  return pipeline;
}

void PipelineFactory::compile_machine_code(VkPipeline pipeline) {
  const Functions &fn = device_.fn();
  // Every push constant a kernel declares must be set before it dispatches;
  // with no workgroups none is read.
  const std::vector<uint8_t> zeros(push_size_);
  device_.submit_and_wait_from_worker([&](VkCommandBuffer cmd) {
    fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    fn.vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size_, zeros.data());
    fn.vkCmdDispatch(cmd, 0, 1, 1);
  });
}

void PipelineFactory::destroy(VkPipeline pipeline) {
  if (pipeline) device_.fn().vkDestroyPipeline(device_.handle(), pipeline, nullptr);
}

}  // namespace npvk::vk
