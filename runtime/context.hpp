// A context: one Vulkan device, its kernels, the queue of recorded operations
// and the statistics. Every public member expects the caller to hold mutex(),
// which serialises all work on the context (the C ABI takes it).
#pragma once

#include <npvk/npvk.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "base/tracked_mutex.hpp"
#include "compile/codegen.hpp"
#include "compile/fusion.hpp"
#include "compile/view.hpp"
#include "runtime/buffer.hpp"
#include "runtime/profile.hpp"
#include "vulkan/executor.hpp"
#include "vulkan/kernel_cache.hpp"
#include "vulkan/pipeline.hpp"

namespace npvk {

class Context : public std::enable_shared_from_this<Context> {
 public:
  static std::shared_ptr<Context> create(const npvk_context_options *options);
  ~Context();

  TrackedMutex &mutex() { return mutex_; }
  // Throws NPVK_ERR_INVALID_HANDLE after release() and NPVK_ERR_DEVICE_LOST
  // after the device was lost.
  void check_usable() const;
  // As check_usable, but after a device loss memory the host can map still
  // holds the last good (or replayed) results, and reading it needs no device.
  void check_readable(const Buffer &buffer) const;
  bool released() const { return released_; }
  const npvk_device_info &device_info() const { return device_->info(); }

  std::shared_ptr<Buffer> create_buffer(uint64_t size);
  std::shared_ptr<Buffer> wrap_host(void *host, uint64_t size);
  // A zero-copy wrap's pages are now reached at `host` (another mapping of
  // them): imports them there. No queued work may use the buffer.
  void rewrap_host(Buffer &buffer, void *host);
  void write(Buffer &buffer, uint64_t offset, const void *src, uint64_t size);
  void read(Buffer &buffer, uint64_t offset, void *dst, uint64_t size);
  void sync_buffer(Buffer &buffer);
  void host_modified(Buffer &buffer);

  // Validates and records one operation (see npvk_apply).
  void apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  // Validates and records a reduction (see npvk_reduce); `initial` may be null.
  void reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes, const View *initial,
              const View &out);
  // Validates and records C = A @ B (see npvk_matmul).
  void matmul(const View &a, const View &b, const View &c);
  // Validates and records an accumulation (see npvk_accumulate).
  void accumulate(npvk_op op, const View &in, uint32_t axis, const View &out);
  bool supported(npvk_op op, const npvk_dtype *dtypes, uint32_t count, std::string *why);
  // Runs everything recorded and waits.
  void flush();
  // Waits, saves caches and frees every device resource; the context is
  // unusable afterwards.
  void release();

  // Managed memory's observer (one per context at most); null to remove.
  void set_observer(MemoryObserver *observer) { observer_ = observer; }
  MemoryObserver *observer() const { return observer_; }
  // Writes the pipeline cache to disk now (it is also written at release).
  void save_caches();
  // Forget the device without calling Vulkan: for the child of a fork, where
  // the parent's Vulkan objects must not be touched.
  void abandon();
  bool has_pending() const { return !pending_.empty(); }

  // FP exceptions raised by work that ran, one entry per op (see npvk.h).
  std::vector<npvk_fp_error> take_fp_errors();

  npvk_stats stats() const;
  void reset_stats();

  // Failure handling (core/context_failures.cpp, docs/architecture.md).
  void set_host_loop(npvk_host_loop_fn fn, void *user) {
    host_loop_ = fn;
    host_loop_user_ = user;
  }
  npvk_failure_stats failure_stats() const;
  // Observability (core/context_observe.cpp, docs/observability.md).
  Profiler &profiler() { return profiler_; }
  void set_graph_dir(std::string dir) { graph_dir_ = std::move(dir); }
  std::string last_kernel_source() const;
  std::string last_kernel_graph() const;

 private:
  Context() = default;
  struct Kernel {
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  // The queued operation that later inner-loop rows may fold into.
  struct RowMerge {
    bool valid = false;
    npvk_op op = NPVK_OP_ADD;
    uint32_t nin = 0, count = 0;
    View first[kMaxOperands];       // the first row, as a 2-d view of one row
    int64_t outer[kMaxOperands]{};  // bytes from one row to the next
    uint64_t rows = 0;
    size_t pending_index = 0;
  };
  void record(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
              bool replace_last);
  bool try_merge_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  void remember_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  const Kernel &kernel_for(const std::string &key, const std::function<std::string()> &source);
  std::vector<uint32_t> spirv_for(std::string source, const std::string &key);
  vk::Dispatch dispatch_for(const PlannedKernel &kernel);
  // A reduction's one or two passes; `scratch` is where its partial results
  // go (bytes into scratch_), when it has more than one chunk per result.
  // Workgroups for a dispatch that wants `wanted` of them (see max_groups_).
  uint32_t group_count(uint64_t wanted) const;
  void record_reduction(ReduceOp &&r, const View &in, const View &out, std::vector<int64_t> lo,
                        std::vector<int64_t> hi);
  void matmul_dispatches(const PlannedKernel &kernel, std::vector<vk::Dispatch> &batch);
  void reduce_dispatches(const PlannedKernel &kernel, uint64_t scratch,
                         std::vector<vk::Dispatch> &batch);
  void remember(const std::shared_ptr<Buffer> &buffer);
  // The device memory budget (core/context_budget.cpp). make_resident gives
  // the evicted mirrored buffers among an op's operands their device copies
  // back, evicting others or flushing first to keep within the budget.
  void set_budget_from_environment();
  void make_resident(Buffer *const *used, size_t count);
  void make_resident(std::initializer_list<Buffer *> used) {
    make_resident(used.begin(), used.size());
  }
  bool make_room(uint64_t need, Buffer *const *keep, size_t count);
  void evict(Buffer &buffer);
  void allocate_copy(Buffer &buffer);
  void transfer(Buffer &buffer, uint64_t offset, void *host, uint64_t size, bool to_device);
  // NPVK_FAULT's injection points: each throws the failure it simulates.
  void inject_alloc_fault();
  void inject_compile_fault();
  void inject_submit_fault();
  // A flush failed with `error`: runs `done` on the host through the host
  // loop if it can, and counts the failure. `may_have_run`: the batch was
  // (perhaps) submitted, so only work that is safe to run twice is replayed.
  bool recover(const std::vector<RecordedOp> &done, const Error &error, bool may_have_run);
  // The host replay of a reduction, scan or matrix product (context_replay.cpp):
  // whether it can run, and running it on the operands' bytes (the FP flags it raised).
  bool replay_supported(const RecordedOp &op) const;
  uint32_t replay_standalone(const RecordedOp &op, uint8_t *const *bytes);
  // Adds an op's FP exceptions (device or host) to those the caller takes.
  void note_fp_errors(npvk_op op, uint32_t flags);
  // After a flush ran: its graph (NPVK_GRAPH), its device spans (tracing), and
  // its last kernel for explain. Kernel i ran dispatches [first_dispatch[i],
  // first_dispatch[i + 1]).
  void observe_flush(const std::vector<RecordedOp> &ops, const std::vector<PlannedKernel> &kernels,
                     const std::vector<size_t> &first_dispatch, const vk::BatchResult &result,
                     int64_t submit_ns);

  mutable TrackedMutex mutex_;
  std::unique_ptr<vk::Device> device_;
  std::unique_ptr<vk::KernelCache> cache_;
  std::unique_ptr<vk::PipelineFactory> pipelines_;
  std::unique_ptr<vk::Executor> executor_;
  std::unique_ptr<vk::DeviceBuffer> tables_;   // constants of shaders/math_f64.glsl
  std::unique_ptr<vk::DeviceBuffer> scratch_;  // reductions' partial results, grown as needed
  DeviceTraits traits_;
  bool fuse_ = true;         // NPVK_FUSION=0: one kernel per op
  uint64_t max_groups_ = 1;  // workgroups per dispatch at most
  // Smaller ops are not fused (NPVK_FUSE_MIN_ELEMENTS; see plan_kernels).
  uint64_t min_fuse_elements_ = 65536;
  // The most iterations a kernel's loop over elements may run: llvmpipe ends
  // a loop nest after 65535 (NPVK_LOOP_BUDGET overrides, for tests).
  int64_t loop_budget_ = int64_t(1) << 40;
  std::unordered_map<std::string, Kernel> kernels_;
  std::vector<RecordedOp> pending_;
  RowMerge row_;
  std::vector<npvk_fp_error> fp_errors_;
  std::vector<std::weak_ptr<Buffer>> buffers_;
  size_t live_buffer_estimate_ = 0;
  npvk_stats stats_{};
  uint64_t budget_ = UINT64_MAX;   // bytes of mirrored buffers' device copies
  std::atomic<uint64_t> held_{0};  // charged by the copies themselves (DeviceBuffer::charge)
  uint64_t peak_held_ = 0;
  uint64_t use_clock_ = 0;  // Buffer::last_use
  bool overrun_reported_ = false;
  bool released_ = false;
  MemoryObserver *observer_ = nullptr;
  npvk_host_loop_fn host_loop_ = nullptr;
  void *host_loop_user_ = nullptr;
  npvk_failure_stats failures_{};
  Profiler profiler_;
  std::string graph_dir_;  // NPVK_GRAPH
  uint64_t graphs_written_ = 0;
  FusedKernelSpec last_kernel_;
  uint64_t last_kernel_elements_ = 0;
  std::optional<ReduceOp> last_reduce_;  // set when the last kernel was a reduction
  std::optional<MatmulOp> last_matmul_;  // ... or a matrix product
};

// The host's raised FP exceptions (fetestexcept) as NPVK_FP_* flags.
uint32_t host_fp_flags();

}  // namespace npvk
