// The device memory budget (NPVK_DEVICE_MEMORY_BUDGET): mirrored buffers whose device copies
// do not all fit are evicted to their host memory and uploaded again at their next use, and a
// batch that alone needs more than the budget is split. Results must be those of the same
// arithmetic on the host, exactly, and the device copies held must never exceed the budget.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "npvk_test_support.hpp"

namespace npvk_test {
namespace {

// ScopedEnv (npvk_test_support.hpp): the budget is read when a context is created,
// NPVK_ZERO_COPY at every npvk_buffer_wrap_host.

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

constexpr int64_t kElements = 32768;  // 256 KiB of float64 per array
constexpr uint64_t kBytes = kElements * sizeof(double);

// Arrays of wrapped host memory, mirrored, in a context of the given budget.
class Budget : public ::testing::Test {
 protected:
  void Start(int arrays, const char *budget) {
    budget_env_ = std::make_unique<ScopedEnv>("NPVK_DEVICE_MEMORY_BUDGET", budget);
    own_ = std::make_unique<OwnedContext>(0u, nullptr);
    ASSERT_NE(own_->get().id, 0u);
    for (int i = 0; i < arrays; ++i) {
      mem_.emplace_back(static_cast<double *>(std::aligned_alloc(4096, kBytes)));
      ASSERT_TRUE(mem_.back());
      host_.emplace_back(kElements);
      for (int64_t j = 0; j < kElements; ++j)
        mem_.back().get()[j] = host_.back()[size_t(j)] = double(j % 1000) * 0.125 + i;
      npvk_buffer raw{0};
      NPVK_ASSERT_OK(npvk_buffer_wrap_host(ctx(), mem_.back().get(), kBytes, &raw));
      buffers_.emplace_back(raw);
      int zero_copy = 1;
      NPVK_ASSERT_OK(npvk_buffer_is_zero_copy(buffers_.back().get(), &zero_copy));
      ASSERT_EQ(zero_copy, 0) << "NPVK_ZERO_COPY=0 must give mirrored buffers";
      views_.push_back(MakeView1D(buffers_.back(), NPVK_FLOAT64, kElements));
    }
  }

  // x[i] = x[i] * 0.5 + x[(i + 1) % n] on the device (queued) and on the host.
  void Step(size_t i) {
    const size_t next = (i + 1) % views_.size();
    View half = MakeScalar(ctx(), 0.5);
    NPVK_ASSERT_OK(
        npvk_binary(ctx(), NPVK_OP_MULTIPLY, views_[i].get(), half.get(), views_[i].get()));
    NPVK_ASSERT_OK(
        npvk_binary(ctx(), NPVK_OP_ADD, views_[i].get(), views_[next].get(), views_[i].get()));
    for (int64_t j = 0; j < kElements; ++j)
      host_[i][size_t(j)] = host_[i][size_t(j)] * 0.5 + host_[next][size_t(j)];
  }

  void ExpectResults() {
    for (size_t i = 0; i < buffers_.size(); ++i) {
      // Half read through npvk_buffer_read (an evicted buffer reads its host memory), half
      // synced into the wrapped memory.
      std::vector<double> got(kElements);
      if (i % 2) {
        got = Read<double>(buffers_[i]);
      } else {
        NPVK_ASSERT_OK(npvk_buffer_sync(buffers_[i].get()));
        std::memcpy(got.data(), mem_[i].get(), kBytes);
      }
      for (int64_t j = 0; j < kElements; ++j)
        ASSERT_EQ(got[size_t(j)], host_[i][size_t(j)]) << "array " << i << " at " << j;
    }
  }

  void TearDown() override {
    EXPECT_EQ(npvk_fault_inject(""), NPVK_SUCCESS);
    views_.clear();
    buffers_.clear();
    if (own_) own_->Release();  // the memory must outlive the buffers
  }

  npvk_context ctx() const { return own_->get(); }

  ScopedEnv mirrored_{"NPVK_ZERO_COPY", "0"};
  std::unique_ptr<ScopedEnv> budget_env_;
  std::unique_ptr<OwnedContext> own_;
  std::vector<std::unique_ptr<double, FreeDeleter>> mem_;
  std::vector<std::vector<double>> host_;
  std::vector<Buffer> buffers_;
  std::vector<View> views_;
};

TEST_F(Budget, WorkingSetOfTenArraysInABudgetOfFourEvictsAndStaysWithin) {
  Start(10, "1M");
  const npvk_stats first = GetStats(ctx());
  ASSERT_EQ(first.device_memory_budget, 1u << 20);
  EXPECT_LE(first.device_bytes_held, first.device_memory_budget);
  for (int step = 0; step < 20; ++step) {
    for (size_t i = 0; i < views_.size(); ++i) Step(i);
    const npvk_stats s = GetStats(ctx());
    ASSERT_LE(s.device_bytes_held, s.device_memory_budget) << "after step " << step;
  }
  ExpectResults();
  const npvk_stats s = GetStats(ctx());
  EXPECT_GT(s.evictions, 0u);
  EXPECT_GE(s.bytes_evicted, s.evictions * kBytes);
  // One step's queued work uses all ten arrays: it must have been split.
  EXPECT_GT(s.budget_flushes, 0u);
  EXPECT_EQ(s.budget_overruns, 0u);
  EXPECT_LE(s.device_bytes_peak, s.device_memory_budget);
}

// npvk_buffer_write and npvk_buffer_host_modified on buffers that may be evicted: written data
// must survive a later eviction (downloaded), announced host data must be what the next op sees.
TEST_F(Budget, WritesAndHostChangesReachEvictedBuffers) {
  Start(10, "1M");
  for (size_t i = 0; i < views_.size(); ++i) Step(i);
  for (size_t i = 0; i < views_.size(); ++i) {
    for (int64_t j = 0; j < kElements; ++j) host_[i][size_t(j)] = double(j % 77) - double(i);
    if (i % 2) {
      NPVK_ASSERT_OK(npvk_buffer_write(buffers_[i].get(), 0, host_[i].data(), kBytes));
    } else {
      NPVK_ASSERT_OK(npvk_buffer_sync(buffers_[i].get()));  // no pending result overwrites it
      std::memcpy(mem_[i].get(), host_[i].data(), kBytes);
      NPVK_ASSERT_OK(npvk_buffer_host_modified(buffers_[i].get()));
    }
  }
  for (int step = 0; step < 2; ++step)
    for (size_t i = 0; i < views_.size(); ++i) Step(i);
  ExpectResults();
  const npvk_stats s = GetStats(ctx());
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.device_bytes_peak, s.device_memory_budget);
}

// Making an evicted buffer's copy again can fail like any allocation: the op reports
// NPVK_ERR_OUT_OF_DEVICE_MEMORY and records nothing, and the next try works.
TEST_F(Budget, AFailedReloadRecordsNothing) {
  Start(10, "1M");  // each wrap evicted the oldest idle copy: array 0's is gone
  NPVK_ASSERT_OK(npvk_fault_inject("alloc:1"));
  View half = MakeScalar(ctx(), 0.5);
  EXPECT_EQ(npvk_binary(ctx(), NPVK_OP_MULTIPLY, views_[0].get(), half.get(), views_[0].get()),
            NPVK_ERR_OUT_OF_DEVICE_MEMORY);
  npvk_failure_stats f{};
  f.struct_size = sizeof f;
  NPVK_ASSERT_OK(npvk_context_get_failure_stats(ctx(), &f));
  EXPECT_EQ(f.alloc_failures, 1u);
  NPVK_ASSERT_OK(npvk_fault_inject(""));
  for (int step = 0; step < 2; ++step)
    for (size_t i = 0; i < views_.size(); ++i) Step(i);
  ExpectResults();
}

TEST_F(Budget, AnOpWhoseOperandsExceedTheBudgetRunsOverItAndIsCounted) {
  // Two arrays per op, room for one and a half.
  Start(3, "384K");
  for (int step = 0; step < 3; ++step)
    for (size_t i = 0; i < views_.size(); ++i) Step(i);
  ExpectResults();
  const npvk_stats s = GetStats(ctx());
  EXPECT_GT(s.budget_overruns, 0u);
  EXPECT_GT(s.evictions, 0u);
}

TEST_F(Budget, WithoutTheVariableTheDeviceBudgetHoldsEverything) {
  Start(3, nullptr);
  for (size_t i = 0; i < views_.size(); ++i) Step(i);
  ExpectResults();
  const npvk_stats s = GetStats(ctx());
  EXPECT_GT(s.device_memory_budget, 3 * kBytes);
  EXPECT_EQ(s.device_bytes_held, 3 * kBytes);
  EXPECT_EQ(s.evictions, 0u);
}

}  // namespace
}  // namespace npvk_test
