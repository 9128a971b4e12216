#include "runtime/recorder.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "base/error.hpp"
#include "compile/dtype.hpp"
#include "compile/families/kernels.hpp"
#include "compile/families/matmul/matmul_plan.hpp"
#include "compile/iteration.hpp"
#include "compile/ops.hpp"
#include "runtime/fp_errors.hpp"

namespace npvk {
namespace {

// Past this many recorded operations a flush runs anyway, bounding the memory
// that recorded work holds (the device time it may take is QueueBudget's).
constexpr size_t kMaxPendingOps = 4096;

// An op's weight in the queue's device-time estimate (runtime/queue_budget.hpp):
// its elements, or a matrix product's multiply-adds (its count is tiles of C,
// its operands A, B, C, A's last extent the inner one).
double op_units(const RecordedOp &op) {
  if (op.standalone && op.operands.size() == 3 && op.spec.op == NPVK_OP_MULTIPLY) {
    const View &a = op.operands[0];
    const int64_t inner = a.ndim ? a.shape[a.ndim - 1] : 1;
    return double(op.space.count) * double(kMatmulTile * kMatmulTile) * double(inner);
  }
  const bool math = op_info(op.spec.op).math_f64 != nullptr;
  return double(op.space.count) * (math ? QueueBudget::kMathWeight : 1.0);
}

// A trace's record span names its op.
void name_record(Profiler::Scope &scope, npvk_op op, const char *method) {
  if (scope.tracing() && op_valid(op))
    scope.set_args(std::string("\"op\":\"") + op_info(op).name + method + "\"");
}

}  // namespace

Recorder::Recorder(std::weak_ptr<Context> ctx, std::vector<RecordedOp> &pending,
                   std::function<void()> flush, Residency &residency,
                   MemoryObserver *const &observer, npvk_stats &stats, Profiler &profiler,
                   RecordLimits limits)
    : ctx_(std::move(ctx)),
      ctx_address_(ctx_.lock().get()),
      pending_(pending),
      flush_(std::move(flush)),
      residency_(residency),
      observer_(observer),
      stats_(stats),
      profiler_(profiler),
      limits_(limits) {}

void Recorder::check_operand(const View &v, const char *what, int index) const {
  auto name = [&] { return what + (index < 0 ? std::string() : " " + std::to_string(index)); };
  NPVK_REQUIRE(v.ctx.get() == ctx_address_, NPVK_ERR_INVALID_ARGUMENT,
               name() + " belongs to another context");
  NPVK_REQUIRE(v.scalar || v.buffer->has_memory(), NPVK_ERR_INVALID_HANDLE,
               name() + " refers to freed memory");
}

void Recorder::prepare(const View *const *operands, uint32_t n, uint32_t nin) {
  Buffer *used[kMaxOperands] = {};
  for (uint32_t k = 0; k < n; ++k)
    if (!operands[k]->scalar) used[k] = operands[k]->buffer.get();
  residency_.make_resident(used, n);
  for (uint32_t k = 0; k < n; ++k) {
    const View &v = *operands[k];
    if (v.scalar || !v.buffer->managed || !observer_) continue;
    // An output whose elements fill its byte extent, in a buffer no input
    // reads: the op overwrites those bytes whole.
    MemoryObserver::Overwrite whole{};
    bool overwrites = k >= nin;
    for (uint32_t i = 0; i < nin && overwrites; ++i)
      overwrites = operands[i]->scalar || operands[i]->buffer != v.buffer;
    if (overwrites) {
      const int64_t item = int64_t(dtype_info(v.dtype).itemsize);
      v.byte_extent(item, whole.lo, whole.hi);
      for (uint32_t d = 0; d < v.ndim; ++d)
        overwrites = overwrites && (v.shape[d] < 2 || v.strides[d] != 0);
      overwrites = overwrites && whole.hi - whole.lo == v.size() * item;
    }
    observer_->before_use(*v.buffer, k >= nin, overwrites ? &whole : nullptr);
  }
}

namespace {
// Per thread: the recorder it last queued an op in, and that op's serial.
thread_local const Recorder *t_last_recorder = nullptr;
thread_local uint64_t t_last_serial = 0;
}  // namespace

uint64_t Recorder::last_serial_of_this_thread() const {
  return t_last_recorder == this ? t_last_serial : 0;
}

uint64_t Recorder::last_serial_of_this_thread_anywhere() {
  return t_last_serial;
}

void Recorder::enqueue(RecordedOp &&rec) {
  pending_.push_back(std::move(rec));
  queued(pending_.back(), false, 0);
}

void Recorder::queued(RecordedOp &rec, bool replace_last, double replaced_units) {
  rec.thread = recording_thread();
  if (!replace_last) ++serial_;
  t_last_recorder = this;
  t_last_serial = serial_;
  rec.serial = serial_;
  for (View &v : rec.operands)
    if (v.buffer) v.generation = v.buffer->generation;
  for (size_t k = rec.spec.nin; k < rec.operands.size(); ++k) {
    Buffer *b = rec.operands[k].buffer.get();
    if (b && b->host && !b->zero_copy) b->device_newer = true;
  }
  const double units = op_units(rec);
  if (replace_last) {
    if (budget_.replace(replaced_units, units)) flush_();
    return;
  }
  if (pending_.size() == 1) budget_.clear();  // flushed (or abandoned) since
  if (budget_.add(units) || pending_.size() >= kMaxPendingOps) flush_();
}

void Recorder::ran(const std::vector<RecordedOp> &done, double device_seconds) {
  double units = 0;
  for (const RecordedOp &op : done) units += op_units(op);
  budget_.ran(units, device_seconds);
}

void Recorder::record_standalone(std::shared_ptr<const StandaloneKernel> kernel, KernelSpec spec,
                                 OperandViews operands, std::vector<int64_t> lo,
                                 std::vector<int64_t> hi, int64_t elements) {
  std::vector<const View *> views;
  for (const View &v : operands) views.push_back(&v);
  prepare(views.data(), uint32_t(views.size()), spec.nin);
  RecordedOp rec;
  rec.spec = spec;
  rec.operands = std::move(operands);
  rec.lo.assign(lo.begin(), lo.end());
  rec.hi.assign(hi.begin(), hi.end());
  rec.space.count = elements;
  rec.standalone = std::move(kernel);
  fences_.note_standalone(stats_.ops_recorded);
  enqueue(std::move(rec));
}

bool Recorder::supported(npvk_op op, const npvk_dtype *dtypes, uint32_t count,
                         std::string *why) const {
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
  if (needs_float64(spec) && !limits_.traits.float64) {
    if (why) *why = std::string(info.name) + ": the device lacks shaderFloat64";
    return false;
  }
  return true;
}

void Recorder::apply(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, "");
  if (try_merge_row(op, operands, nin)) return;
  record(op, operands, nin, false);
  remember_row(op, operands, nin);
}

bool Recorder::try_merge_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  std::vector<View> merged;
  // Another thread's op keeps its own FP errors: no row of ours joins it.
  if (pending_.empty() || pending_.back().thread != recording_thread() ||
      !rows_.next_row(op, operands, nin, pending_.size() - 1, merged))
    return false;
  // The folded operation must be one that could have been recorded as such:
  // record() re-validates it, overlap included, and replaces the queued row.
  std::vector<const View *> ptrs;
  for (const View &v : merged) ptrs.push_back(&v);
  try {
    record(op, ptrs, nin, true);
  } catch (const Error &) {
    rows_.forget();  // e.g. a later row reads what an earlier one wrote
    return false;
  }
  rows_.accept(merged);
  ++stats_.ops_recorded;
  ++stats_.rows_merged;
  return true;
}

void Recorder::remember_row(npvk_op op, const std::vector<const View *> &operands, uint32_t nin) {
  if (pending_.empty()) {
    rows_.forget();
    return;
  }
  rows_.remember(op, operands, nin, pending_.size() - 1);
}

void Recorder::record(npvk_op op, const std::vector<const View *> &operands, uint32_t nin,
                      bool replace_last) {
  const OpInfo &info = op_info(op);
  const uint32_t n = uint32_t(operands.size());
  NPVK_REQUIRE(nin == info.nin && n - nin == info.nout, NPVK_ERR_INVALID_ARGUMENT,
               std::string(info.name) + " takes " + std::to_string(info.nin) + " inputs and " +
                   std::to_string(info.nout) + " outputs, got " + std::to_string(nin) + " and " +
                   std::to_string(n - nin));
  npvk_dtype dtypes[kMaxOperands];
  for (uint32_t k = 0; k < n; ++k) {
    const View &v = *operands[k];
    check_operand(v, "operand", int(k));
    NPVK_REQUIRE(k < nin || !v.scalar, NPVK_ERR_INVALID_ARGUMENT,
                 "output " + std::to_string(k - nin) + " is a scalar view; outputs need memory");
    dtypes[k] = v.dtype;
  }
  const char *reason = nullptr;
  NPVK_REQUIRE(info.implemented, NPVK_ERR_UNSUPPORTED,
               std::string("npvk does not implement ") + info.name + " yet");
  if (!op_has_loop(info, dtypes, n, &reason))
    fail(NPVK_ERR_BAD_DTYPE, std::string(info.name) + ": " + reason);
  std::string why;
  NPVK_REQUIRE(supported(op, dtypes, n, &why), NPVK_ERR_UNSUPPORTED, why);

  IterationSpace space = plan_iteration(operands, nin);

  // An output may be an input exactly (in place); any other overlap would
  // make the result depend on the order in which elements are computed.
  std::array<std::pair<int64_t, int64_t>, kMaxOperands> extent{};
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
      NPVK_REQUIRE(disjoint || same || space.count == 0, NPVK_ERR_INVALID_ARGUMENT,
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
  const uint64_t flushes = stats_.flushes;
  prepare(operands.data(), n, nin);
  NPVK_REQUIRE(!replace_last || (stats_.flushes == flushes && !pending_.empty()), NPVK_ERR_INTERNAL,
               "the queued row was flushed while its next row was recorded");

  KernelSpec spec;
  spec.op = op;
  spec.nin = nin;
  spec.nout = n - nin;
  for (uint32_t k = 0; k < n; ++k) spec.operands[k] = {dtypes[k], operands[k]->scalar};
  if (nin == 2) spec.exponent = fixed_exponent_of(spec, *operands[1]);
  // Cuts plan_kernels must make, so that memory freed before them can be
  // reused before the flush (Context::may_fuse_with_next).
  std::array<LastWrite *, kMaxOperands> writes{};
  for (size_t k = 0; k < operands.size(); ++k)
    if (!operands[k]->scalar) writes[k] = &operands[k]->buffer->last_write;
  fences_.note_elementwise(stats_.ops_recorded, operands, nin, space, extent, writes, replace_last);

  // Copied first (a view of over 4 dimensions allocates), so that nothing
  // after the op takes its place in the queue can throw.
  OperandViews views;
  for (uint32_t k = 0; k < n; ++k) views.push_back(*operands[k]);
  // Filled where it is queued: an op is over a kilobyte of views and loops,
  // and moving it there cost as much as the rest of recording (bench/record).
  const double replaced_units = replace_last ? op_units(pending_.back()) : 0;
  RecordedOp &rec = replace_last ? pending_.back() : pending_.emplace_back();
  rec.spec = spec;
  rec.operands = std::move(views);
  rec.lo.resize(n);
  rec.hi.resize(n);
  for (uint32_t k = 0; k < n; ++k) {
    rec.lo[k] = extent[k].first;
    rec.hi[k] = extent[k].second;
  }
  rec.space = std::move(space);
  rec.standalone.reset();
  queued(rec, replace_last, replaced_units);
}

void Recorder::reduce(npvk_op op, const View &in, const std::vector<uint32_t> &axes,
                      const View *initial, const View &out, int64_t sum_block) {
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, ".reduce");
  for (const View *v : {&in, &out, initial})
    if (v) check_operand(*v, "a reduction's operand");
  ReduceOp r = plan_reduction(op, in, axes, out, limits_.max_groups * kWorkgroupSize,
                              limits_.loop_budget, sum_block);
  NPVK_REQUIRE(limits_.traits.float64 || (in.dtype != NPVK_FLOAT64 && out.dtype != NPVK_FLOAT64),
               NPVK_ERR_UNSUPPORTED,
               std::string(op_info(op).name) + ".reduce: the device lacks shaderFloat64");
  if (initial) {
    NPVK_REQUIRE(initial->scalar && initial->dtype == out.dtype, NPVK_ERR_INVALID_ARGUMENT,
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
  NPVK_REQUIRE(in.buffer != out.buffer || in_hi <= out_lo || out_hi <= in_lo ||
                   views_interleave_apart(in, out) || r.outputs == 0,
               NPVK_ERR_INVALID_ARGUMENT, "a reduction's output overlaps its input");
  if (r.outputs == 0) {
    ++stats_.ops_recorded;
    return;
  }
  if (r.reduced == 0) {
    // Nothing to fold: every result is `initial`, or the op's identity.
    View fill;
    fill.ctx = ctx_.lock();
    fill.dtype = out.dtype;
    fill.scalar = true;
    if (initial)
      fill.scalar_bits = initial->scalar_bits;
    else
      NPVK_REQUIRE(reduce_identity(op, out.dtype, &fill.scalar_bits), NPVK_ERR_INVALID_ARGUMENT,
                   std::string("zero-size reduction of ") + op_info(op).name +
                       ", which has no identity, and no initial value");
    record(NPVK_OP_CAST, {&fill, &out}, 1, false);
    return;
  }
  KernelSpec spec;
  spec.op = op;
  spec.nin = 1;
  spec.nout = 1;
  spec.operands[0].dtype = in.dtype;
  spec.operands[1].dtype = out.dtype;
  const int64_t elements = r.outputs * r.reduced;
  ++stats_.ops_recorded;
  record_standalone(make_reduce_kernel(std::move(r)), spec, {in, out}, {in_lo, out_lo},
                    {in_hi, out_hi}, elements);
}

void Recorder::accumulate(npvk_op op, const View &in, uint32_t axis, const View &out) {
  Profiler::Scope scope(profiler_, Phase::Record);
  name_record(scope, op, ".accumulate");
  for (const View *v : {&in, &out}) check_operand(*v, "an accumulation's operand");
  ReduceOp r = plan_scan(op, in, axis, out);
  NPVK_REQUIRE(limits_.traits.float64 || (in.dtype != NPVK_FLOAT64 && out.dtype != NPVK_FLOAT64),
               NPVK_ERR_UNSUPPORTED,
               std::string(op_info(op).name) + ".accumulate: the device lacks shaderFloat64");
  int64_t in_lo, in_hi, out_lo, out_hi;
  in.byte_extent(dtype_info(in.dtype).itemsize, in_lo, in_hi);
  out.byte_extent(dtype_info(out.dtype).itemsize, out_lo, out_hi);
  // In place is fine (each element is read before its result is stored);
  // any other overlap is not.
  const bool same = in.buffer == out.buffer && in.offset == out.offset && in.dtype == out.dtype &&
                    in.strides == out.strides;
  NPVK_REQUIRE(same || in.buffer != out.buffer || in_hi <= out_lo || out_hi <= in_lo ||
                   views_interleave_apart(in, out),
               NPVK_ERR_INVALID_ARGUMENT, "an accumulation's output overlaps its input");
  if (r.outputs == 0 || r.reduced == 0) {
    ++stats_.ops_recorded;
    return;
  }
  KernelSpec spec;
  spec.op = op;
  spec.nin = 1;
  spec.nout = 1;
  spec.operands[0].dtype = in.dtype;
  spec.operands[1].dtype = out.dtype;
  const int64_t elements = r.outputs * r.reduced;
  ++stats_.ops_recorded;
  record_standalone(make_reduce_kernel(std::move(r)), spec, {in, out}, {in_lo, out_lo},
                    {in_hi, out_hi}, elements);
}

void Recorder::matmul(const View &a, const View &b, const View &c) {
  Profiler::Scope scope(profiler_, Phase::Record);
  if (scope.tracing()) scope.set_args("\"op\":\"matmul\"");
  for (const View *v : {&a, &b, &c}) check_operand(*v, "a matmul operand");
  MatmulOp op = plan_matmul(a, b, c);
  NPVK_REQUIRE(limits_.traits.float64 || op.dtype != NPVK_FLOAT64, NPVK_ERR_UNSUPPORTED,
               "matmul: the device lacks shaderFloat64");
  NPVK_REQUIRE((op.k + kMatmulTile - 1) / kMatmulTile <= limits_.loop_budget / 2,
               NPVK_ERR_UNSUPPORTED,
               "matmul: the inner dimension is too long for this device's loop budget");
  std::vector<int64_t> lo(3), hi(3);
  const View *views[3] = {&a, &b, &c};
  for (int v = 0; v < 3; ++v)
    views[v]->byte_extent(dtype_info(op.dtype).itemsize, lo[size_t(v)], hi[size_t(v)]);
  for (int v = 0; v < 2; ++v)
    NPVK_REQUIRE(views[v]->buffer != c.buffer || hi[size_t(v)] <= lo[2] || hi[2] <= lo[size_t(v)],
                 NPVK_ERR_INVALID_ARGUMENT, "matmul's output overlaps an input");
  ++stats_.ops_recorded;
  if (op.tiles() == 0) return;
  if (op.k == 0) {
    // An empty sum: zeros, as NumPy gives.
    View zero;
    zero.ctx = ctx_.lock();
    zero.dtype = op.dtype;
    zero.scalar = true;
    --stats_.ops_recorded;
    record(NPVK_OP_CAST, {&zero, &c}, 1, false);
    return;
  }
  KernelSpec spec;
  spec.op = NPVK_OP_MULTIPLY;
  spec.nin = 2;
  spec.nout = 1;
  for (int v = 0; v < 3; ++v) spec.operands[v].dtype = op.dtype;
  const int64_t tiles = op.tiles();
  record_standalone(make_matmul_kernel(std::move(op)), spec, {a, b, c}, std::move(lo),
                    std::move(hi), tiles);
}

}  // namespace npvk
