#include "runtime/kernel_store.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <iterator>
#include <thread>
#include <unordered_set>

#include "base/error.hpp"
#include "base/hash.hpp"
#include "compile/kernel_abi.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/trace.hpp"
#include "vulkan/compiler.hpp"
#include "vulkan/reflection.hpp"

namespace npvk {
namespace {

const vk::PushLayout &expected_push_layout() {
  // Never destroyed: managed memory's atexit handler may flush, and compile,
  // after the destructors of statics constructed later than its registration
  // ran (ASan: a use after free when the first kernel was built at a fork).
  static const vk::PushLayout *layout =
      new vk::PushLayout{sizeof(PushConstants),
                         {offsetof(PushConstants, operand), offsetof(PushConstants, meta),
                          offsetof(PushConstants, count), offsetof(PushConstants, tables),
                          offsetof(PushConstants, flags)}};
  return *layout;
}

}  // namespace

KernelStore::KernelStore(vk::Device &device, const std::string &cache_dir,
                         std::optional<std::string> debug_dir, npvk_stats &stats,
                         Profiler &profiler)
    : device_(device),
      cache_(std::make_unique<vk::KernelCache>(cache_dir)),
      debug_dir_(std::move(debug_dir)),
      stats_(stats),
      profiler_(profiler) {
  pipelines_ = std::make_unique<vk::PipelineFactory>(device_, *cache_, sizeof(PushConstants));
}

KernelStore::~KernelStore() = default;

VkPipeline KernelStore::pipeline(const std::string &key,
                                 const std::function<std::string()> &source) {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    // A kernel prepare() just built is a build, not a hit, the first time.
    if (!prepared_.erase(key)) ++stats_.kernel_cache_hits;
    return it->second;
  }
  auto start = std::chrono::steady_clock::now();
  Profiler::Scope scope(profiler_, Phase::Compile);
  if (scope.tracing()) scope.set_args("\"kernel\":\"" + json_escape(key) + "\"");
  if (fault::fire(fault::Kind::Compile))
    fail(NPVK_ERR_COMPILE, "kernel compilation failed (injected by NPVK_FAULT=compile)");
  bool from_disk = false;
  std::vector<uint32_t> spirv = spirv_for(source(), key, from_disk);
  ++(from_disk ? stats_.disk_cache_hits : stats_.kernels_compiled);
  VkPipeline pipeline = pipelines_->create(spirv);
  ++stats_.pipelines_created;
  stats_.compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return kernels_.emplace(key, pipeline).first->second;
}

void KernelStore::prepare(const std::vector<Wanted> &wanted) {
  struct Job {
    std::string key, source;
    bool from_disk = false;
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::exception_ptr error;
  };
  std::vector<Job> jobs;
  std::unordered_set<std::string> seen;
  for (const Wanted &w : wanted)
    if (!kernels_.count(w.key) && seen.insert(w.key).second) jobs.push_back({w.key, ""});
  // One at a time costs nothing extra: pipeline() builds it when asked.
  const size_t threads =
      std::min<size_t>(jobs.size(), std::max(1u, std::thread::hardware_concurrency()));
  if (threads < 2) return;
  auto start = std::chrono::steady_clock::now();
  Profiler::Scope scope(profiler_, Phase::Compile);
  if (scope.tracing()) scope.set_args("\"kernels\":" + std::to_string(jobs.size()));
  for (Job &job : jobs) {
    // Injected failures and the sources, in order, on this thread.
    if (fault::fire(fault::Kind::Compile))
      fail(NPVK_ERR_COMPILE, "kernel compilation failed (injected by NPVK_FAULT=compile)");
    for (const Wanted &w : wanted)
      if (w.key == job.key) {
        job.source = w.source();
        break;
      }
  }
  const bool cpu_device = device_.info().type == NPVK_DEVICE_CPU;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      Job &job = jobs[i];
      try {
        job.pipeline = pipelines_->create(spirv_for(job.source, job.key, job.from_disk));
      } catch (...) {
        job.error = std::current_exception();
        continue;
      }
      // Measured on the main job (Black-Scholes, 7 new kernels, lavapipe):
      // the flush's compile and run 0.72 -> 0.62 s. The driver's queue thread
      // still compiles one pipeline at a time.
      if (cpu_device) try {
          pipelines_->compile_machine_code(job.pipeline);
        } catch (...) {
          // The pipeline is sound; the flush's own dispatch reports what
          // went wrong with the device.
        }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread &t : helpers) t.join();
  std::exception_ptr first_error;
  for (Job &job : jobs) {
    if (job.error) {
      if (!first_error) first_error = job.error;
      continue;
    }
    ++(job.from_disk ? stats_.disk_cache_hits : stats_.kernels_compiled);
    ++stats_.pipelines_created;
    kernels_.emplace(job.key, job.pipeline);
    prepared_.insert(job.key);
  }
  stats_.compile_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (first_error) std::rethrow_exception(first_error);
}

std::vector<uint32_t> KernelStore::spirv_for(std::string source, const std::string &key,
                                             bool &from_disk) {
  // For kernel work: dump every generated source, and let a hand-edited one
  // stand in for it (see docs/architecture.md). Fused keys are long, so
  // files are named by a hash of the key.
  if (debug_dir_) {
    std::string file = hash128(key.data(), key.size()).hex().substr(0, 16);
    std::ifstream in(*debug_dir_ + "/" + file + ".glsl");
    if (in) {
      source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      std::ofstream out(*debug_dir_ + "/" + file + ".generated");
      out << source;
    }
  }
  const npvk_device_info &info = device_.info();
  // The SPIR-V depends only on the source and on what compile_glsl makes of
  // it ("shrunk": entries written before vk::shrink() are rebuilt once), but
  // a driver update may want different code from us one day: key by driver
  // and version too.
  Hash128 cache_key = hash128(source + "\n//" + NPVK_VERSION_STRING + "\n//shrunk\n//" +
                              hash128(info.driver_uuid, sizeof info.driver_uuid).hex());
  if (auto cached = cache_->load_spirv(cache_key)) {
    try {
      vk::check_push_layout(*cached, expected_push_layout());
      from_disk = true;
      return *cached;
    } catch (const Error &) {
      // A damaged entry that still had a valid checksum: rebuild it below.
    }
  }
  std::vector<uint32_t> spirv = vk::compile_glsl(source, key);
  vk::check_push_layout(spirv, expected_push_layout());
  from_disk = false;
  cache_->store_spirv(cache_key, spirv);
  return spirv;
}

void KernelStore::save() {
  if (pipelines_) pipelines_->save();
}

void KernelStore::release() {
  for (auto &entry : kernels_) pipelines_->destroy(entry.second);
  kernels_.clear();
  prepared_.clear();
  pipelines_.reset();
}

void KernelStore::abandon() {
  // Leak on purpose: destroying Vulkan objects in a forked child can hang or
  // corrupt the parent's device state.
  kernels_.clear();
  prepared_.clear();
  pipelines_.release();
  cache_.release();
}

}  // namespace npvk
