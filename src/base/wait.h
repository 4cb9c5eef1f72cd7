// The one policy for a thread that waits for other ranks (the p2p engine, the shared-memory
// segment, the communicator's teardown): spin while an answer is likely within microseconds, then
// give the core away a little (yield), then entirely (sleep until woken). docs/waiting.md says why
// each phase is as long as it is.
#pragma once

#include <chrono>
#include <cstdint>

#include "base/cpu.h"
#include "base/status.h"

namespace rcc {

// Where the ranks of this host were last seen running (shm::Presence implements it). A waiter
// notes its CPU when it starts waiting; one that finds the rank it waits for on its own CPU knows
// that spinning only delays that rank.
class CpuNeighbours {
 public:
  virtual ~CpuNeighbours() = default;
  virtual void note(int rank, int cpu) = 0;
  virtual int cpu_of(int rank) const = 0;   // -1: unknown (another host, never seen)
  virtual int ranks_on(int cpu) const = 0;  // how many of the host's ranks were last seen there
};

struct WaitPolicy {
  // The ranks of this host outnumber its cores: yield from the first idle poll, since the rank
  // waited for may need this core to arrive.
  bool crowded = true;
  // RCC_SPIN_COUNT: idle polls before the first yield; 0 = auto (a time, kSpinTime). The yield
  // phase and then sleeping follow the spin however long it was.
  int64_t spin_polls = 0;
  // This rank and its host's board (null when unknown: then only crowding is known).
  CpuNeighbours* neighbours = nullptr;
  int rank = -1;

  // Pure spinning (auto: kSpinTime), then polls with a yield in between for kYieldUntil -
  // kSpinTime; then sleeping, woken by the peer or after a timeout to look at health and
  // deadlines: kSleepTimeout at first, growing with the wait (Backoff::sleep_timeout). A crowded
  // rank starts with the yields.
  static constexpr std::chrono::microseconds kSpinTime{20};
  static constexpr std::chrono::microseconds kYieldUntil{100};
  static constexpr std::chrono::milliseconds kSleepTimeout{1};
  static constexpr std::chrono::milliseconds kLongestSleep{10};

  // From RCC_SPIN_COUNT (RCC_ERR_INVALID_ARGUMENT naming it when malformed).
  static Status from_settings(bool crowded, WaitPolicy* out);
};

// One wait. After every poll that found nothing, call idle() and do what it says: kPoll (it paused
// the CPU briefly: poll again), kYield (give the core away with sched_yield, releasing any lock
// other threads need, then poll), kSleep (block for at most kSleepTimeout, then poll). After a poll
// that made progress, call progressed() so the next idle stretch starts over.
class Backoff {
 public:
  enum class Next { kPoll, kYield, kSleep };

  explicit Backoff(const WaitPolicy& policy) : policy_(policy) {}

  // peer_shares_cpu (shares_cpu_with): the rank waited for was last seen on this thread's CPU, so
  // it cannot run while this thread spins: yield at once. When that keeps happening while this
  // thread may run on other CPUs too, it moves itself to one of them (move_off_cpu).
  Next idle(bool peer_shares_cpu = false);
  bool shares_cpu_with(int rank);
  void progressed() {
    polls_ = 0;
    started_ = false;
  }
  // Time since the idle stretch began (zero before the first idle poll); read after kSleep.
  std::chrono::steady_clock::duration idle_time() const;
  // How long the next sleep may last: an eighth of the idle stretch so far, within kSleepTimeout
  // and kLongestSleep. Each wake-up costs tens of microseconds of CPU (the transport's progress,
  // the health checks), so a fixed 1 ms timeout spent 4-10 % of a core on a peer a second late;
  // growing it keeps that near 1 %, while what only a timeout finds (a delivery without a notice,
  // a dead peer, the deadline) is found at most an eighth of the wait so far later.
  std::chrono::milliseconds sleep_timeout() const;

 private:
  void note_colocation(bool colocated);
  // Crowded ranks share CPUs, but the scheduler may leave them unevenly, for a while (3 + 1 on 2
  // CPUs, docs/waiting.md): a rank on a CPU with at least two more of its host's ranks than another
  // CPU of its mask moves there (at most once per kMinTimeBetweenMoves per thread).
  void spread_crowded_ranks();

  WaitPolicy policy_;
  int64_t polls_ = 0;
  bool started_ = false;
  bool yielding_ = false;
  bool colocated_ = false;   // this wait found the rank waited for on its CPU
  int cpu_ = -1;             // this thread's CPU when the wait began
  int colocated_peer_ = -1;  // the lowest rank waited for found on this CPU
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point yield_start_{};
  std::chrono::steady_clock::time_point last_read_{};
};

// Moves this thread off `cpu` to the CPU of its affinity mask where the fewest of its neighbours
// were last seen, then restores the mask: the scheduler leaves a thread where it is until it has a
// reason to move it, so the rank stays apart from the one it waits for without being bound. False
// when the mask has no other CPU.
bool move_off_cpu(int cpu, const CpuNeighbours* neighbours);
// The CPU of `allowed`, other than `cpu`, where the fewest of the neighbours were last seen (their
// number in *ranks); -1 when `allowed` has no other CPU.
int least_crowded_cpu(int cpu, const CpuNeighbours* neighbours, const CpuSet& allowed, int* ranks);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace rcc
