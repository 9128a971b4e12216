// The recording path's cost per op (issue: "a few microseconds"): what one
// npvk_apply costs the caller before any device work, measured with Google
// Benchmark through the public C ABI. Flushes happen outside the timed
// region: every kBatch ops the benchmark pauses its clock and syncs.
//
//   build/bench/record/npvk_record_bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <npvk/npvk.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kBatch = 2000;  // below the 4096-op automatic flush
// Small arrays: the syncs between batches, outside the clock, stay quick.
constexpr int64_t kElements = 1024;

struct Setup {
  npvk_context ctx{};
  npvk_buffer a{}, b{}, c{};
  npvk_view va{}, vb{}, vc{}, strided{}, scalar{};
  Setup(int64_t n) {
    if (npvk_context_create(nullptr, &ctx) != NPVK_SUCCESS) {
      std::fprintf(stderr, "no device: %s\n", npvk_last_error_message());
      std::exit(1);
    }
    for (npvk_buffer *buf : {&a, &b, &c}) npvk_buffer_create(ctx, uint64_t(n) * 8, buf);
    int64_t shape = n;
    npvk_view_create(a, 0, NPVK_FLOAT64, 1, &shape, nullptr, &va);
    npvk_view_create(b, 0, NPVK_FLOAT64, 1, &shape, nullptr, &vb);
    npvk_view_create(c, 0, NPVK_FLOAT64, 1, &shape, nullptr, &vc);
    int64_t shape2[2] = {n / 64, 32}, strides2[2] = {64 * 8, 16};  // every other column
    npvk_view_create(a, 0, NPVK_FLOAT64, 2, shape2, strides2, &strided);
    double two = 2.0;
    npvk_view_create_scalar(ctx, NPVK_FLOAT64, &two, &scalar);
  }
  ~Setup() {
    for (npvk_view v : {va, vb, vc, strided, scalar}) npvk_view_release(v);
    for (npvk_buffer buf : {a, b, c}) npvk_buffer_release(buf);
    npvk_context_release(ctx);
  }
};

Setup &shared() {
  static Setup s(kElements);
  return s;
}

template <class Record>
void run(benchmark::State &state, Record record) {
  Setup &s = shared();
  npvk_sync(s.ctx);
  int pending = 0;
  for (auto _ : state) {
    record(s);
    if (++pending == kBatch) {
      state.PauseTiming();
      npvk_sync(s.ctx);
      pending = 0;
      state.ResumeTiming();
    }
  }
  npvk_sync(s.ctx);
  state.SetItemsProcessed(state.iterations());
}

void BM_RecordBinaryContiguous(benchmark::State &state) {
  run(state, [](Setup &s) { npvk_binary(s.ctx, NPVK_OP_ADD, s.va, s.vb, s.vc); });
}
void BM_RecordBinaryWithScalar(benchmark::State &state) {
  run(state, [](Setup &s) { npvk_binary(s.ctx, NPVK_OP_MULTIPLY, s.va, s.scalar, s.vc); });
}
void BM_RecordUnaryStrided2D(benchmark::State &state) {
  run(state, [](Setup &s) {
    npvk_view out{};
    int64_t shape2[2] = {kElements / 64, 32};
    // A fresh output view each call, as NumPy's inner loops make them.
    npvk_view_create(s.c, 0, NPVK_FLOAT64, 2, shape2, nullptr, &out);
    npvk_unary(s.ctx, NPVK_OP_SQRT, s.strided, out);
    npvk_view_release(out);
  });
}

// An interposer's loop call on managed memory (the Python shim's ufunc
// loops): the operands are pointers, and the runtime finds their allocations.
struct ManagedSetup {
  npvk_context ctx{};
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ManagedSetup() {
    if (npvk_managed_enable(nullptr, &ctx) != NPVK_SUCCESS) {
      std::fprintf(stderr, "no managed memory: %s\n", npvk_last_error_message());
      std::exit(1);
    }
    for (void **p : {&a, &b, &c}) npvk_managed_alloc(uint64_t(kElements) * 8, 1, p);
  }
};

ManagedSetup &managed_setup() {
  static ManagedSetup s;
  return s;
}

template <class Record>
void run_managed(benchmark::State &state, Record record) {
  ManagedSetup &s = managed_setup();
  npvk_managed_sync();
  int pending = 0;
  for (auto _ : state) {
    record(s);
    if (++pending == kBatch) {
      state.PauseTiming();
      npvk_managed_sync();
      pending = 0;
      state.ResumeTiming();
    }
  }
  npvk_managed_sync();
  state.SetItemsProcessed(state.iterations());
}

// Before npvk_managed_apply: a lookup, a view and a release per operand
// around npvk_apply, ten calls into the runtime and seven context locks.
void BM_LoopCallThroughHandles(benchmark::State &state) {
  run_managed(state, [](ManagedSetup &s) {
    const void *data[3] = {s.a, s.b, s.c};
    npvk_view views[3] = {};
    int64_t n = kElements, stride = 8;
    for (int k = 0; k < 3; ++k) {
      int found = 0;
      void *base = nullptr;
      uint64_t size = 0;
      npvk_managed_lookup(data[k], &found, &base, &size);
    }
    for (int k = 0; k < 3; ++k) npvk_managed_view(data[k], NPVK_FLOAT64, 1, &n, &stride, &views[k]);
    npvk_apply(s.ctx, NPVK_OP_ADD, 2, views, 1, views + 2);
    for (npvk_view v : views) npvk_view_release(v);
  });
}

// The same call in one crossing.
void BM_LoopCallManagedApply(benchmark::State &state) {
  run_managed(state, [](ManagedSetup &s) {
    int64_t n = kElements, stride = 8;
    npvk_managed_operand operands[3] = {};
    const void *data[3] = {s.a, s.b, s.c};
    for (int k = 0; k < 3; ++k) {
      operands[k].data = data[k];
      operands[k].dtype = NPVK_FLOAT64;
      operands[k].ndim = 1;
      operands[k].shape = &n;
      operands[k].strides = &stride;
    }
    const char *declined = nullptr;
    npvk_managed_apply(NPVK_OP_ADD, 2, 1, operands, 0, &declined);
  });
}

// A fixed count: the syncs between batches, outside the clock, take about
// 0.1 s per 2,000 ops on lavapipe (one dispatch each), and Google Benchmark,
// choosing a count by the timed part alone, ran for many minutes.
constexpr int kIterations = 20 * kBatch;

BENCHMARK(BM_RecordBinaryContiguous)->Iterations(kIterations);
BENCHMARK(BM_RecordBinaryWithScalar)->Iterations(kIterations);
BENCHMARK(BM_RecordUnaryStrided2D)->Iterations(kIterations);
BENCHMARK(BM_LoopCallThroughHandles)->Iterations(kIterations);
BENCHMARK(BM_LoopCallManagedApply)->Iterations(kIterations);

}  // namespace

BENCHMARK_MAIN();
