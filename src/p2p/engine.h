// The point-to-point engine: tagged, ordered messages between ranks over any Transport.
//
// Small messages (<= RCC_EAGER_LIMIT) are copied into a pre-registered slot of the receiver by one
// notified write; the receiver copies them out and returns the slot through its credit word. Large
// messages are zero copy: the sender announces them (RTS), the receiver answers with the address and
// key of its own buffer (CTS), and the sender writes straight into it with a notice (FIN) that
// completes the receive. See docs/transport.md.
//
// Thread-safe: every public method takes the engine's lock; waiting threads release it between
// progress passes and block on the transport's wakeup fd when nothing happens.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "core/status.h"
#include "p2p/registration_cache.h"
#include "p2p/wire.h"
#include "transport/transport.h"

namespace rcc::p2p {

// Message contexts keep user point-to-point traffic and collective traffic apart.
constexpr uint32_t kUserContext = 0;
constexpr uint32_t kCollectiveContext = 1;

struct Request;

// Eager messages by how they travelled (docs/transport.md): for tests and diagnostics.
struct EngineCounters {
  uint64_t headed_sent = 0, bare_sent = 0, anchored_sent = 0;
  uint64_t headed_received = 0, bare_received = 0, anchored_received = 0;
};

class Engine {
 public:
  // Connects the full mesh: exchanges transport addresses, slot areas and credit areas through the
  // store, under keys starting with key_prefix (one per communicator).
  static Status create(std::unique_ptr<transport::Transport> transport, bootstrap::StoreClient& store,
                       const std::string& key_prefix, int rank, int size, double timeout_s,
                       std::unique_ptr<Engine>* out);
  ~Engine();

  // *out is null when the send completed as it was posted (a small message to another rank, copied
  // into the transport's staging): there is nothing to wait for, and wait(nullptr) returns success.
  Status isend(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out);
  Status send(const void* buffer, size_t bytes, int peer, int tag, uint32_t context);
  Status irecv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out);
  // irecv + wait under one hold of the lock.
  Status recv(void* buffer, size_t bytes, int peer, int tag, uint32_t context);
  // done is true once the request finished; its status is then returned by finish().
  Status test(Request* request, bool* done);
  // Waits (progressing) until request is done, frees it and returns its status; the message of a
  // failed request becomes this thread's last error. A null request is a completed send.
  Status wait(Request* request);
  // Waits for all; frees all; returns the first failure. Null entries are completed sends.
  Status wait_all(Request* const* requests, size_t count);
  // Frees a finished request and returns its status.
  Status finish(Request* request);

  // Every pending and later operation fails with RCC_ERR_ABORTED. Never blocks on peers.
  void abort();
  // Reports a dead peer (from the liveness monitor's thread; does not take the engine's lock). The
  // communicator is then broken: every pending and later operation fails with RCC_ERR_PEER_FAILED
  // and a message naming that peer.
  void peer_failed(int peer, const std::string& why);

  // One progress pass (delivers what arrived, sends what is queued). For waits outside the engine,
  // such as the rendezvous barrier at teardown, so that a last message still in flight goes out.
  void progress();

  // Whether a peer failed or the communicator was aborted (then teardown must not wait for peers).
  bool broken();
  // One progress pass, then RCC_ERR_ABORTED / the peer failure (naming the rank) if the
  // communicator can no longer be used. For waits outside the engine (shared-memory collectives).
  Status health();
  // Cheap, lock-free: whether a failure or abort may have happened (then call health()).
  bool maybe_unusable() const {
    return unusable_.load(std::memory_order_acquire) || has_reported_failures_.load(std::memory_order_acquire);
  }

  // Whether this host runs more ranks than it has cores for them: then waiting threads yield the
  // core while they spin. Set once, before the communicator is used.
  void set_oversubscribed(bool oversubscribed) {
    oversubscribed_ = oversubscribed;
    // RCC_SPIN_COUNT=auto: with a core to itself a rank polls for milliseconds before sleeping (a
    // wake-up costs more than the polls, and a zero-copy transfer can outlast a short spin).
    if (!spin_count_explicit_) spin_count_ = oversubscribed ? kCrowdedSpins : kDedicatedSpins;
  }

  // Read it while no other thread uses the engine.
  const EngineCounters& counters() const { return counters_; }

  int rank() const { return rank_; }
  int size() const { return size_; }
  const char* transport_name() const { return transport_->name(); }

 private:
  struct PeerState;
  struct Unexpected;

  Engine(std::unique_ptr<transport::Transport> transport, int rank, int size);
  Status connect(bootstrap::StoreClient& store, const std::string& key_prefix, double timeout_s);

  Status progress_locked();
  Status handle_event(const transport::Event& event);
  Status handle_slot(int peer, uint32_t slot);
  // Polled delivery: consumes the bare eager message in the slot (its notice came).
  Status handle_bare(int peer, uint32_t slot);
  // Polled delivery: consumes the anchored eager message in the slot (its anchor byte changed).
  Status handle_anchored(int peer, uint32_t slot);
  // After a slot message was handled: counts it delivered; the slot is consumed (credits returned
  // when due) at once, or, polled, by release_delivered at the next pass or when the next message
  // from the peer is found, whichever comes first.
  Status release_slot(int peer, uint64_t offset, uint64_t written);
  // Polled delivery: zeroes what the delivered but unreleased slot message wrote and the header's
  // sequence word, re-arms the anchor byte, counts the slot consumed and returns credits when due.
  Status release_delivered(int peer);
  // A headerless (bare or anchored) message: `length` payload bytes at `offset` in the slot, with
  // the tag and context of the peer's previous eager message; matched, then the slot released.
  Status deliver_payload(int peer, uint32_t slot, uint64_t offset, uint64_t length);
  // Polled delivery: consumes every slot message of the peer that has landed whole; counts them.
  Status poll_slots(int peer, uint64_t* delivered);
  // Polled delivery: before sleeping, asks every peer to notify its next slot message.
  Status announce_sleep();
  Status handle_fin(int peer, uint32_t request_index);
  Status handle_write_done(uint64_t cookie);

  Status post_slot_message(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes);
  Status write_slot(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes);
  // An eager message without its header (ImmKind::kBareSlot): the payload and a notice.
  Status write_bare(int peer, const void* payload, size_t bytes);
  // Whether the next eager message to the peer, which repeats the previous one's tag and context,
  // may go anchored (wire.h: no header, no notice) rather than bare or with a header.
  bool anchored_allowed(int peer, const void* payload, size_t bytes);
  Status write_anchored(int peer, const void* payload, size_t bytes);
  // Copies a headerless message's payload to `offset` in the next staging slot and writes it to
  // the same place in the peer's slot; counts the slot sent.
  Status write_payload(int peer, const void* payload, size_t bytes, uint64_t offset, bool notify, uint32_t imm);
  // Whether this many unreported consumptions make a credit word due (a quarter of the slots).
  bool credits_due(uint64_t unreported) const { return unreported >= slots_ / 4; }
  Status flush_pending(int peer);
  Status send_credits(int peer, bool force);
  // Writes this rank's whole credit word (consumption and sleep epoch) into the peer's memory.
  Status write_credit_word(int peer);
  Status send_cts(Request* receive, const Unexpected& rts);
  Status start_rendezvous_write(Request* send, uint64_t target, const std::vector<uint8_t>& key, uint64_t bytes,
                                uint64_t receiver_request);

  void match_or_queue_eager(int peer, const SlotHeader& header, const uint8_t* payload);
  void complete(Request* request, Status status, const std::string& message = {});
  void fail_peer_locked(int peer, Status status, const std::string& message);
  Status wait_locked(std::unique_lock<std::mutex>& lock, Request* request);
  Status finish_locked(Request* request);
  Status irecv_locked(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out);
  Request* new_request();
  void free_request(Request* request);
  Request* request_at(uint64_t index);
  Status check_usable(int peer);
  // How many of my slot messages / FINs the peer has consumed: the newer of its credit word and
  // the credits piggybacked on its slot messages.
  uint64_t slots_consumed_by(int peer);
  uint64_t fins_consumed_by(int peer);
  // Whether some message waits for the peer's credits (which arrive without a notice).
  bool waiting_for_credits() const;
  uint8_t* recv_slot(int peer, uint32_t slot);
  uint8_t* send_slot(int peer, uint32_t slot);
  // The address of my slot in the peer's receive area.
  uint64_t remote_slot(int peer, uint32_t slot) const;

  std::mutex mutex_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<RegistrationCache> registrations_;  // before the areas: destroyed after them
  int rank_;
  int size_;
  size_t eager_limit_;
  size_t slot_bytes_;
  uint32_t slots_;  // per peer
  static constexpr int kCrowdedSpins = 2000, kDedicatedSpins = 65536;
  int spin_count_ = kCrowdedSpins;
  bool spin_count_explicit_ = false;
  bool oversubscribed_ = true;  // until told otherwise: yielding is the safe default
  bool polled_ = false;         // slot messages are found by polling (transport's polled_delivery)
  uint64_t sleep_epoch_ = 0;    // polled: how often this rank announced that it goes to sleep
  uint64_t last_pass_delivered_ = 0;  // slot messages the last progress pass found by polling
  double timeout_s_;
  bool aborted_ = false;
  EngineCounters counters_;

  // Registered areas: receive slots (peers write), send staging, credit words (peers write), credit staging.
  std::vector<uint8_t> recv_area_, send_area_;
  std::vector<CreditWord> credit_area_, credit_staging_;
  std::unique_ptr<transport::Memory> recv_memory_, send_memory_, credit_memory_, credit_staging_memory_;

  std::vector<PeerState> peers_;
  std::vector<Request*> requests_;       // index -> request (the FIN immediate names it)
  std::vector<uint32_t> free_indexes_;
  std::vector<transport::Event> events_;  // reused by every progress pass

  // Set once a peer failed: the first failure, reported to every later call.
  Status broken_ = RCC_SUCCESS;
  std::string broken_message_;
  // Failures reported from other threads, applied by the next progress pass.
  std::mutex reported_mutex_;
  std::vector<std::pair<int, std::string>> reported_failures_;
  std::atomic<bool> has_reported_failures_{false};
  std::atomic<bool> unusable_{false};  // broken_ or aborted_ set (readable without the lock)
};

// A pending send or receive. Owned by the engine until finish()/wait().
struct Request {
  enum class Kind { kSend, kRecv } kind = Kind::kSend;
  uint32_t index = 0;
  int peer = -1;
  int tag = 0;
  uint32_t context = 0;
  void* buffer = nullptr;
  size_t bytes = 0;      // posted length
  size_t received = 0;   // bytes that arrived (receives)
  bool done = false;
  bool in_use = false;
  Status status = RCC_SUCCESS;
  std::string error;
  std::shared_ptr<transport::Memory> memory;  // registration of a large buffer (from the cache)
  std::unique_ptr<transport::RemoteKey> remote_key;
};

}  // namespace rcc::p2p
