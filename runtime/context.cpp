#include "runtime/context.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <string>
#include <unordered_map>

#include "base/error.hpp"
#include "base/hash.hpp"
#include "compile/dtype.hpp"
#include "compile/math_tables.hpp"
#include "compile/ops.hpp"
#include "compile/reduction.hpp"
#include "vulkan/compiler.hpp"
#include "vulkan/reflection.hpp"

namespace npvk {
namespace {

// Past this many recorded operations a flush runs anyway, bounding the memory
// that recorded work holds and the latency of the next sync.
constexpr size_t kMaxPendingOps = 4096;

bool env_flag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A trace's record span names its op.
void name_record(Profiler::Scope &scope, npvk_op op, const char *method) {
  if (scope.tracing() && op_valid(op))
    scope.set_args(std::string("\"op\":\"") + op_info(op).name + method + "\"");
}

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

std::shared_ptr<Context> Context::create(const npvk_context_options *options) {
  npvk_context_options opts{};
  if (options) {
    require(options->struct_size >= sizeof(uint32_t) * 2, NPVK_ERR_INVALID_ARGUMENT,
            "npvk_context_options.struct_size is not set");
    std::memcpy(&opts, options, std::min<size_t>(options->struct_size, sizeof opts));
  }
  const uint32_t known = NPVK_CONTEXT_VALIDATION | NPVK_CONTEXT_NO_DISK_CACHE;
  require((opts.flags & ~known) == 0, NPVK_ERR_INVALID_ARGUMENT, "unknown context flags");
  bool validation = (opts.flags & NPVK_CONTEXT_VALIDATION) || env_flag("NPVK_VALIDATION");

  std::shared_ptr<Context> ctx(new Context());
  auto instance = std::make_unique<vk::Instance>(validation);
  uint32_t index = instance->select(opts.device);
  ctx->device_ = std::make_unique<vk::Device>(std::move(instance), index);
  std::string dir;
  if (!(opts.flags & NPVK_CONTEXT_NO_DISK_CACHE))
    dir = opts.cache_dir && *opts.cache_dir ? opts.cache_dir : vk::default_cache_dir();
  ctx->cache_ = std::make_unique<vk::KernelCache>(dir);
  ctx->pipelines_ =
      std::make_unique<vk::PipelineFactory>(*ctx->device_, *ctx->cache_, sizeof(PushConstants));
  ctx->executor_ = std::make_unique<vk::Executor>(*ctx->device_, ctx->pipelines_->layout());
  ctx->traits_.float64 = ctx->device_->info().float64;
  // A CPU driver runs workgroups on a few threads: many elements per
  // invocation amortise each invocation's setup (slot addresses, scalars).
  ctx->max_groups_ = ctx->device_->info().max_workgroup_count_x;
  if (ctx->device_->info().type == NPVK_DEVICE_CPU) ctx->max_groups_ = 256;
  if (const char *groups = std::getenv("NPVK_MAX_WORKGROUPS"))
    ctx->max_groups_ = std::max<uint64_t>(1, std::strtoull(groups, nullptr, 10));
  if (std::strstr(ctx->device_->info().driver_name, "llvmpipe") ||
      std::strstr(ctx->device_->info().name, "llvmpipe"))
    ctx->loop_budget_ = 32768;
  if (const char *budget = std::getenv("NPVK_LOOP_BUDGET"))
    ctx->loop_budget_ = std::max<int64_t>(1, std::strtoll(budget, nullptr, 10));
  if (const char *min = std::getenv("NPVK_FUSE_MIN_ELEMENTS"))
    ctx->min_fuse_elements_ = std::strtoull(min, nullptr, 10);
  const char *fusion = std::getenv("NPVK_FUSION");
  ctx->fuse_ = !(fusion && std::strcmp(fusion, "0") == 0);
  const std::vector<double> &tables = math_f64_table_data();
  ctx->tables_ = std::make_unique<vk::DeviceBuffer>(
      *ctx->device_, std::max<uint64_t>(tables.size() * sizeof(double), 8),
      vk::MemoryPlacement::HostVisible);
  if (!tables.empty())
    std::memcpy(ctx->tables_->mapped(), tables.data(), tables.size() * sizeof(double));
  ctx->stats_.struct_size = sizeof(npvk_stats);
  ctx->set_budget_from_environment();
  ctx->profiler_.trace_from_environment();
  if (const char *graph = std::getenv("NPVK_GRAPH")) ctx->graph_dir_ = graph;
  return ctx;
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
  require(!device_->lost(), NPVK_ERR_DEVICE_LOST,
          "the Vulkan device was lost; release the context and create a new one");
}

std::shared_ptr<Buffer> Context::create_buffer(uint64_t size) {
  check_usable();
  inject_alloc_fault();
  auto buffer = std::make_shared<Buffer>(shared_from_this(), size);
  buffer->device =
      std::make_unique<vk::DeviceBuffer>(*device_, size, vk::MemoryPlacement::DeviceLocal);
  if (void *p = buffer->device->mapped()) {
    std::memset(p, 0, size);
  } else {
    VkBuffer handle = buffer->device->handle();
    device_->submit_and_wait([&](VkCommandBuffer cmd) {
      device_->fn().vkCmdFillBuffer(cmd, handle, 0, VK_WHOLE_SIZE, 0);
    });
  }
  remember(buffer);
  return buffer;
}

void Context::remember(const std::shared_ptr<Buffer> &buffer) {
  // release() frees the memory of buffers that outlive the context's handle.
  if (buffers_.size() >= 2 * live_buffer_estimate_ + 64) {
    buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(),
                                  [](const std::weak_ptr<Buffer> &w) { return w.expired(); }),
                   buffers_.end());
    live_buffer_estimate_ = buffers_.size();
  }
  buffers_.push_back(buffer);
}

std::shared_ptr<Buffer> Context::wrap_host(void *host, uint64_t size) {
  check_usable();
  inject_alloc_fault();
  require(host != nullptr, NPVK_ERR_INVALID_ARGUMENT, "host memory is null");
  auto buffer = std::make_shared<Buffer>(shared_from_this(), size);
  buffer->host = host;
  const npvk_device_info &info = device_->info();
  const uint64_t align = info.min_imported_host_pointer_alignment;
  // NPVK_ZERO_COPY=0 forces mirrored buffers, so that path can be tested on
  // devices that could import.
  const char *zero_copy_env = std::getenv("NPVK_ZERO_COPY");
  const bool allow_import = !(zero_copy_env && std::strcmp(zero_copy_env, "0") == 0);
  const bool importable = allow_import && info.host_memory_import && align && size > 0 &&
                          reinterpret_cast<uintptr_t>(host) % align == 0 && size % align == 0;
  std::unique_ptr<vk::DeviceBuffer> imported;
  if (importable) {
    try {
      imported = std::make_unique<vk::DeviceBuffer>(*device_, host, size);
    } catch (const Error &) {
      // Some memory (read-only or device mappings) cannot be imported: mirror it.
    }
  }
  // Kernels on a discrete GPU would cross the bus for every access of
  // imported pages, so there the pages serve only as the transfer endpoint.
  if (imported && info.type != NPVK_DEVICE_DISCRETE_GPU) {
    buffer->device = std::move(imported);
    buffer->zero_copy = true;
  } else {
    buffer->host_pages = std::move(imported);
    // A copy that does not fit the budget now is made at its first device
    // use, where queued work can be flushed to make room.
    if (make_room(size, nullptr, 0))
      allocate_copy(*buffer);
    else
      buffer->evicted = true;
  }
  remember(buffer);
  return buffer;
}

void Context::rewrap_host(Buffer &buffer, void *host) {
  require(buffer.zero_copy && !has_pending(), NPVK_ERR_INTERNAL,
          "rewrap_host needs an idle zero-copy buffer");
  buffer.device = std::make_unique<vk::DeviceBuffer>(*device_, host, buffer.size());
  buffer.host = host;
}

void Context::transfer(Buffer &buffer, uint64_t offset, void *host, uint64_t size, bool to_device) {
  if (size == 0) return;
  Profiler::Scope scope(profiler_, to_device ? Phase::ToDevice : Phase::ToHost);
  vk::DeviceBuffer &dev = *buffer.device;
  if (void *mapped = dev.mapped()) {
    uint8_t *device_bytes = static_cast<uint8_t *>(mapped) + offset;
    if (device_bytes == host) return;  // zero-copy: the same bytes
    if (to_device)
      std::memcpy(device_bytes, host, size);
    else
      std::memcpy(host, device_bytes, size);
  } else {
    // Copy through host pages the device can reach: the wrapped pages
    // themselves when imported, else a staging buffer.
    std::unique_ptr<vk::DeviceBuffer> staging;
    vk::DeviceBuffer *endpoint = nullptr;
    uint64_t endpoint_offset = 0;
    if (buffer.host_pages && static_cast<uint8_t *>(buffer.host) + offset == host) {
      endpoint = buffer.host_pages.get();
      endpoint_offset = offset;
    } else {
      staging =
          std::make_unique<vk::DeviceBuffer>(*device_, size, vk::MemoryPlacement::HostVisible);
      endpoint = staging.get();
      if (to_device) std::memcpy(staging->mapped(), host, size);
    }
    VkBufferCopy region{};
    region.size = size;
    region.srcOffset = to_device ? endpoint_offset : offset;
    region.dstOffset = to_device ? offset : endpoint_offset;
    VkBuffer src = to_device ? endpoint->handle() : dev.handle();
    VkBuffer dst = to_device ? dev.handle() : endpoint->handle();
    device_->submit_and_wait([&](VkCommandBuffer cmd) {
      device_->fn().vkCmdCopyBuffer(cmd, src, dst, 1, &region);
      if (!to_device) {
        // Make the transfer's writes visible to the host before we read them.
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        device_->fn().vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                           VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                                           nullptr);
      }
    });
    if (!to_device && staging) std::memcpy(host, staging->mapped(), size);
  }
  (to_device ? stats_.bytes_to_device : stats_.bytes_to_host) += size;
}

void Context::write(Buffer &buffer, uint64_t offset, const void *src, uint64_t size) {
  check_usable();
  flush();
  make_resident({&buffer});
  transfer(buffer, offset, const_cast<void *>(src), size, true);
  if (buffer.host && !buffer.zero_copy) buffer.device_newer = true;
}

void Context::read(Buffer &buffer, uint64_t offset, void *dst, uint64_t size) {
  check_readable(buffer);
  flush();
  if (buffer.evicted)
    std::memcpy(dst, static_cast<const uint8_t *>(buffer.host) + offset, size);  // the only copy
  else
    transfer(buffer, offset, dst, size, false);
}

void Context::sync_buffer(Buffer &buffer) {
  check_readable(buffer);
  flush();
  if (buffer.host && !buffer.zero_copy && buffer.device_newer) {
    transfer(buffer, 0, buffer.host, buffer.size(), false);
    buffer.device_newer = false;
  }
}

void Context::host_modified(Buffer &buffer) {
  check_usable();
  require(buffer.host != nullptr, NPVK_ERR_INVALID_ARGUMENT,
          "npvk_buffer_host_modified needs a buffer made by npvk_buffer_wrap_host");
  flush();
  if (!buffer.zero_copy && !buffer.evicted) transfer(buffer, 0, buffer.host, buffer.size(), true);
  buffer.device_newer = false;
}

bool Context::supported(npvk_op op, const npvk_dtype *dtypes, uint32_t count, std::string *why) {
  const OpInfo &info = op_info(op);
  const char *reason = nullptr;
  if (!info.implemented) {
    if (why) *why = std::string("npvk does not implement ") + info.name + " yet";
    return false;
  }
  if (!op_has_loop(info, dtypes, count, &reason)) {
    if (why) *why = std::string(info.name) + ": " + reason;
    return false;
  }
  KernelSpec spec;
  spec.op = op;
  spec.nin = info.nin;
  spec.nout = info.nout;
  for (uint32_t k = 0; k < count; ++k) spec.operands[k].dtype = dtypes[k];
  if (needs_float64(spec) && !traits_.float64) {
    if (why) *why = std::string(info.name) + ": the device lacks shaderFloat64";
    return false;
  }
  return true;
}

void Context::apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  check_usable();
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, "");
  if (try_merge_row(op, operands, nin)) return;
  record(op, operands, nin, false);
  remember_row(op, operands, nin);
}

bool Context::try_merge_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  // NumPy runs an N-d ufunc as one inner-loop call per outer row. Rows that
  // step through memory by a constant outer stride are folded into the queued
  // operation of the first row, which becomes one 2-d operation.
  if (!row_.valid || pending_.empty() || row_.pending_index != pending_.size() - 1 ||
      row_.op != op || row_.nin != nin || row_.count != operands.size())
    return false;
  for (uint32_t k = 0; k < row_.count; ++k) {
    const View &v = *operands[k];
    const View &first = row_.first[k];
    if (v.scalar != first.scalar || v.dtype != first.dtype) return false;
    if (v.scalar) {
      if (v.scalar_bits != first.scalar_bits) return false;
      continue;
    }
    if (v.ndim != 1 || v.buffer != first.buffer || v.shape[0] != first.shape[1] ||
        v.strides[0] != first.strides[1])
      return false;
    int64_t step = int64_t(v.offset) - int64_t(first.offset);
    if (row_.rows > 1 && step != int64_t(row_.rows) * row_.outer[k]) return false;
    // Rows of an output must not overlap one another (an accumulating
    // reduction passes the same output row again and again).
    int64_t row_bytes = v.shape[0] * (v.strides[0] < 0 ? -v.strides[0] : v.strides[0]);
    if (k >= nin && (step < 0 ? -step : step) < std::max<int64_t>(row_bytes, 1)) return false;
  }
  // The folded operation must be one that could have been recorded as such:
  // record() re-validates it, overlap included, and replaces the queued row.
  std::vector<View> merged(row_.count);
  std::vector<const View *> ptrs(row_.count);
  for (uint32_t k = 0; k < row_.count; ++k) {
    merged[k] = row_.first[k];
    if (!merged[k].scalar) {
      merged[k].shape[0] = int64_t(row_.rows) + 1;
      merged[k].strides[0] = row_.outer[k];
    }
    ptrs[k] = &merged[k];
  }
  if (row_.rows == 1) {
    for (uint32_t k = 0; k < row_.count; ++k) {
      if (merged[k].scalar) continue;
      merged[k].strides[0] = int64_t(operands[k]->offset) - int64_t(row_.first[k].offset);
      // A stride that is not a multiple of the itemsize cannot be a view.
      if (merged[k].strides[0] % int64_t(dtype_info(merged[k].dtype).itemsize) != 0) {
        row_.valid = false;
        return false;
      }
    }
  }
  try {
    record(op, ptrs, nin, true);
  } catch (const Error &) {
    row_.valid = false;  // e.g. a later row reads what an earlier one wrote
    return false;
  }
  for (uint32_t k = 0; k < row_.count; ++k) row_.outer[k] = merged[k].strides[0];
  ++row_.rows;
  ++stats_.ops_recorded;
  ++stats_.rows_merged;
  return true;
}

void Context::remember_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  row_.valid = false;
  if (pending_.empty()) return;
  for (const View *v : operands)
    if (!v->scalar && v->ndim != 1) return;
  row_.op = op;
  row_.nin = nin;
  row_.count = uint32_t(operands.size());
  for (uint32_t k = 0; k < row_.count; ++k) {
    View first = *operands[k];
    if (!first.scalar) {
      // Stored as the first row of a 2-d view: shape (rows, n).
      first.ndim = 2;
      first.shape[1] = first.shape[0];
      first.strides[1] = first.strides[0];
      first.shape[0] = 1;
      first.strides[0] = 0;
    }
    row_.first[k] = first;
    row_.outer[k] = 0;
  }
  row_.rows = 1;
  row_.pending_index = pending_.size() - 1;
  row_.valid = true;
}

void Context::record(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
                     bool replace_last) {
  const OpInfo &info = op_info(op);
  const uint32_t n = uint32_t(operands.size());
  require(nin == info.nin && n - nin == info.nout, NPVK_ERR_INVALID_ARGUMENT,
          std::string(info.name) + " takes " + std::to_string(info.nin) + " inputs and " +
              std::to_string(info.nout) + " outputs, got " + std::to_string(nin) + " and " +
              std::to_string(n - nin));
  npvk_dtype dtypes[kMaxOperands];
  for (uint32_t k = 0; k < n; ++k) {
    const View &v = *operands[k];
    require(v.ctx.get() == this, NPVK_ERR_INVALID_ARGUMENT,
            "operand " + std::to_string(k) + " belongs to another context");
    require(v.scalar || v.buffer->has_memory(), NPVK_ERR_INVALID_HANDLE,
            "operand " + std::to_string(k) + " refers to freed memory");
    require(k < nin || !v.scalar, NPVK_ERR_INVALID_ARGUMENT,
            "output " + std::to_string(k - nin) + " is a scalar view; outputs need memory");
    dtypes[k] = v.dtype;
  }
  const char *reason = nullptr;
  require(info.implemented, NPVK_ERR_UNSUPPORTED,
          std::string("npvk does not implement ") + info.name + " yet");
  if (!op_has_loop(info, dtypes, n, &reason))
    fail(NPVK_ERR_BAD_DTYPE, std::string(info.name) + ": " + reason);
  std::string why;
  require(supported(op, dtypes, n, &why), NPVK_ERR_UNSUPPORTED, why);

  IterationSpace space = plan_iteration(operands, nin);

  // An output may be an input exactly (in place); any other overlap would
  // make the result depend on the order in which elements are computed.
  std::vector<std::pair<int64_t, int64_t>> extent(n);
  for (uint32_t k = 0; k < n; ++k)
    if (!operands[k]->scalar)
      operands[k]->byte_extent(dtype_info(dtypes[k]).itemsize, extent[k].first, extent[k].second);
  for (uint32_t o = nin; o < n; ++o) {
    for (uint32_t k = 0; k < n; ++k) {
      const View &a = *operands[k], &b = *operands[o];
      if (k == o || a.scalar || a.buffer != b.buffer) continue;
      bool disjoint = extent[k].second <= extent[o].first || extent[o].second <= extent[k].first ||
                      views_interleave_apart(a, b);
      bool same = k < nin && a.offset == b.offset && a.dtype == b.dtype &&
                  (space.strides.empty() || space.strides[k] == space.strides[o]);
      require(disjoint || same || space.count == 0, NPVK_ERR_INVALID_ARGUMENT,
              "output " + std::to_string(o - nin) + " overlaps operand " + std::to_string(k) +
                  " without being the same elements");
    }
  }

  if (!replace_last) ++stats_.ops_recorded;
  if (space.count == 0) return;

  // Managed memory may flush here (a mirrored upload must wait for queued
  // work that reads the old contents). The queued row that a merged op would
  // replace then ran already: refuse the merge, so that the caller records
  // this row on its own rather than running the earlier rows twice.
  Buffer *used[kMaxOperands] = {};
  for (uint32_t k = 0; k < n; ++k)
    if (!operands[k]->scalar) used[k] = operands[k]->buffer.get();
  make_resident(used, n);
  const uint64_t flushes = stats_.flushes;
  for (uint32_t k = 0; k < n; ++k) {
    const View &v = *operands[k];
    if (!v.scalar && v.buffer->managed && observer_) observer_->before_use(*v.buffer, k >= nin);
  }
  require(!replace_last || (stats_.flushes == flushes && !pending_.empty()), NPVK_ERR_INTERNAL,
          "the queued row was flushed while its next row was recorded");

  RecordedOp rec;
  rec.spec.op = op;
  rec.spec.nin = nin;
  rec.spec.nout = n - nin;
  rec.operands.reserve(n);
  rec.lo.resize(n);
  rec.hi.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    const View &v = *operands[k];
    rec.spec.operands[k] = {dtypes[k], v.scalar};
    rec.operands.push_back(v);
    rec.lo[k] = extent[k].first;
    rec.hi[k] = extent[k].second;
    if (!v.scalar && k >= nin && v.buffer->host && !v.buffer->zero_copy)
      v.buffer->device_newer = true;
  }
  rec.space = std::move(space);
  if (replace_last) {
    pending_.back() = std::move(rec);
    return;
  }
  pending_.push_back(std::move(rec));
  if (pending_.size() >= kMaxPendingOps) flush();
}

const Context::Kernel &Context::kernel_for(const std::string &key,
                                           const std::function<std::string()> &source) {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    ++stats_.kernel_cache_hits;
    return it->second;
  }
  auto start = std::chrono::steady_clock::now();
  Profiler::Scope scope(profiler_, Phase::Compile);
  if (scope.tracing()) scope.set_args("\"kernel\":\"" + json_escape(key) + "\"");
  inject_compile_fault();
  std::vector<uint32_t> spirv = spirv_for(source(), key);
  Kernel kernel;
  kernel.pipeline = pipelines_->create(spirv);
  ++stats_.pipelines_created;
  stats_.compile_seconds += seconds_since(start);
  return kernels_.emplace(key, kernel).first->second;
}

std::vector<uint32_t> Context::spirv_for(std::string source, const std::string &key) {
  // For kernel work: dump every generated source, and let a hand-edited one
  // stand in for it (see docs/architecture.md). Fused keys are long, so
  // files are named by a hash of the key.
  if (const char *dir = std::getenv("NPVK_DEBUG_KERNEL_DIR")) {
    std::string file = hash128(key.data(), key.size()).hex().substr(0, 16);
    std::ifstream in(std::string(dir) + "/" + file + ".glsl");
    if (in) {
      source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      std::ofstream out(std::string(dir) + "/" + file + ".generated");
      out << source;
    }
  }
  const npvk_device_info &info = device_->info();
  // The SPIR-V depends only on the source, but a driver update may want
  // different code from us one day: key by driver and version too.
  Hash128 cache_key = hash128(source + "\n//" + NPVK_VERSION_STRING + "\n//" +
                              hash128(info.driver_uuid, sizeof info.driver_uuid).hex());
  if (auto cached = cache_->load_spirv(cache_key)) {
    try {
      vk::check_push_layout(*cached, expected_push_layout());
      ++stats_.disk_cache_hits;
      return *cached;
    } catch (const Error &) {
      // A damaged entry that still had a valid checksum: rebuild it below.
    }
  }
  std::vector<uint32_t> spirv = vk::compile_glsl(source, key);
  vk::check_push_layout(spirv, expected_push_layout());
  ++stats_.kernels_compiled;
  cache_->store_spirv(cache_key, spirv);
  return spirv;
}

vk::Dispatch Context::dispatch_for(const PlannedKernel &k) {
  vk::Dispatch d;
  d.pipeline = kernel_for(k.spec.key(), [&] { return generate_glsl(k.spec, traits_); }).pipeline;
  d.push.count = uint64_t(k.space.count);
  d.push.tables = tables_->address();
  d.flag_words = uint32_t(k.spec.steps.size());
  // Slots past the push constants lead the argument table.
  if (k.slots.size() > kPushSlots) d.meta.resize(k.slots.size() - kPushSlots);
  for (size_t s = 0; s < k.slots.size(); ++s) {
    const SlotBinding &b = k.slots[s];
    uint64_t value = 0;
    if (k.spec.slots[s].scalar) {
      value = b.view->scalar_bits;
    } else {
      const bool store = b.written && k.spec.slots[s].stored;
      if (!b.read && !store) continue;  // a contracted temporary
      value = b.view->buffer->device->address() + b.view->offset;
      d.accesses.push_back({b.view->buffer.get(), uint64_t(b.lo), uint64_t(b.hi), store});
    }
    if (s < kPushSlots)
      d.push.operand[s] = value;
    else
      d.meta[s - kPushSlots] = int64_t(value);
  }
  if (!k.space.contiguous) {
    d.meta.insert(d.meta.end(), k.space.shape.begin(), k.space.shape.end());
    for (const std::vector<int64_t> &strides : k.space.strides)
      d.meta.insert(d.meta.end(), strides.begin(), strides.end());
    if (k.spec.narrow_index)
      for (int64_t extent : k.space.shape)
        d.meta.push_back(int64_t(division_magic(uint32_t(extent))));
  }
  uint64_t groups = (uint64_t(k.space.count) + kWorkgroupSize - 1) / kWorkgroupSize;
  d.groups = group_count(groups);
  return d;
}

uint32_t Context::group_count(uint64_t wanted) const {
  // llvmpipe ends a loop nest after 65535 iterations in all, inner loops
  // included (fmod's long division takes up to ~200 per element): enough
  // workgroups that no invocation's grid-stride loop visits more than 256
  // elements.
  const uint64_t needed = (wanted + 255) / 256;
  const uint64_t limit = device_->info().max_workgroup_count_x;
  return uint32_t(std::min<uint64_t>(wanted, std::min(std::max(max_groups_, needed), limit)));
}

void Context::reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                     const View *initial, const View &out) {
  check_usable();
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, ".reduce");
  for (const View *v : {&in, &out, initial}) {
    if (!v) continue;
    require(v->ctx.get() == this, NPVK_ERR_INVALID_ARGUMENT,
            "a reduction's operand belongs to another context");
    require(v->scalar || v->buffer->has_memory(), NPVK_ERR_INVALID_HANDLE,
            "a reduction's operand refers to freed memory");
  }
  ReduceOp r = plan_reduction(op, in, axes, out, max_groups_ * kWorkgroupSize, loop_budget_);
  require(traits_.float64 || (in.dtype != NPVK_FLOAT64 && out.dtype != NPVK_FLOAT64),
          NPVK_ERR_UNSUPPORTED,
          std::string(op_info(op).name) + ".reduce: the device lacks shaderFloat64");
  if (initial) {
    require(initial->scalar && initial->dtype == out.dtype, NPVK_ERR_INVALID_ARGUMENT,
            "initial must be a scalar view of the output's dtype");
    r.has_init = true;
    r.init_bits = initial->scalar_bits;
  } else if (op == NPVK_OP_ADD && dtype_info(out.dtype).kind == DtypeKind::Float) {
    // NumPy's float sum starts from +0 (a sum of negative zeros is +0), the
    // kernels from -0 (so that `initial` -0 and negative zeros give -0).
    r.has_init = true;
    r.init_bits = 0;
  }
  int64_t in_lo, in_hi, out_lo, out_hi;
  in.byte_extent(dtype_info(in.dtype).itemsize, in_lo, in_hi);
  out.byte_extent(dtype_info(out.dtype).itemsize, out_lo, out_hi);
  require(in.buffer != out.buffer || in_hi <= out_lo || out_hi <= in_lo ||
              views_interleave_apart(in, out) || r.outputs == 0,
          NPVK_ERR_INVALID_ARGUMENT, "a reduction's output overlaps its input");
  if (r.outputs == 0) {
    ++stats_.ops_recorded;
    return;
  }
  if (r.reduced == 0) {
    // Nothing to fold: every result is `initial`, or the op's identity.
    View fill;
    fill.ctx = shared_from_this();
    fill.dtype = out.dtype;
    fill.scalar = true;
    if (initial)
      fill.scalar_bits = initial->scalar_bits;
    else
      require(reduce_identity(op, out.dtype, &fill.scalar_bits), NPVK_ERR_INVALID_ARGUMENT,
              std::string("zero-size reduction of ") + op_info(op).name +
                  ", which has no identity, and no initial value");
    record(NPVK_OP_CAST, {&fill, &out}, 1, false);
    return;
  }
  record_reduction(std::move(r), in, out, {in_lo, out_lo}, {in_hi, out_hi});
}

void Context::accumulate(npvk_op op, const View &in, uint32_t axis, const View &out) {
  check_usable();
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, ".accumulate");
  for (const View *v : {&in, &out}) {
    require(v->ctx.get() == this, NPVK_ERR_INVALID_ARGUMENT,
            "an accumulation's operand belongs to another context");
    require(v->scalar || v->buffer->has_memory(), NPVK_ERR_INVALID_HANDLE,
            "an accumulation's operand refers to freed memory");
  }
  ReduceOp r = plan_scan(op, in, axis, out);
  require(traits_.float64 || (in.dtype != NPVK_FLOAT64 && out.dtype != NPVK_FLOAT64),
          NPVK_ERR_UNSUPPORTED,
          std::string(op_info(op).name) + ".accumulate: the device lacks shaderFloat64");
  int64_t in_lo, in_hi, out_lo, out_hi;
  in.byte_extent(dtype_info(in.dtype).itemsize, in_lo, in_hi);
  out.byte_extent(dtype_info(out.dtype).itemsize, out_lo, out_hi);
  // In place is fine (each element is read before its result is stored);
  // any other overlap is not.
  const bool same = in.buffer == out.buffer && in.offset == out.offset && in.dtype == out.dtype &&
                    in.strides == out.strides;
  require(same || in.buffer != out.buffer || in_hi <= out_lo || out_hi <= in_lo ||
              views_interleave_apart(in, out),
          NPVK_ERR_INVALID_ARGUMENT, "an accumulation's output overlaps its input");
  if (r.outputs == 0 || r.reduced == 0) {
    ++stats_.ops_recorded;
    return;
  }
  record_reduction(std::move(r), in, out, {in_lo, out_lo}, {in_hi, out_hi});
}

void Context::record_reduction(ReduceOp &&r, const View &in, const View &out,
                               std::vector<int64_t> lo, std::vector<int64_t> hi) {
  const npvk_op op = r.spec.op;
  make_resident({in.buffer.get(), out.buffer.get()});
  if (in.buffer->managed && observer_) observer_->before_use(*in.buffer, false);
  if (out.buffer->managed && observer_) observer_->before_use(*out.buffer, true);
  RecordedOp rec;
  rec.spec.op = op;
  rec.spec.nin = 1;
  rec.spec.nout = 1;
  rec.spec.operands[0].dtype = in.dtype;
  rec.spec.operands[1].dtype = out.dtype;
  rec.operands = {in, out};
  rec.lo = std::move(lo);
  rec.hi = std::move(hi);
  rec.space.count = r.outputs * r.reduced;
  rec.reduce = std::make_shared<const ReduceOp>(std::move(r));
  if (out.buffer->host && !out.buffer->zero_copy) out.buffer->device_newer = true;
  ++stats_.ops_recorded;
  pending_.push_back(std::move(rec));
  if (pending_.size() >= kMaxPendingOps) flush();
}

void Context::reduce_dispatches(const PlannedKernel &k, uint64_t scratch,
                                std::vector<vk::Dispatch> &batch) {
  const ReduceOp &r = *k.reduce;
  const View &in = *k.slots[0].view, &out = *k.slots[1].view;
  const uint64_t out_item = dtype_info(out.dtype).itemsize;
  const uint64_t group_limit = device_->info().max_workgroup_count_x;
  const vk::Access read_in{in.buffer.get(), uint64_t(k.slots[0].lo), uint64_t(k.slots[0].hi),
                           false};
  const vk::Access write_out{out.buffer.get(), uint64_t(k.slots[1].lo), uint64_t(k.slots[1].hi),
                             true};
  // One pass over `items` items (results, chunks or lines), in as many
  // dispatches as the device's workgroup count needs; operand[6] is the
  // first item of each.
  auto pass = [&](const ReduceKernelSpec &spec, uint64_t from, uint64_t to, int64_t reduced,
                  int64_t chunks, bool apply_init, const std::vector<int64_t> &meta, uint64_t items,
                  const std::vector<vk::Access> &accesses, int64_t r0, int64_t r1) {
    const Kernel &kernel = kernel_for(spec.key(), [&] { return generate_reduce_glsl(spec); });
    const uint64_t per_group = spec.mode == ReduceMode::Workgroup ? 1 : kWorkgroupSize;
    const uint64_t per_dispatch = group_limit * per_group;
    for (uint64_t first = 0; first < items; first += per_dispatch) {
      vk::Dispatch d;
      d.pipeline = kernel.pipeline;
      d.push.operand[0] = from;
      d.push.operand[1] = to;
      d.push.operand[2] = r.init_bits;
      d.push.operand[3] = uint64_t(reduced);
      d.push.operand[4] = uint64_t(chunks);
      d.push.operand[5] = apply_init ? 1 : 0;
      d.push.operand[6] = first;
      d.push.operand[7] = uint64_t(r0);
      d.push.operand[8] = uint64_t(r1);
      d.push.count = std::min(per_dispatch, items - first);
      d.push.tables = tables_->address();
      d.meta = meta;
      d.groups = uint32_t((d.push.count + per_group - 1) / per_group);
      d.accesses = accesses;
      batch.push_back(std::move(d));
    }
  };
  // The argument table: outer shape, outer input and output strides, inner
  // shape and inner strides.
  auto table = [](const IterationSpace &outer, const std::vector<int64_t> &in_strides,
                  const std::vector<int64_t> &out_strides, const std::vector<int64_t> &inner_shape,
                  const std::vector<int64_t> &inner_strides) {
    std::vector<int64_t> t(outer.shape);
    t.insert(t.end(), in_strides.begin(), in_strides.end());
    t.insert(t.end(), out_strides.begin(), out_strides.end());
    t.insert(t.end(), inner_shape.begin(), inner_shape.end());
    t.insert(t.end(), inner_strides.begin(), inner_strides.end());
    return t;
  };
  const std::vector<int64_t> none;
  const std::vector<int64_t> &outer_in = r.outer.rank ? r.outer.strides[0] : none;
  const std::vector<int64_t> &outer_out = r.outer.rank ? r.outer.strides[1] : none;
  const uint64_t in_address = in.buffer->device->address() + in.offset;
  const uint64_t out_address = out.buffer->device->address() + out.offset;
  if (r.spec.mode == ReduceMode::Scan) {
    const std::vector<int64_t> meta = table(r.outer, outer_in, outer_out, r.inner.shape,
                                            {r.inner.strides[0][0], r.inner.strides[1][0]});
    for (int64_t r0 = 0; r0 < r.reduced; r0 += loop_budget_)
      pass(r.spec, in_address, out_address, r.reduced, 1, false, meta, uint64_t(r.outputs),
           {read_in, write_out}, r0, std::min(r.reduced, r0 + loop_budget_));
    return;
  }
  const std::vector<int64_t> &inner_in = r.inner.rank ? r.inner.strides[0] : none;
  const uint64_t items = uint64_t(r.outputs * r.chunks);
  if (r.chunks == 1) {
    pass(r.spec, in_address, out_address, r.reduced, 1, r.has_init,
         table(r.outer, outer_in, outer_out, r.inner.shape, inner_in), items, {read_in, write_out},
         0, 0);
    return;
  }
  // Partial results, C-ordered by result then chunk.
  std::vector<int64_t> partial_strides(r.outer.rank);
  int64_t step = r.chunks;
  for (int d = int(r.outer.rank) - 1; d >= 0; --d) {
    partial_strides[size_t(d)] = step;
    step *= r.outer.shape[size_t(d)];
  }
  const uint64_t partials = scratch_->address() + scratch;
  const uint64_t partial_bytes = uint64_t(r.outputs * r.chunks) * out_item;
  const vk::Access partial_area{scratch_.get(), scratch, scratch + partial_bytes, true};
  pass(r.spec, in_address, partials, r.reduced, r.chunks, false,
       table(r.outer, outer_in, partial_strides, r.inner.shape, inner_in), items,
       {read_in, partial_area}, 0, 0);
  ReduceKernelSpec fold = r.spec;
  fold.in = r.spec.out;
  fold.mode = ReduceMode::Workgroup;
  fold.inner_rank = 1;
  vk::Access read_partials = partial_area;
  read_partials.write = false;
  pass(fold, partials, out_address, r.chunks, 1, r.has_init,
       table(r.outer, partial_strides, outer_out, {r.chunks}, {1}), uint64_t(r.outputs),
       {read_partials, write_out}, 0, 0);
}

void Context::matmul(const View &a, const View &b, const View &c) {
  check_usable();
  Profiler::Scope scope(profiler_, Phase::Record);
  if (scope.tracing()) scope.set_args("\"op\":\"matmul\"");
  for (const View *v : {&a, &b, &c}) {
    require(v->ctx.get() == this, NPVK_ERR_INVALID_ARGUMENT,
            "a matmul operand belongs to another context");
    require(v->scalar || v->buffer->has_memory(), NPVK_ERR_INVALID_HANDLE,
            "a matmul operand refers to freed memory");
  }
  MatmulOp op = plan_matmul(a, b, c);
  require(traits_.float64 || op.dtype != NPVK_FLOAT64, NPVK_ERR_UNSUPPORTED,
          "matmul: the device lacks shaderFloat64");
  require((op.k + kMatmulTile - 1) / kMatmulTile <= loop_budget_ / 2, NPVK_ERR_UNSUPPORTED,
          "matmul: the inner dimension is too long for this device's loop budget");
  std::vector<int64_t> lo(3), hi(3);
  const View *views[3] = {&a, &b, &c};
  for (int v = 0; v < 3; ++v)
    views[v]->byte_extent(dtype_info(op.dtype).itemsize, lo[size_t(v)], hi[size_t(v)]);
  for (int v = 0; v < 2; ++v)
    require(views[v]->buffer != c.buffer || hi[size_t(v)] <= lo[2] || hi[2] <= lo[size_t(v)],
            NPVK_ERR_INVALID_ARGUMENT, "matmul's output overlaps an input");
  ++stats_.ops_recorded;
  if (op.tiles() == 0) return;
  if (op.k == 0) {
    // An empty sum: zeros, as NumPy gives.
    View zero;
    zero.ctx = shared_from_this();
    zero.dtype = op.dtype;
    zero.scalar = true;
    --stats_.ops_recorded;
    record(NPVK_OP_CAST, {&zero, &c}, 1, false);
    return;
  }
  make_resident({a.buffer.get(), b.buffer.get(), c.buffer.get()});
  for (int v = 0; v < 3; ++v)
    if (views[v]->buffer->managed && observer_) observer_->before_use(*views[v]->buffer, v == 2);
  RecordedOp rec;
  rec.spec.op = NPVK_OP_MULTIPLY;
  rec.spec.nin = 2;
  rec.spec.nout = 1;
  for (int v = 0; v < 3; ++v) rec.spec.operands[v].dtype = op.dtype;
  rec.operands = {a, b, c};
  rec.lo = std::move(lo);
  rec.hi = std::move(hi);
  rec.space.count = op.tiles();
  rec.matmul = std::make_shared<const MatmulOp>(std::move(op));
  if (c.buffer->host && !c.buffer->zero_copy) c.buffer->device_newer = true;
  pending_.push_back(std::move(rec));
  if (pending_.size() >= kMaxPendingOps) flush();
}

void Context::matmul_dispatches(const PlannedKernel &k, std::vector<vk::Dispatch> &batch) {
  const MatmulOp &op = *k.matmul;
  const Kernel &kernel = kernel_for(op.key(), [&] { return generate_matmul_glsl(op); });
  std::vector<int64_t> meta = {op.a_strides[0], op.a_strides[1], op.b_strides[0],
                               op.b_strides[1], op.c_strides[0], op.c_strides[1]};
  meta.insert(meta.end(), op.batch_shape.begin(), op.batch_shape.end());
  for (const std::vector<int64_t> &strides : op.batch_strides)
    meta.insert(meta.end(), strides.begin(), strides.end());
  const uint64_t tiles = uint64_t(op.tiles());
  const uint64_t limit = device_->info().max_workgroup_count_x;
  for (uint64_t first = 0; first < tiles; first += limit) {
    vk::Dispatch d;
    d.pipeline = kernel.pipeline;
    for (int v = 0; v < 3; ++v) {
      const View &view = *k.slots[size_t(v)].view;
      d.push.operand[v] = view.buffer->device->address() + view.offset;
      d.accesses.push_back({view.buffer.get(), uint64_t(k.slots[size_t(v)].lo),
                            uint64_t(k.slots[size_t(v)].hi), v == 2});
    }
    d.push.operand[3] = uint64_t(op.m);
    d.push.operand[4] = uint64_t(op.k);
    d.push.operand[5] = uint64_t(op.n);
    d.push.operand[6] = first;
    d.push.count = std::min(limit, tiles - first);
    d.push.tables = tables_->address();
    d.meta = meta;
    d.groups = uint32_t(d.push.count);
    batch.push_back(std::move(d));
  }
}

void Context::flush() {
  if (pending_.empty()) return;
  check_usable();
  auto start = std::chrono::steady_clock::now();
  Profiler::Scope scope(profiler_, Phase::Flush);
  if (scope.tracing()) scope.set_args("\"ops\":" + std::to_string(pending_.size()));
  // Whatever happens, the recorded work is consumed: a failed batch is
  // reported once by the call that flushed, not replayed on every later call.
  std::vector<RecordedOp> done;
  done.swap(pending_);
  row_ = RowMerge{};  // drops its references to the buffers

  // A buffer is dead when its owner freed it (managed memory) or when the
  // recorded ops hold its only references (the C ABI's handles are gone).
  std::unordered_map<const Buffer *, long> recorded_refs;
  for (const RecordedOp &op : done)
    for (const View &v : op.operands)
      if (v.buffer) ++recorded_refs[v.buffer.get()];
  auto dead = [&](const std::shared_ptr<Buffer> &b) {
    // The caller's own shared_ptr is one of the recorded references.
    return b->discarded || b.use_count() == recorded_refs[b.get()];
  };
  std::vector<PlannedKernel> kernels;
  {
    Profiler::Scope plan(profiler_, Phase::Plan);
    kernels = plan_kernels(done, fuse_, min_fuse_elements_, dead);
  }
  std::vector<vk::Dispatch> batch;
  batch.reserve(kernels.size());
  std::vector<size_t> first_dispatch;  // per kernel, into batch
  vk::BatchResult result;
  bool opened = false, submitting = false;
  int64_t submit_ns = 0;
  try {
    // Reductions with several chunks per result put partial results in
    // scratch memory, one region each.
    uint64_t scratch_bytes = 0;
    std::vector<uint64_t> scratch_at;
    for (const PlannedKernel &k : kernels) {
      scratch_at.push_back(scratch_bytes);
      if (k.reduce && k.reduce->chunks > 1)
        scratch_bytes += (uint64_t(k.reduce->outputs * k.reduce->chunks) *
                              dtype_info(k.reduce->spec.out).itemsize +
                          255) &
                         ~uint64_t(255);
    }
    if (scratch_bytes && (!scratch_ || scratch_->size() < scratch_bytes))
      scratch_ = std::make_unique<vk::DeviceBuffer>(*device_, scratch_bytes * 2,
                                                    vk::MemoryPlacement::DeviceLocal);
    // Compiled before the pages open up for the device (before_flush).
    for (size_t i = 0; i < kernels.size(); ++i) {
      first_dispatch.push_back(batch.size());
      if (kernels[i].reduce)
        reduce_dispatches(kernels[i], scratch_at[i], batch);
      else if (kernels[i].matmul)
        matmul_dispatches(kernels[i], batch);
      else
        batch.push_back(dispatch_for(kernels[i]));
    }
    first_dispatch.push_back(batch.size());
    if (observer_) observer_->before_flush();
    opened = true;
    inject_submit_fault();
    submitting = true;
    submit_ns = Profiler::now_ns();
    Profiler::Scope execute(profiler_, Phase::Execute);
    result = executor_->run(batch);
  } catch (const Error &e) {
    // The host replay needs the pages open, as the device would have.
    if (observer_ && !opened) observer_->before_flush();
    bool recovered = recover(done, e, submitting);
    if (observer_) observer_->after_flush();
    if (!recovered) throw;
    stats_.flush_seconds += seconds_since(start);
    return;
  } catch (...) {
    if (observer_) {
      if (!opened) observer_->before_flush();
      observer_->after_flush();
    }
    throw;
  }
  if (observer_) observer_->after_flush();
  ++stats_.flushes;
  stats_.dispatches += batch.size();
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
      for (size_t d = first_dispatch[i] + 1; k.standalone() && d < first_dispatch[i + 1]; ++d)
        flags |= result.fp_flags[word++];
      if (k.reduce) {
        // NumPy names a reduction's exceptions "reduce" or "accumulate".
        if (flags)
          flags |=
              k.reduce->spec.mode == ReduceMode::Scan ? NPVK_FP_IN_ACCUMULATE : NPVK_FP_IN_REDUCE;
      }
      note_fp_errors(done[op_index].spec.op, flags);
    }
  }
  observe_flush(done, kernels, first_dispatch, result, submit_ns);
  stats_.flush_seconds += seconds_since(start);
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
  for (auto &weak : buffers_) {
    if (auto buffer = weak.lock()) {
      buffer->device.reset();
      buffer->host_pages.reset();
      buffer->evicted = false;
    }
  }
  buffers_.clear();
  stats_ = stats();  // keep the final counts readable after release
  for (auto &entry : kernels_) pipelines_->destroy(entry.second.pipeline);
  kernels_.clear();
  executor_.reset();
  pipelines_.reset();
  tables_.reset();
  scratch_.reset();
  device_.reset();
  if (!error.empty()) fail(NPVK_ERR_DEVICE_LOST, "pending work was lost at release: " + error);
}

void Context::save_caches() {
  if (pipelines_) pipelines_->save();
}

void Context::abandon() {
  // Leak on purpose: destroying Vulkan objects in a forked child can hang or
  // corrupt the parent's device state.
  pending_.clear();
  for (auto &weak : buffers_) {
    if (auto buffer = weak.lock()) {
      buffer->device.release();
      buffer->host_pages.release();
    }
  }
  buffers_.clear();
  kernels_.clear();
  executor_.release();
  tables_.release();
  pipelines_.release();
  cache_.release();
  device_.release();
  released_ = true;
}

npvk_stats Context::stats() const {
  npvk_stats s = stats_;
  if (device_) s.validation_messages = device_->instance().validation_messages();
  if (cache_) s.disk_cache_rejects = cache_->rejects();
  s.device_bytes_held = held_;
  s.device_bytes_peak = peak_held_;
  s.device_memory_budget = budget_;
  return s;
}

std::vector<npvk_fp_error> Context::take_fp_errors() {
  std::vector<npvk_fp_error> errors;
  errors.swap(fp_errors_);
  return errors;
}

void Context::reset_stats() {
  stats_ = npvk_stats{};
  stats_.struct_size = sizeof(npvk_stats);
  peak_held_ = held_;
  profiler_.reset();
}

}  // namespace npvk
