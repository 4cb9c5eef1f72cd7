// Arriving at a step and waiting for the others: spin briefly (a peer usually arrives within
// microseconds), yield instead when ranks outnumber cores (the peer needs this core to arrive),
// then sleep on a futex in the segment. Every few hundred polls the p2p engine progresses (a peer
// may be waiting on a message of ours to reach this step) and reports a dead peer or an abort.
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <ctime>

#include "shm/layout.h"
#include "shm/segment.h"

namespace rcc::shm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollsPerCheck = 256;                         // polls between engine progress passes
constexpr auto kSpinTime = std::chrono::microseconds(200);  // polling before sleeping
constexpr long kSleepNanoseconds = 1000000;                 // a sleeper rechecks health every 1 ms

inline void cpu_relax() { __builtin_ia32_pause(); }

}  // namespace

bool Segment::all_arrived(uint64_t step, std::memory_order order) const {
  for (int r = 0; r < size_; ++r) {
    if (control(r)->step.load(order) < step) return false;
  }
  return true;
}

Status Segment::step(const char* what) {
  const uint64_t target = ++step_;
  // seq_cst store then load: pairs with the sleeper's increment then check (see sleep_until).
  control(rank_)->step.store(target, std::memory_order_seq_cst);
  if (header_->sleepers.load(std::memory_order_seq_cst) != 0) wake_sleepers();
  if (all_arrived(target, std::memory_order_acquire)) return RCC_SUCCESS;
  return wait_all(target, what);
}

Status Segment::wait_all(uint64_t step, const char* what) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    for (int poll = 0; poll < kPollsPerCheck; ++poll) {
      if (all_arrived(step, std::memory_order_acquire)) return RCC_SUCCESS;
      if (oversubscribed_) {
        sched_yield();
      } else {
        cpu_relax();
      }
    }
    Status health = engine_->health();
    if (health != RCC_SUCCESS) return health;
    if (all_arrived(step, std::memory_order_acquire)) return RCC_SUCCESS;
    const Clock::duration waited = Clock::now() - start;
    if (std::chrono::duration<double>(waited).count() > timeout_s_) {
      return fail(RCC_ERR_TIMEOUT, "%s: rank %d waited %.0f s (RCC_TIMEOUT) in shared memory for rank(s) %s", what,
                  rank_, timeout_s_, missing_ranks(step).c_str());
    }
    if (waited > kSpinTime) sleep_until(step);
  }
}

void Segment::sleep_until(uint64_t step) {
  header_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t word = header_->wake.load(std::memory_order_seq_cst);
  if (!all_arrived(step, std::memory_order_seq_cst)) {
    timespec timeout{0, kSleepNanoseconds};
    // Not FUTEX_PRIVATE: the word is shared between processes.
    syscall(SYS_futex, &header_->wake, FUTEX_WAIT, word, &timeout, nullptr, 0);
  }
  header_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void Segment::wake_sleepers() {
  header_->wake.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, &header_->wake, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

std::string Segment::missing_ranks(uint64_t step) const {
  std::string list;
  for (int r = 0; r < size_; ++r) {
    if (control(r)->step.load(std::memory_order_acquire) >= step) continue;
    if (!list.empty()) list += ", ";
    list += std::to_string(r);
  }
  return list;
}

}  // namespace rcc::shm
