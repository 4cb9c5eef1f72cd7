// The transport interface: RDMA semantics, one implementation per backend (ucx/, verbs/).
// Everything above (p2p engine, collectives) uses only this. Contract in docs/transport.md.
//
// - Memory is registered once and described to peers by an opaque key blob.
// - write() copies a local registered range into a peer's registered range. With notify, the peer
//   gets one kNotify event carrying a 32-bit immediate, after that write's bytes and the bytes of
//   all earlier writes to the same peer are visible in its memory.
// - A kWriteDone event with the write's cookie says the local source range may be reused.
// - Writes to one peer are delivered in the order posted. write() never fails because a queue is
//   full: the backend queues and posts later from poll().
// - Not thread-safe: the engine serialises all calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace rcc::transport {

class Transport;

// A registered local range; backends derive from it.
class Memory {
 public:
  virtual ~Memory() = default;
  void* addr = nullptr;
  size_t length = 0;
  // The transport that registered it: write() refuses memory of another one with one comparison
  // (a dynamic_cast per write was a tenth of a small message's cost in the emulated test VM).
  const Transport* owner = nullptr;
};

// A peer's registered range, imported from its key blob; backends derive from it.
class RemoteKey {
 public:
  virtual ~RemoteKey() = default;
  const Transport* owner = nullptr;  // the transport that imported it
};

enum class EventKind { kWriteDone, kNotify, kError };

struct Event {
  EventKind kind = EventKind::kWriteDone;
  int peer = -1;
  uint64_t cookie = 0;          // kWriteDone: the cookie given to write()
  uint32_t imm = 0;             // kNotify: the immediate
  uint64_t length = 0;          // kNotify: bytes of the write that carried the notice
  Status status = RCC_SUCCESS;  // kError: what failed
  std::string message;          // kError: names peer, device and completion status, with a hint
};

struct Options {
  int rank = 0;
  int size = 1;
  int local_rank = -1;
  // Upper bound on kNotify events a peer may have outstanding toward this rank (sent and not yet
  // returned through the engine's credit words). Verbs posts this many receives per peer up front,
  // so receiver-not-ready cannot happen.
  int max_notifies_per_peer = 128;  // the engine's need with 32 eager slots (comm.cc)
  // RCC_TIMEOUT: how long set-up steps that wait for peers (iWARP connections) may take.
  double timeout_s = 60;
  // The job secret: connections a backend accepts on its own listener (iWARP's connection
  // manager) must prove it, as those to rcc's other listeners do.
  std::string secret;
  // Each rank's host in the host map's numbering (ranks that share memory share a host); empty
  // when unknown. A backend may treat peers on other hosts as across a network.
  std::vector<int> host_of;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;

  // Set-up in two steps around the bootstrap allgather: this rank's address blob, then all ranks'
  // blobs (index = rank) to connect to every peer.
  virtual Status local_address(std::vector<uint8_t>* blob) = 0;
  virtual Status connect_all(const std::vector<std::vector<uint8_t>>& blobs) = 0;

  // Connections on demand: a backend that can reach a peer from its address blob alone, without
  // the peer taking part (UCX: an endpoint from the peer's worker address), connects one peer at
  // a time when the engine first needs it, and takes writes from peers it never connected to.
  // Its local_address() then holds nothing per peer. Others connect every peer in connect_all.
  virtual bool connects_on_demand() const { return false; }
  virtual Status connect(int peer, const std::vector<uint8_t>& blob) {
    (void)blob;
    return fail(RCC_ERR_INTERNAL, "the %s transport connects every peer at set-up (rank %d asked for)", name(), peer);
  }

  virtual Status register_memory(void* addr, size_t length, std::unique_ptr<Memory>* out) = 0;
  virtual Status pack_key(Memory& memory, std::vector<uint8_t>* key) = 0;
  virtual Status import_key(int peer, const std::vector<uint8_t>& key, std::unique_ptr<RemoteKey>* out) = 0;

  // length may be any size (the backend splits large writes); src lies within local.
  virtual Status write(int peer, const void* src, size_t length, Memory& local, uint64_t remote_addr, RemoteKey& remote,
                       bool notify, uint32_t imm, uint64_t cookie) = 0;

  // Appends what happened since the last call (never blocks).
  virtual Status poll(std::vector<Event>* events) = 0;
  // Blocks until an event may be ready or timeout_ms passes; spurious returns are allowed.
  virtual Status wait_for_event(int timeout_ms) = 0;

  // Whether a plain write lands in the peer's memory without the peer's involvement and with its
  // bytes placed in address order (the last word visible implies the rest is). The engine then
  // sends eager messages as plain writes that the receiver finds by polling its slots.
  virtual bool polled_delivery() const { return false; }

  // Bytes per packet on the path to a peer, when a notice rides inside the write that carries it
  // (RDMA write with immediate: no packet of its own, and the notice brings the write's length);
  // 0 when a notice costs a message of its own (iWARP, UCX) or the packet size is unknown. The
  // engine then sends an eager message whose header would need one more packet without one.
  virtual size_t notice_packet_bytes(int peer) const {
    (void)peer;
    return 0;
  }

  // Up to how many bytes a write to a rank on another host (Options::host_of) is copied by this
  // backend anyway, as UCX sends it eagerly through its buffers over TCP; 0 when such writes are
  // zero copy (RDMA). Below it a rendezvous saves no copy and costs a round trip between the hosts,
  // so the engine gives those peers larger eager slots (RCC_EAGER_LIMIT_NET).
  virtual size_t network_copy_bytes() const { return 0; }

  // How this backend addresses a peer (device, GID or LID), for error messages; "" if nothing useful.
  virtual std::string describe_peer(int peer) const {
    (void)peer;
    return {};
  }
};

// Backends. Each returns RCC_ERR_NO_DEVICE (with a message saying what exists) when it cannot run.
using CreateFn = Status (*)(const Options& options, std::unique_ptr<Transport>* out);
Status create_ucx(const Options& options, std::unique_ptr<Transport>* out);
Status create_verbs(const Options& options, std::unique_ptr<Transport>* out);

// One row per backend built in (registry.cc), in the order RCC_TRANSPORT=auto tries them.
struct Backend {
  const char* name;  // RCC_TRANSPORT's value, and rcc_comm_transport's answer
  CreateFn create;
  const char* needs;  // what it runs on, for docs and messages
};
std::span<const Backend> backends();
// RCC_TRANSPORT: auto (the first backend that can run here), or a backend's name. Logs the choice.
Status create_transport(const Options& options, std::unique_ptr<Transport>* out);

}  // namespace rcc::transport
