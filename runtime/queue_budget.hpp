// How much device time the queued work may take before it runs. A flush runs
// on the thread that records, and nothing interrupts it: a program that never
// reads a result queued 4096 ops, which then ran as one flush of minutes on a
// CPU driver, and a Ctrl-C waited for all of it (196 s, issue 19). So the
// recorder flushes once the queue's estimated device time passes kSeconds.
//
// The estimate is per element and op, weighted by what the op costs: a float
// op that calls the float64 math library (exp, log, sin...) counts
// kMathWeight, others 1 (lavapipe, 2^21 float64 elements: add 1.2 ns, a fused
// chain 0.8 ns per op, exp 11, log 8, sin 43). Its rate starts at kStartRate
// and then follows the flushes, so a slower or faster device soon gets its
// own: down after any flush that ran faster (fixed costs only make a flush
// look slower), up after one long enough to measure, by kMaxRise at most (an
// odd flush, or an op whose cost the units miss, must not make every later op
// a flush of its own), never below kMinRate.
#pragma once

#include <algorithm>
#include <cstdint>

namespace npvk {

class QueueBudget {
 public:
  static constexpr double kSeconds = 1.0;
  static constexpr double kStartRate = 0.4e-9;  // seconds per weighted element
  static constexpr double kMinRate = kStartRate / 4;
  static constexpr double kMaxRise = 4.0;
  static constexpr double kMathWeight = 10.0;
  // Flushes shorter than this are mostly fixed costs (submit, wait).
  static constexpr double kMeasurable = 0.05;

  // One more op of `units` weighted elements (unit_count); whether the queue
  // should run now.
  bool add(double units) {
    queued_ += units;
    return queued_ * rate_ >= kSeconds;
  }
  // A queued op (a merged row) was replaced by one of `units` instead.
  bool replace(double old_units, double units) { return add(units - old_units); }
  // The queue is empty again.
  void clear() { queued_ = 0; }
  // A flush ran `units` in `seconds` on the device.
  void ran(double units, double seconds) {
    if (units <= 0 || seconds <= 0) return;
    const double measured = seconds / units;
    if (measured < rate_)
      rate_ = std::max(measured, kMinRate);
    else if (seconds >= kMeasurable)
      rate_ = std::min(measured, rate_ * kMaxRise);
  }
  double rate() const { return rate_; }

 private:
  double queued_ = 0;
  double rate_ = kStartRate;
};

}  // namespace npvk
