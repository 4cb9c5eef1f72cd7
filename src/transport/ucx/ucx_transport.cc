// UCX backend: the fallback where there is no RDMA port (shared memory on one host, TCP across).
//
// UCP has no write-with-immediate, so every write is an active message whose header carries the
// target address, the immediate and whether the receiver wants a notice; the receiver lands the
// payload at that address after checking it lies in a range it registered — by copy for eager
// messages, zero copy through UCX's rendezvous (ucp_am_recv_data_nbx into the target) for large
// ones. (ucp_put_nbx would need memory allocated by UCX's shared-memory domains; rcc registers
// the application's own buffers.) Registering only records the range; a key names the range and
// is checked against every write. Memory is not mapped with ucp_mem_map: UCX registers what its
// rendezvous needs through its own cache, and a long-lived ucp_mem_map of page-rounded ranges
// beside that cache delivered wrong bytes over TCP (16-byte patches of the sender's heap in
// 9000- and 70001-byte messages, in about one run in four with many senders; gone with
// UCX_RCACHE_ENABLE=n, UCX_ZCOPY_THRESH=inf, or without the mapping). Every message
// carries a per-peer sequence number and notices are handed up in that order even when a
// rendezvous finishes after a later eager message.
#include <poll.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <map>

#include "base/log.h"
#include "base/settings.h"
#include "transport/transport.h"

namespace rcc::transport {
namespace {

constexpr unsigned kAmId = 7;
constexpr uint32_t kKeyMagic = 0x52434b31;  // "RCK1"

// A key: the registered range, framed so that a damaged or foreign key is refused.
struct Key {
  uint32_t magic;
  uint32_t length;  // sizeof(Key)
  uint64_t addr;
  uint64_t bytes;
};

struct AmHeader {
  uint64_t target;
  uint64_t length;
  uint64_t seq;
  uint32_t imm;
  int32_t sender;   // the writing rank
  uint32_t notify;  // 0: land the bytes without an event (credit words)
  uint32_t unused;
};

class UcxMemory : public Memory {
 public:
  std::multimap<uint64_t, size_t>* ranges = nullptr;
  ~UcxMemory() override {
    if (ranges != nullptr) {
      auto [first, last] = ranges->equal_range(reinterpret_cast<uint64_t>(addr));
      for (auto it = first; it != last; ++it) {
        if (it->second == length) {
          ranges->erase(it);
          break;
        }
      }
    }
  }
};

class UcxRemoteKey : public RemoteKey {
 public:
  uint64_t addr = 0;  // the peer's registered range
  uint64_t bytes = 0;
};

class UcxTransport;

// Per in-flight operation; freed in its completion callback.
struct Operation {
  UcxTransport* transport;
  int peer;
  uint64_t cookie;  // send side: kWriteDone cookie
  AmHeader header;  // send side: kept alive until completion; receive side: what landed
};

struct PendingNotice {  // a write about to be sent
  AmHeader header;
  const void* src;
  uint64_t cookie;
};

struct Peer {
  ucp_ep_h ep = nullptr;
  uint64_t next_send_seq = 0;
  uint64_t next_deliver_seq = 0;
  bool failed = false;
  std::map<uint64_t, Event> arrived_early;  // notices that completed before an earlier one
};

class UcxTransport : public Transport {
 public:
  explicit UcxTransport(const Options& options) : options_(options), peers_(options.size) {}

  ~UcxTransport() override {
    // Let operations still in flight (a failed job tears down mid-transfer) finish or fail first:
    // closing an endpoint with queued operations trips an assertion inside UCX's CMA transport.
    for (const ArrivedRendezvous& arrived : rendezvous_) ucp_am_data_release(worker_, arrived.descriptor);
    rendezvous_.clear();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (in_flight_ > 0 && std::chrono::steady_clock::now() < deadline) ucp_worker_progress(worker_);
    for (Peer& peer : peers_) {
      if (peer.ep == nullptr) continue;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      ucs_status_ptr_t request = ucp_ep_close_nbx(peer.ep, &param);
      if (UCS_PTR_IS_PTR(request)) {
        while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
        ucp_request_free(request);
      }
    }
    if (worker_ != nullptr) ucp_worker_destroy(worker_);
    if (context_ != nullptr) ucp_cleanup(context_);
  }

  Status init() {
    int64_t net_eager = 0;
    RCC_RETURN_IF_ERROR(settings::integer("RCC_UCX_NET_EAGER_BYTES", &net_eager));
    net_eager_bytes_ = static_cast<size_t>(net_eager);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    ucs_status_t status = ucp_init(&params, nullptr, &context_);
    if (status != UCS_OK) {
      return fail(RCC_ERR_NO_DEVICE, "ucp_init failed: %s (check UCX_TLS / UCX_NET_DEVICES)",
                  ucs_status_string(status));
    }
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    status = ucp_worker_create(context_, &worker_params, &worker_);
    if (status != UCS_OK) return fail(RCC_ERR_TRANSPORT, "ucp_worker_create failed: %s", ucs_status_string(status));
    status = ucp_worker_get_efd(worker_, &wakeup_fd_);
    if (status != UCS_OK) return fail(RCC_ERR_TRANSPORT, "ucp_worker_get_efd failed: %s", ucs_status_string(status));

    ucp_am_handler_param_t handler{};
    handler.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                         UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    handler.id = kAmId;
    handler.cb = &UcxTransport::on_active_message;
    handler.arg = this;
    handler.flags = UCP_AM_FLAG_WHOLE_MSG;
    status = ucp_worker_set_am_recv_handler(worker_, &handler);
    if (status != UCS_OK)
      return fail(RCC_ERR_TRANSPORT, "ucp_worker_set_am_recv_handler failed: %s", ucs_status_string(status));
    return RCC_SUCCESS;
  }

  const char* name() const override { return "ucx"; }
  size_t network_copy_bytes() const override { return net_eager_bytes_; }

  Status local_address(std::vector<uint8_t>* blob) override {
    ucp_address_t* address = nullptr;
    size_t length = 0;
    ucs_status_t status = ucp_worker_get_address(worker_, &address, &length);
    if (status != UCS_OK)
      return fail(RCC_ERR_TRANSPORT, "ucp_worker_get_address failed: %s", ucs_status_string(status));
    // Prefix the rank so that a blob handed to the wrong slot is caught.
    std::vector<uint8_t> out(sizeof(int32_t) + length);
    int32_t rank = options_.rank;
    std::memcpy(out.data(), &rank, sizeof rank);
    std::memcpy(out.data() + sizeof rank, address, length);
    ucp_worker_release_address(worker_, address);
    *blob = std::move(out);
    return RCC_SUCCESS;
  }

  Status connect_all(const std::vector<std::vector<uint8_t>>& blobs) override {
    if (static_cast<int>(blobs.size()) != options_.size) {
      return fail(RCC_ERR_INTERNAL, "connect_all got %zu addresses for %d ranks", blobs.size(), options_.size);
    }
    for (int peer = 0; peer < options_.size; ++peer) RCC_RETURN_IF_ERROR(connect(peer, blobs[peer]));
    return RCC_SUCCESS;
  }

  // An endpoint needs only the peer's worker address; a peer writes to this rank before this rank
  // has one toward it (its messages carry the sender's rank).
  bool connects_on_demand() const override { return true; }

  Status connect(int peer, const std::vector<uint8_t>& blob) override {
    if (peer < 0 || peer >= options_.size)
      return fail(RCC_ERR_INTERNAL, "connect: peer %d is not in [0, %d)", peer, options_.size);
    if (peers_[peer].ep != nullptr) return RCC_SUCCESS;
    int32_t rank = -1;
    if (blob.size() <= sizeof rank) return fail(RCC_ERR_TRANSPORT, "UCX address of rank %d is truncated", peer);
    std::memcpy(&rank, blob.data(), sizeof rank);
    if (rank != peer) return fail(RCC_ERR_TRANSPORT, "UCX address given for rank %d belongs to rank %d", peer, rank);
    ucp_ep_params_t params{};
    params.field_mask =
        UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.address = reinterpret_cast<const ucp_address_t*>(blob.data() + sizeof rank);
    // Peer error handling would exclude UCX's shared-memory transports (1.13); dead peers are
    // detected by rcc's own liveness channel instead.
    params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    params.err_handler.cb = &UcxTransport::on_endpoint_error;
    params.err_handler.arg = &error_args_.emplace_back(ErrorArg{this, peer});
    ucs_status_t status = ucp_ep_create(worker_, &params, &peers_[peer].ep);
    if (status != UCS_OK) {
      peers_[peer].ep = nullptr;
      return fail(RCC_ERR_TRANSPORT, "ucp_ep_create to rank %d failed: %s (check UCX_TLS / UCX_NET_DEVICES)", peer,
                  ucs_status_string(status));
    }
    return RCC_SUCCESS;
  }

  Status register_memory(void* addr, size_t length, std::unique_ptr<Memory>* out) override {
    if (addr == nullptr || length == 0) return fail(RCC_ERR_INVALID_ARGUMENT, "register_memory: empty range");
    auto memory = std::make_unique<UcxMemory>();
    memory->addr = addr;
    memory->length = length;
    memory->ranges = &registered_;
    memory->owner = this;
    registered_.emplace(reinterpret_cast<uint64_t>(addr), length);
    *out = std::move(memory);
    return RCC_SUCCESS;
  }

  Status pack_key(Memory& memory, std::vector<uint8_t>* key) override {
    if (memory.owner != this)
      return fail(RCC_ERR_INVALID_ARGUMENT, "pack_key: memory was not registered by this UCX transport");
    const Key packed{kKeyMagic, sizeof(Key), reinterpret_cast<uint64_t>(memory.addr), memory.length};
    key->resize(sizeof packed);
    std::memcpy(key->data(), &packed, sizeof packed);
    return RCC_SUCCESS;
  }

  Status import_key(int peer, const std::vector<uint8_t>& key, std::unique_ptr<RemoteKey>* out) override {
    if (peer < 0 || peer >= options_.size)
      return fail(RCC_ERR_INVALID_ARGUMENT, "import_key: peer %d out of range", peer);
    Key unpacked{};
    if (key.size() == sizeof unpacked) std::memcpy(&unpacked, key.data(), sizeof unpacked);
    if (unpacked.magic != kKeyMagic || unpacked.length != sizeof unpacked || unpacked.addr == 0 ||
        unpacked.bytes == 0 || unpacked.addr + unpacked.bytes < unpacked.addr) {
      return fail(RCC_ERR_INVALID_ARGUMENT,
                  "import_key: the %zu-byte key from rank %d is not a UCX key of this version", key.size(), peer);
    }
    auto remote = std::make_unique<UcxRemoteKey>();
    remote->owner = this;
    remote->addr = unpacked.addr;
    remote->bytes = unpacked.bytes;
    *out = std::move(remote);
    return RCC_SUCCESS;
  }

  Status write(int peer, const void* src, size_t length, Memory& /*local*/, uint64_t remote_addr, RemoteKey& remote,
               bool notify, uint32_t imm, uint64_t cookie) override {
    if (peer < 0 || peer >= options_.size) return fail(RCC_ERR_INVALID_ARGUMENT, "write: peer %d out of range", peer);
    Peer& p = peers_[peer];
    if (p.failed) return fail(RCC_ERR_PEER_FAILED, "write to rank %d: its endpoint has failed", peer);
    if (p.ep == nullptr) return fail(RCC_ERR_INTERNAL, "write to rank %d before connecting to it", peer);
    const auto& key = static_cast<const UcxRemoteKey&>(remote);
    if (remote.owner != this || remote_addr < key.addr || length > key.bytes ||
        remote_addr - key.addr > key.bytes - length) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "write of %zu bytes at 0x%llx to rank %d lies outside the key's range",
                  length, static_cast<unsigned long long>(remote_addr), peer);
    }
    PendingNotice notice{AmHeader{remote_addr, length, p.next_send_seq++, imm, options_.rank, notify ? 1u : 0u, 0}, src,
                         cookie};
    return send_notice(peer, notice);
  }

  Status poll(std::vector<Event>* events) override {
    while (ucp_worker_progress(worker_) != 0) {
    }
    start_rendezvous_receives();
    events->insert(events->end(), std::make_move_iterator(events_.begin()), std::make_move_iterator(events_.end()));
    events_.clear();
    return RCC_SUCCESS;
  }

  Status wait_for_event(int timeout_ms) override {
    if (!events_.empty()) return RCC_SUCCESS;
    ucs_status_t status = ucp_worker_arm(worker_);
    if (status == UCS_ERR_BUSY) return RCC_SUCCESS;  // events are already pending
    if (status != UCS_OK) return fail(RCC_ERR_TRANSPORT, "ucp_worker_arm failed: %s", ucs_status_string(status));
    struct pollfd pfd = {wakeup_fd_, POLLIN, 0};
    ::poll(&pfd, 1, timeout_ms);
    return RCC_SUCCESS;
  }

 private:
  struct ErrorArg {
    UcxTransport* transport;
    int peer;
  };

  Status send_notice(int peer, PendingNotice& notice) {
    auto* op = new Operation{this, peer, notice.cookie, notice.header};
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send = &UcxTransport::on_send_done;
    param.user_data = op;
    // Over a network UCX's rendezvous handshake (its threshold is a few KiB over TCP) waits for the
    // receiver to wake up and progress, then for the sender: 32 KiB one way took 97 us instead of
    // 51 between two hosts at 10 Gbit/s. Larger writes keep it: it saves copies that cost CPU.
    param.flags = notice.header.length <= net_eager_bytes_ && across_network(peer) ? UCP_AM_SEND_FLAG_EAGER : 0;
    ucs_status_ptr_t request = ucp_am_send_nbx(peers_[peer].ep, kAmId, &op->header, sizeof op->header, notice.src,
                                               notice.header.length, &param);
    return finish_post(request, op, "ucp_am_send_nbx");
  }

  Status finish_post(ucs_status_ptr_t request, Operation* op, const char* what) {
    if (UCS_PTR_IS_ERR(request)) {
      int peer = op->peer;
      delete op;
      return fail(RCC_ERR_TRANSPORT, "%s to rank %d failed: %s", what, peer,
                  ucs_status_string(UCS_PTR_STATUS(request)));
    }
    if (request == nullptr) {  // completed in place
      if (op->cookie != 0) push_write_done(op->peer, op->cookie);
      delete op;
      return RCC_SUCCESS;
    }
    // Freed in the callback: ucp_request_free before completion would silence the callback.
    ++in_flight_;
    return RCC_SUCCESS;
  }

  void start_rendezvous_receives() {
    while (!rendezvous_.empty()) {
      ArrivedRendezvous arrived = rendezvous_.front();
      rendezvous_.pop_front();
      auto* op = new Operation{this, arrived.peer, 0, arrived.header};
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      param.cb.recv_am = &UcxTransport::on_rendezvous_landed;
      param.user_data = op;
      ucs_status_ptr_t request = ucp_am_recv_data_nbx(
          worker_, arrived.descriptor, reinterpret_cast<void*>(arrived.header.target), arrived.header.length, &param);
      if (UCS_PTR_IS_ERR(request)) {
        push_error(
            arrived.peer, RCC_ERR_TRANSPORT,
            std::string("UCX: receiving a rendezvous write failed: ") + ucs_status_string(UCS_PTR_STATUS(request)));
        delete op;
      } else if (request == nullptr) {
        deliver(arrived.peer, arrived.header);
        delete op;
      } else {
        ++in_flight_;  // op freed in on_rendezvous_landed
      }
    }
  }

  void push_write_done(int peer, uint64_t cookie) {
    Event event;
    event.kind = EventKind::kWriteDone;
    event.peer = peer;
    event.cookie = cookie;
    events_.push_back(std::move(event));
  }

  void push_error(int peer, Status status, const std::string& message) {
    Event event;
    event.kind = EventKind::kError;
    event.peer = peer;
    event.status = status;
    event.message = message;
    events_.push_back(std::move(event));
  }

  // Hands notices up in per-peer sequence order.
  void deliver(int peer, const AmHeader& header) {
    Peer& p = peers_[peer];
    Event event;
    event.kind = header.notify != 0 ? EventKind::kNotify : EventKind::kWriteDone;  // kWriteDone: no event
    event.peer = peer;
    event.imm = header.imm;
    event.length = header.length;
    if (header.seq != p.next_deliver_seq) {
      p.arrived_early.emplace(header.seq, std::move(event));
      return;
    }
    if (event.kind == EventKind::kNotify) events_.push_back(std::move(event));
    ++p.next_deliver_seq;
    for (auto it = p.arrived_early.begin(); it != p.arrived_early.end() && it->first == p.next_deliver_seq;
         it = p.arrived_early.erase(it)) {
      if (it->second.kind == EventKind::kNotify) events_.push_back(std::move(it->second));
      ++p.next_deliver_seq;
    }
  }

  bool target_is_registered(uint64_t target, uint64_t length) const {
    if (target + length < target) return false;
    for (auto it = registered_.begin(), end = registered_.upper_bound(target); it != end; ++it) {
      if (target + length <= it->first + it->second) return true;
    }
    return false;
  }

  static ucs_status_t on_active_message(void* arg, const void* header_bytes, size_t header_length, void* data,
                                        size_t length, const ucp_am_recv_param_t* param) {
    auto* self = static_cast<UcxTransport*>(arg);
    AmHeader header;
    if (header_length != sizeof header) {
      self->push_error(-1, RCC_ERR_TRANSPORT, "UCX: active message with a malformed header");
      return UCS_OK;
    }
    std::memcpy(&header, header_bytes, sizeof header);
    int peer = header.sender;
    RCC_TRACE("ucx: message from rank %d, %zu bytes, seq %llu, rendezvous %d", peer, length,
              static_cast<unsigned long long>(header.seq), (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0);
    if (peer < 0 || peer >= self->options_.size || header.length != length ||
        !self->target_is_registered(header.target, header.length)) {
      self->push_error(peer, RCC_ERR_TRANSPORT, "UCX: a write targets memory that is not registered here");
      return UCS_OK;
    }
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
      if (length > 0) std::memcpy(reinterpret_cast<void*>(header.target), data, length);
      self->deliver(peer, header);
      return UCS_OK;
    }
    // Receiving inside the callback is not allowed: start it from poll().
    self->rendezvous_.push_back({peer, header, data});
    return UCS_INPROGRESS;
  }

  static void on_rendezvous_landed(void* request, ucs_status_t status, size_t /*length*/, void* user_data) {
    ucp_request_free(request);
    auto* op = static_cast<Operation*>(user_data);
    --op->transport->in_flight_;
    if (status == UCS_OK) {
      op->transport->deliver(op->peer, op->header);
    } else {
      op->transport->push_error(
          op->peer, RCC_ERR_PEER_FAILED,
          "UCX: rendezvous write from rank " + std::to_string(op->peer) + " failed: " + ucs_status_string(status));
    }
    delete op;
  }

  static void on_send_done(void* request, ucs_status_t status, void* user_data) {
    ucp_request_free(request);
    auto* op = static_cast<Operation*>(user_data);
    --op->transport->in_flight_;
    if (status == UCS_OK) {
      if (op->cookie != 0) op->transport->push_write_done(op->peer, op->cookie);
    } else {
      op->transport->push_error(
          op->peer, RCC_ERR_PEER_FAILED,
          "UCX: write to rank " + std::to_string(op->peer) + " failed: " + ucs_status_string(status));
    }
    delete op;
  }

  static void on_endpoint_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
    auto* error = static_cast<ErrorArg*>(arg);
    UcxTransport* self = error->transport;
    self->peers_[error->peer].failed = true;
    self->push_error(error->peer, RCC_ERR_PEER_FAILED,
                     "UCX endpoint to rank " + std::to_string(error->peer) + " failed: " + ucs_status_string(status) +
                         " (the process may have died; check the other ranks' output)");
  }

  // Whether `peer` runs on another host (no shared memory: UCX reaches it over the network).
  bool across_network(int peer) const {
    const std::vector<int>& host_of = options_.host_of;
    return host_of.size() == peers_.size() &&
           host_of[static_cast<size_t>(peer)] != host_of[static_cast<size_t>(options_.rank)];
  }

  Options options_;
  size_t net_eager_bytes_ = 0;  // RCC_UCX_NET_EAGER_BYTES
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int wakeup_fd_ = -1;
  std::vector<Peer> peers_;
  std::deque<ErrorArg> error_args_;
  std::multimap<uint64_t, size_t> registered_;  // start -> length; a range may be mapped twice
  struct ArrivedRendezvous {
    int peer;
    AmHeader header;
    void* descriptor;
  };
  std::deque<ArrivedRendezvous> rendezvous_;  // announced by a peer, data not fetched yet
  size_t in_flight_ = 0;                      // posted operations whose callback has not run
  std::vector<Event> events_;
};

}  // namespace

Status create_ucx(const Options& options, std::unique_ptr<Transport>* out) {
  auto transport = std::make_unique<UcxTransport>(options);
  RCC_RETURN_IF_ERROR(transport->init());
  *out = std::move(transport);
  return RCC_SUCCESS;
}

}  // namespace rcc::transport
