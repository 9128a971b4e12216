// Failure handling: NPVK_FAULT's injected failures (out of device memory, a
// kernel that does not compile, a failed submission, device loss), what the C
// ABI reports, and the host replay of a failed flush through a registered
// host loop. See docs/architecture.md, "Failure handling".
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

// A host loop for a few float64 ops, as the NumPy shim's original loops
// would be. It counts its calls so that tests see the replay happen.
int g_host_calls = 0;

int HostLoop(void *, npvk_op op, uint32_t nin, uint32_t nout, const npvk_dtype *dtypes, char **args,
             int64_t count, const int64_t *steps, uint32_t *fp_flags) {
  bool known = (op == NPVK_OP_ADD || op == NPVK_OP_MULTIPLY || op == NPVK_OP_TRUE_DIVIDE) &&
               nin == 2 && nout == 1;
  for (uint32_t k = 0; known && k < 3; ++k) known = dtypes[k] == NPVK_FLOAT64;
  if (!known) return -1;
  if (!args) return 0;
  ++g_host_calls;
  for (int64_t i = 0; i < count; ++i) {
    double a, b, r;
    std::memcpy(&a, args[0] + i * steps[0], 8);
    std::memcpy(&b, args[1] + i * steps[1], 8);
    r = op == NPVK_OP_ADD ? a + b : op == NPVK_OP_MULTIPLY ? a * b : a / b;
    std::memcpy(args[2] + i * steps[2], &r, 8);
  }
  *fp_flags = 0;
  return 0;
}

npvk_failure_stats FailureStats(npvk_context ctx) {
  npvk_failure_stats f{};
  f.struct_size = sizeof f;
  EXPECT_EQ(npvk_context_get_failure_stats(ctx, &f), NPVK_SUCCESS);
  return f;
}

class Failures : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(npvk_fault_inject(""), NPVK_SUCCESS); }
};

// a*b + a over n float64 elements (n <= 1024), recorded (not run) in fresh
// buffers. The output wraps host memory, which the host can read even after
// the device is lost.
struct Chain {
  static constexpr size_t kOutBytes = 8192;
  double *host_out = static_cast<double *>(std::aligned_alloc(4096, kOutBytes));
  Buffer a, b, t, out;
  View va, vb, vt, vout, vt2, va2, vout2;
  ~Chain() {
    vout.Reset();
    vout2.Reset();
    out.Reset();
    std::free(host_out);
  }
  Chain(npvk_context ctx, int64_t n) {
    std::fill(host_out, host_out + kOutBytes / 8, -1.0);
    std::vector<double> av(static_cast<size_t>(n)), bv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      av[size_t(i)] = double(i) * 0.5;
      bv[size_t(i)] = 3.0 - double(i);
    }
    a = MakeBuffer(ctx, av);
    b = MakeBuffer(ctx, bv);
    t = MakeBuffer(ctx, std::vector<double>(size_t(n), 0.0));
    npvk_buffer wrapped{};
    EXPECT_EQ(npvk_buffer_wrap_host(ctx, host_out, kOutBytes, &wrapped), NPVK_SUCCESS);
    out = Buffer(wrapped);
    va = MakeView1D(a, NPVK_FLOAT64, n);
    vb = MakeView1D(b, NPVK_FLOAT64, n);
    vt = MakeView1D(t, NPVK_FLOAT64, n);
    vout = MakeView1D(out, NPVK_FLOAT64, n);
    vt2 = MakeView(t, NPVK_FLOAT64, {n}, {-1}, n - 1);
    va2 = MakeView(a, NPVK_FLOAT64, {n}, {-1}, n - 1);
    vout2 = MakeView(out, NPVK_FLOAT64, {n}, {-1}, n - 1);
  }
  // The add walks its operands backwards: other elements of t than the
  // multiply writes at each index, so never fused with it, and the chain is
  // two kernels whatever NPVK_FUSE_MIN_ELEMENTS says.
  npvk_status Record(npvk_context ctx) {
    npvk_status st = npvk_binary(ctx, NPVK_OP_MULTIPLY, va.get(), vb.get(), vt.get());
    return st != NPVK_SUCCESS ? st
                              : npvk_binary(ctx, NPVK_OP_ADD, vt2.get(), va2.get(), vout2.get());
  }
  static double Expected(int64_t i) {
    return double(i) * 0.5 * (3.0 - double(i)) + double(i) * 0.5;
  }
};

TEST_F(Failures, SpecIsChecked) {
  EXPECT_EQ(npvk_fault_inject("compile"), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_fault_inject("compile:0"), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_fault_inject("melt:1"), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_fault_inject("alloc:2x"), NPVK_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(npvk_fault_inject("alloc:2,submit:1,device_lost:3,compile:9"), NPVK_SUCCESS);
  EXPECT_EQ(npvk_fault_inject(nullptr), NPVK_SUCCESS);
}

TEST_F(Failures, AllocFailsOnceWithOutOfDeviceMemory) {
  OwnedContext ctx(0, nullptr);
  ASSERT_EQ(ctx.status(), NPVK_SUCCESS);
  const uint64_t injected = FailureStats(ctx.get()).faults_injected;
  NPVK_ASSERT_OK(npvk_fault_inject("alloc:2"));
  npvk_buffer b1{}, b2{}, b3{};
  NPVK_ASSERT_OK(npvk_buffer_create(ctx.get(), 64, &b1));
  // The epoch moves with every failure counted, and only then.
  const uint64_t epoch = npvk_failure_epoch();
  EXPECT_EQ(npvk_failure_epoch(), epoch);
  EXPECT_EQ(npvk_buffer_create(ctx.get(), 64, &b2), NPVK_ERR_OUT_OF_DEVICE_MEMORY);
  EXPECT_NE(npvk_failure_epoch(), epoch);
  EXPECT_EQ(b2.id, 0u);  // nothing written on failure
  NPVK_ASSERT_OK(npvk_buffer_create(ctx.get(), 64, &b3));
  npvk_failure_stats f = FailureStats(ctx.get());
  EXPECT_EQ(f.alloc_failures, 1u);
  EXPECT_EQ(f.faults_injected, injected + 1);
  NPVK_EXPECT_OK(npvk_buffer_release(b1));
  NPVK_EXPECT_OK(npvk_buffer_release(b3));
}

// Without a host loop the C ABI reports the failure at the flush; the buffers
// keep their last good contents and the context stays usable.
TEST_F(Failures, CompileFailureIsReportedAndContextStaysUsable) {
  OwnedContext ctx(0, nullptr);
  ASSERT_EQ(ctx.status(), NPVK_SUCCESS);
  const int64_t n = 1000;
  Chain c(ctx.get(), n);
  NPVK_ASSERT_OK(npvk_fault_inject("compile:1"));
  NPVK_ASSERT_OK(c.Record(ctx.get()));
  const uint64_t epoch = npvk_failure_epoch();
  EXPECT_EQ(npvk_sync(ctx.get()), NPVK_ERR_COMPILE);
  EXPECT_NE(npvk_failure_epoch(), epoch);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c.host_out[i], -1.0) << i;
  npvk_failure_stats f = FailureStats(ctx.get());
  EXPECT_EQ(f.flush_failures, 1u);
  EXPECT_EQ(f.ops_lost, 2u);
  EXPECT_EQ(f.ops_replayed, 0u);
  EXPECT_EQ(f.last_status, uint32_t(NPVK_ERR_COMPILE));
  EXPECT_NE(std::string(f.last_message).find("injected"), std::string::npos);
  // The same work again compiles and runs.
  NPVK_ASSERT_OK(c.Record(ctx.get()));
  NPVK_ASSERT_OK(npvk_sync(ctx.get()));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c.host_out[i], Chain::Expected(i)) << i;
}

// With a host loop nothing is lost: each kind of flush failure replays the
// recorded ops on the host, in order, and the flush succeeds.
class FailuresReplay : public Failures, public ::testing::WithParamInterface<const char *> {};

// A context that may end with its device lost, which OwnedContext's final
// sync would report.
struct RawContext {
  npvk_context ctx{0};
  RawContext() { EXPECT_EQ(npvk_context_create(nullptr, &ctx), NPVK_SUCCESS); }
  ~RawContext() { EXPECT_EQ(npvk_context_release(ctx), NPVK_SUCCESS); }
  npvk_context get() const { return ctx; }
};

TEST_P(FailuresReplay, ResultsAreTheHostLoopsAndCounted) {
  RawContext ctx;
  NPVK_ASSERT_OK(npvk_context_set_host_loop(ctx.get(), HostLoop, nullptr));
  const int64_t n = 777;
  Chain c(ctx.get(), n);
  NPVK_ASSERT_OK(npvk_fault_inject(GetParam()));
  g_host_calls = 0;
  NPVK_ASSERT_OK(c.Record(ctx.get()));
  NPVK_ASSERT_OK(npvk_sync(ctx.get()));
  EXPECT_EQ(g_host_calls, 2);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c.host_out[i], Chain::Expected(i)) << i;
  npvk_failure_stats f = FailureStats(ctx.get());
  EXPECT_EQ(f.flush_failures, 1u);
  EXPECT_EQ(f.ops_replayed, 2u);
  EXPECT_EQ(f.ops_lost, 0u);
  const bool lost = std::string(GetParam()).find("device_lost") == 0;
  EXPECT_EQ(f.last_status,
            uint32_t(lost                                ? NPVK_ERR_DEVICE_LOST
                     : std::string(GetParam())[0] == 'c' ? NPVK_ERR_COMPILE
                                                         : NPVK_ERR_OUT_OF_DEVICE_MEMORY));
  if (lost) {
    // A lost device stays lost: later work is refused, not silently dropped.
    EXPECT_EQ(c.Record(ctx.get()), NPVK_ERR_DEVICE_LOST);
    EXPECT_EQ(npvk_sync(ctx.get()), NPVK_ERR_DEVICE_LOST);
  } else {
    g_host_calls = 0;
    NPVK_ASSERT_OK(c.Record(ctx.get()));
    NPVK_ASSERT_OK(npvk_sync(ctx.get()));
    EXPECT_EQ(g_host_calls, 0);  // the device again
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, FailuresReplay,
                         ::testing::Values("compile:1", "compile:2", "submit:1", "device_lost:1"));

// The replay walks strided and broadcast operands as the kernels would, and
// reports the FP exceptions the host loop raised, under the op's name.
TEST_F(Failures, ReplayOfStridedBroadcastOpAndFpErrors) {
  OwnedContext ctx(0, nullptr);
  ASSERT_EQ(ctx.status(), NPVK_SUCCESS);
  NPVK_ASSERT_OK(npvk_context_set_host_loop(ctx.get(), HostLoop, nullptr));
  // out(3, 4) = x[:, ::2] (x is 3x8) / y (4,), y broadcast over rows.
  std::vector<double> x(24), y = {1.0, 2.0, 0.0, -4.0};
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i) - 4.0;  // x[0][2] is 0: 0/0
  Buffer bx = MakeBuffer(ctx.get(), x), by = MakeBuffer(ctx.get(), y);
  Buffer bo = MakeBuffer(ctx.get(), std::vector<double>(12, 0.0));
  View vx = MakeView(bx, NPVK_FLOAT64, {3, 4}, {8, 2});
  View vy = MakeView1D(by, NPVK_FLOAT64, 4);
  View vo = MakeView(bo, NPVK_FLOAT64, {3, 4});
  NPVK_ASSERT_OK(npvk_fault_inject("submit:1"));
  NPVK_ASSERT_OK(npvk_binary(ctx.get(), NPVK_OP_TRUE_DIVIDE, vx.get(), vy.get(), vo.get()));
  NPVK_ASSERT_OK(npvk_sync(ctx.get()));
  std::vector<double> out = Read<double>(bo);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      double expect = x[size_t(r * 8 + c * 2)] / y[size_t(c)];
      if (std::isnan(expect))
        EXPECT_TRUE(std::isnan(out[size_t(r * 4 + c)]));
      else
        EXPECT_EQ(out[size_t(r * 4 + c)], expect) << r << "," << c;
    }
  npvk_fp_error errors[4];
  uint32_t count = 0;
  NPVK_ASSERT_OK(npvk_context_take_fp_errors(ctx.get(), errors, 4, &count));
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(errors[0].op, uint32_t(NPVK_OP_TRUE_DIVIDE));
  EXPECT_EQ(errors[0].flags, uint32_t(NPVK_FP_DIVIDE_BY_ZERO | NPVK_FP_INVALID));  // x/0, 0/0
  EXPECT_EQ(FailureStats(ctx.get()).ops_replayed, 1u);
}

// An op the host loop cannot run: the flush reports the failure, as without one.
TEST_F(Failures, ReplayNeedsEveryOpToHaveAHostLoop) {
  OwnedContext ctx(0, nullptr);
  ASSERT_EQ(ctx.status(), NPVK_SUCCESS);
  NPVK_ASSERT_OK(npvk_context_set_host_loop(ctx.get(), HostLoop, nullptr));
  Buffer b = MakeBuffer(ctx.get(), std::vector<double>(16, 4.0));
  View v = MakeView1D(b, NPVK_FLOAT64, 16);
  NPVK_ASSERT_OK(npvk_fault_inject("submit:1"));
  g_host_calls = 0;
  NPVK_ASSERT_OK(npvk_binary(ctx.get(), NPVK_OP_ADD, v.get(), v.get(), v.get()));
  NPVK_ASSERT_OK(npvk_unary(ctx.get(), NPVK_OP_SQRT, v.get(), v.get()));
  EXPECT_EQ(npvk_sync(ctx.get()), NPVK_ERR_OUT_OF_DEVICE_MEMORY);
  EXPECT_EQ(g_host_calls, 0);
  EXPECT_EQ(Read<double>(b), std::vector<double>(16, 4.0));  // the last good contents
  EXPECT_EQ(FailureStats(ctx.get()).ops_lost, 2u);
}

}  // namespace
}  // namespace npvk_test
