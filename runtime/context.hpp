// A context: one Vulkan device and the queue of recorded operations, which
// a flush plans into kernels and runs. The parts it is made of each do one
// job: Recorder (validation and recording), Residency (buffers, transfers,
// the memory budget), KernelStore (built kernels), Recovery (host replay of a
// failed flush), FlushObserver (graphs, traces, explain). Every public member
// expects the caller to hold mutex(), which serialises all work on the
// context (the C ABI takes it).
#pragma once

#include <npvk/npvk.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/tracked_mutex.hpp"
#include "compile/fusion.hpp"
#include "runtime/buffer.hpp"
#include "runtime/cost_model.hpp"
#include "runtime/flush_history.hpp"
#include "runtime/fp_errors.hpp"
#include "runtime/kernel_store.hpp"
#include "runtime/observe.hpp"
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

  // Failure handling (runtime/recovery.hpp, docs/architecture.md).
  void set_host_loop(npvk_host_loop_fn fn, void *user) { recovery_.set_host_loop(fn, user); }
  // The cost model (runtime/cost_model.hpp): off until enabled; it needs the
  // host loop. Its parameters are measured at their first use.
  // Setting it starts a new streak of host flushes (host_streak()).
  void set_cost_model(bool on) {
    cost_model_ = on;
    host_streak_ = 0;
  }
  bool cost_model() const { return cost_model_; }
  // `measure`: measure them now if they are neither known nor cached.
  const CostParams &cost_params(bool measure = true);
  // The estimates of the last flush the cost model weighed.
  const CostEstimate &last_cost_estimate() const { return last_estimate_; }
  // Flushes the cost model decided, and how many of the last ran on the host.
  uint64_t flushes_weighed() const { return flushes_weighed_; }
  uint64_t host_streak() const { return host_streak_; }
  // What is left of making the device's cost, weighed against it (runs_on_host).
  double device_make_ns() const {
    return device_made() ? 0.0 : std::max(0.0, double(device_make_ns_) - device_regret_ns_);
  }
  uint64_t flushes_awaiting_device() const { return flushes_awaiting_device_; }
  // Weighed flushes whose estimate used a measured time (FlushHistory).
  uint64_t measured_estimates() const { return measured_estimates_; }
  // Whether the queued work runs faster on the host, by what the same
  // planned work measured on the device before (false where it was not
  // measured, or the cost model would not weigh it): a row sum of its result
  // then runs with NumPy rather than with it on the device.
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
  // Where the next flushes run: by the cost model, or (measuring it) forced.
  enum class FlushWhere { CostModel, Device, Host };
  // `signature`: the flush's name in the history of measured flushes (0: none).
  bool runs_on_host(const std::vector<RecordedOp> &done, const std::vector<PlannedKernel> &kernels,
                    uint64_t signature);
  // The kernels `ops` run as (fusion, contraction of dead values).
  std::vector<PlannedKernel> plan(const std::vector<RecordedOp> &ops) const;
  CostParams measure_costs();  // runtime/cost_calibration.cpp
  // The cost model's file name: the driver's UUID and version, the device's ids.
  std::string device_key() const;
  // Tells the flush hook where the ops [first, last] ran.
  void report_flush(uint64_t first, uint64_t last, npvk_flush_placement placement) const;
  // Counts what a flush ran and notes its FP exceptions.
  void account(const std::vector<RecordedOp> &done, const std::vector<PlannedKernel> &kernels,
               const std::vector<size_t> &first_dispatch, const vk::BatchResult &result);

  mutable TrackedMutex mutex_;
  // Declared before the parts that refer to them.
  npvk_stats stats_{};
  Profiler profiler_;
  Recovery recovery_;
  FpErrors fp_errors_;
  FlushObserver observe_;
  npvk_flush_hook flush_hook_ = nullptr;
  void *flush_hook_user_ = nullptr;
  std::vector<RecordedOp> pending_;
  MemoryObserver *observer_ = nullptr;

  npvk_device_info info_{};
  vk::DeviceChoice choice_;  // what chooses the device (make_device)
  std::string fingerprint_;  // of choice_, where the description is stored
  std::optional<std::string> debug_kernel_dir_;
  std::optional<Error> device_failure_;
  // What making the device took in an earlier process (0: made at creation),
  // and what the device would have saved on the flushes the cost model ran
  // on the host since, for want of it (runs_on_host).
  uint64_t device_make_ns_ = 0;
  double device_regret_ns_ = 0;
  uint64_t flushes_awaiting_device_ = 0;
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
  bool cost_model_ = false;
  bool costs_tried_ = false;
  CostParams costs_;
  CostEstimate last_estimate_;
  uint64_t flushes_weighed_ = 0, host_streak_ = 0, measured_estimates_ = 0;
  FlushHistory history_;
  FlushWhere where_ = FlushWhere::CostModel;
  std::string cache_dir_;  // the kernel cache's: the cost model's figures too
};

}  // namespace npvk
