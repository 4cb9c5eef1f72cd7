// Progress and waiting: a pass hands every transport event to its handler, polls the slots
// (polled delivery) and sends what waited for credits; a wait repeats passes under the wait
// policy (base/wait.h), sleeping on the transport's wakeup fd once nothing is likely to come soon.
#include <sched.h>

#include <chrono>
#include <cstdio>

#include "base/log.h"
#include "p2p/engine.h"

namespace rcc::p2p {
namespace {

using Clock = std::chrono::steady_clock;

// A waiting thread lets other threads of the process take the lock this often.
constexpr int kPollsPerUnlock = 64;
// A waiting thread looks where its peer runs this often (Backoff::shares_cpu_with).
constexpr int kPollsPerPlacementCheck = 32;

}  // namespace

Status Engine::handle_event(const transport::Event& event) {
  switch (event.kind) {
    case transport::EventKind::kNotify: {
      if (event.peer < 0 || event.peer >= size_ || event.peer == rank_) {
        return fail(RCC_ERR_TRANSPORT, "notice from an invalid rank %d", event.peer);
      }
      PeerState& state = peers_[static_cast<size_t>(event.peer)];
      if (state.failed) return RCC_SUCCESS;
      // A peer's first message: its card says where credits and replies go.
      RCC_RETURN_IF_ERROR(ensure_connected(event.peer));
      const ImmKind kind = imm_kind(event.imm);
      // Polled: the notice only woke this rank; the slot is consumed by poll_slots in order.
      if (kind == ImmKind::kSlot) return polled_ ? RCC_SUCCESS : handle_slot(event.peer, imm_arg(event.imm));
      if (kind == ImmKind::kFin || kind == ImmKind::kFinRefused) {
        return handle_fin(event.peer, imm_arg(event.imm), kind == ImmKind::kFinRefused);
      }
      if (kind == ImmKind::kCredit && !polled_) {
        state.granted_slots = credit_slots(imm_arg(event.imm), state.granted_slots);
        state.granted_fins = credit_fins(imm_arg(event.imm), state.granted_fins);
        return RCC_SUCCESS;  // what waited for them goes out at the end of this pass
      }
      if (kind == ImmKind::kBareSlot) {
        const uint32_t arg = imm_arg(event.imm);
        const uint32_t slot = bare_slot(arg);
        if ((encodings_ & kBare) == 0 || slot >= slots_ || state.bare_notices[slot] != 0 ||
            event.length > state.eager_limit) {
          return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d sent a bare message of %llu bytes to slot %u",
                      event.peer, static_cast<unsigned long long>(event.length), slot);
        }
        state.bare_notices[slot] = static_cast<uint64_t>(arg) << 32 | (event.length + 1);
        if (polled_) return RCC_SUCCESS;  // consumed in order by poll_slots, after the messages before it
        // Notified: notices come in the order of the writes, so this is the next slot.
        const uint32_t expected = static_cast<uint32_t>(state.slots_delivered % slots_);
        if (slot != expected) {
          return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d wrote slot %u, expected slot %u", event.peer, slot,
                      expected);
        }
        return handle_bare(event.peer, slot);
      }
      return fail(RCC_ERR_TRANSPORT, "protocol error: unknown immediate 0x%08x from rank %d", event.imm, event.peer);
    }
    case transport::EventKind::kWriteDone: return handle_write_done(event.cookie);
    case transport::EventKind::kError:
      if (event.peer >= 0 && event.peer < size_) {
        fail_peer_locked(event.peer, event.status, event.message);
      } else {
        for (int peer = 0; peer < size_; ++peer) {
          if (peer != rank_) fail_peer_locked(peer, event.status, event.message);
        }
      }
      return RCC_SUCCESS;
  }
  return RCC_SUCCESS;
}

Status Engine::progress_locked() {
  if (has_reported_failures_.load(std::memory_order_acquire)) {
    std::vector<std::pair<int, std::string>> failures;
    {
      std::lock_guard<std::mutex> guard(reported_mutex_);
      failures.swap(reported_failures_);
      has_reported_failures_.store(false, std::memory_order_release);
    }
    for (const auto& [peer, why] : failures) fail_peer_locked(peer, RCC_ERR_PEER_FAILED, why);
  }
  events_.clear();
  Status status = transport_->poll(&events_);
  for (const transport::Event& event : events_) {
    Status handled = handle_event(event);
    if (handled != RCC_SUCCESS && status == RCC_SUCCESS) status = handled;
  }
  last_pass_delivered_ = 0;
  if (polled_) {
    // Starting with another peer each pass, so a busy sender never keeps the others waiting.
    const int connected = static_cast<int>(connected_peers_.size());
    first_polled_peer_ = first_polled_peer_ + 1 < connected ? first_polled_peer_ + 1 : 0;
    for (int i = 0; i < connected; ++i) {
      const int peer = connected_peers_[static_cast<size_t>((first_polled_peer_ + i) % connected)];
      if (peers_[static_cast<size_t>(peer)].failed) continue;
      Status polled = poll_slots(peer, &last_pass_delivered_);
      if (polled != RCC_SUCCESS && status == RCC_SUCCESS) status = polled;
    }
  }
  for (int peer : connected_peers_) {
    PeerState& state = peers_[static_cast<size_t>(peer)];
    if (state.failed || (state.pending_messages.empty() && state.pending_writes.empty())) continue;
    Status flushed = flush_pending(peer);
    if (flushed != RCC_SUCCESS && status == RCC_SUCCESS) status = flushed;
  }
  return status;
}

Status Engine::wait_locked(std::unique_lock<std::mutex>& lock, Request* request) {
  Backoff backoff(wait_policy_);
  int polls = 0;
  bool colocated = false;  // the peer was last seen on this thread's CPU
  bool announced = false;  // polled delivery: peers were asked to notify (once per idle stretch)
  // The no-progress deadline runs from the start of the current idle stretch.
  Clock::time_point idle_since{};
  bool idle = false;
  while (!request->done) {
    Status status = progress_locked();
    if (status != RCC_SUCCESS) end_request(request, status, last_error());
    if (request->done) break;
    if (!events_.empty() || last_pass_delivered_ > 0) {
      backoff.progressed();
      idle = false;
      announced = false;
      continue;
    }
    if (++polls % kPollsPerUnlock == 0) {  // let other threads of this process take the lock
      lock.unlock();
      lock.lock();
    }
    // Where the peer runs is looked at now and then, as the segment's waits do: it reads a line
    // the peer writes (on every poll, 7 % of a 2-rank ping-pong's samples went there).
    if (polls % kPollsPerPlacementCheck == 1) colocated = backoff.shares_cpu_with(request->peer);
    const Backoff::Next next = backoff.idle(colocated);
    if (next == Backoff::Next::kPoll) continue;
    if (next == Backoff::Next::kYield) {
      lock.unlock();
      sched_yield();
      lock.lock();
      continue;
    }
    if (!idle) {
      idle = true;
      idle_since = Clock::now();
    }
    if (polled_ && waiting_for_credits()) {
      // Polled: credit words land without a notice, so there is no event to sleep on: keep
      // polling, but let other ranks on this core run. (Notified credits wake a sleeper.)
      lock.unlock();
      sched_yield();
      lock.lock();
    } else if (polled_ && !announced) {
      // Slot messages land without a notice: ask the peers for one before sleeping, then look
      // once more for a message that landed before they saw the request. One that lands later
      // without a notice waits for the sleep's timeout at most.
      announced = true;
      Status announced_status = announce_sleep();
      if (announced_status != RCC_SUCCESS) {
        end_request(request, announced_status, last_error());
        if (request->done) break;
      }
      continue;
    } else {
      transport_->wait_for_event(static_cast<int>(backoff.sleep_timeout().count()));
      lock.unlock();
      lock.lock();
    }
    if (std::chrono::duration<double>(Clock::now() - idle_since).count() > timeout_s_) {
      char message[256];
      const std::string with =
          request->peer == kAnySource ? std::string("from any source") : "with rank " + std::to_string(request->peer);
      std::snprintf(message, sizeof message, "no progress for %.0f s (RCC_TIMEOUT) on a %s of %zu bytes %s (tag %d)",
                    timeout_s_, request->kind == Request::Kind::kSend ? "send" : "receive", request->bytes,
                    with.c_str(), request->tag);
      if (timeout_hook_) timeout_hook_(group_members_locked(), pending_requests_locked());
      if (request->ending) {
        // A failure ended it; the live peer never finished the transfer it had started.
        complete(request, request->status,
                 request->error + "; rank " + std::to_string(request->peer) +
                     " did not finish its transfer within RCC_TIMEOUT");
        break;
      }
      // Off the matcher: a message arriving later must not land in a request that is gone.
      if (request->kind == Request::Kind::kRecv) matcher_.unpost(request);
      std::string text = message;
      if (request->refused) {
        text += "; rank " + std::to_string(request->peer) + " gave up sending it (a failure or abort on its side)";
      }
      complete(request, RCC_ERR_TIMEOUT, text);
    }
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
