// QueueBudget (runtime/queue_budget.hpp): when queued work has about a second
// of estimated device time, and how the estimate's rate follows the flushes.
#include "runtime/queue_budget.hpp"

#include <gtest/gtest.h>

namespace npvk {
namespace {

// Weighted elements that take `seconds` at the budget's current rate.
double UnitsFor(const QueueBudget &b, double seconds) {
  return seconds / b.rate();
}

TEST(QueueBudget, FullAtASecondOfEstimatedWork) {
  QueueBudget b;
  EXPECT_DOUBLE_EQ(b.rate(), QueueBudget::kStartRate);
  EXPECT_FALSE(b.add(UnitsFor(b, 0.6)));
  EXPECT_TRUE(b.add(UnitsFor(b, 0.6)));
  b.clear();
  EXPECT_FALSE(b.add(UnitsFor(b, 0.6)));
  // A merged row that grew past the budget fills it too.
  EXPECT_TRUE(b.replace(UnitsFor(b, 0.6), UnitsFor(b, 1.2)));
}

TEST(QueueBudget, RateFollowsTheFlushes) {
  QueueBudget b;
  const double start = QueueBudget::kStartRate;
  b.ran(1e6, 0.01);  // slower, but mostly fixed costs: not a rate
  EXPECT_DOUBLE_EQ(b.rate(), start);
  b.ran(1e8, 0.5);  // 5 ns per unit, a slower device: up by kMaxRise at a time
  EXPECT_DOUBLE_EQ(b.rate(), start * QueueBudget::kMaxRise);
  b.ran(1e8, 0.5);
  b.ran(1e8, 0.5);
  EXPECT_DOUBLE_EQ(b.rate(), 5e-9);
  EXPECT_TRUE(b.add(2.1e8));
  b.clear();
  b.ran(1e6, 0.002);  // faster, short or not: 2 ns per unit
  EXPECT_DOUBLE_EQ(b.rate(), 2e-9);
  b.ran(1e9, 0.01);  // never below kMinRate
  EXPECT_DOUBLE_EQ(b.rate(), QueueBudget::kMinRate);
  EXPECT_FALSE(b.add(0.9 / QueueBudget::kMinRate));
  EXPECT_TRUE(b.add(0.2 / QueueBudget::kMinRate));
}

}  // namespace
}  // namespace npvk
