// Arriving at a step and waiting for the others, under the wait policy (base/wait.h): spin while a
// peer is likely to arrive within microseconds, yield, then sleep on a futex in the segment. Every
// few hundred polls (and before every sleep) the peers' health is asked: a progress pass of the
// p2p engine (a peer may be waiting on a message of ours to reach this step), which also reports
// a dead peer or an abort.
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>

#include "shm/cross_memory.h"
#include "shm/layout.h"
#include "shm/segment.h"

namespace rcc::shm {
namespace {

constexpr int kPollsPerCheck = 256;         // spinning polls between health checks
constexpr int kPollsPerCheckYielding = 16;  // the same when every poll yields (a system call each)

}  // namespace

bool Segment::arrived(int owner, uint64_t step) const {
  return control(owner)->step.load(std::memory_order_acquire) >= step;
}

// The slot for step_ + 1 held step_ - 1's data: read once every rank arrived at step_.
Status Segment::begin(const char* what) { return ensure_all_reached(step_, what); }

Status Segment::begin_cell(const char* what) {
  // The cell for step_ + 1 held step_ + 1 - kCells's data: read once every rank arrived after it.
  const uint64_t next = step_ + 1;
  return ensure_all_reached(next > kCells ? next - kCells + 1 : 0, what);
}

Status Segment::ensure_all_reached(uint64_t step, const char* what) {
  if (all_reached_ >= step) return RCC_SUCCESS;
  RCC_RETURN_IF_ERROR(wait_all(step, what));
  all_reached_ = step;
  return RCC_SUCCESS;
}

void Segment::publish() {
  const uint64_t target = ++step_;
  // seq_cst store then load: pairs with the sleeper's increment then check (see sleep_until).
  control(rank_)->step.store(target, std::memory_order_seq_cst);
  if (header_->sleepers.load(std::memory_order_seq_cst) != 0) wake_sleepers();
}

void Segment::set_note(uint64_t value) {
  control(rank_)->note[next_step() & 1].store(value, std::memory_order_relaxed);
}

// Relaxed: the acquiring load of owner's step that ended the wait made its note visible.
uint64_t Segment::note(int owner, uint64_t step) const {
  return control(owner)->note[step & 1].load(std::memory_order_relaxed);
}

Status Segment::step(const char* what) {
  publish();
  RCC_RETURN_IF_ERROR(wait_all(step_, what));
  all_reached_ = step_;
  return RCC_SUCCESS;
}

Status Segment::wait_for(int owner, const char* what) { return wait_ranks(owner, owner + 1, -1, step_ + 1, what); }

Status Segment::wait_others_then_publish(const char* what) {
  RCC_RETURN_IF_ERROR(wait_ranks(0, size_, rank_, step_ + 1, what));
  publish();
  return RCC_SUCCESS;
}

Status Segment::wait_ranks(int first, int last, int except, uint64_t step, const char* what) {
  auto done = [&] {
    for (int r = first; r < last; ++r) {
      if (r != except && !arrived(r, step)) return false;
    }
    return true;
  };
  if (done()) return RCC_SUCCESS;
  Backoff backoff(wait_);  // its idle time is this wait's: it reads the clock when the wait begins
  bool colocated = false;
  for (int polls = 1;; ++polls) {
    if (done()) return RCC_SUCCESS;
    // Whether a rank still missing sits on this CPU (looked at now and then: it is a loop over ranks).
    if (polls % 32 == 1) {
      colocated = false;
      for (int r = first; r < last && !colocated; ++r) {
        colocated = r != except && !arrived(r, step) && backoff.shares_cpu_with(r);
      }
    }
    const Backoff::Next next = backoff.idle(colocated);
    if (next == Backoff::Next::kYield) sched_yield();
    const int per_check = next == Backoff::Next::kPoll ? kPollsPerCheck : kPollsPerCheckYielding;
    if (next != Backoff::Next::kSleep && polls % per_check != 0) continue;
    if (header_->failed_rank.load(std::memory_order_acquire) != 0) return failed_elsewhere(what);
    Status health = health_->health();
    // A dead peer is found by every rank's own liveness monitor (and named); anything else (an
    // abort, a transport error) would leave the others waiting: tell them.
    if (health == RCC_ERR_PEER_FAILED) return health;
    if (health != RCC_SUCCESS) return give_up(health);
    if (done()) return RCC_SUCCESS;
    if (std::chrono::duration<double>(backoff.idle_time()).count() > timeout_s_) {
      return give_up(fail(RCC_ERR_TIMEOUT, "%s: rank %d waited %.0f s (RCC_TIMEOUT) in shared memory for rank(s) %s",
                          what, rank_, timeout_s_, missing_ranks(step, first, last, except).c_str()));
    }
    if (next == Backoff::Next::kSleep) sleep_until(step, first, last, except, backoff.sleep_timeout());
  }
}

Status Segment::check_usable(const char* what) {
  if (header_->failed_rank.load(std::memory_order_acquire) != 0) return failed_elsewhere(what);
  if (health_->maybe_unusable()) RCC_RETURN_IF_ERROR(health_->health());
  return RCC_SUCCESS;
}

Status Segment::read_from(int owner, const void* remote, void* local, size_t bytes, const char* what) {
  const int error = read_across(pids_[static_cast<size_t>(owner)], remote, local, bytes);
  return error == 0 ? RCC_SUCCESS : cross_copy_failed(error, "read", owner, remote, bytes, what);
}

Status Segment::write_to(int owner, const void* local, void* remote, size_t bytes, const char* what) {
  const int error = write_across(pids_[static_cast<size_t>(owner)], local, remote, bytes);
  return error == 0 ? RCC_SUCCESS : cross_copy_failed(error, "write", owner, remote, bytes, what);
}

Status Segment::map_buffer(int owner, const SharedPlace& place, uint8_t** buffer, const char* what) {
  const int error = peer_buffers_.map(pids_[static_cast<size_t>(owner)], place, buffer);
  if (error == 0) return RCC_SUCCESS;
  return give_up(fail(error == ESRCH ? RCC_ERR_PEER_FAILED : RCC_ERR_INTERNAL,
                      "%s: rank %d could not map the rcc_mem_alloc buffer of rank %d (pid %d, %llu bytes): %s%s", what,
                      rank_, owner, static_cast<int>(pids_[static_cast<size_t>(owner)]),
                      static_cast<unsigned long long>(place.bytes), std::strerror(error),
                      error == ESRCH ? " (it exited)" : " (though the same mapping worked at set-up)"));
}

Status Segment::cross_copy_failed(int error, const char* verb, int owner, const void* remote, size_t bytes,
                                  const char* what) {
  return give_up(
      fail(error == ESRCH ? RCC_ERR_PEER_FAILED : RCC_ERR_INTERNAL,
           "%s: rank %d could not %s the memory of rank %d (pid %d), %zu bytes at %p: %s%s", what, rank_, verb, owner,
           static_cast<int>(pids_[static_cast<size_t>(owner)]), bytes, remote, std::strerror(error),
           error == ESRCH ? " (it exited)" : " (set RCC_SHM_CMA_BYTES=0 to copy through the slots instead)"));
}

Status Segment::give_up(Status status) {
  uint32_t none = 0;
  header_->failed_rank.compare_exchange_strong(none, static_cast<uint32_t>(rank_) + 1, std::memory_order_acq_rel);
  wake_sleepers();
  return status;
}

Status Segment::failed_elsewhere(const char* what) const {
  const uint32_t failed = header_->failed_rank.load(std::memory_order_acquire);
  return fail(RCC_ERR_PEER_FAILED,
              "%s: a shared-memory collective failed on rank %u (its log says why), so the ranks' steps no longer "
              "match; this communicator's collectives cannot continue (destroy it)",
              what, failed - 1);
}

void Segment::sleep_until(uint64_t step, int first, int last, int except, std::chrono::milliseconds most) {
  header_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  const uint32_t word = header_->wake.load(std::memory_order_seq_cst);
  bool ready = true;  // everyone arrived, or some rank gave up (no point sleeping either way)
  if (header_->failed_rank.load(std::memory_order_seq_cst) == 0) {
    for (int r = first; r < last && ready; ++r) {
      if (r != except && control(r)->step.load(std::memory_order_seq_cst) < step) ready = false;
    }
  }
  if (!ready) {
    const long nanoseconds = std::chrono::duration_cast<std::chrono::nanoseconds>(most).count();
    timespec timeout{nanoseconds / 1000000000, nanoseconds % 1000000000};
    // Not FUTEX_PRIVATE: the word is shared between processes.
    syscall(SYS_futex, &header_->wake, FUTEX_WAIT, word, &timeout, nullptr, 0);
  }
  header_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void Segment::wake_sleepers() {
  header_->wake.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, &header_->wake, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

std::string Segment::missing_ranks(uint64_t step, int first, int last, int except) const {
  std::string list;
  for (int r = first; r < last; ++r) {
    if (r == except || arrived(r, step)) continue;
    if (!list.empty()) list += ", ";
    list += std::to_string(r);
  }
  return list;
}

}  // namespace rcc::shm
