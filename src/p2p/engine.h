// The point-to-point engine: tagged, ordered messages between ranks over any Transport.
//
// Small messages (<= RCC_EAGER_LIMIT; RCC_EAGER_LIMIT_NET to peers on other hosts over a backend
// that copies anyway) are copied into a pre-registered slot of the receiver by one
// write (eager.h: headed, bare or anchored); the receiver copies them out and returns the slot
// through its credits. Large messages are zero copy: the sender announces them (RTS), the receiver
// answers with the address and key of its own buffer (CTS), and the sender writes straight into it
// with a notice (FIN) that completes the receive. See docs/transport.md.
//
// The engine's parts, one file each: set-up (setup.cc), matching (matching.h), the eager slots and
// credits (slots.cc, eager*.cc), rendezvous (rendezvous.cc), progress and waiting (progress.cc),
// requests and the calls below (engine.cc).
//
// Thread-safe: every public method takes the engine's lock; waiting threads release it between
// progress passes and block on the transport's wakeup fd when nothing happens.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/health.h"
#include "base/status.h"
#include "base/wait.h"
#include "bootstrap/exchange.h"
#include "p2p/eager.h"
#include "p2p/group.h"
#include "p2p/matching.h"
#include "p2p/peer_state.h"
#include "p2p/registration_cache.h"
#include "p2p/request.h"
#include "p2p/reserved_area.h"
#include "p2p/slot_layout.h"
#include "p2p/wire.h"
#include "transport/transport.h"

namespace rcc::p2p {

struct AreaHeader;  // connections.cc: where a rank's areas lie, in its card

class Engine final {
 public:
  // Publishes this rank's card (transport address, where its slot and credit areas lie) through the
  // job's exchange (its ranks are the engine's) and connects to a peer when it first needs it
  // (RCC_CONNECT=lazy, on backends that can: transport.h's connects_on_demand), or to every peer
  // now (RCC_CONNECT=eager, or a backend that cannot). The exchange must outlive the engine when
  // it serves lookups. Group 0 (world_group()) holds every rank.
  // hosts: where the exchange's ranks run (null when unknown: one host): peers on other hosts
  // reached by a copying backend get larger eager slots (slot_layout.h).
  static Status create(std::unique_ptr<transport::Transport> transport, bootstrap::Exchange& exchange,
                       const bootstrap::HostMap* hosts, double timeout_s, std::unique_ptr<Engine>* out);
  ~Engine();

  // How waits spin, yield and sleep (base/wait.h). Set before the engine is used.
  void set_wait_policy(const WaitPolicy& policy) { wait_policy_ = policy; }

  // *out is null when the send completed as it was posted (a small message to another rank, copied
  // into the transport's staging): there is nothing to wait for, and wait(nullptr) returns success.
  // synchronous: the send completes only once a receive matched it (MPI's synchronous mode): it
  // always goes by rendezvous, whose clear-to-send says so, even when small (or of no bytes).
  Status isend(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out,
               bool synchronous = false);
  Status send(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, bool synchronous = false);
  // peer may be kAnySource and tag kAnyTag (matching.h).
  Status irecv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out);
  // irecv + wait under one hold of the lock; *info (if not null) says what arrived.
  Status recv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, MessageInfo* info = nullptr);
  // Whether a message a receive of (peer, tag, context) would match has arrived, without taking it.
  // *found is false when none has (after one progress pass).
  Status iprobe(int peer, int tag, uint32_t context, bool* found, MessageInfo* info);
  // Cancels a receive no message matched yet: it is taken off and completes with
  // RCC_ERR_CANCELLED (*cancelled true). Any other request is left to complete as it would.
  Status cancel(Request* request, bool* cancelled);
  // done is true once the request finished; its status is then returned by finish().
  Status test(Request* request, bool* done);
  // Waits (progressing) until request is done, frees it and returns its status; the message of a
  // failed request becomes this thread's last error. A null request is a completed send.
  Status wait(Request* request, MessageInfo* info = nullptr);
  // Waits for all; frees all; returns the first failure. Null entries are completed sends.
  Status wait_all(Request* const* requests, size_t count);
  // Frees a finished request and returns its status.
  Status finish(Request* request, MessageInfo* info = nullptr);

  // Groups (group.h). A new group's id must be unused by every member: the members agree on it,
  // e.g. as the largest next_group_id() among them. The group lives until remove_group.
  Group& world_group() { return *world_; }
  uint32_t next_group_id();
  Group* add_group(uint32_t id, std::vector<int> members);
  // Also for an id a rank takes no part in (split with RCC_UNDEFINED): it is never reused here.
  void reserve_group_id(uint32_t id);
  void remove_group(Group* group);

  // A group that works for another (a communicator's levels, comm/levels.cc) breaks when that one
  // does, and ends with it when aborted: its members may all live while a rank of the other died,
  // and the ranks it waits for then never come.
  void tie(Group& level, const Group& owner);

  // Every pending and later operation of the group fails with RCC_ERR_ABORTED. Never blocks on peers.
  void abort(Group& group);
  // Reports a dead peer (from the liveness monitor's thread; does not take the engine's lock).
  // Every group holding it is then broken: its pending and later operations fail with
  // RCC_ERR_PEER_FAILED and a message naming that peer.
  void peer_failed(int peer, const std::string& why);

  // One progress pass (delivers what arrived, sends what is queued). For waits outside the engine,
  // such as the rendezvous barrier at teardown, so that a last message still in flight goes out.
  void progress();

  // Whether a peer failed or a group was aborted (then the engine's teardown must not wait for peers).
  bool broken();
  // Whether some peer failed (the liveness watcher or the transport said so).
  bool peer_has_failed();
  // One progress pass, then the group's state (Group::health).
  Status health(const Group& group);
  bool maybe_unusable(const Group& group) const {
    return group.unusable_.load(std::memory_order_acquire) || has_reported_failures_.load(std::memory_order_acquire);
  }

  // What a dump of a stuck rank shows (comm/call_dump.h): every unfinished request, and the
  // members (engine ranks) of every group.
  struct PendingRequest {
    uint32_t context;
    int peer;  // engine rank, or kAnySource
    int tag;
    bool send;
    size_t bytes;
  };
  using GroupMembers = std::vector<std::pair<uint32_t, std::vector<int>>>;
  std::vector<PendingRequest> pending_requests();
  GroupMembers group_members();
  // Called (under the engine's lock: it must not call the engine) when a wait times out, before
  // the timed-out request is ended, with what is unfinished at that moment.
  using TimeoutHook = std::function<void(const GroupMembers&, const std::vector<PendingRequest>&)>;
  void set_timeout_hook(TimeoutHook hook);

  // Read it while no other thread uses the engine.
  const EngineCounters& counters() const { return counters_; }

  // What this rank holds for its peers, for reports (rcc-bench, the INFO line at teardown).
  struct Footprint {
    int connected_peers = 0;          // peers this rank has connected to (set up to write to)
    bool on_demand = false;           // connections are made at first use
    size_t eager_reserved_bytes = 0;  // the slot areas' address space
    size_t eager_resident_bytes = 0;  // what of it holds memory now
  };
  Footprint footprint();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const char* transport_name() const { return transport_->name(); }

 private:
  Engine(std::unique_ptr<transport::Transport> transport, int rank, int size);
  // setup.cc
  Status connect(bootstrap::Exchange& exchange, double timeout_s);
  Status read_settings(const bootstrap::HostMap* hosts);
  // Sets the peer's state up from its card (transport address and areas) and, on demand, connects
  // the transport to it. Idempotent. Under the lock.
  Status connect_peer(int peer);
  Status adopt_card(int peer, const std::vector<uint8_t>& card);
  // Whether a card's settings agree with this rank's; *out its area header at *header_at.
  Status check_card(int peer, const std::vector<uint8_t>& card, AreaHeader* out, size_t* header_at);
  // At set-up: every gathered card, or one neighbour's (the settings that must agree).
  Status check_cards();
  // connections.cc: this rank's card, and the transport's part of a peer's.
  Status make_card(std::vector<uint8_t>* card);
  static Status transport_address_of(int peer, const std::vector<uint8_t>& card, std::vector<uint8_t>* address);
  // A peer's state is set up before anything is written to it or read from its slots.
  Status ensure_connected(int peer) {
    return peers_[static_cast<size_t>(peer)].connected ? RCC_SUCCESS : connect_peer(peer);
  }

  // engine.cc: requests and the calls' bodies.
  Request* new_request();
  void free_request(Request* request);
  Request* request_at(uint64_t index);
  // The group of the context: RCC_ERR_ABORTED, its failure, or success.
  Status check_usable(uint32_t context);
  Status group_status(const Group* group) const;  // group_state, recorded as this thread's error
  // What ends a group's operations and why (success while it works); decides, never logs.
  static Status group_state(const Group* group, std::string* message);
  Group* find_group(uint32_t id) const;
  // Ends every unfinished request of a group that became unusable, and every one with `peer`
  // (>= 0: it failed), taking posted receives off the matcher.
  void end_requests_of_unusable(int peer);
  // Marks a usable group broken with status and message (its later operations fail with them).
  void break_group(Group* group, Status status, std::string message);
  // dropped_groups_: records that a destroyed group's queued eager messages are dropped.
  void drop_eager_messages_of(uint32_t group_id);
  bool eager_messages_dropped(uint32_t group_id) const;
  void break_tied_locked();  // Engine::tie
  void complete(Request* request, Status status, const std::string& message = {});
  // Ends a request with a failure: at once, or, while a live peer may still write into its buffer
  // or the transport read from it, once that transfer is over (request.h, transfer_in_flight).
  void end_request(Request* request, Status status, const std::string& message);
  // A request's transfer is over (FIN, refusal or write completion): success, or the failure that
  // ended it meanwhile.
  void finish_transfer(Request* request);
  // The one place a matched message lands in its receive: copied, or the receive fails as
  // truncated (a message longer than the receive).
  void deliver(Request* receive, int source, const SlotHeader& header, const void* payload);
  Status irecv_locked(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out);
  Status send_to_self(const void* buffer, size_t bytes, int tag, uint32_t context, Request* request, bool synchronous);
  Status finish_locked(Request* request, MessageInfo* info);
  void fail_peer_locked(int peer, Status status, const std::string& message);

  // slots.cc: the eager slots and their credits.
  SlotLink link_to(int peer);
  Status post_slot_message(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes);
  Status write_slot(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes);
  Status flush_pending(int peer);
  Status send_credits(int peer, bool force);
  // Writes this rank's whole credit word (consumption and sleep epoch) into the peer's memory.
  Status write_credit_word(int peer);
  // A message found in a slot: headed (handle_slot), bare (its notice came), anchored (its anchor
  // byte changed). Each ends by releasing the slot.
  Status handle_slot(int peer, uint32_t slot);
  Status handle_bare(int peer, uint32_t slot);
  Status handle_anchored(int peer, uint32_t slot);
  // Matches an eager payload (or parks it unexpected).
  void arrive_eager(int peer, const SlotHeader& header, const uint8_t* payload);
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
  // How many of my slot messages / FINs the peer has consumed: the newer of its credit word and
  // the credits piggybacked on its slot messages.
  uint64_t slots_consumed_by(int peer) const;
  uint64_t fins_consumed_by(int peer) const;
  // Whether some message waits for the peer's credits (which arrive without a notice).
  bool waiting_for_credits() const;
  uint8_t* recv_slot(int peer, uint32_t slot);
  uint8_t* send_slot(int peer, uint32_t slot);
  uint64_t remote_slot(int peer, uint32_t slot) const;

  // rendezvous.cc: large messages.
  Status start_large_send(Request* send, SlotHeader header);
  Status send_cts(Request* receive, const Arrival& rts);
  Status handle_rts(int peer, const SlotHeader& header);
  Status handle_cts(int peer, const SlotHeader& header, const uint8_t* key);
  Status handle_fin(int peer, uint32_t request_index, bool refused);
  // Answers a clear-to-send whose send is gone with a refusal (ImmKind::kFinRefused).
  Status refuse_cts(int peer, uint32_t receiver_request);
  Status handle_write_done(uint64_t cookie);

  std::vector<PendingRequest> pending_requests_locked() const;
  GroupMembers group_members_locked() const;

  // progress.cc
  Status progress_locked();
  Status handle_event(const transport::Event& event);
  Status wait_locked(std::unique_lock<std::mutex>& lock, Request* request);

  std::mutex mutex_;
  // Registered areas: receive slots (peers write), send staging, credit words (peers write), credit
  // staging. Declared before transport_, so they are freed after it: the transport's destructor
  // still progresses operations in flight (a failed job tears down mid-transfer), which read the
  // send staging and land writes in the receive slots.
  ReservedArea recv_area_, send_area_;
  std::vector<CreditWord> credit_area_, credit_staging_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<RegistrationCache> registrations_;  // before the areas' registrations: destroyed after them
  int rank_;
  int size_;
  TimeoutHook timeout_hook_;
  uint32_t slots_ = 0;            // per peer
  SlotLayout layout_;             // where each peer's slots lie, here and in the peers' areas
  uint32_t encodings_ = kHeaded;  // eager encodings this rank takes and sends
  WaitPolicy wait_policy_;
  bool polled_ = false;               // slot messages are found by polling (transport's polled_delivery)
  uint64_t sleep_epoch_ = 0;          // polled: how often this rank announced that it goes to sleep
  uint64_t last_pass_delivered_ = 0;  // slot messages the last progress pass found by polling
  int first_polled_peer_ = 0;         // rotates, so no peer's slots are always looked at first
  double timeout_s_ = 60;
  EngineCounters counters_;

  // Connections. On demand: peers' cards come from directory_ (lookups) or cards_ (gathered once
  // at set-up when the exchange serves no lookups). connected_peers_ lists the peers set up, in the
  // order they were: the passes over peers (polling, queued messages) visit only those.
  bool on_demand_ = false;
  bootstrap::Exchange* directory_ = nullptr;
  std::vector<std::vector<uint8_t>> cards_;
  double lookup_timeout_s_ = 60;
  std::vector<int> connected_peers_;

  // Groups by id (a few per job); world_ is group 0. Some group is broken or aborted: then the
  // checks on every call look the caller's group up (else they cost a branch).
  std::vector<std::unique_ptr<Group>> groups_;
  Group* world_ = nullptr;
  uint32_t next_group_id_ = 1;
  bool some_group_unusable_ = false;
  // Ids of destroyed groups whose queued eager messages are dropped, not written: the group was
  // aborted or broken when destroyed, or one of its sends waiting for room ended after it was (its
  // later messages would be out of step). Ids are never reused.
  std::vector<uint32_t> dropped_groups_;
  bool some_peer_failed_ = false;

  // Their registrations (the areas are declared before transport_).
  std::unique_ptr<transport::Memory> recv_memory_, send_memory_, credit_memory_, credit_staging_memory_;

  std::vector<PeerState> peers_;
  Matcher matcher_;
  std::vector<Request*> requests_;  // index -> request (the FIN immediate names it)
  std::vector<uint32_t> free_indexes_;
  std::vector<transport::Event> events_;  // reused by every progress pass

  // Failures reported from other threads, applied by the next progress pass.
  std::mutex reported_mutex_;
  std::vector<std::pair<int, std::string>> reported_failures_;
  std::atomic<bool> has_reported_failures_{false};
};

}  // namespace rcc::p2p
