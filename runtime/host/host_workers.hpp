// The host path's threads: NumPy's loops, which NumPy itself runs on one
// core, run on every core this process may use when npvk replays a flush on
// the host (fused_replay.cpp, host_executor.cpp). Elementwise loops give the same
// bits whichever thread runs which elements; reductions are not split.
//
// The parts of a run touch only pages that are open while a flush runs, as
// the device driver's own threads do (ManagedMemory::before_flush): a worker
// that faulted on a closed page would wait for the context lock its caller
// holds.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace npvk {

class HostWorkers {
 public:
  // A pool of `threads` threads, the caller's included (the process's is
  // shared(); tests make their own).
  explicit HostWorkers(int threads) : threads_(std::max(1, threads)) {}
  ~HostWorkers();
  HostWorkers(const HostWorkers &) = delete;
  HostWorkers &operator=(const HostWorkers &) = delete;

  // The process's pool, its threads started at the first run that splits.
  // The child of a fork gets a pool of its own (the parent's threads are not
  // there).
  static HostWorkers &shared();
  // Threads started by pools of this process, all of them npvk's own: the
  // managed memory's count of the program's threads leaves them out.
  static int threads_started() { return started_.load(std::memory_order_relaxed); }

  // How many threads a run may use, the caller's included (NPVK_HOST_THREADS).
  int threads() const { return threads_; }
  // Parts worth making of `work` element-steps: one per thread, and none
  // smaller than kMinPartWork.
  int parts_for(int64_t work) const;
  // The same for the process's pool, without asking for it (a lock and a
  // getpid) where the work is too small to split: a host run calls this
  // once per op or kernel, however small.
  static int parts_of(int64_t work) {
    return work < 2 * kMinPartWork ? 1 : shared().parts_for(work);
  }
  // Runs task(0) .. task(parts - 1), part 0 on the caller, and returns when
  // all have; an exception thrown by a part is rethrown here. While another
  // run is in flight (another context's flush), all parts run on the caller.
  // Returns how many parts the workers ran.
  int run(int parts, const std::function<void(int part)> &task);
  // run() on the process's pool, or task(0) alone for one part.
  template <typename Task>
  static int run_parts(int parts, const Task &task) {
    if (parts <= 1) {
      task(0);
      return 0;
    }
    return shared().run(parts, task);
  }

  // Element-steps (elements times loop calls over them) below which a part
  // costs more to hand over than it saves: waking a thread costs 10-50 us in
  // a guest, and NumPy's add loop moves 2^17 float64 elements in ~100 us.
  static constexpr int64_t kMinPartWork = int64_t(1) << 17;

 private:
  void start();
  void work(int index);

  const int threads_;
  std::mutex run_mutex_;  // one run at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)> *task_ = nullptr;
  int parts_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  int pending_ = 0;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
  static inline std::atomic<int> started_{0};
};

}  // namespace npvk
