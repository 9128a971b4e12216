// The FP exceptions raised by work that ran (on the device or replayed on the
// host), one entry per recorded op (by serial) and method, until the caller
// takes them (npvk.h): per op, so that a caller can report each op's errors
// where it was issued (the shim: at the Python line of the call, once per
// call), or merged per op kind. They are kept per recording thread because a
// caller reports them under the error state of the thread that recorded the
// op (NumPy's is per thread): another thread's flush must not hand them to
// the wrong one.
#pragma once

#include <npvk/npvk.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

namespace npvk {

// The calling thread's number (1, 2, ... in order of first use), which each
// recorded op keeps (RecordedOp::thread).
inline uint32_t recording_thread() {
  static std::atomic<uint32_t> next{1};
  thread_local const uint32_t number = next.fetch_add(1);
  return number;
}

// Counts the FP exceptions noted by every context of the process, so that a
// caller that asks after every call (the shim's ufunc loops) can skip the
// context's lock while nothing new was noted (npvk_fp_error_epoch).
inline std::atomic<uint64_t> &fp_error_epoch() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}

class FpErrors {
 public:
  void note(npvk_op op, uint32_t flags, uint32_t thread, uint64_t serial) {
    if (!flags) return;
    fp_error_epoch().fetch_add(1, std::memory_order_release);
    const uint32_t id = uint32_t(op);
    // An op's notes come together (a replay may note it twice): only the
    // newest entries can be its own.
    for (size_t i = errors_.size(), seen = 0; i-- > 0 && seen < 4; ++seen) {
      Entry &e = errors_[i];
      if (e.thread == thread && e.serial == serial && e.op == id &&
          (e.flags & kMethod) == (flags & kMethod)) {
        e.flags |= flags;
        return;
      }
    }
    // Where nobody takes them (a C caller that never asks), memory stays
    // bounded: past kMaxKept entries they lose their serials and merge per
    // op kind, as the merged take gives them anyway.
    if (errors_.size() >= kMaxKept) merge_oldest();
    errors_.push_back({serial, id, flags, thread});
  }
  // A flush took every op up to `serial`: once it returns, their errors are
  // all noted.
  void ran_through(uint64_t serial) { ran_through_ = serial; }

  // Those of ops that `thread` recorded, or with `thread` 0 everyone's (one
  // entry per op kind and method).
  std::vector<npvk_fp_error> take(uint32_t thread) {
    std::vector<npvk_fp_error> taken;
    std::vector<Entry> kept;
    for (const Entry &e : errors_) {
      if (thread && e.thread != thread) {
        kept.push_back(e);
        continue;
      }
      auto it = std::find_if(taken.begin(), taken.end(), [&](const npvk_fp_error &t) {
        return t.op == e.op && (t.flags & kMethod) == (e.flags & kMethod);
      });
      if (it != taken.end())
        it->flags |= e.flags;
      else
        taken.push_back({e.op, e.flags});
    }
    errors_.swap(kept);
    return taken;
  }
  // Those of ops that `thread` recorded, one entry per op and method in the
  // order noted, at most `capacity` (the rest stay); `ran_through` receives
  // the serial up to which every op has run.
  std::vector<npvk_op_fp_error> take_ops(uint32_t thread, size_t capacity, uint64_t *ran_through) {
    std::vector<npvk_op_fp_error> taken;
    std::vector<Entry> kept;
    for (const Entry &e : errors_) {
      if ((thread && e.thread != thread) || taken.size() >= capacity)
        kept.push_back(e);
      else
        taken.push_back({e.serial, e.op, e.flags});
    }
    errors_.swap(kept);
    *ran_through = ran_through_;
    return taken;
  }

 private:
  static constexpr uint32_t kMethod = NPVK_FP_IN_REDUCE | NPVK_FP_IN_ACCUMULATE;
  static constexpr size_t kMaxKept = 1 << 16;
  struct Entry {
    uint64_t serial;  // 0: merged per op kind (merge_oldest)
    uint32_t op, flags, thread;
  };
  void merge_oldest() {
    std::vector<Entry> merged;
    for (const Entry &e : errors_) {
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Entry &m) {
        return m.thread == e.thread && m.op == e.op && (m.flags & kMethod) == (e.flags & kMethod);
      });
      if (it != merged.end())
        it->flags |= e.flags;
      else
        merged.push_back({0, e.op, e.flags, e.thread});
    }
    errors_.swap(merged);
  }
  std::vector<Entry> errors_;
  uint64_t ran_through_ = 0;
};

}  // namespace npvk
