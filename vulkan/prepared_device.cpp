#include "vulkan/prepared_device.hpp"

#include <pthread.h>
#include <strings.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.hpp"

namespace npvk::vk {
namespace {

struct Preparation {
  std::mutex mutex;
  std::condition_variable finished_cv;
  std::condition_variable wake_cv;  // ends a delayed start's wait early
  bool started = false;
  bool finished = false;
  bool creating = false;   // the thread has begun loading the driver
  bool go = false;         // start now: no more delay
  bool cancelled = false;  // ended before it began: make nothing
  pid_t pid = 0;           // the process that started it
  bool validation = false;
  DisabledFeatures disabled;
  std::unique_ptr<Device> device;  // null when it failed, or once taken
};

// Never destroyed: its thread may outlive static destruction's start.
Preparation &preparation() {
  static Preparation *p = new Preparation();
  return *p;
}

bool same(const DisabledFeatures &a, const DisabledFeatures &b) {
  return a.float64 == b.float64 && a.int64 == b.int64 && a.unknown == b.unknown;
}

// Blocks until the preparation's thread is done; one still waiting out its
// delay is cancelled and makes nothing, so an exit does not wait for a
// driver it never needed.
void wait_for_preparation() {
  Preparation &p = preparation();
  std::unique_lock<std::mutex> lock(p.mutex);
  if (p.pid != getpid()) return;
  if (p.started && !p.creating) {
    p.cancelled = true;
    p.wake_cv.notify_all();
  }
  p.finished_cv.wait(lock, [&] { return !p.started || p.finished; });
}

// Fork: a child must not inherit the driver's locks mid-creation. The lock
// is held across fork(), so a thread still waiting out its delay cannot
// begin meanwhile; one that began is waited for. (A waiting thread holds
// nothing, and the child, which has no such thread, makes its own device.)
void before_fork() {
  Preparation &p = preparation();
  std::unique_lock<std::mutex> lock(p.mutex);
  if (p.pid == getpid())
    p.finished_cv.wait(lock, [&] { return !p.started || !p.creating || p.finished; });
  lock.release();  // held across fork(); after_fork unlocks it
}

void after_fork() {
  preparation().mutex.unlock();
}

// The Vulkan loader and the driver read environment variables (getenv)
// while the thread makes the device, and the program may set some meanwhile
// (scikit-learn sets two when imported). glibc's setenv reallocates, and so
// frees, the block of variables it made itself, under a getenv that is
// reading it. Giving the process a copy of the block that nothing frees makes
// the next setenv allocate a new block instead: a getenv already reading
// this one stays safe. (Later setenv calls reallocate that new block again;
// the window is one setenv long, and the same as for any threaded program.)
void keep_environment_block() {
  size_t count = 0;
  while (environ[count]) ++count;
  // Never freed, and kept reachable here once environ moves on.
  static auto *kept = new std::vector<char **>();
  auto **copy = static_cast<char **>(std::calloc(count + 1, sizeof(char *)));
  if (!copy) return;
  for (size_t i = 0; i < count; ++i) copy[i] = environ[i];
  kept->push_back(copy);
  environ = copy;
}

}  // namespace

void prepare_device(const char *selector, bool validation, uint32_t delay_ms) {
  Preparation &p = preparation();
  const Options env = Options::from_environment();
  // Test-only feature masks that warn are left to the context (warned once).
  if (env.prepare_device == PrepareDevice::Never || !env.disable_features.unknown.empty()) return;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.started) {
      // A delayed start begins now (a call from another process, a fork's
      // child, finds its parent's preparation and leaves it).
      if (p.pid == getpid() && delay_ms == 0) {
        p.go = true;
        p.wake_cv.notify_all();
      }
      return;
    }
    p.started = true;
    p.creating = p.cancelled = false;
    p.go = delay_ms == 0;
    p.pid = getpid();
    p.validation = validation || env.validation;  // as a context decides
    p.disabled = env.disable_features;
  }
  // What the choice depends on is read here: the thread reads no variable
  // of npvk's (the program may set them meanwhile; getenv races setenv).
  std::string chosen = selector && *selector ? selector : env.device;
  long rank = -1;
  try {
    rank = local_rank();
  } catch (...) {
    chosen = "";  // a bad rank variable: the context reports it
    rank = -2;
  }
  const bool by_rank = chosen.empty() || strcasecmp(chosen.c_str(), "local-rank") == 0;
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(before_fork, after_fork, after_fork); });
  keep_environment_block();
  const bool with_layer = validation || env.validation;  // as p.validation
  const DisabledFeatures disabled = env.disable_features;
  std::thread([&p, chosen, rank, by_rank, with_layer, disabled, delay_ms] {
    {
      std::unique_lock<std::mutex> lock(p.mutex);
      p.wake_cv.wait_for(lock, std::chrono::milliseconds(delay_ms),
                         [&] { return p.go || p.cancelled; });
      if (p.cancelled) {
        p.finished = true;
        p.finished_cv.notify_all();
        return;
      }
      p.creating = true;
    }
    std::unique_ptr<Device> device;
    try {
      require(rank != -2, NPVK_ERR_NO_DEVICE, "bad local rank");
      auto instance = std::make_unique<Instance>(with_layer, disabled);
      const uint32_t index =
          by_rank ? instance->select_for_rank(rank) : instance->select(chosen.c_str(), "");
      device = std::make_unique<Device>(std::move(instance), index);
    } catch (...) {
      // The context meets the same failure and reports it.
    }
    std::lock_guard<std::mutex> lock(p.mutex);
    p.device = std::move(device);
    p.finished = true;
    p.finished_cv.notify_all();
  }).detach();
}

void end_preparation() {
  wait_for_preparation();
  std::unique_ptr<Device> untaken;
  {
    Preparation &p = preparation();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.pid != getpid()) return;
    untaken = std::move(p.device);
    p.started = p.finished = false;  // a later npvk_device_prepare starts again
  }
}

std::unique_ptr<Device> take_prepared_device(bool validation, const DisabledFeatures &disabled,
                                             const char *selector,
                                             const std::string &env_selector) {
  Preparation &p = preparation();
  std::unique_lock<std::mutex> lock(p.mutex);
  if (!p.started || p.pid != getpid()) return nullptr;
  p.go = true;  // wanted now: no more delay
  p.wake_cv.notify_all();
  p.finished_cv.wait(lock, [&] { return p.finished; });
  // Taken or not, it is over: a later npvk_device_prepare starts again, and
  // a device this context does not take is freed when `device` goes.
  p.started = p.finished = false;
  std::unique_ptr<Device> device = std::move(p.device);
  if (!device || p.validation != validation || !same(p.disabled, disabled)) return nullptr;
  // The choice as the context would make it now, from the same device list.
  uint32_t index = 0;
  try {
    index = device->instance().select(selector, env_selector);
  } catch (...) {
    return nullptr;
  }
  if (index != device->info().index) return nullptr;
  return device;
}

}  // namespace npvk::vk
