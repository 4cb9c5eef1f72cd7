// The verbs backend: one RC queue pair per peer on one device port, one completion queue with a
// completion channel, writes to self done with memcpy. See docs/transport.md.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/refusals.h"
#include "transport/transport.h"
#include "transport/verbs/device.h"
#include "transport/verbs/verbs_transport.h"
#include "transport/verbs/wire.h"

namespace rcc::transport::verbs {

// wr_id layout: bit 63 set for receives; bits 32..62 the peer; bits 0..31 the receive slot or the
// low 32 bits of the send sequence number.
constexpr uint64_t kRecvBit = 1ull << 63;
inline uint64_t make_wr_id(bool recv, int peer, uint32_t low) {
  return (recv ? kRecvBit : 0) | (static_cast<uint64_t>(peer) << 32) | low;
}
inline int wr_peer(uint64_t wr_id) { return static_cast<int>((wr_id & ~kRecvBit) >> 32); }

class VerbsMemory : public Memory {
 public:
  ~VerbsMemory() override {
    if (mr != nullptr) ibv_dereg_mr(mr);
  }
  ibv_mr* mr = nullptr;
};

class VerbsRemoteKey : public RemoteKey {
 public:
  int peer = -1;
  KeyInfo key;
};

// One send-side work request not yet handed to the device.
struct PendingWr {
  enum class Op : uint8_t { kWrite, kWriteImm, kNotifySend };
  Op op = Op::kWrite;
  uint64_t local_addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t imm = 0;
  uint64_t notify_length = 0;  // kNotifySend: bytes of the whole notified write
  uint64_t cookie = 0;         // non-zero only on the last request of a write()
};

struct Peer {
  ibv_qp* qp = nullptr;
  rdma_cm_id* cm_id = nullptr;  // iWARP
  QpEndpoint local;
  RankAddress remote;
  bool connected = false;
  bool failed = false;
  std::deque<PendingWr> queue;    // waiting for a send-queue slot
  std::vector<uint64_t> cookies;  // by sequence % depth: cookie of each posted request
  uint64_t posted = 0;            // requests posted so far
  uint64_t completed = 0;         // requests known complete (signalled ones imply earlier ones)
  uint32_t unsignalled = 0;       // requests posted since the last signalled one
  uint32_t max_inline = 0;        // writes up to this many bytes are posted inline
  uint32_t path_mtu_bytes = 0;    // packet payload on the path to the peer (RoCE/IB; 0 for iWARP)
  // iWARP set-up: dialling attempts so far, when to dial again, what ended the last attempt.
  int connect_attempts = 0;
  std::chrono::steady_clock::time_point retry_at{};
  std::string last_connect_failure;
};

class VerbsTransport : public Transport {
 public:
  explicit VerbsTransport(const Options& options) : options_(options) {}
  ~VerbsTransport() override;
  Status init();

  const char* name() const override { return "verbs"; }
  Status local_address(std::vector<uint8_t>* blob) override;
  Status connect_all(const std::vector<std::vector<uint8_t>>& blobs) override;
  Status register_memory(void* addr, size_t length, std::unique_ptr<Memory>* out) override;
  Status pack_key(Memory& memory, std::vector<uint8_t>* key) override;
  Status import_key(int peer, const std::vector<uint8_t>& key, std::unique_ptr<RemoteKey>* out) override;
  Status write(int peer, const void* src, size_t length, Memory& local, uint64_t remote_addr, RemoteKey& remote,
               bool notify, uint32_t imm, uint64_t cookie) override;
  Status poll(std::vector<Event>* events) override;
  Status wait_for_event(int timeout_ms) override;
  bool polled_delivery() const override { return polled_delivery_; }
  size_t notice_packet_bytes(int peer) const override {
    return use_imm_ && peer >= 0 && peer < options_.size ? peers_[peer].path_mtu_bytes : 0;
  }

  VerbsInfo info() const;
  void set_max_chunk(size_t bytes) { max_chunk_ = bytes; }

 private:
  // Set-up steps.
  Status create_shared_resources();
  Status create_queue_pair(int peer, rdma_cm_id* cm_id);
  Status post_initial_receives(int peer);
  Status connect_by_hand(const std::vector<RankAddress>& addresses);
  // iWARP (iwarp_connect.cc).
  Status start_listener();
  Status connect_through_cm();
  Status start_connect(int peer);  // dials a higher rank
  // Gives up the current attempt with a peer (parked) and schedules the next.
  void abandon_attempt(int peer, const std::string& why);
  void park(int peer);  // moves the peer's id and queue pair aside until the transport goes
  // *refused: an id to destroy once the event is acknowledged (a rejected stranger's request).
  Status handle_cm_event(rdma_cm_event* event, int* established, rdma_cm_id** refused);
  std::string requester(rdma_cm_id* id) const;  // "1.2.3.4:5678"

  // Data path.
  Status post_receive(int peer, uint32_t slot);
  Status post_queued(int peer);
  Status submit(int peer, const PendingWr& wr);         // posts now, or queues behind the others
  Status post_one(int peer, const PendingWr& pending);  // hands one request to the device
  void drain_completions();
  void handle_completion(const ibv_wc& wc);
  void handle_async_events();
  void fail_peer(int peer, Status status, const std::string& message);
  std::string describe_local() const;
  std::string describe_peer(int peer) const override;

  Options options_;
  PortChoice port_;
  GidChoice gid_;
  bool use_imm_ = true;
  bool polled_delivery_ = false;  // RCC_IB_POLLED_EAGER
  size_t max_chunk_ = 0;
  uint32_t depth_ = 0;     // send-queue slots per peer
  uint32_t receives_ = 0;  // receives posted per peer

  ibv_context* ctx_ = nullptr;  // iWARP: owned by librdmacm (the listener's and the peers' ids)
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  // Small registered buffers: notices received (peer x receives_) and sent (peer x depth_).
  std::vector<NotifyMessage> recv_slots_;
  std::vector<NotifyMessage> send_slots_;
  ibv_mr* recv_mr_ = nullptr;
  ibv_mr* send_mr_ = nullptr;
  std::vector<Peer> peers_;

  rdma_event_channel* cm_channel_ = nullptr;
  rdma_cm_id* listener_ = nullptr;
  uint32_t listen_ipv4_ = 0;  // network byte order
  uint16_t listen_port_ = 0;
  bootstrap::RefusalLog refusals_{"the iWARP connection listener"};
  std::vector<rdma_cm_id*> parked_ids_;  // of attempts given up during set-up (park)

  std::vector<Event> pending_;  // events found but not yet returned by poll()
  uint64_t polls_ = 0;
  VerbsInfo counters_;
};

// Turns a failed work completion into the status and hint of a kError event.
Status completion_error_status(ibv_wc_status status);
const char* completion_error_hint(ibv_wc_status status);

}  // namespace rcc::transport::verbs
