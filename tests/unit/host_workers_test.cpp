// The host path's pool (runtime/host/host_workers.hpp): every part runs once,
// whatever the count of parts and threads, errors come back to the caller,
// and a run that finds the pool busy runs all of its parts itself.
#include "runtime/host/host_workers.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace npvk {
namespace {

TEST(HostWorkers, EveryPartRunsOnceWhateverTheCounts) {
  for (int threads : {1, 2, 3, 5}) {
    HostWorkers pool(threads);
    for (int parts : {1, 2, 3, 4, 7}) {
      for (int round = 0; round < 20; ++round) {
        std::vector<std::atomic<int>> ran(static_cast<size_t>(parts));
        const int on_workers = pool.run(parts, [&](int part) { ++ran[size_t(part)]; });
        for (int part = 0; part < parts; ++part)
          EXPECT_EQ(ran[size_t(part)].load(), 1) << threads << " threads, " << parts << " parts";
        EXPECT_EQ(on_workers, std::min(parts, threads) - 1);
      }
    }
  }
}

TEST(HostWorkers, PartsRunOnOtherThreads) {
  HostWorkers pool(3);
  std::vector<std::thread::id> ids(3);
  pool.run(3, [&](int part) { ids[size_t(part)] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_NE(ids[1], ids[0]);
  EXPECT_NE(ids[2], ids[0]);
  EXPECT_NE(ids[1], ids[2]);
}

TEST(HostWorkers, AWorkersErrorReachesTheCaller) {
  HostWorkers pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run(2,
                        [&](int part) {
                          ++ran;
                          if (part == 1) throw std::runtime_error("part 1");
                        }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 2);
  // The pool is usable after it.
  ran = 0;
  pool.run(2, [&](int) { ++ran; });
  EXPECT_EQ(ran.load(), 2);
}

TEST(HostWorkers, ARunBesideAnotherRunsOnItsCaller) {
  HostWorkers pool(2);
  std::atomic<bool> inner_done{false};
  int inner_on_workers = -1;
  pool.run(2, [&](int part) {
    if (part != 0) return;
    // The pool is busy with this run: a run from another thread does its
    // parts itself rather than wait.
    std::thread other([&] { inner_on_workers = pool.run(2, [&](int) {}); });
    other.join();
    inner_done = true;
  });
  EXPECT_TRUE(inner_done.load());
  EXPECT_EQ(inner_on_workers, 0);
}

TEST(HostWorkers, SmallWorkIsNotSplit) {
  HostWorkers pool(4);
  EXPECT_EQ(pool.parts_for(1000), 1);
  EXPECT_EQ(pool.parts_for(HostWorkers::kMinPartWork * 2), 2);
  EXPECT_EQ(pool.parts_for(int64_t(1) << 40), 4);
}

}  // namespace
}  // namespace npvk
