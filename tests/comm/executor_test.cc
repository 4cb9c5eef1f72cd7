// The executor that orders a communicator's collectives (src/comm/executor.h), in one process:
// issue order is run order, a blocking call waits for the queued ones, callers waiting to run on
// their own thread are let in, and a blocking call does not wake the idle worker thread (each such
// wake-up was a futex call and a context switch per collective once any nonblocking one had run).
#include "comm/executor.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace rcc {
namespace {

// The voluntary context switches of this process's thread named `name` (-1 when there is none).
long voluntary_switches_of(const std::string& name) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  long switches = -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    std::string comm;
    std::getline(std::ifstream(task + "/comm"), comm);
    if (comm != name) continue;
    std::ifstream status(task + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) switches = std::stol(line.substr(24));
    }
  }
  closedir(dir);
  return switches;
}

TEST(Executor, RunsInIssueOrder) {
  Executor executor;
  std::vector<int> order;
  std::vector<std::shared_ptr<Task>> tasks;
  for (int i = 0; i < 20; ++i) {
    if (i % 3 == 2) {
      ASSERT_EQ(executor.run_now([&] {
        order.push_back(i);
        return RCC_SUCCESS;
      }),
                RCC_SUCCESS);
    } else {
      tasks.push_back(executor.submit([&order, i] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        order.push_back(i);
        return RCC_SUCCESS;
      }));
    }
  }
  for (const auto& task : tasks) EXPECT_EQ(executor.wait(task), RCC_SUCCESS);
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(Executor, CallersWaitingToRunInlineAreLetIn) {
  Executor executor;
  std::atomic<int> ran{0};
  auto slow = executor.submit([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return RCC_SUCCESS;
  });
  // Four threads queue up behind the task and behind each other's inline runs.
  std::vector<std::future<Status>> callers;
  for (int t = 0; t < 4; ++t) {
    callers.push_back(std::async(std::launch::async, [&] {
      return executor.run_now([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ++ran;
        return RCC_SUCCESS;
      });
    }));
  }
  for (auto& caller : callers) {
    ASSERT_EQ(caller.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "a caller was never let in";
    EXPECT_EQ(caller.get(), RCC_SUCCESS);
  }
  EXPECT_EQ(ran.load(), 4);
  EXPECT_EQ(executor.wait(slow), RCC_SUCCESS);
}

TEST(Executor, BlockingCallsLeaveTheIdleWorkerAsleep) {
  Executor executor;
  auto task = executor.submit([] { return RCC_SUCCESS; });  // starts the worker thread
  ASSERT_EQ(executor.wait(task), RCC_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the worker goes back to sleep
  const long before = voluntary_switches_of("rcc-collective");
  ASSERT_GE(before, 0) << "no thread named rcc-collective";
  constexpr int kCalls = 2000;
  // Each call lasts ~20 us, as a small collective does: time for a woken worker to run and sleep again.
  const auto busy = [] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < end) {
    }
    return RCC_SUCCESS;
  };
  for (int i = 0; i < kCalls; ++i) ASSERT_EQ(executor.run_now(busy), RCC_SUCCESS);
  const long woken = voluntary_switches_of("rcc-collective") - before;
  // Woken for every call this was kCalls; asleep it is 0 (a few allowed for anything else).
  EXPECT_LT(woken, kCalls / 20) << "the idle worker was woken " << woken << " times by " << kCalls << " blocking calls";
  // The worker still runs what is submitted after them.
  task = executor.submit([] { return RCC_SUCCESS; });
  EXPECT_EQ(executor.wait(task), RCC_SUCCESS);
}

}  // namespace
}  // namespace rcc
