#include "runtime/context.hpp"

#include <algorithm>
#include <cfenv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "base/options.hpp"
#include "compile/families/elementwise/elementwise_binding.hpp"
#include "compile/kernel_spec.hpp"
#include "compile/math_tables.hpp"
#include "runtime/fault_injection.hpp"
#include "runtime/flags_pass.hpp"
#include "vulkan/prepared_device.hpp"

namespace npvk {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

npvk_context_options read_context_options(const npvk_context_options *options) {
  npvk_context_options opts{};
  if (options) {
    require(options->struct_size >= sizeof(uint32_t) * 2, NPVK_ERR_INVALID_ARGUMENT,
            "npvk_context_options.struct_size is not set");
    std::memcpy(&opts, options, std::min<size_t>(options->struct_size, sizeof opts));
  }
  const uint32_t known = NPVK_CONTEXT_VALIDATION | NPVK_CONTEXT_NO_DISK_CACHE;
  require((opts.flags & ~known) == 0, NPVK_ERR_INVALID_ARGUMENT, "unknown context flags");
  return opts;
}

std::shared_ptr<Context> Context::create(const npvk_context_options *options,
                                         bool device_when_needed) {
  const npvk_context_options opts = read_context_options(options);
  // Every NPVK_* setting, read once for this context (base/options.hpp).
  const Options env = Options::from_environment();
  const bool validation = (opts.flags & NPVK_CONTEXT_VALIDATION) || env.validation;

  std::shared_ptr<Context> ctx(new Context());
  Context &c = *ctx;
  std::string dir;
  if (!(opts.flags & NPVK_CONTEXT_NO_DISK_CACHE))
    dir = opts.cache_dir && *opts.cache_dir ? opts.cache_dir : env.cache_dir;
  c.cache_dir_ = dir;
  c.debug_kernel_dir_ = env.debug_kernel_dir;
  c.choice_.selector = opts.device ? opts.device : "";
  c.choice_.env_selector = env.device;
  c.choice_.validation = validation;
  c.choice_.disabled = env.disable_features;
  c.device_ = vk::take_prepared_device(validation, env.disable_features, opts.device, env.device);
  c.device_prepared_ = c.device_ != nullptr;
  bool deferred = false;
  if (device_when_needed && !c.device_) {
    c.fingerprint_ = vk::device_fingerprint(c.choice_);
    vk::StoredDevice stored;
    // Only where buffers would be zero-copy (a mirrored wrap needs its
    // device copy when it is made), and only on a CPU device: importing
    // pages later, when recorded work has closed them (PROT_NONE), is
    // pointer bookkeeping for lavapipe, but a GPU driver pins the pages and
    // may refuse closed ones.
    deferred = env.zero_copy && vk::load_device_info(dir, c.fingerprint_, &stored) &&
               stored.info.usable && stored.info.host_memory_import &&
               stored.info.type == NPVK_DEVICE_CPU;
    if (deferred) {
      c.info_ = stored.info;
      c.placement_.set_device_make_ns(stored.make_ns);
    }
  }
  if (!deferred) c.make_device();
  const npvk_device_info &info = c.info_;

  RecordLimits limits;
  limits.traits.float64 = info.float64;
  // A CPU driver runs workgroups on a few threads: many elements per
  // invocation amortise each invocation's setup (slot addresses, scalars).
  limits.max_groups = info.max_workgroup_count_x;
  if (info.type == NPVK_DEVICE_CPU) limits.max_groups = 256;
  if (env.max_workgroups) limits.max_groups = *env.max_workgroups;
  // llvmpipe ends a loop nest after 65535 iterations.
  if (std::strstr(info.driver_name, "llvmpipe") || std::strstr(info.name, "llvmpipe"))
    limits.loop_budget = 32768;
  if (env.loop_budget) limits.loop_budget = *env.loop_budget;
  if (env.fuse_min_elements) c.min_fuse_elements_ = *env.fuse_min_elements;
  c.fuse_ = env.fusion;
  c.allow_import_ = env.zero_copy;

  c.stats_.struct_size = sizeof(npvk_stats);
  Context *self = &c;
  Residency::DeviceAccess access;
  access.make = [self]() -> vk::Device & { return self->device(); };
  access.made = [self]() { return self->device_made() ? self->device_.get() : nullptr; };
  access.info = &c.info_;
  c.residency_ = std::make_unique<Residency>(
      std::move(access), c.pending_, [self] { self->flush(); }, c.stats_, c.recovery_.failures(),
      c.profiler_, env.device_memory_budget);
  c.recorder_ = std::make_unique<Recorder>(
      ctx, c.pending_, [self] { self->flush(); }, *c.residency_, c.observer_, c.stats_, c.profiler_,
      limits);
  c.profiler_.trace_from_options(env.trace_path);
  if (!env.graph_dir.empty()) c.observe_.set_graph_dir(env.graph_dir);
  return ctx;
}

vk::Device &Context::device() {
  if (!device_made()) make_device();
  return *device_;
}

void Context::make_device() {
  if (device_failure_) throw *device_failure_;
  const auto start = std::chrono::steady_clock::now();
  try {
    if (!device_) {
      if (observer_) observer_->before_device_made();
      // Made inside a flush, often inside a NumPy call: the driver's start-up
      // (LLVM's) raises FP flags that are not the program's, and NumPy would
      // report them as its op's ("invalid value encountered in multiply").
      std::fenv_t fp;
      std::fegetenv(&fp);
      try {
        auto instance = std::make_unique<vk::Instance>(choice_.validation, choice_.disabled);
        const uint32_t index = instance->select(
            choice_.selector.empty() ? nullptr : choice_.selector.c_str(), choice_.env_selector);
        device_ = std::make_unique<vk::Device>(std::move(instance), index);
      } catch (...) {
        std::fesetenv(&fp);
        throw;
      }
      std::fesetenv(&fp);
      if (observer_) observer_->after_device_made();
    }
    // A description stored by an earlier process is replaced by the device's
    // own (the same, unless the driver changed in a way the fingerprint
    // missed), and kept for the next process.
    info_ = device_->info();
    kernels_ =
        std::make_unique<KernelStore>(*device_, cache_dir_, debug_kernel_dir_, stats_, profiler_);
    const std::vector<double> &tables = math_f64_table_data();
    tables_ = std::make_unique<vk::DeviceBuffer>(
        *device_, std::max<uint64_t>(tables.size() * sizeof(double), 8),
        vk::MemoryPlacement::HostVisible);
    if (!tables.empty())
      std::memcpy(tables_->mapped(), tables.data(), tables.size() * sizeof(double));
    executor_ = std::make_unique<vk::Executor>(*device_, kernels_->layout());
    // Stored where nothing was, where the description differs, or where
    // making it was faster this time: the fastest is the run a shared
    // machine disturbed least (as for the cost model's figures). A device
    // made ahead on a thread is not timed here: not stored.
    if (!fingerprint_.empty() && !device_prepared_) {
      vk::StoredDevice made{info_, uint64_t(seconds_since(start) * 1e9)};
      vk::StoredDevice stored;
      if (!vk::load_device_info(cache_dir_, fingerprint_, &stored) ||
          std::memcmp(&stored.info, &made.info, sizeof made.info) != 0 ||
          made.make_ns < stored.make_ns)
        vk::store_device_info(cache_dir_, fingerprint_, made);
    }
  } catch (const Error &e) {
    if (residency_) device_failure_ = e;  // a context that exists already keeps working on the host
    executor_.reset();
    throw;
  }
  if (residency_) residency_->device_made();
}

Context::~Context() {
  try {
    release();
  } catch (...) {
    // Destruction cannot report; release() already freed what it could.
  }
}

void Context::check_usable() const {
  require(!released_, NPVK_ERR_INVALID_HANDLE, "the context was released");
  require(!device_ || !device_->lost(), NPVK_ERR_DEVICE_LOST,
          "the Vulkan device was lost; release the context and create a new one");
}

void Context::check_readable(const Buffer &buffer) const {
  const bool host_readable =
      buffer.evicted || buffer.import_deferred || (buffer.device && buffer.device->mapped());
  if (released_ || !device_ || !device_->lost() || !host_readable) check_usable();
}

void Context::set_observer(MemoryObserver *observer) {
  observer_ = observer;
  residency_->set_observer(observer);
}

std::shared_ptr<Buffer> Context::create_buffer(uint64_t size) {
  check_usable();
  return residency_->create_buffer(shared_from_this(), size);
}

std::shared_ptr<Buffer> Context::wrap_host(void *host, uint64_t size, bool upload) {
  check_usable();
  return residency_->wrap_host(shared_from_this(), host, size, allow_import_, upload);
}

void Context::write(Buffer &buffer, uint64_t offset, const void *src, uint64_t size) {
  check_usable();
  flush();
  residency_->make_resident({&buffer});
  residency_->transfer(buffer, offset, const_cast<void *>(src), size, true);
  if (buffer.host && !buffer.zero_copy) buffer.device_newer = true;
}

void Context::read(Buffer &buffer, uint64_t offset, void *dst, uint64_t size) {
  check_readable(buffer);
  flush();
  if (buffer.evicted)
    std::memcpy(dst, static_cast<const uint8_t *>(buffer.host) + offset, size);  // the only copy
  else
    residency_->transfer(buffer, offset, dst, size, false);
}

void Context::sync_buffer(Buffer &buffer) {
  check_readable(buffer);
  flush();
  if (buffer.host && !buffer.zero_copy && buffer.device_newer) {
    residency_->transfer(buffer, 0, buffer.host, buffer.size(), false);
    buffer.device_newer = false;
  }
}

void Context::host_modified(Buffer &buffer, bool queued) {
  check_usable();
  require(buffer.host != nullptr, NPVK_ERR_INVALID_ARGUMENT,
          "npvk_buffer_host_modified needs a buffer made by npvk_buffer_wrap_host");
  if (queued) flush();
  if (!buffer.zero_copy && !buffer.evicted)
    residency_->transfer(buffer, 0, buffer.host, buffer.size(), true);
  buffer.device_newer = false;
}

void Context::apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  check_usable();
  recorder_->apply(op, operands, nin);
}

void Context::reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                     const View *initial, const View &out, int64_t sum_block) {
  check_usable();
  recorder_->reduce(op, in, axes, initial, out, sum_block);
}

void Context::matmul(const View &a, const View &b, const View &c) {
  check_usable();
  recorder_->matmul(a, b, c);
}

void Context::accumulate(npvk_op op, const View &in, uint32_t axis, const View &out) {
  check_usable();
  recorder_->accumulate(op, in, axis, out);
}

void Context::inject_submit_fault() {
  if (fault::fire(fault::Kind::DeviceLost))
    device_->check(VK_ERROR_DEVICE_LOST, "vkQueueSubmit (injected by NPVK_FAULT=device_lost)");
  if (fault::fire(fault::Kind::Submit))
    device_->check(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkQueueSubmit (injected by NPVK_FAULT=submit)");
}

std::vector<vk::Dispatch> Context::bind(const std::vector<PlannedKernel> &kernels,
                                        std::vector<size_t> &first_dispatch) {
  device();  // made now where the context started without it
  // Pages wrapped before the device was made are imported at their first use.
  for (const PlannedKernel &k : kernels)
    for (const auto &slot : k.slots)
      if (slot.view && slot.view->buffer) residency_->import_deferred(*slot.view->buffer);
  // Reductions with several chunks per result put partial results in
  // scratch memory, one region each.
  uint64_t scratch_bytes = 0;
  std::vector<uint64_t> scratch_at;
  for (const PlannedKernel &k : kernels) {
    scratch_at.push_back(scratch_bytes);
    if (k.standalone) scratch_bytes += k.standalone->scratch_bytes();
  }
  if (scratch_bytes && (!scratch_ || scratch_->size() < scratch_bytes))
    scratch_ = std::make_unique<vk::DeviceBuffer>(*device_, scratch_bytes * 2,
                                                  vk::MemoryPlacement::DeviceLocal);
  const RecordLimits &limits = recorder_->limits();
  std::vector<vk::Dispatch> batch;
  batch.reserve(kernels.size());
  std::vector<std::vector<DispatchArgs>> args_of(kernels.size());
  std::vector<KernelStore::Wanted> wanted;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PlannedKernel &k = kernels[i];
    std::vector<DispatchArgs> &args = args_of[i];
    BindTarget target;
    target.address = [&k](size_t slot) {
      const View &v = *k.slots[slot].view;
      return v.buffer->device->address() + v.offset;
    };
    target.scratch_address = scratch_ ? scratch_->address() : 0;
    target.scratch_offset = scratch_at[i];
    target.tables_address = tables_->address();
    target.max_group_count = device_->info().max_workgroup_count_x;
    target.preferred_groups = limits.max_groups;
    target.loop_budget = limits.loop_budget;
    if (k.standalone)
      k.standalone->bind(k, target, args);
    else
      args.push_back(bind_elementwise(k, target));
    for (const DispatchArgs &a : args) wanted.push_back({a.key, a.source});
  }
  // Compiled here, all at once, before the pages open up for the device
  // (before_flush).
  kernels_->prepare(wanted);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PlannedKernel &k = kernels[i];
    first_dispatch.push_back(batch.size());
    for (DispatchArgs &a : args_of[i]) {
      vk::Dispatch d;
      d.pipeline = kernels_->pipeline(a.key, a.source);
      d.push = a.push;
      d.meta = std::move(a.meta);
      d.groups = a.groups;
      d.flag_words = a.flag_words;
      d.accesses.reserve(a.accesses.size());
      for (const DispatchArgs::Access &x : a.accesses)
        d.accesses.push_back(
            {x.slot == kScratchSlot
                 ? static_cast<const void *>(scratch_.get())
                 : static_cast<const void *>(k.slots[size_t(x.slot)].view->buffer.get()),
             x.lo, x.hi, x.write});
      batch.push_back(std::move(d));
    }
  }
  first_dispatch.push_back(batch.size());
  return batch;
}

bool Context::may_fuse_with_next(uint64_t op) const {
  return recorder_->fences().may_fuse_with_next(op, stats_.ops_recorded);
}

void Context::flush() {
  if (pending_.empty()) return;
  check_usable();
  const auto start = std::chrono::steady_clock::now();
  Profiler::Scope scope(profiler_, Phase::Flush);
  if (scope.tracing()) scope.set_args("\"ops\":" + std::to_string(pending_.size()));
  // Whatever happens, the recorded work is consumed: a failed batch is
  // reported once by the call that flushed, not replayed on every later call.
  std::vector<RecordedOp> done;
  done.swap(pending_);
  // The queue starts again with the capacity an earlier batch grew: one that
  // grows from nothing moves every op it holds at each doubling.
  pending_.swap(spare_queue_);
  struct KeepCapacity {
    std::vector<RecordedOp> &done, &spare;
    ~KeepCapacity() {
      done.clear();  // lets the buffers go now, as at the end of a flush
      if (done.capacity() > spare.capacity()) spare.swap(done);
    }
  } keep_capacity{done, spare_queue_};
  recorder_->forget_row();  // drops its references to the buffers
  // The calibration flushes its own work from in here (the placement
  // forced): those flushes are not the program's.
  const bool reported = flush_hook_ && !placement_.calibrating();
  const uint64_t last_op = recorder_->last_serial(), first_op = last_op + 1 - done.size();
  // Its ops' errors are noted before the lock is let go, so a take sees them all.
  fp_errors_.ran_through(last_op);
  const FlushRun run{done, start, first_op, last_op, reported};

  // Plan, place, run there; a device flush that fails runs on the host.
  std::vector<PlannedKernel> kernels;
  std::vector<size_t> cuts;  // where the batch is submitted in parts (flags_pass.hpp)
  {
    Profiler::Scope planning(profiler_, Phase::Plan);
    kernels = plan(done);
    cuts = choose_flags_loops(kernels, done);
  }
  // Weighed flushes are timed, each side under the name of its planned work
  // (FlushHistory), for the next flush of the same work.
  const uint64_t signature = placement_.signature(kernels);
  if (placement_.flush_on_host(done, kernels, signature, host_))
    run_on_host(run, kernels, signature);
  else
    run_on_device(run, kernels, cuts, signature);
}

void Context::run_on_host(const FlushRun &run, const std::vector<PlannedKernel> &kernels,
                          uint64_t signature) {
  // NumPy's own loops on the same memory; pages open as for the device.
  if (observer_) observer_->before_flush();
  try {
    stats_.host_bytes_contracted += host_.run(run.done, kernels, fp_errors_);
  } catch (...) {
    if (observer_) observer_->after_flush();
    throw;
  }
  if (observer_) observer_->after_flush();
  report(run, NPVK_FLUSH_HOST_COST);
  ++stats_.host_flushes;
  stats_.host_ops += run.done.size();
  stats_.host_parts_on_workers = host_.parts_on_workers();
  const double seconds = seconds_since(run.start);
  stats_.flush_seconds += seconds;
  placement_.ran(signature, true, seconds * 1e9);
}

void Context::run_on_device(const FlushRun &run, const std::vector<PlannedKernel> &kernels,
                            const std::vector<size_t> &cuts, uint64_t signature) {
  const std::vector<RecordedOp> &done = run.done;
  std::vector<vk::Dispatch> batch;
  std::vector<size_t> first_dispatch;  // per kernel, into batch
  vk::BatchResult result;
  bool opened = false, submitting = false;
  int64_t submit_ns = 0;
  // A pipeline built now is compiled by the driver at its first dispatch,
  // inside the measured device time on lavapipe: such a flush says nothing
  // about the device's speed (the queue budget learns from the others).
  const uint64_t built_before = stats_.kernels_compiled + stats_.disk_cache_hits;
  try {
    batch = bind(kernels, first_dispatch);
    if (observer_) observer_->before_flush();
    opened = true;
    inject_submit_fault();
    submitting = true;
    submit_ns = Profiler::now_ns();
    Profiler::Scope execute(profiler_, Phase::Execute);
    result = run_with_flags_passes(kernels, first_dispatch, batch, cuts, *kernels_, *executor_);
  } catch (const Error &e) {
    // On failure, the host: its replay needs the pages open, as the device
    // would have.
    if (observer_ && !opened) observer_->before_flush();
    bool recovered = recovery_.recover(done, e, submitting, host_, fp_errors_);
    stats_.host_parts_on_workers = host_.parts_on_workers();
    if (observer_) observer_->after_flush();
    report(run, recovered ? NPVK_FLUSH_HOST_RECOVERED : NPVK_FLUSH_LOST);
    if (!recovered) throw;
    stats_.flush_seconds += seconds_since(run.start);
    return;
  } catch (...) {
    if (observer_) {
      if (!opened) observer_->before_flush();
      observer_->after_flush();
    }
    report(run, NPVK_FLUSH_LOST);
    throw;
  }
  if (observer_) observer_->after_flush();
  report(run, NPVK_FLUSH_DEVICE);
  account(done, kernels, first_dispatch, result);
  const bool built_none = stats_.kernels_compiled + stats_.disk_cache_hits == built_before;
  if (built_none) recorder_->ran(done, result.device_seconds);
  observe_.observe(done, kernels, first_dispatch, result, submit_ns, stats_.flushes, profiler_);
  const double seconds = seconds_since(run.start);
  stats_.flush_seconds += seconds;
  if (built_none) placement_.ran(signature, false, seconds * 1e9);
}

void Context::report(const FlushRun &run, npvk_flush_placement placement) const {
  if (run.reported) report_flush(run.first_op, run.last_op, placement);
}

void Context::report_flush(uint64_t first, uint64_t last, npvk_flush_placement placement) const {
  npvk_flush_info info{};
  info.struct_size = sizeof info;
  info.placement = uint32_t(placement);
  info.first_op = first;
  info.last_op = last;
  if (placement == NPVK_FLUSH_HOST_COST) {
    info.device_ns = placement_.last_estimate().device_ns;
    info.host_ns = placement_.last_estimate().host_ns;
  }
  flush_hook_(&info, flush_hook_user_);
}

uint64_t Context::last_op_of_this_thread() const {
  return recorder_ ? recorder_->last_serial_of_this_thread() : 0;
}

std::vector<PlannedKernel> Context::plan(const std::vector<RecordedOp> &ops) const {
  // A buffer is dead when its owner freed it (managed memory) or when the
  // recorded ops hold its only references (the C ABI's handles are gone).
  std::unordered_map<const Buffer *, long> recorded_refs;
  for (const RecordedOp &op : ops)
    for (const View &v : op.operands)
      if (v.buffer) ++recorded_refs[v.buffer.get()];
  auto dead = [&](const View &v) {
    // The caller's own shared_ptr is one of the recorded references.
    const std::shared_ptr<Buffer> &b = v.buffer;
    return v.generation != b->generation || b->discarded || b.use_count() == recorded_refs[b.get()];
  };
  return plan_kernels(ops, fuse_, min_fuse_elements_, dead);
}

bool Context::pending_runs_on_host() {
  return placement_.queued_on_host(
      pending_, [this] { return plan(pending_); }, host_);
}

void Context::account(const std::vector<RecordedOp> &done,
                      const std::vector<PlannedKernel> &kernels,
                      const std::vector<size_t> &first_dispatch, const vk::BatchResult &result) {
  ++stats_.flushes;
  stats_.dispatches += first_dispatch.back();
  stats_.barriers += result.barriers;
  stats_.device_seconds += result.device_seconds;
  size_t word = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PlannedKernel &k = kernels[i];
    if (k.ops.size() > 1) stats_.ops_fused += k.ops.size();
    for (const FusedKernelSpec::Slot &slot : k.spec.slots) stats_.stores_contracted += !slot.stored;
    stats_.bytes_contracted += k.contracted_bytes;
    for (size_t op_index : k.ops) {
      uint32_t flags = result.fp_flags[word++];
      // A standalone kernel may take several dispatches, one flag word each.
      for (size_t d = first_dispatch[i] + 1; k.standalone && d < first_dispatch[i + 1]; ++d)
        flags |= result.fp_flags[word++];
      if (flags && k.standalone) flags |= k.standalone->fp_context();
      const RecordedOp &op = done[op_index];
      fp_errors_.note(op.spec.op, flags, op.thread, op.serial);
    }
  }
}

void Context::release() {
  if (released_) return;
  std::string error;
  try {
    flush();
  } catch (const std::exception &e) {
    error = e.what();
  }
  pending_.clear();
  try {
    profiler_.finish_environment_trace();
    report_profile_from_environment(stats(), profiler_.snapshot());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npvk: %s\n", e.what());  // release itself went well
  }
  released_ = true;
  if (residency_) residency_->release_all();
  stats_ = stats();  // keep the final counts readable after release
  executor_.reset();
  if (kernels_) kernels_->release();
  tables_.reset();
  scratch_.reset();
  device_.reset();
  if (!error.empty()) fail(NPVK_ERR_DEVICE_LOST, "pending work was lost at release: " + error);
}

void Context::abandon() {
  // Leak on purpose: destroying Vulkan objects in a forked child can hang or
  // corrupt the parent's device state.
  pending_.clear();
  if (residency_) residency_->abandon_all();
  if (kernels_) kernels_->abandon();
  executor_.release();
  tables_.release();
  device_.release();
  released_ = true;
}

npvk_stats Context::stats() const {
  npvk_stats s = stats_;
  s.device_prepared = device_prepared_;
  if (device_) s.validation_messages = device_->instance().validation_messages();
  if (kernels_) s.disk_cache_rejects = kernels_->disk_rejects();
  if (residency_) {
    s.device_bytes_held = residency_->held();
    s.device_bytes_peak = residency_->peak();
    s.device_memory_budget = residency_->budget();
  }
  return s;
}

void Context::reset_stats() {
  stats_ = npvk_stats{};
  stats_.struct_size = sizeof(npvk_stats);
  if (residency_) residency_->reset_peak();
  profiler_.reset();
}

}  // namespace npvk
