#include "base/wait.h"

#include <sched.h>

#include <algorithm>
#include <optional>

#include "base/cpu.h"
#include "base/settings.h"

namespace rcc {
namespace {

using Clock = std::chrono::steady_clock;
// The clock is read once per this many idle polls: in VMs without a usable TSC a read is a system
// call, which would otherwise be a large part of a small message's latency.
constexpr int64_t kPollsPerClockRead = 32;

// Moves this thread to `cpu`, keeping its affinity mask `allowed`: setting a one-CPU mask
// migrates it at once, and the mask goes back right after.
bool move_to_cpu(int cpu, const CpuSet& allowed) {
  cpu_set_t target;
  CPU_ZERO(&target);
  CPU_SET(cpu, &target);
  if (sched_setaffinity(0, sizeof target, &target) != 0) return false;
  sched_setaffinity(0, sizeof(cpu_set_t), &allowed.native());
  return true;
}

}  // namespace

Status WaitPolicy::from_settings(bool crowded, WaitPolicy* out) {
  std::optional<int64_t> spins;
  RCC_RETURN_IF_ERROR(settings::auto_or_integer("RCC_SPIN_COUNT", &spins));
  WaitPolicy policy;
  policy.crowded = crowded;
  policy.spin_polls = spins.value_or(0);
  *out = policy;
  return RCC_SUCCESS;
}

bool Backoff::shares_cpu_with(int rank) {
  if (policy_.neighbours == nullptr || rank < 0 || rank == policy_.rank) return false;
  if (cpu_ < 0) {
    cpu_ = current_cpu();
    policy_.neighbours->note(policy_.rank, cpu_);
  }
  const bool shares = policy_.neighbours->cpu_of(rank) == cpu_;
  if (shares) colocated_peer_ = std::min(colocated_peer_ < 0 ? rank : colocated_peer_, rank);
  return shares;
}

// Consecutive waits of this thread that began with the rank waited for on the same CPU, and when
// this thread last moved itself.
thread_local int t_colocated_waits = 0;

thread_local Clock::time_point t_last_move{};
constexpr int kColocatedWaitsBeforeMove = 1;
constexpr auto kMinTimeBetweenMoves = std::chrono::microseconds(500);

// When this thread last looked at how its host's crowded ranks are spread over the CPUs.
thread_local Clock::time_point t_last_spread_check{};

void Backoff::note_colocation(bool colocated) {
  colocated_ = colocated;
  if (policy_.crowded) spread_crowded_ranks();

  if (!colocated) {
    t_colocated_waits = 0;
    return;
  }
  // Moving only helps when the ranks have a CPU each to go to; and only the higher rank of the two
  // moves (both moving would meet again).
  if (policy_.neighbours == nullptr || policy_.crowded || policy_.rank < colocated_peer_ ||
      ++t_colocated_waits < kColocatedWaitsBeforeMove) {
    return;
  }
  if (start_ - t_last_move < kMinTimeBetweenMoves) return;
  t_last_move = start_;
  t_colocated_waits = 0;
  if (move_off_cpu(cpu_, policy_.neighbours)) {
    cpu_ = current_cpu();
    policy_.neighbours->note(policy_.rank, cpu_);
  }
}

Backoff::Next Backoff::idle(bool peer_shares_cpu) {
  ++polls_;
  if (!started_) {
    started_ = true;
    yielding_ = false;
    start_ = last_read_ = Clock::now();
    note_colocation(peer_shares_cpu);
  } else if (polls_ % kPollsPerClockRead == 0) {
    last_read_ = Clock::now();
  }
  if (!yielding_) {
    const bool spun_enough =
        policy_.spin_polls > 0 ? polls_ >= policy_.spin_polls : last_read_ - start_ >= WaitPolicy::kSpinTime;
    if (policy_.crowded || peer_shares_cpu || spun_enough) {
      yielding_ = true;
      yield_start_ = last_read_;
    }
  }
  if (!yielding_) {
    cpu_relax();
    return Next::kPoll;
  }
  // The yield phase lasts as long whether it began after the spin or at once (crowded ranks, a
  // peer on this CPU): what follows is sleeping.
  if (last_read_ - yield_start_ >= WaitPolicy::kYieldUntil - WaitPolicy::kSpinTime) return Next::kSleep;
  return Next::kYield;
}

void Backoff::spread_crowded_ranks() {
  if (policy_.neighbours == nullptr || cpu_ < 0 || start_ - t_last_spread_check < kMinTimeBetweenMoves) return;
  t_last_spread_check = start_;
  const int here = policy_.neighbours->ranks_on(cpu_);
  if (here < 2) return;
  const CpuSet allowed = CpuSet::of_this_thread();
  int fewest = 0;
  const int best = least_crowded_cpu(cpu_, policy_.neighbours, allowed, &fewest);
  if (best < 0 || here < fewest + 2) return;
  t_last_move = start_;
  if (move_to_cpu(best, allowed)) {
    cpu_ = current_cpu();
    policy_.neighbours->note(policy_.rank, cpu_);
  }
}

int least_crowded_cpu(int cpu, const CpuNeighbours* neighbours, const CpuSet& allowed, int* ranks) {
  int best = -1, best_ranks = 0;
  for (int other = 0; other < CPU_SETSIZE; ++other) {
    if (other == cpu || !allowed.has(other)) continue;
    const int on_other = neighbours != nullptr ? neighbours->ranks_on(other) : 0;
    if (best < 0 || on_other < best_ranks) {
      best = other;
      best_ranks = on_other;
    }
  }
  *ranks = best_ranks;
  return best;
}

bool move_off_cpu(int cpu, const CpuNeighbours* neighbours) {
  const CpuSet allowed = CpuSet::of_this_thread();
  int fewest = 0;
  const int best = least_crowded_cpu(cpu, neighbours, allowed, &fewest);
  return best >= 0 && move_to_cpu(best, allowed);
}

std::chrono::steady_clock::duration Backoff::idle_time() const {
  return started_ ? Clock::now() - start_ : Clock::duration::zero();
}

std::chrono::milliseconds Backoff::sleep_timeout() const {
  const auto eighth = std::chrono::duration_cast<std::chrono::milliseconds>(idle_time() / 8);
  return std::clamp(eighth, WaitPolicy::kSleepTimeout, WaitPolicy::kLongestSleep);
}

}  // namespace rcc
