#include "transport/verbs/transport_impl.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/config.h"
#include "core/log.h"

namespace rcc::transport::verbs {
namespace {

// wr_id layout: bit 63 set for receives; bits 32..62 the peer; bits 0..31 the receive slot or the
// low 32 bits of the send sequence number.
constexpr uint64_t kRecvBit = 1ull << 63;
uint64_t make_wr_id(bool recv, int peer, uint32_t low) {
  return (recv ? kRecvBit : 0) | (static_cast<uint64_t>(peer) << 32) | low;
}
int wr_peer(uint64_t wr_id) { return static_cast<int>((wr_id & ~kRecvBit) >> 32); }

constexpr uint32_t kMaxSendQueueDepth = 256;
// siw refuses rdma_create_qp (EAGAIN) after ~8 queue pairs of 256+72 entries in one process;
// 64 measured fine with 12 (4 ranks as threads).
constexpr uint32_t kMaxIwarpSendQueueDepth = 64;
constexpr uint32_t kReceiveMargin = 8;
// Writes up to this size go inline (the provider copies them into the work request: no DMA read
// of the source, which for the engine's small eager and credit writes is most of the work).
// perftest uses 220 by default; 0 when a device refuses inline data.
constexpr uint32_t kMaxInline = 256;
constexpr size_t kMaxChunk = size_t{1} << 30;

Status set_nonblocking(int fd, const char* what) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: cannot make the %s fd non-blocking: %s", what, std::strerror(errno));
  }
  return RCC_SUCCESS;
}

Status read_use_imm(LinkKind kind, bool* out) {
  std::string value = config::get_string("RCC_IB_USE_IMM");
  if (value == "auto") {
    *out = kind != LinkKind::kIwarp;
  } else if (value == "0") {
    *out = false;
  } else if (value == "1") {
    if (kind == LinkKind::kIwarp) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_IB_USE_IMM=1: iWARP has no immediate data (use auto or 0)");
    }
    *out = true;
  } else {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_IB_USE_IMM='%s' is not one of auto, 0, 1", value.c_str());
  }
  return RCC_SUCCESS;
}

Status read_ranged(const char* name, int64_t low, int64_t high, int64_t* out) {
  int64_t value = 0;
  RCC_RETURN_IF_ERROR(config::get_int(name, &value));
  if (value < low || value > high) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s=%lld is outside %lld..%lld", name, static_cast<long long>(value),
                static_cast<long long>(low), static_cast<long long>(high));
  }
  *out = value;
  return RCC_SUCCESS;
}

}  // namespace

Status create(const Options& options, std::unique_ptr<Transport>* out) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "create_verbs: out is null");
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "create_verbs: rank %d is not in 0..size-1 (size %d)", options.rank,
                options.size);
  }
  if (options.max_notifies_per_peer < 1) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "create_verbs: max_notifies_per_peer %d must be positive",
                options.max_notifies_per_peer);
  }
  auto transport = std::make_unique<VerbsTransport>(options);
  RCC_RETURN_IF_ERROR(transport->init());
  *out = std::move(transport);
  return RCC_SUCCESS;
}

bool query(Transport& transport, VerbsInfo* out) {
  auto* verbs = dynamic_cast<VerbsTransport*>(&transport);
  if (verbs == nullptr) return false;
  *out = verbs->info();
  return true;
}

bool set_max_chunk_for_testing(Transport& transport, size_t bytes) {
  auto* verbs = dynamic_cast<VerbsTransport*>(&transport);
  if (verbs == nullptr || bytes == 0) return false;
  verbs->set_max_chunk(bytes);
  return true;
}

VerbsInfo VerbsTransport::info() const {
  VerbsInfo info = counters_;
  info.device = port_.device;
  info.port = port_.port;
  info.kind = port_.kind;
  info.gid_index = gid_.index;
  info.gid = gid_.index >= 0 ? gid_to_string(gid_.gid) : "";
  info.uses_immediate = use_imm_;
  info.max_chunk = max_chunk_;
  info.send_queue_depth = static_cast<int>(depth_);
  info.receives_per_peer = static_cast<int>(receives_);
  info.max_inline = -1;
  for (int peer = 0; peer < options_.size; ++peer) {
    if (peer != options_.rank && peers_[peer].qp != nullptr) {
      int granted = static_cast<int>(peers_[peer].max_inline);
      info.max_inline = info.max_inline < 0 ? granted : std::min(info.max_inline, granted);
    }
  }
  return info;
}

Status VerbsTransport::init() {
  RCC_RETURN_IF_ERROR(choose_port(&port_));
  if (port_.kind == LinkKind::kRoce) {
    Status status = choose_gid(port_, &gid_);
    if (status != RCC_SUCCESS) {
      ibv_close_device(port_.context);
      port_.context = nullptr;
      return status;
    }
  }
  if (port_.kind == LinkKind::kIwarp) {
    // rdma_cm opens its own device context; everything must be created on that one.
    ibv_close_device(port_.context);
    port_.context = nullptr;
    RCC_RETURN_IF_ERROR(start_listener());
  } else {
    ctx_ = port_.context;
    port_.context = nullptr;
  }
  RCC_RETURN_IF_ERROR(read_use_imm(port_.kind, &use_imm_));
  int64_t polled = 1;
  RCC_RETURN_IF_ERROR(read_ranged("RCC_IB_POLLED_EAGER", 0, 1, &polled));
  polled_delivery_ = polled == 1;
  max_chunk_ = std::min<size_t>(kMaxChunk, port_.port_attr.max_msg_sz > 0 ? port_.port_attr.max_msg_sz : kMaxChunk);
  int max_wr = std::max(1, port_.device_attr.max_qp_wr);
  uint32_t depth_cap = port_.kind == LinkKind::kIwarp ? kMaxIwarpSendQueueDepth : kMaxSendQueueDepth;
  depth_ = std::min<uint32_t>(depth_cap, static_cast<uint32_t>(max_wr));
  receives_ = static_cast<uint32_t>(options_.max_notifies_per_peer) + kReceiveMargin;
  if (receives_ > static_cast<uint32_t>(max_wr)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs: max_notifies_per_peer %d needs %u receives per queue pair; %s allows %d",
                options_.max_notifies_per_peer, receives_, port_.device.c_str(), max_wr);
  }
  // One CQ serves every peer and must hold every possible completion: shrink the send queues of
  // large jobs to fit the device's CQ size.
  if (options_.size > 1) {
    int64_t per_peer = (static_cast<int64_t>(port_.device_attr.max_cqe) - 16) / (options_.size - 1);
    int64_t fitting = per_peer - static_cast<int64_t>(receives_);
    if (fitting < 8) {
      return fail(RCC_ERR_UNSUPPORTED, "verbs: %d ranks with %u receives per peer do not fit %s's completion queue (%d entries)",
                  options_.size, receives_, port_.device.c_str(), port_.device_attr.max_cqe);
    }
    depth_ = std::min<uint32_t>(depth_, static_cast<uint32_t>(std::min<int64_t>(fitting, UINT32_MAX)));
  }
  RCC_RETURN_IF_ERROR(create_shared_resources());
  if (port_.kind != LinkKind::kIwarp) {
    for (int peer = 0; peer < options_.size; ++peer) {
      if (peer == options_.rank) continue;
      RCC_RETURN_IF_ERROR(create_queue_pair(peer, nullptr));
    }
  }
  RCC_INFO("verbs: %s, notified writes use %s, send queue %u, %u receives per peer, split at %zu bytes",
           describe_local().c_str(), use_imm_ ? "write-with-immediate" : "write then send", depth_, receives_,
           max_chunk_);
  return RCC_SUCCESS;
}

Status VerbsTransport::create_shared_resources() {
  pd_ = ibv_alloc_pd(ctx_);
  if (pd_ == nullptr) return fail(RCC_ERR_TRANSPORT, "verbs: ibv_alloc_pd on %s: %s", port_.device.c_str(), std::strerror(errno));
  channel_ = ibv_create_comp_channel(ctx_);
  if (channel_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_create_comp_channel on %s: %s", port_.device.c_str(), std::strerror(errno));
  }
  RCC_RETURN_IF_ERROR(set_nonblocking(channel_->fd, "completion channel"));
  RCC_RETURN_IF_ERROR(set_nonblocking(ctx_->async_fd, "async event"));
  size_t peers = static_cast<size_t>(options_.size);
  // Every posted request may complete with a CQE: the CQ can never overflow.
  size_t cq_entries = (peers - 1) * (depth_ + receives_) + 16;
  if (cq_entries > static_cast<size_t>(port_.device_attr.max_cqe)) {
    return fail(RCC_ERR_UNSUPPORTED, "verbs: %zu ranks need %zu completion queue entries; %s allows %d", peers,
                cq_entries, port_.device.c_str(), port_.device_attr.max_cqe);
  }
  cq_ = ibv_create_cq(ctx_, static_cast<int>(cq_entries), nullptr, channel_, 0);
  if (cq_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_create_cq(%zu) on %s: %s", cq_entries, port_.device.c_str(),
                std::strerror(errno));
  }
  recv_slots_.assign(peers * receives_, NotifyMessage{});
  send_slots_.assign(peers * depth_, NotifyMessage{});
  recv_mr_ = ibv_reg_mr(pd_, recv_slots_.data(), recv_slots_.size() * sizeof(NotifyMessage), IBV_ACCESS_LOCAL_WRITE);
  send_mr_ = ibv_reg_mr(pd_, send_slots_.data(), send_slots_.size() * sizeof(NotifyMessage), IBV_ACCESS_LOCAL_WRITE);
  if (recv_mr_ == nullptr || send_mr_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: registering notice buffers on %s: %s", port_.device.c_str(),
                std::strerror(errno));
  }
  peers_.resize(peers);
  for (Peer& peer : peers_) peer.cookies.assign(depth_, 0);
  return RCC_SUCCESS;
}

Status VerbsTransport::create_queue_pair(int peer, rdma_cm_id* cm_id) {
  ibv_qp_init_attr attr = {};
  attr.send_cq = cq_;
  attr.recv_cq = cq_;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = depth_;
  attr.cap.max_recv_wr = receives_;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = kMaxInline;
  Peer& p = peers_[peer];
  if (cm_id != nullptr) {
    int rc = rdma_create_qp(cm_id, pd_, &attr);
    if (rc != 0) {
      attr.cap.max_inline_data = 0;  // a device without inline data
      rc = rdma_create_qp(cm_id, pd_, &attr);
    }
    if (rc != 0) {
      int error = errno;
      return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_qp for rank %d on %s (send queue %u, %u receives): %s",
                  peer, port_.device.c_str(), depth_, receives_, error != 0 ? std::strerror(error) : "failed");
    }
    p.cm_id = cm_id;
    p.qp = cm_id->qp;
  } else {
    p.qp = ibv_create_qp(pd_, &attr);
    if (p.qp == nullptr) {
      attr.cap.max_inline_data = 0;  // a device without inline data
      p.qp = ibv_create_qp(pd_, &attr);
    }
    if (p.qp == nullptr) {
      return fail(RCC_ERR_TRANSPORT, "verbs: ibv_create_qp for rank %d on %s: %s", peer, port_.device.c_str(),
                  std::strerror(errno));
    }
    ibv_qp_attr init = {};
    init.qp_state = IBV_QPS_INIT;
    init.pkey_index = 0;
    init.port_num = port_.port;
    init.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    int rc = ibv_modify_qp(p.qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: queue pair for rank %d to INIT on %s: %s", peer, port_.device.c_str(),
                  std::strerror(rc));
    }
    std::random_device random;
    p.local.psn = random() & 0xffffff;
  }
  // The provider reports what it granted (it may round up, or give less than asked).
  p.max_inline = std::min<uint32_t>(attr.cap.max_inline_data, kMaxInline);
  p.local.qpn = p.qp->qp_num;
  return post_initial_receives(peer);
}

Status VerbsTransport::post_initial_receives(int peer) {
  // Before connecting: a peer can never find this rank without a receive (no RNR by construction).
  for (uint32_t slot = 0; slot < receives_; ++slot) RCC_RETURN_IF_ERROR(post_receive(peer, slot));
  return RCC_SUCCESS;
}

Status VerbsTransport::post_receive(int peer, uint32_t slot) {
  NotifyMessage* buffer = &recv_slots_[static_cast<size_t>(peer) * receives_ + slot];
  ibv_sge sge = {reinterpret_cast<uintptr_t>(buffer), sizeof(NotifyMessage), recv_mr_->lkey};
  ibv_recv_wr wr = {};
  wr.wr_id = make_wr_id(true, peer, slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int rc = ibv_post_recv(peers_[peer].qp, &wr, &bad);
  if (rc != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_post_recv toward rank %d on %s: %s", peer, port_.device.c_str(),
                std::strerror(rc < 0 ? -rc : rc));
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::local_address(std::vector<uint8_t>* blob) {
  if (blob == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "local_address: blob is null");
  RankAddress a;
  a.kind = port_.kind;
  a.rank = static_cast<uint32_t>(options_.rank);
  a.size = static_cast<uint32_t>(options_.size);
  a.port = port_.port;
  a.active_mtu = static_cast<uint8_t>(port_.port_attr.active_mtu);
  a.lid = port_.port_attr.lid;
  if (gid_.index >= 0) std::memcpy(a.gid, gid_.gid, 16);
  a.ipv4 = listen_ipv4_;
  a.cm_port = listen_port_;
  if (port_.kind != LinkKind::kIwarp) {
    a.qps.resize(options_.size);
    for (int peer = 0; peer < options_.size; ++peer) a.qps[peer] = peers_[peer].local;
  }
  *blob = encode_address(a);
  return RCC_SUCCESS;
}

Status VerbsTransport::connect_all(const std::vector<std::vector<uint8_t>>& blobs) {
  if (blobs.size() != static_cast<size_t>(options_.size)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_all: %zu address blobs for %d ranks", blobs.size(), options_.size);
  }
  std::vector<RankAddress> addresses(blobs.size());
  for (int r = 0; r < options_.size; ++r) {
    RankAddress& a = addresses[r];
    if (decode_address(blobs[r].data(), blobs[r].size(), &a) != RCC_SUCCESS) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "connect_all: address of rank %d: %s", r, last_error().c_str());
    }
    if (a.rank != static_cast<uint32_t>(r) || a.size != static_cast<uint32_t>(options_.size)) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "connect_all: blob %d is the address of rank %u of %u ranks", r, a.rank, a.size);
    }
    if (a.kind != port_.kind) {
      return fail(RCC_ERR_INVALID_ARGUMENT,
                  "connect_all: rank %d uses %s but this rank uses %s (%s); all ranks need the same kind of RDMA "
                  "network (set RCC_IB_DEVICE)",
                  r, link_kind_name(a.kind), link_kind_name(port_.kind), port_.device.c_str());
    }
    peers_[r].remote = a;
  }
  if (port_.kind == LinkKind::kIwarp) {
    RCC_RETURN_IF_ERROR(connect_through_cm(addresses));
  } else {
    RCC_RETURN_IF_ERROR(connect_by_hand(addresses));
  }
  peers_[options_.rank].connected = true;
  return RCC_SUCCESS;
}

Status VerbsTransport::connect_by_hand(const std::vector<RankAddress>& addresses) {
  int64_t timeout = 0, retry_cnt = 0, rnr_retry = 0;
  RCC_RETURN_IF_ERROR(read_ranged("RCC_IB_TIMEOUT", 1, 31, &timeout));
  RCC_RETURN_IF_ERROR(read_ranged("RCC_IB_RETRY_CNT", 0, 7, &retry_cnt));
  RCC_RETURN_IF_ERROR(read_ranged("RCC_IB_RNR_RETRY", 0, 7, &rnr_retry));
  // 7 means "retry forever" to the hardware; rcc wants a finite bound (RNR cannot happen anyway).
  rnr_retry = std::min<int64_t>(rnr_retry, 6);
  for (int peer = 0; peer < options_.size; ++peer) {
    if (peer == options_.rank) continue;
    const RankAddress& remote = addresses[peer];
    Peer& p = peers_[peer];
    ibv_qp_attr rtr = {};
    rtr.qp_state = IBV_QPS_RTR;
    rtr.path_mtu = static_cast<ibv_mtu>(std::min<int>(remote.active_mtu, port_.port_attr.active_mtu));
    p.path_mtu_bytes = 128u << rtr.path_mtu;  // IBV_MTU_256 is 1, ..., IBV_MTU_4096 is 5
    rtr.dest_qp_num = remote.qps[options_.rank].qpn;
    rtr.rq_psn = remote.qps[options_.rank].psn;
    rtr.max_dest_rd_atomic = 1;
    rtr.min_rnr_timer = 12;
    rtr.ah_attr.port_num = port_.port;
    if (port_.kind == LinkKind::kRoce) {
      rtr.ah_attr.is_global = 1;
      std::memcpy(rtr.ah_attr.grh.dgid.raw, remote.gid, 16);
      rtr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_.index);
      rtr.ah_attr.grh.hop_limit = 64;
    } else {
      rtr.ah_attr.dlid = remote.lid;
    }
    int rc = ibv_modify_qp(p.qp, &rtr,
                           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: queue pair to rank %d (%s) to RTR on %s: %s%s", peer,
                  describe_peer(peer).c_str(), port_.device.c_str(), std::strerror(rc),
                  port_.kind == LinkKind::kRoce ? "; check RCC_IB_GID_INDEX" : "");
    }
    ibv_qp_attr rts = {};
    rts.qp_state = IBV_QPS_RTS;
    rts.timeout = static_cast<uint8_t>(timeout);
    rts.retry_cnt = static_cast<uint8_t>(retry_cnt);
    rts.rnr_retry = static_cast<uint8_t>(rnr_retry);
    rts.sq_psn = p.local.psn;
    rts.max_rd_atomic = 1;
    rc = ibv_modify_qp(p.qp, &rts,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: queue pair to rank %d (%s) to RTS on %s: %s", peer,
                  describe_peer(peer).c_str(), port_.device.c_str(), std::strerror(rc));
    }
    p.connected = true;
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::register_memory(void* addr, size_t length, std::unique_ptr<Memory>* out) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "register_memory: out is null");
  if (addr == nullptr || length == 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "register_memory: addr %p with length %zu is not a range", addr, length);
  }
  auto memory = std::make_unique<VerbsMemory>();
  memory->mr = ibv_reg_mr(pd_, addr, length, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (memory->mr == nullptr) {
    int error = errno;
    return fail(error == ENOMEM ? RCC_ERR_NO_MEMORY : RCC_ERR_TRANSPORT,
                "register_memory: ibv_reg_mr(%p, %zu) on %s: %s%s", addr, length, port_.device.c_str(),
                std::strerror(error), error == ENOMEM ? " (check ulimit -l, the locked-memory limit)" : "");
  }
  memory->addr = addr;
  memory->length = length;
  memory->owner = this;
  *out = std::move(memory);
  return RCC_SUCCESS;
}

Status VerbsTransport::pack_key(Memory& memory, std::vector<uint8_t>* key) {
  auto* verbs_memory = memory.owner == this ? static_cast<VerbsMemory*>(&memory) : nullptr;
  if (verbs_memory == nullptr || verbs_memory->mr == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "pack_key: memory was not registered by the verbs transport");
  }
  if (key == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "pack_key: key is null");
  *key = encode_key({verbs_memory->mr->rkey, reinterpret_cast<uintptr_t>(memory.addr), memory.length});
  return RCC_SUCCESS;
}

Status VerbsTransport::import_key(int peer, const std::vector<uint8_t>& key, std::unique_ptr<RemoteKey>* out) {
  if (peer < 0 || peer >= options_.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "import_key: peer %d is not in 0..%d", peer, options_.size - 1);
  }
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "import_key: out is null");
  auto remote = std::make_unique<VerbsRemoteKey>();
  if (decode_key(key.data(), key.size(), &remote->key) != RCC_SUCCESS) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "import_key from rank %d: %s", peer, last_error().c_str());
  }
  remote->peer = peer;
  remote->owner = this;
  *out = std::move(remote);
  return RCC_SUCCESS;
}

Status VerbsTransport::write(int peer, const void* src, size_t length, Memory& local, uint64_t remote_addr,
                             RemoteKey& remote, bool notify, uint32_t imm, uint64_t cookie) {
  if (peer < 0 || peer >= options_.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write: peer %d is not in 0..%d", peer, options_.size - 1);
  }
  auto* memory = local.owner == this ? static_cast<VerbsMemory*>(&local) : nullptr;
  auto* key = remote.owner == this ? static_cast<VerbsRemoteKey*>(&remote) : nullptr;
  if (memory == nullptr || memory->mr == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: local memory was not registered by the verbs transport", peer);
  }
  if (key == nullptr || key->peer != peer) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: remote key was imported for rank %d", peer,
                key == nullptr ? -1 : key->peer);
  }
  auto src_addr = reinterpret_cast<uintptr_t>(src);
  auto base = reinterpret_cast<uintptr_t>(memory->addr);
  if (src_addr < base || length > memory->length || src_addr - base > memory->length - length) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: source %p+%zu lies outside the registered %p+%zu", peer,
                src, length, memory->addr, memory->length);
  }
  if (remote_addr < key->key.addr || length > key->key.length || remote_addr - key->key.addr > key->key.length - length) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "write to rank %d: destination 0x%llx+%zu lies outside its key 0x%llx+%llu",
                peer, static_cast<unsigned long long>(remote_addr), length,
                static_cast<unsigned long long>(key->key.addr), static_cast<unsigned long long>(key->key.length));
  }
  Peer& p = peers_[peer];
  if (!p.connected) return fail(RCC_ERR_INVALID_USAGE, "write to rank %d before connect_all", peer);
  if (p.failed) {
    return fail(RCC_ERR_PEER_FAILED, "write to rank %d (%s): its connection already failed", peer,
                describe_peer(peer).c_str());
  }

  if (peer == options_.rank) {
    // Self: a copy, with the events a loopback write would give.
    if (length > 0) std::memmove(reinterpret_cast<void*>(remote_addr), src, length);
    if (notify) pending_.push_back(Event{EventKind::kNotify, peer, 0, imm, length, RCC_SUCCESS, {}});
    if (cookie != 0) pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
    return RCC_SUCCESS;
  }

  PendingWr wr;
  wr.lkey = memory->mr->lkey;
  wr.rkey = key->key.rkey;
  if ((notify && use_imm_ && length <= max_chunk_) || (!notify && length - 1 < max_chunk_)) {
    // One request (every eager message): posted at once unless others wait ahead of it.
    wr.op = notify ? PendingWr::Op::kWriteImm : PendingWr::Op::kWrite;
    wr.local_addr = src_addr;
    wr.length = static_cast<uint32_t>(length);
    wr.remote_addr = remote_addr;
    wr.imm = imm;
    wr.cookie = cookie;
    return submit(peer, wr);
  }
  // Pieces of at most max_chunk_; the notice (if any) is a send after them on the same QP.
  for (size_t offset = 0; offset < length; offset += max_chunk_) {
    size_t piece = std::min(max_chunk_, length - offset);
    wr.op = PendingWr::Op::kWrite;
    wr.local_addr = src_addr + offset;
    wr.length = static_cast<uint32_t>(piece);
    wr.remote_addr = remote_addr + offset;
    wr.cookie = (!notify && offset + piece == length) ? cookie : 0;
    RCC_RETURN_IF_ERROR(submit(peer, wr));
  }
  if (notify) {
    PendingWr send;
    send.op = PendingWr::Op::kNotifySend;
    send.imm = imm;
    send.notify_length = length;
    send.cookie = cookie;
    RCC_RETURN_IF_ERROR(submit(peer, send));
  } else if (length == 0 && cookie != 0) {
    pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::submit(int peer, const PendingWr& wr) {
  Peer& p = peers_[peer];
  // Posted at once when nothing waits ahead of it and the send queue has room (no queue push and
  // pop per write); otherwise behind the others, posted from poll() as completions free room.
  if (p.queue.empty() && p.posted - p.completed < depth_) return post_one(peer, wr);
  p.queue.push_back(wr);
  ++counters_.queued_in_software;
  return RCC_SUCCESS;
}

Status VerbsTransport::post_queued(int peer) {
  Peer& p = peers_[peer];
  while (!p.queue.empty() && !p.failed && p.posted - p.completed < depth_) {
    RCC_RETURN_IF_ERROR(post_one(peer, p.queue.front()));
    p.queue.pop_front();
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::post_one(int peer, const PendingWr& pending) {
  Peer& p = peers_[peer];
  uint64_t seq = p.posted;
  uint32_t ring = static_cast<uint32_t>(seq % depth_);
  // Signal every write() that wants a kWriteDone, and at least every depth/2 requests so a full
  // send queue always has a signalled request in flight to free it.
  bool signalled = pending.cookie != 0 || p.unsignalled + 1 >= std::max<uint32_t>(1, depth_ / 2);
  ibv_sge sge = {pending.local_addr, pending.length, pending.lkey};
  ibv_send_wr wr = {};
  wr.wr_id = make_wr_id(false, peer, static_cast<uint32_t>(seq));
  wr.sg_list = &sge;
  wr.num_sge = pending.length > 0 ? 1 : 0;
  wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
  if (pending.op != PendingWr::Op::kNotifySend && pending.length > 0 && pending.length <= p.max_inline) {
    wr.send_flags |= IBV_SEND_INLINE;
  }
  switch (pending.op) {
    case PendingWr::Op::kWrite:
      wr.opcode = IBV_WR_RDMA_WRITE;
      break;
    case PendingWr::Op::kWriteImm:
      wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
      wr.imm_data = htonl(pending.imm);
      break;
    case PendingWr::Op::kNotifySend: {
      NotifyMessage* slot = &send_slots_[static_cast<size_t>(peer) * depth_ + ring];
      *slot = NotifyMessage{pending.imm, kNotifyMagic, pending.notify_length};
      sge = {reinterpret_cast<uintptr_t>(slot), sizeof(NotifyMessage), send_mr_->lkey};
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      if (sizeof(NotifyMessage) <= p.max_inline) wr.send_flags |= IBV_SEND_INLINE;
      break;
    }
  }
  if (wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
    wr.wr.rdma.remote_addr = pending.remote_addr;
    wr.wr.rdma.rkey = pending.rkey;
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(p.qp, &wr, &bad);
  if (rc != 0) {
    rc = rc < 0 ? -rc : rc;  // libsiw returns negative errnos
    std::string message = "verbs: ibv_post_send to rank " + std::to_string(peer) + " (" + describe_peer(peer) +
                          ") on " + describe_local() + ": " + std::strerror(rc);
    fail_peer(peer, RCC_ERR_TRANSPORT, message);
    return fail(RCC_ERR_TRANSPORT, "%s", message.c_str());
  }
  p.cookies[ring] = pending.cookie;
  p.unsignalled = signalled ? 0 : p.unsignalled + 1;
  ++p.posted;
  ++counters_.work_requests;
  if (pending.op == PendingWr::Op::kWriteImm) ++counters_.writes_with_immediate;
  if (pending.op == PendingWr::Op::kNotifySend) ++counters_.notify_sends;
  if ((wr.send_flags & IBV_SEND_INLINE) != 0) ++counters_.inline_writes;
  return RCC_SUCCESS;
}

void VerbsTransport::drain_completions() {
  ibv_wc wcs[32];
  for (;;) {
    int n = ibv_poll_cq(cq_, 32, wcs);
    if (n < 0) {
      fail_peer(-1, RCC_ERR_TRANSPORT, "verbs: ibv_poll_cq failed on " + describe_local());
      return;
    }
    for (int i = 0; i < n; ++i) handle_completion(wcs[i]);
    if (n < 32) return;
  }
}

void VerbsTransport::handle_completion(const ibv_wc& wc) {
  int peer = wr_peer(wc.wr_id);
  if (peer < 0 || peer >= options_.size) return;  // cannot happen: every wr_id is ours
  Peer& p = peers_[peer];
  bool recv = (wc.wr_id & kRecvBit) != 0;
  if (wc.status != IBV_WC_SUCCESS) {
    if (p.failed) return;  // the flushes that follow the first error
    char vendor[32];
    std::snprintf(vendor, sizeof vendor, " (vendor error 0x%x); ", wc.vendor_err);
    std::string message = "verbs: " + std::string(recv ? "receive from" : "write to") + " rank " +
                          std::to_string(peer) + " (" + describe_peer(peer) + ") failed on " + describe_local() +
                          ": " + ibv_wc_status_str(wc.status) + vendor + completion_error_hint(wc.status);
    fail_peer(peer, completion_error_status(wc.status), message);
    return;
  }
  if (recv) {
    auto slot = static_cast<uint32_t>(wc.wr_id & 0xffffffffu);
    Event event{EventKind::kNotify, peer, 0, 0, 0, RCC_SUCCESS, {}};
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
      event.imm = ntohl(wc.imm_data);
      event.length = wc.byte_len;
    } else {
      const NotifyMessage& notice = recv_slots_[static_cast<size_t>(peer) * receives_ + slot];
      if (wc.byte_len != sizeof(NotifyMessage) || notice.magic != kNotifyMagic) {
        fail_peer(peer, RCC_ERR_TRANSPORT,
                  "verbs: rank " + std::to_string(peer) + " sent a " + std::to_string(wc.byte_len) +
                      "-byte message that is not an rcc notice (mixed rcc builds?)");
        return;
      }
      event.imm = notice.imm;
      event.length = notice.length;
    }
    pending_.push_back(event);
    if (post_receive(peer, slot) != RCC_SUCCESS) fail_peer(peer, RCC_ERR_TRANSPORT, last_error());
    return;
  }
  // A signalled send completion: it and every earlier request of this QP are done (in order).
  uint64_t seq = p.completed + static_cast<uint32_t>(static_cast<uint32_t>(wc.wr_id) - static_cast<uint32_t>(p.completed));
  for (; p.completed <= seq && p.completed < p.posted; ++p.completed) {
    uint64_t& cookie = p.cookies[p.completed % depth_];
    if (cookie != 0) pending_.push_back(Event{EventKind::kWriteDone, peer, cookie, 0, 0, RCC_SUCCESS, {}});
    cookie = 0;
  }
  post_queued(peer);
}

void VerbsTransport::fail_peer(int peer, Status status, const std::string& message) {
  RCC_WARN("%s: %s", rcc_status_string(status), message.c_str());
  if (peer >= 0) {
    Peer& p = peers_[peer];
    if (p.failed) return;
    p.failed = true;
    p.queue.clear();
  }
  pending_.push_back(Event{EventKind::kError, peer, 0, 0, 0, status, message});
}

Status VerbsTransport::poll(std::vector<Event>* events) {
  if (events == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "poll: events is null");
  drain_completions();
  // Fatal async events are rare, and each look is a read() that almost always fails: look every
  // 65536 polls (every 1024 was a system call per ~3 round trips of a 1 KiB ping-pong on rxe). A
  // fatal error also fails the outstanding requests' completions; wait_for_event looks every time.
  if ((++polls_ & 0xffff) == 0) handle_async_events();
  if (!pending_.empty()) {
    if (events->empty()) {
      events->swap(pending_);  // the usual case: no per-event moves
    } else {
      events->insert(events->end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    }
    pending_.clear();
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::wait_for_event(int timeout_ms) {
  if (!pending_.empty()) return RCC_SUCCESS;
  if (ibv_req_notify_cq(cq_, 0) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_req_notify_cq on %s: %s", port_.device.c_str(), std::strerror(errno));
  }
  // Completions that arrived before the request above raise no event: look once more.
  drain_completions();
  if (!pending_.empty()) return RCC_SUCCESS;
  pollfd fds[2] = {{channel_->fd, POLLIN, 0}, {ctx_->async_fd, POLLIN, 0}};
  int n = ::poll(fds, 2, timeout_ms < 0 ? -1 : timeout_ms);
  if (n < 0 && errno != EINTR) return fail(RCC_ERR_TRANSPORT, "verbs: poll on completion channel: %s", std::strerror(errno));
  if (n > 0 && (fds[0].revents & POLLIN) != 0) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    while (ibv_get_cq_event(channel_, &cq, &context) == 0) {
      ibv_ack_cq_events(cq, 1);
      ++counters_.completion_wakeups;
    }
  }
  if (n > 0 && (fds[1].revents & POLLIN) != 0) handle_async_events();
  return RCC_SUCCESS;
}

void VerbsTransport::handle_async_events() {
  ibv_async_event event;
  while (ibv_get_async_event(ctx_, &event) == 0) {
    int peer = -1;
    bool qp_event = false;
    switch (event.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_PATH_MIG_ERR:
        qp_event = true;
        for (int r = 0; r < options_.size; ++r) {
          if (peers_[r].qp != nullptr && peers_[r].qp == event.element.qp) peer = r;
        }
        break;
      default:
        break;
    }
    const char* what = ibv_event_type_str(event.event_type);
    if (qp_event && peer >= 0) {
      fail_peer(peer, RCC_ERR_PEER_FAILED,
                "verbs: queue pair to rank " + std::to_string(peer) + " (" + describe_peer(peer) + ") on " +
                    describe_local() + " reported " + what + "; the peer may have died or sent a bad request");
    } else if (event.event_type == IBV_EVENT_DEVICE_FATAL || event.event_type == IBV_EVENT_PORT_ERR ||
               event.event_type == IBV_EVENT_CQ_ERR) {
      fail_peer(-1, RCC_ERR_TRANSPORT,
                "verbs: " + describe_local() + " reported " + what + "; check the link (ibv_devinfo) and dmesg");
    } else {
      RCC_INFO("verbs: %s reported %s", describe_local().c_str(), what);
    }
    ibv_ack_async_event(&event);
  }
}

std::string VerbsTransport::describe_local() const {
  std::string text = port_.device + ":" + std::to_string(port_.port);
  if (port_.kind == LinkKind::kRoce) return text + " GID " + gid_to_string(gid_.gid) + " (index " + std::to_string(gid_.index) + ")";
  if (port_.kind == LinkKind::kInfiniband) return text + " LID " + std::to_string(port_.port_attr.lid);
  in_addr ip{listen_ipv4_};
  char buffer[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &ip, buffer, sizeof buffer);
  return text + " " + buffer + ":" + std::to_string(listen_port_);
}

std::string VerbsTransport::describe_peer(int peer) const {
  const RankAddress& a = peers_[peer].remote;
  if (peer == options_.rank) return "self";
  if (a.kind == LinkKind::kRoce) return "GID " + gid_to_string(a.gid);
  if (a.kind == LinkKind::kInfiniband) return "LID " + std::to_string(a.lid);
  in_addr ip{a.ipv4};
  char buffer[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &ip, buffer, sizeof buffer);
  return std::string(buffer) + ":" + std::to_string(a.cm_port);
}

VerbsTransport::~VerbsTransport() {
  for (Peer& p : peers_) {
    if (p.cm_id != nullptr) {
      if (p.connected) rdma_disconnect(p.cm_id);
      if (p.cm_id->qp != nullptr) rdma_destroy_qp(p.cm_id);
      rdma_destroy_id(p.cm_id);
    } else if (p.qp != nullptr) {
      ibv_destroy_qp(p.qp);
    }
  }
  if (send_mr_ != nullptr) ibv_dereg_mr(send_mr_);
  if (recv_mr_ != nullptr) ibv_dereg_mr(recv_mr_);
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
  if (pd_ != nullptr && ibv_dealloc_pd(pd_) != 0) {
    RCC_WARN("verbs: %s: protection domain still in use (memory registered with this transport outlives it)",
             port_.device.c_str());
  }
  if (listener_ != nullptr) rdma_destroy_id(listener_);
  if (cm_channel_ != nullptr) rdma_destroy_event_channel(cm_channel_);
  if (listener_ == nullptr && ctx_ != nullptr) ibv_close_device(ctx_);
  if (port_.context != nullptr) ibv_close_device(port_.context);
}

Status completion_error_status(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_ABORT_ERR:
      return RCC_ERR_PEER_FAILED;
    default:
      return RCC_ERR_TRANSPORT;
  }
}

const char* completion_error_hint(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "the peer did not acknowledge: it may have died; check RCC_IB_GID_INDEX, the link, or raise RCC_IB_TIMEOUT";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "the peer had no receive posted: it may have died or exceeded max_notifies_per_peer";
    case IBV_WC_REM_ACCESS_ERR:
      return "the peer refused the access: the destination is not inside a registration of that rank (key or "
             "address wrong, or the memory was deregistered)";
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
      return "the local source is not inside a registration of this rank (memory deregistered too early?)";
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
      return "the peer rejected the request (receive too small or queue pair in error)";
    case IBV_WC_LOC_LEN_ERR:
      return "a message was larger than the posted receive (mixed rcc builds?)";
    case IBV_WC_WR_FLUSH_ERR:
      return "the queue pair was already in error";
    default:
      return "see dmesg and ibv_devinfo for the device's state";
  }
}

}  // namespace rcc::transport::verbs

namespace rcc::transport {
Status create_verbs(const Options& options, std::unique_ptr<Transport>* out) {
  return verbs::create(options, out);
}
}  // namespace rcc::transport
