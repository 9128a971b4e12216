// A context: one Vulkan device and the queue of recorded operations, which
// a flush plans into kernels and runs. The parts it is made of each do one
// job: Recorder (validation and recording), Residency (buffers, transfers,
// the memory budget), KernelStore (built kernels), Placement (where work
// runs, runtime/placement/), HostExecutor (work run with the host loops,
// runtime/host/), Recovery (failure counts), FlushObserver (graphs, traces,
// explain). Every public member
// expects the caller to hold mutex(), which serialises all work on the
// context (the C ABI takes it).
#pragma once

#include <npvk/npvk.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tracked_mutex.hpp"
#include "compile/fusion.hpp"
#include "runtime/buffer.hpp"
#include "runtime/fp_errors.hpp"
#include "runtime/host/host_executor.hpp"
#include "runtime/kernel_store.hpp"
#include "runtime/observe.hpp"
#include "runtime/placement/placement.hpp"
#include "runtime/profile.hpp"
#include "runtime/recorder.hpp"
#include "runtime/recovery.hpp"
#include "runtime/residency.hpp"
#include "vulkan/device_info_cache.hpp"
#include "vulkan/executor.hpp"

namespace npvk {

// A caller's options, checked, in this version's layout (null: defaults).
npvk_context_options read_context_options(const npvk_context_options *options);

class Context : public std::enable_shared_from_this<Context> {
 public:
  // `device_when_needed`: where the device this context would choose was
  // made by an earlier process with the same settings (its description is
  // stored under their fingerprint, vulkan/device_info_cache.hpp), the
  // context starts without it and makes it at the first work that needs the
  // device; work the cost model gives the host never does.
  static std::shared_ptr<Context> create(const npvk_context_options *options,
                                         bool device_when_needed = false);
  ~Context();

  TrackedMutex &mutex() { return mutex_; }
  // Throws NPVK_ERR_INVALID_HANDLE after release() and NPVK_ERR_DEVICE_LOST
  // after the device was lost.
  void check_usable() const;
  // As check_usable, but after a device loss memory the host can map still
  // holds the last good (or replayed) results, and reading it needs no device.
  void check_readable(const Buffer &buffer) const;
  bool released() const { return released_; }
  // The device's description: stored from an earlier process until the
  // device is made (device_when_needed).
  const npvk_device_info &device_info() const { return info_; }
  bool device_made() const { return executor_ != nullptr; }
  // Makes the device where the context started without it (the C ABI's
  // npvk_context_make_device).
  void make_device_now() { device(); }

  // Buffers (runtime/residency.hpp).
  std::shared_ptr<Buffer> create_buffer(uint64_t size);
  std::shared_ptr<Buffer> wrap_host(void *host, uint64_t size, bool upload = true);
  // A zero-copy wrap's pages are now reached at `host` (another mapping of
  // them): imports them there. No queued work may use the buffer.
  void rewrap_host(Buffer &buffer, void *host) { residency_->rewrap_host(buffer, host); }
  void write(Buffer &buffer, uint64_t offset, const void *src, uint64_t size);
  void read(Buffer &buffer, uint64_t offset, void *dst, uint64_t size);
  void sync_buffer(Buffer &buffer);
  // The host wrote a wrapped buffer's memory: uploads it, after running the
  // queued work first where `queued` (it must see the old contents).
  void host_modified(Buffer &buffer, bool queued = true);

  // Recording (runtime/recorder.hpp; npvk_apply, npvk_reduce, npvk_matmul,
  // npvk_accumulate).
  void apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin);
  // `sum_block`: a float sum's blocks, as npvk_reduce_blocked takes it.
  void reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes, const View *initial,
              const View &out, int64_t sum_block = 0);
  void matmul(const View &a, const View &b, const View &c);
  void accumulate(npvk_op op, const View &in, uint32_t axis, const View &out);
  bool supported(npvk_op op, const npvk_dtype *dtypes, uint32_t count, std::string *why) {
    return recorder_->supported(op, dtypes, count, why);
  }

  // Runs everything recorded and waits.
  void flush();
  // Waits, saves caches and frees every device resource; the context is
  // unusable afterwards.
  void release();
  // Forget the device without calling Vulkan: for the child of a fork, where
  // the parent's Vulkan objects must not be touched.
  void abandon();
  bool has_pending() const { return !pending_.empty(); }

  // Managed memory's observer (one per context at most); null to remove.
  void set_observer(MemoryObserver *observer);
  MemoryObserver *observer() const { return observer_; }
  // Writes the pipeline cache to disk now (it is also written at release).
  void save_caches() {
    if (kernels_) kernels_->save();
  }

  // FP exceptions raised by work that ran, one entry per op (see npvk.h):
  // of the ops `thread` recorded (recording_thread()), or with 0 of all.
  std::vector<npvk_fp_error> take_fp_errors(uint32_t thread) { return fp_errors_.take(thread); }
  // The same per op (npvk_context_take_op_fp_errors), at most `capacity`.
  std::vector<npvk_op_fp_error> take_op_fp_errors(uint32_t thread, size_t capacity,
                                                  uint64_t *ran_through) {
    return fp_errors_.take_ops(thread, capacity, ran_through);
  }
  npvk_stats stats() const;
  // Ops recorded so far (the caller holds the lock), and whether an op
  // recorded when that count was `op` can share a kernel with the next one
  // (fusion takes at most kMaxFusedSteps consecutive ops, none across a
  // standalone kernel).
  uint64_t ops_recorded() const { return stats_.ops_recorded; }
  bool may_fuse_with_next(uint64_t op) const;
  void reset_stats();

  // Failure handling (runtime/recovery.hpp, docs/architecture.md): the host
  // loop runs failed flushes again, and the flushes placed on the host.
  void set_host_loop(npvk_host_loop_fn fn, void *user) { host_.set_host_loop(fn, user); }
  // Where work runs (runtime/placement/placement.hpp): the cost model's
  // figures, decisions and counts.
  Placement &placement() { return placement_; }
  const Placement &placement() const { return placement_; }
  // Whether the queued work runs faster on the host (Placement::queued_on_host).
  bool pending_runs_on_host();
  npvk_failure_stats failure_stats() const { return recovery_.stats(); }
  // Observability (runtime/observe.hpp, docs/observability.md).
  Profiler &profiler() { return profiler_; }
  void set_graph_dir(std::string dir) { observe_.set_graph_dir(std::move(dir)); }
  std::string last_kernel_source() const { return observe_.last_kernel_source(); }
  std::string last_kernel_graph() const { return observe_.last_kernel_graph(); }
  // npvk_context_set_flush_hook / npvk_context_last_op.
  void set_flush_hook(npvk_flush_hook hook, void *user) {
    flush_hook_ = hook;
    flush_hook_user_ = user;
  }
  uint64_t last_op_of_this_thread() const;

 private:
  friend class Placement;  // its calibration runs flushes of its own (calibration.cpp)
  Context() = default;
  // The device, made first where the context started without it.
  vk::Device &device();
  // Makes the device (or takes the one made ahead) and the parts that need
  // it: the kernel store, the executor and the math tables. A failure is
  // kept and thrown again by later calls, which then cost nothing.
  void make_device();
  // NPVK_FAULT's submit and device_lost points: each throws the failure it simulates.
  void inject_submit_fault();
  // The kernels' dispatches: scratch memory for their partial results, and
  // each kernel's pipeline.
  std::vector<vk::Dispatch> bind(const std::vector<PlannedKernel> &kernels,
                                 std::vector<size_t> &first_dispatch);
  // The kernels `ops` run as (fusion, contraction of dead values).
  std::vector<PlannedKernel> plan(const std::vector<RecordedOp> &ops) const;
  // A flush under way: its ops, when it started, and whether the flush hook
  // hears where they ran.
  struct FlushRun {
    const std::vector<RecordedOp> &done;
    std::chrono::steady_clock::time_point start;
    uint64_t first_op, last_op;
    bool reported;
  };
  // The flush on the host executor (NumPy's loops), or on the device, where
  // a failure has Recovery run it on the host.
  void run_on_host(const FlushRun &run, const std::vector<PlannedKernel> &kernels,
                   uint64_t signature);
  void run_on_device(const FlushRun &run, const std::vector<PlannedKernel> &kernels,
                     const std::vector<size_t> &cuts, uint64_t signature);
  void report(const FlushRun &run, npvk_flush_placement placement) const;
  // Tells the flush hook where the ops [first, last] ran.
  void report_flush(uint64_t first, uint64_t last, npvk_flush_placement placement) const;
  // Counts what a flush ran and notes its FP exceptions.
  void account(const std::vector<RecordedOp> &done, const std::vector<PlannedKernel> &kernels,
               const std::vector<size_t> &first_dispatch, const vk::BatchResult &result);

  mutable TrackedMutex mutex_;
  // Declared before the parts that refer to them.
  npvk_stats stats_{};
  Profiler profiler_;
  HostExecutor host_;
  Recovery recovery_;
  Placement placement_{*this};
  FpErrors fp_errors_;
  FlushObserver observe_;
  npvk_flush_hook flush_hook_ = nullptr;
  void *flush_hook_user_ = nullptr;
  std::vector<RecordedOp> pending_;
  std::vector<RecordedOp> spare_queue_;  // empty; the capacity flush() hands pending_
  MemoryObserver *observer_ = nullptr;

  npvk_device_info info_{};
  vk::DeviceChoice choice_;  // what chooses the device (make_device)
  std::string fingerprint_;  // of choice_, where the description is stored
  std::optional<std::string> debug_kernel_dir_;
  std::optional<Error> device_failure_;
  std::unique_ptr<vk::Device> device_;
  std::unique_ptr<KernelStore> kernels_;
  std::unique_ptr<vk::Executor> executor_;
  std::unique_ptr<vk::DeviceBuffer> tables_;   // constants of shaders/math_f64.glsl
  std::unique_ptr<vk::DeviceBuffer> scratch_;  // reductions' partial results, grown as needed
  std::unique_ptr<Residency> residency_;
  std::unique_ptr<Recorder> recorder_;
  bool fuse_ = true;              // NPVK_FUSION=0: one kernel per op
  bool device_prepared_ = false;  // its device came from npvk_device_prepare
  // Smaller ops are not fused (NPVK_FUSE_MIN_ELEMENTS; see plan_kernels).
  uint64_t min_fuse_elements_ = 65536;
  bool allow_import_ = true;  // NPVK_ZERO_COPY=0: mirrored buffers only
  bool released_ = false;
  std::string cache_dir_;  // the kernel cache's: the cost model's figures too
};

}  // namespace npvk
