// The flight recorder: this process's most recent calls (collectives and point-to-point), kept in
// a fixed ring that is always on (RCC_CALL_RECORD entries; 0 turns it off). When a job stops
// making progress, each rank's ring says which call it is in, on which communicator, how far its
// collectives got (their per-communicator sequence numbers) and what it waits for (call_dump.h).
//
// Cheap enough to leave on: a call takes a ticket (one atomic add), stores a dozen words into its
// entry with a coarse clock (no system call), and stores its state when it ends. Memory is the
// ring's, fixed at the first call. Entries are relaxed atomics, so a dump taken from another
// thread reads no torn field (an entry being rewritten at that moment may mix two calls; the
// ticket, written last, tells).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/fast_tls.h"
#include "base/status.h"
#include "rcc/rcc.h"

namespace rcc {

// What a call is: a collective (its collectives::Kind, 0..kNumKinds-1) or one of these.
constexpr int kCallSend = 100;
constexpr int kCallRecv = 101;
const char* call_name(int op);

enum class CallState : uint8_t { kRunning = 1, kDone = 2, kFailed = 3 };

// One call as a dump sees it.
struct CallSnapshot {
  uint64_t ticket = 0;    // order of the calls in this process
  uint32_t comm = 0;      // the communicator's group id (0: the job's first communicator)
  uint64_t sequence = 0;  // collectives: the communicator's collective number (the same on every rank)
  int op = 0;
  rcc_datatype_t datatype = RCC_UINT8;
  uint64_t count = 0;
  int peer = -1;  // point-to-point: the peer; rooted collectives: the root (ranks of the communicator)
  int tag = -1;
  int64_t start_ns = 0;  // CLOCK_MONOTONIC_COARSE
  CallState state = CallState::kRunning;
  Status status = RCC_SUCCESS;
};

class CallRecorder {
 public:
  static constexpr uint64_t kNoTicket = 0;

  // The process's recorder (sized from RCC_CALL_RECORD at first use).
  static CallRecorder& instance();

  // Starts an entry; the ticket ends it. kNoTicket when the recorder is off.
  uint64_t begin(uint32_t comm, uint64_t sequence, int op, rcc_datatype_t datatype, size_t count, int peer, int tag) {
    if (capacity_ == 0) return kNoTicket;
    const uint64_t ticket = take_ticket();
    Entry& e = entries_[ticket % capacity_];
    e.ticket.store(0, std::memory_order_relaxed);  // being rewritten
    e.comm.store(comm, std::memory_order_relaxed);
    e.sequence.store(sequence, std::memory_order_relaxed);
    e.op.store(op, std::memory_order_relaxed);
    e.datatype.store(static_cast<int>(datatype), std::memory_order_relaxed);
    e.count.store(count, std::memory_order_relaxed);
    e.peer.store(peer, std::memory_order_relaxed);
    e.tag.store(tag, std::memory_order_relaxed);
    e.start_ns.store(coarse_now_ns(), std::memory_order_relaxed);
    e.state.store(static_cast<int>(CallState::kRunning), std::memory_order_relaxed);
    e.status.store(RCC_SUCCESS, std::memory_order_relaxed);
    e.ticket.store(ticket, std::memory_order_release);
    return ticket;
  }
  // Ends the entry of ticket (nothing if the ring has since reused it).
  void end(uint64_t ticket, Status status) {
    if (ticket == kNoTicket) return;
    Entry& e = entries_[ticket % capacity_];
    if (e.ticket.load(std::memory_order_relaxed) != ticket) return;
    e.status.store(status, std::memory_order_relaxed);
    e.state.store(static_cast<int>(status == RCC_SUCCESS ? CallState::kDone : CallState::kFailed),
                  std::memory_order_release);
  }

  // The entries still in the ring, oldest first.
  std::vector<CallSnapshot> snapshot() const;
  size_t capacity() const { return capacity_; }

  static int64_t coarse_now_ns();

 private:
  // Tickets come in blocks of kTicketBlock per thread, so a call costs no atomic read-modify-write
  // (a dump then lists calls in block order across threads: each thread's own are in order).
  static constexpr uint64_t kTicketBlock = 64;
  struct TicketBlock {
    uint64_t next = 0;
    uint64_t end = 0;
  };
  uint64_t take_ticket() {
    RCC_FAST_TLS constinit thread_local TicketBlock block;
    if (block.next == block.end) {
      block.next = next_.fetch_add(kTicketBlock, std::memory_order_relaxed) + 1;
      block.end = block.next + kTicketBlock;
    }
    return block.next++;
  }

  explicit CallRecorder(size_t capacity);

  struct Entry {
    std::atomic<uint64_t> ticket{0};
    std::atomic<uint64_t> sequence{0};
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> start_ns{0};
    std::atomic<uint32_t> comm{0};
    std::atomic<int> op{0};
    std::atomic<int> datatype{0};
    std::atomic<int> peer{-1};
    std::atomic<int> tag{-1};
    std::atomic<int> state{0};
    std::atomic<int> status{0};
  };

  size_t capacity_;
  std::unique_ptr<Entry[]> entries_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace rcc
