// The wait policy's decisions (base/wait.h): when a waiter spins, yields and sleeps, that a peer
// on the same CPU makes it yield at once, that a waiter moves off a shared CPU and keeps its own
// affinity mask, and that crowded ranks spread evenly over their CPUs.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <map>
#include <thread>

#include "base/cpu.h"
#include "base/wait.h"

namespace {

using rcc::Backoff;
using rcc::WaitPolicy;
using Clock = std::chrono::steady_clock;

// What a waiter does over `duration` of idle polls: the first time it yields and sleeps.
struct Timeline {
  double first_yield_us = -1, first_sleep_us = -1;
};

Timeline run(Backoff& backoff, std::chrono::microseconds duration, bool peer_shares_cpu = false) {
  Timeline t;
  const auto start = Clock::now();
  while (Clock::now() - start < duration) {
    const Backoff::Next next = backoff.idle(peer_shares_cpu);
    const double at = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (next == Backoff::Next::kYield && t.first_yield_us < 0) t.first_yield_us = at;
    if (next == Backoff::Next::kSleep) {
      t.first_sleep_us = at;
      break;
    }
  }
  return t;
}

TEST(WaitPolicy, ACoreOfItsOwnSpinsThenYieldsThenSleeps) {
  WaitPolicy policy;
  policy.crowded = false;
  Backoff backoff(policy);
  const Timeline t = run(backoff, std::chrono::milliseconds(50));
  EXPECT_GE(t.first_yield_us, 0.9 * WaitPolicy::kSpinTime.count()) << "yielded before spinning kSpinTime";
  EXPECT_GE(t.first_sleep_us, 0.9 * WaitPolicy::kYieldUntil.count());
  EXPECT_LT(t.first_sleep_us, 5000) << "still awake long after kYieldUntil";
}

TEST(WaitPolicy, CrowdedRanksYieldFromTheFirstIdlePoll) {
  WaitPolicy policy;
  policy.crowded = true;
  Backoff backoff(policy);
  EXPECT_EQ(backoff.idle(), Backoff::Next::kYield);
  const Timeline t = run(backoff, std::chrono::milliseconds(50));
  EXPECT_GE(t.first_sleep_us, 0);
}

TEST(WaitPolicy, APeerOnThisCpuMakesItYieldAtOnce) {
  WaitPolicy policy;
  policy.crowded = false;
  Backoff backoff(policy);
  EXPECT_EQ(backoff.idle(true), Backoff::Next::kYield);
}

TEST(WaitPolicy, ProgressStartsTheIdleStretchOver) {
  WaitPolicy policy;
  policy.crowded = true;
  Backoff backoff(policy);
  run(backoff, std::chrono::milliseconds(50));  // sleeping by now
  backoff.progressed();
  EXPECT_EQ(backoff.idle(), Backoff::Next::kYield) << "a fresh stretch starts with the yields, not a sleep";
}

TEST(WaitPolicy, AnExplicitSpinCountIsPollsBeforeTheFirstYield) {
  WaitPolicy policy;
  policy.crowded = false;
  policy.spin_polls = 5;
  Backoff backoff(policy);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(backoff.idle(), Backoff::Next::kPoll) << "poll " << i;
  EXPECT_EQ(backoff.idle(), Backoff::Next::kYield);
}

// A board of where ranks were seen, as shm::Presence keeps it across processes.
class Board : public rcc::CpuNeighbours {
 public:
  void note(int rank, int cpu) override { cpus_[rank] = cpu; }
  int cpu_of(int rank) const override {
    auto it = cpus_.find(rank);
    return it == cpus_.end() ? -1 : it->second;
  }
  int ranks_on(int cpu) const override {
    int n = 0;
    for (const auto& [rank, at] : cpus_) n += at == cpu ? 1 : 0;
    return n;
  }

 private:
  std::map<int, int> cpus_;
};

TEST(WaitPolicy, SharesCpuWithReadsTheBoard) {
  Board board;
  WaitPolicy policy;
  policy.crowded = false;
  policy.neighbours = &board;
  policy.rank = 1;
  Backoff backoff(policy);
  board.note(0, rcc::current_cpu());
  EXPECT_TRUE(backoff.shares_cpu_with(0));
  EXPECT_EQ(board.cpu_of(1), rcc::current_cpu()) << "the waiter notes its own CPU";
  board.note(0, -1);
  EXPECT_FALSE(backoff.shares_cpu_with(0));
  EXPECT_FALSE(backoff.shares_cpu_with(1)) << "a rank does not share a CPU with itself";
}

TEST(WaitPolicy, AWaiterMovesOffASharedCpuAndKeepsItsMask) {
  const rcc::CpuSet original = rcc::CpuSet::of_this_thread();
  if (original.count() < 2) GTEST_SKIP() << "needs two CPUs";
  const int here = rcc::current_cpu();
  Board board;
  board.note(0, here);
  ASSERT_TRUE(rcc::move_off_cpu(here, &board));
  EXPECT_NE(rcc::current_cpu(), here) << "still on the CPU it moved off";
  EXPECT_TRUE(rcc::CpuSet::of_this_thread() == original) << "the affinity mask was not given back";
  // A mask of one CPU has nowhere to go.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(rcc::current_cpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_FALSE(rcc::move_off_cpu(rcc::current_cpu(), &board));
  sched_setaffinity(0, sizeof(cpu_set_t), &original.native());
}

TEST(WaitPolicy, OnlyTheHigherRankOfAColocatedPairMoves) {
  const rcc::CpuSet original = rcc::CpuSet::of_this_thread();
  if (original.count() < 2) GTEST_SKIP() << "needs two CPUs";
  for (int me : {0, 1}) {
    Board board;
    WaitPolicy policy;
    policy.crowded = false;
    policy.neighbours = &board;
    policy.rank = me;
    const int other = 1 - me;
    int moves = 0;
    // Fresh waits, each starting with the other rank on this thread's CPU.
    for (int wait = 0; wait < 40; ++wait) {
      const int before = rcc::current_cpu();
      board.note(other, before);
      Backoff backoff(policy);
      backoff.idle(backoff.shares_cpu_with(other));
      moves += rcc::current_cpu() != before ? 1 : 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the moves' rate limit
    }
    if (me == 0) {
      EXPECT_EQ(moves, 0) << "the lower rank moved";
    }
    if (me == 1) {
      EXPECT_GT(moves, 0) << "the higher rank never moved";
    }
    sched_setaffinity(0, sizeof(cpu_set_t), &original.native());
  }
}

// Where a crowded waiter is after starting a wait on its CPU with `here_too` other ranks noted
// there and `elsewhere` on another CPU of its mask: true when it moved (the board says so: a
// waiter notes its CPU when it starts and again after moving, whatever the scheduler does).
bool crowded_waiter_moves(int here_too, int elsewhere) {
  Board board;
  WaitPolicy policy;
  policy.crowded = true;
  policy.neighbours = &board;
  policy.rank = 10;
  Backoff backoff(policy);
  backoff.shares_cpu_with(0);  // notes this rank's CPU, as a wait does first
  const int here = board.cpu_of(10);
  int other = -1;
  const rcc::CpuSet mask = rcc::CpuSet::of_this_thread();
  for (int cpu = 0; cpu < CPU_SETSIZE && other < 0; ++cpu) other = cpu != here && mask.has(cpu) ? cpu : -1;
  for (int r = 0; r < here_too; ++r) board.note(r, here);
  for (int r = 0; r < elsewhere; ++r) board.note(here_too + r, other);
  backoff.idle();
  return board.cpu_of(10) != here;
}

TEST(WaitPolicy, CrowdedRanksSpreadOverTheirCpus) {
  const rcc::CpuSet original = rcc::CpuSet::of_this_thread();
  if (original.count() < 2) GTEST_SKIP() << "needs two CPUs";
  // Each case in a thread of its own: the moves are rate-limited per thread.
  auto moves = [](int here_too, int elsewhere) {
    bool moved = false;
    std::thread([&] { moved = crowded_waiter_moves(here_too, elsewhere); }).join();
    return moved;
  };
  EXPECT_TRUE(moves(2, 0)) << "3 ranks on one CPU, none on the other";
  EXPECT_TRUE(moves(2, 1)) << "3 + 1";
  EXPECT_TRUE(moves(4, 2)) << "5 + 2";
  EXPECT_FALSE(moves(1, 1)) << "2 + 1: moving would make it 1 + 2";
  EXPECT_FALSE(moves(1, 2)) << "2 + 2";
  EXPECT_FALSE(moves(0, 3)) << "alone here";
  EXPECT_TRUE(rcc::CpuSet::of_this_thread() == original);
}

}  // namespace
