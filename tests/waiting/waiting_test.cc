// Waiting as ranks see it (real processes under rccrun): many small operations between ranks that
// share one CPU finish (a waiter that spun while its partner needed the CPU would take
// milliseconds per call), and a rank whose partner arrives a second late gives its core back.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "rank_test.h"

namespace {

using Clock = std::chrono::steady_clock;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// RCC_TEST_OPERATIONS small allreduces and as many ping-pongs: run by ctest with the ranks
// pinned to one CPU (taskset -c 0) under a deadline of 20 s; each call then needs a few context
// switches (microseconds), where a waiter spinning while its partner needs the CPU would cost a
// time slice (milliseconds).
TEST(Waiting, ManySmallOperationsOnOneCpu) {
  const char* count_text = std::getenv("RCC_TEST_OPERATIONS");
  const int count = count_text != nullptr ? std::atoi(count_text) : 1000;
  float in = static_cast<float>(ranktest::rank() + 1), out = 0;
  const float expected = static_cast<float>(ranktest::size() * (ranktest::size() + 1) / 2);
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), &in, &out, 1, RCC_FLOAT32, RCC_SUM));
    ASSERT_EQ(out, expected) << "allreduce " << i;
  }
  if (ranktest::size() >= 2 && ranktest::rank() < 2) {
    const int peer = 1 - ranktest::rank();
    uint64_t token = 0;
    for (int i = 0; i < count; ++i) {
      if (ranktest::rank() == 0) {
        token = static_cast<uint64_t>(i);
        RCC_ASSERT_OK(rcc_send(ranktest::comm(), &token, 1, RCC_UINT64, peer, 5));
        RCC_ASSERT_OK(rcc_recv(ranktest::comm(), &token, 1, RCC_UINT64, peer, 5));
        ASSERT_EQ(token, static_cast<uint64_t>(i) + 1);
      } else {
        RCC_ASSERT_OK(rcc_recv(ranktest::comm(), &token, 1, RCC_UINT64, peer, 5));
        ++token;
        RCC_ASSERT_OK(rcc_send(ranktest::comm(), &token, 1, RCC_UINT64, peer, 5));
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (ranktest::rank() == 0) std::printf("%d allreduces and ping-pongs in %.3f s\n", count, seconds);
}

// Rank 0 waits while the others sleep for a second before joining: its CPU time during the wait
// stays under 10 % of it (the wait spins for ~100 us, then sleeps and wakes only to look at the
// peers' health). Checked for a collective and a receive.
TEST(Waiting, AWaiterGivesItsCoreBack) {
  if (ranktest::size() < 2) GTEST_SKIP() << "needs two ranks";
  constexpr double kLateSeconds = 1.0;
  int value = 1, sum = 0;
  for (int round = 0; round < 2; ++round) {
    const double cpu_before = thread_cpu_seconds();
    const auto wall_before = Clock::now();
    if (ranktest::rank() != 0) std::this_thread::sleep_for(std::chrono::duration<double>(kLateSeconds));
    if (round == 0) {
      RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), &value, &sum, 1, RCC_INT32, RCC_SUM));
      EXPECT_EQ(sum, ranktest::size());
    } else if (ranktest::rank() == 0) {
      RCC_ASSERT_OK(rcc_recv(ranktest::comm(), &sum, 1, RCC_INT32, 1, 9));
    } else if (ranktest::rank() == 1) {
      RCC_ASSERT_OK(rcc_send(ranktest::comm(), &value, 1, RCC_INT32, 0, 9));
    }
    const double cpu = thread_cpu_seconds() - cpu_before;
    const double wall = std::chrono::duration<double>(Clock::now() - wall_before).count();
    if (ranktest::rank() == 0) {
      std::printf("%s: waited %.3f s using %.1f ms of CPU\n", round == 0 ? "allreduce" : "recv", wall, cpu * 1e3);
      EXPECT_GT(wall, 0.9 * kLateSeconds) << "the wait did not wait for the late rank";
      EXPECT_LT(cpu, 0.10 * wall) << (round == 0 ? "allreduce" : "recv") << ": the waiter kept its core";
    }
  }
}

}  // namespace
