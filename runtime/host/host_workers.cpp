#include "runtime/host/host_workers.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "base/options.hpp"

namespace npvk {
namespace {

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

HostWorkers &HostWorkers::shared() {
  static std::mutex made;
  static HostWorkers *pool = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(made);
  // Never destroyed: a flush at exit may run after static destructors, and
  // the workers wait on its members. In a fork's child the parent's pool is
  // left as it was (its mutexes may have been held by threads that are gone).
  if (!pool || owner != getpid()) {
    const int wanted = process_options().host_threads;
    pool = new HostWorkers(wanted > 0 ? wanted : usable_cores());
    owner = getpid();
  }
  return *pool;
}

HostWorkers::~HostWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    ++generation_;
  }
  wake_.notify_all();
  for (std::thread &t : workers_) t.join();
  started_.fetch_sub(int(workers_.size()), std::memory_order_relaxed);
}

int HostWorkers::parts_for(int64_t work) const {
  return int(std::clamp<int64_t>(work / kMinPartWork, 1, threads_));
}

void HostWorkers::start() {
  // Asynchronous signals stay with the program's threads: a handler (Python's
  // SIGINT) run on a worker would run at a moment the program never sees.
  sigset_t all, saved;
  sigfillset(&all);
  for (int sync : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigdelset(&all, sync);
  pthread_sigmask(SIG_BLOCK, &all, &saved);
  for (int i = 1; i < threads_; ++i) {
    try {
      workers_.emplace_back([this, i] { work(i); });
      started_.fetch_add(1, std::memory_order_relaxed);
    } catch (const std::system_error &) {
      break;  // no more threads: the parts that would have gone there run on the caller
    }
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

int HostWorkers::run(int parts, const std::function<void(int)> &task) {
  std::unique_lock<std::mutex> running(run_mutex_, std::try_to_lock);
  if (parts > 1 && running.owns_lock() && workers_.empty()) start();
  const int on_workers = running.owns_lock() ? std::min(parts - 1, int(workers_.size())) : 0;
  if (on_workers > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    parts_ = on_workers;
    pending_ = on_workers;
    error_ = nullptr;
    ++generation_;
    wake_.notify_all();
  }
  std::exception_ptr mine;
  auto run_part = [&](int part) {
    try {
      task(part);
    } catch (...) {
      if (!mine) mine = std::current_exception();
    }
  };
  // The caller's share: part 0, and those no worker takes.
  run_part(0);
  for (int part = on_workers + 1; part < parts; ++part) run_part(part);
  if (on_workers > 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    if (!mine) mine = error_;
  }
  if (mine) std::rethrow_exception(mine);
  return on_workers;
}

void HostWorkers::work(int index) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return generation_ != seen; });
    seen = generation_;
    if (stopping_) return;
    if (index > parts_) continue;  // not needed this time
    const std::function<void(int)> *task = task_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace npvk
