// The context lock. It counts, per thread, how many such locks the thread
// holds, so the fault handler can tell a fault inside npvk's own critical
// sections (a bug it must not try to handle, or it would deadlock) from a
// fault of the host program.
#pragma once

#include <mutex>
#include <new>

namespace npvk {

class TrackedMutex {
 public:
  void lock() {
    mutex_.lock();
    ++depth();
  }
  bool try_lock() {
    if (!mutex_.try_lock()) return false;
    ++depth();
    return true;
  }
  void unlock() {
    --depth();
    mutex_.unlock();
  }
  // In the child of a fork whose parent held the lock across the fork: the
  // lock cannot be released there (its owner's thread id is the parent's), so
  // it is made anew, unlocked.
  void reset_in_forked_child() {
    new (&mutex_) std::recursive_mutex();
    depth() = 0;
  }
  // How many TrackedMutex locks the calling thread holds.
  static int held_by_this_thread() { return depth(); }

 private:
  static int &depth() {
    thread_local int d = 0;
    return d;
  }
  std::recursive_mutex mutex_;
};

using ContextLock = std::lock_guard<TrackedMutex>;

}  // namespace npvk
