// The FP exceptions raised by work that ran (on the device or replayed on the
// host), one entry per op, method and recording thread, until the caller
// takes them (npvk.h). They are kept per thread because a caller reports them
// under the error state of the thread that recorded the op (NumPy's is per
// thread): another thread's flush must not hand them to the wrong one.
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
  void note(npvk_op op, uint32_t flags, uint32_t thread) {
    if (!flags) return;
    fp_error_epoch().fetch_add(1, std::memory_order_release);
    const uint32_t id = uint32_t(op);
    constexpr uint32_t kMethod = NPVK_FP_IN_REDUCE | NPVK_FP_IN_ACCUMULATE;
    auto it = std::find_if(errors_.begin(), errors_.end(), [&](const Entry &e) {
      return e.thread == thread && e.error.op == id &&
             (e.error.flags & kMethod) == (flags & kMethod);
    });
    if (it != errors_.end())
      it->error.flags |= flags;
    else
      errors_.push_back({{id, flags}, thread});
  }
  // Those of ops that `thread` recorded, or with `thread` 0 everyone's (one
  // entry per op and method).
  std::vector<npvk_fp_error> take(uint32_t thread) {
    std::vector<npvk_fp_error> taken;
    std::vector<Entry> kept;
    constexpr uint32_t kMethod = NPVK_FP_IN_REDUCE | NPVK_FP_IN_ACCUMULATE;
    for (const Entry &e : errors_) {
      if (thread && e.thread != thread) {
        kept.push_back(e);
        continue;
      }
      auto it = std::find_if(taken.begin(), taken.end(), [&](const npvk_fp_error &t) {
        return t.op == e.error.op && (t.flags & kMethod) == (e.error.flags & kMethod);
      });
      if (it != taken.end())
        it->flags |= e.error.flags;
      else
        taken.push_back(e.error);
    }
    errors_.swap(kept);
    return taken;
  }

 private:
  struct Entry {
    npvk_fp_error error;
    uint32_t thread;
  };
  std::vector<Entry> errors_;
};

}  // namespace npvk
