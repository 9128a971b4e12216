#include "vulkan/executor.hpp"

#include <cstring>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

bool overlaps(const std::vector<Access> &set, const Access &a) {
  for (const Access &s : set)
    if (s.resource == a.resource && s.lo < a.hi && a.lo < s.hi) return true;
  return false;
}

}  // namespace

Executor::Executor(Device &device, VkPipelineLayout layout) : device_(device), layout_(layout) {}

Executor::~Executor() {
  if (queries_) device_.fn().vkDestroyQueryPool(device_.handle(), queries_, nullptr);
}

void Executor::reserve_queries(uint32_t count) {
  if (count <= query_capacity_ || !device_.info().timestamps) return;
  if (queries_) device_.fn().vkDestroyQueryPool(device_.handle(), queries_, nullptr);
  queries_ = VK_NULL_HANDLE;
  query_capacity_ = 0;
  uint32_t capacity = 256;
  while (capacity < count) capacity *= 2;
  VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = capacity;
  device_.check(device_.fn().vkCreateQueryPool(device_.handle(), &qci, nullptr, &queries_),
                "vkCreateQueryPool");
  query_capacity_ = capacity;
}

void Executor::reserve_arguments(uint64_t bytes) {
  if (arguments_ && arguments_->size() >= bytes) return;
  uint64_t capacity = 64 * 1024;
  while (capacity < bytes) capacity *= 2;
  arguments_.reset();
  arguments_ = std::make_unique<DeviceBuffer>(device_, capacity, MemoryPlacement::HostVisible);
}

void Executor::reserve_flags(uint64_t count) {
  if (flags_ && flags_->size() >= count * sizeof(uint32_t)) return;
  uint64_t capacity = 1024;
  while (capacity < count) capacity *= 2;
  flags_.reset();
  flags_ = std::make_unique<DeviceBuffer>(device_, capacity * sizeof(uint32_t),
                                          MemoryPlacement::HostVisible);
}

BatchResult Executor::run(std::vector<Dispatch> &batch) {
  BatchResult result;
  if (batch.empty()) return result;
  const Functions &fn = device_.fn();

  uint64_t meta_bytes = 0;
  for (const Dispatch &d : batch) meta_bytes += d.meta.size() * sizeof(int64_t);
  if (meta_bytes) {
    reserve_arguments(meta_bytes);
    auto *base = static_cast<uint8_t *>(arguments_->mapped());
    uint64_t at = 0;
    for (Dispatch &d : batch) {
      if (d.meta.empty()) continue;
      std::memcpy(base + at, d.meta.data(), d.meta.size() * sizeof(int64_t));
      d.push.meta = arguments_->address() + at;
      at += d.meta.size() * sizeof(int64_t);
    }
  }
  uint64_t flag_words = 0;
  for (const Dispatch &d : batch) flag_words += d.flag_words;
  reserve_flags(flag_words);
  std::memset(flags_->mapped(), 0, flag_words * sizeof(uint32_t));
  for (uint64_t i = 0, word = 0; i < batch.size(); word += batch[i++].flag_words)
    batch[i].push.flags = flags_->address() + word * sizeof(uint32_t);
  const bool timed = device_.info().timestamps;
  const uint32_t query_count = uint32_t(batch.size() * 2);
  if (timed) reserve_queries(query_count);

  VkCommandBuffer cmd = device_.begin_commands();
  if (timed) fn.vkCmdResetQueryPool(cmd, queries_, 0, query_count);
  std::vector<Access> written, read;
  VkPipeline bound = VK_NULL_HANDLE;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Dispatch &d = batch[i];
    bool hazard = false;
    for (const Access &a : d.accesses)
      hazard = hazard || overlaps(written, a) || (a.write && overlaps(read, a));
    if (hazard) {
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      fn.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0,
                              nullptr);
      ++result.barriers;
      written.clear();
      read.clear();
    }
    for (const Access &a : d.accesses) (a.write ? written : read).push_back(a);
    if (d.pipeline != bound) {
      fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
      bound = d.pipeline;
    }
    fn.vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(PushConstants),
                          &d.push);
    if (timed)
      fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, uint32_t(2 * i));
    fn.vkCmdDispatch(cmd, d.groups, 1, 1);
    if (timed)
      fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_,
                             uint32_t(2 * i + 1));
  }
  device_.submit_and_wait(cmd);
  const auto *words = static_cast<const uint32_t *>(flags_->mapped());
  result.fp_flags.assign(words, words + flag_words);

  if (timed) {
    std::vector<uint64_t> stamps(query_count);
    VkResult r = fn.vkGetQueryPoolResults(
        device_.handle(), queries_, 0, query_count, stamps.size() * sizeof(uint64_t), stamps.data(),
        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    device_.check(r, "vkGetQueryPoolResults");
    const uint32_t bits = device_.caps().timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
    const double period = device_.info().timestamp_period_ns;
    result.dispatch_ns.resize(query_count);
    for (size_t i = 0; i < batch.size(); ++i) {
      uint64_t ticks = (stamps[2 * i + 1] - stamps[2 * i]) & mask;
      result.device_seconds += double(ticks) * period * 1e-9;
      result.dispatch_ns[2 * i] = int64_t(double(stamps[2 * i] & mask) * period);
      result.dispatch_ns[2 * i + 1] = result.dispatch_ns[2 * i] + int64_t(double(ticks) * period);
    }
  }
  return result;
}

}  // namespace npvk::vk
