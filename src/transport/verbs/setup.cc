// Set-up of the verbs backend: device resources, one RC queue pair per peer, connecting them by
// hand (InfiniBand, RoCE; iWARP goes through iwarp_connect.cc), and teardown.
#include <arpa/inet.h>
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "base/log.h"
#include "base/settings.h"
#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {
namespace {

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
  std::string value;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_IB_USE_IMM", &value));
  if (value == "1" && kind == LinkKind::kIwarp) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_IB_USE_IMM=1: iWARP has no immediate data (use auto or 0)");
  }
  *out = value == "1" || (value == "auto" && kind != LinkKind::kIwarp);
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
  info.refused_connections = refusals_.total();
  info.listening = listener_ != nullptr;
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
  std::string polled;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_IB_POLLED_EAGER", &polled));
  polled_delivery_ = polled == "1";
  if (polled_delivery_ && port_.kind == LinkKind::kIwarp) {
    // Direct data placement may place a write's segments in any order (RFC 5041), so the last
    // word of a message landing says nothing about the rest.
    return fail(RCC_ERR_INVALID_ARGUMENT,
                "RCC_IB_POLLED_EAGER=1 is refused on iWARP device %s: iWARP may place a write's bytes out of "
                "order, so polled delivery could read a message before it is whole (use 0, the default)",
                port_.device.c_str());
  }
  max_chunk_ = std::min<size_t>(kMaxChunk, port_.port_attr.max_msg_sz > 0 ? port_.port_attr.max_msg_sz : kMaxChunk);
  int max_wr = std::max(1, port_.device_attr.max_qp_wr);
  uint32_t depth_cap = port_.kind == LinkKind::kIwarp ? kMaxIwarpSendQueueDepth : kMaxSendQueueDepth;
  depth_ = std::min<uint32_t>(depth_cap, static_cast<uint32_t>(max_wr));
  receives_ = static_cast<uint32_t>(options_.max_notifies_per_peer) + kReceiveMargin;
  if (receives_ > static_cast<uint32_t>(max_wr)) {
    return fail(RCC_ERR_INVALID_ARGUMENT,
                "verbs: max_notifies_per_peer %d needs %u receives per queue pair; %s allows %d",
                options_.max_notifies_per_peer, receives_, port_.device.c_str(), max_wr);
  }
  // One CQ serves every peer and must hold every possible completion: shrink the send queues of
  // large jobs to fit the device's CQ size.
  if (options_.size > 1) {
    int64_t per_peer = (static_cast<int64_t>(port_.device_attr.max_cqe) - 16) / (options_.size - 1);
    int64_t fitting = per_peer - static_cast<int64_t>(receives_);
    if (fitting < 8) {
      return fail(RCC_ERR_UNSUPPORTED,
                  "verbs: %d ranks with %u receives per peer do not fit %s's completion queue (%d entries)",
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
  if (pd_ == nullptr)
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_alloc_pd on %s: %s", port_.device.c_str(), std::strerror(errno));
  channel_ = ibv_create_comp_channel(ctx_);
  if (channel_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: ibv_create_comp_channel on %s: %s", port_.device.c_str(),
                std::strerror(errno));
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
      return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_qp for rank %d on %s (send queue %u, %u receives): %s", peer,
                  port_.device.c_str(), depth_, receives_, error != 0 ? std::strerror(error) : "failed");
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
      return fail(RCC_ERR_INVALID_ARGUMENT, "connect_all: blob %d is the address of rank %u of %u ranks", r, a.rank,
                  a.size);
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
    RCC_RETURN_IF_ERROR(connect_through_cm());
  } else {
    RCC_RETURN_IF_ERROR(connect_by_hand(addresses));
  }
  peers_[options_.rank].connected = true;
  return RCC_SUCCESS;
}

Status VerbsTransport::connect_by_hand(const std::vector<RankAddress>& addresses) {
  int64_t timeout = 0, retry_cnt = 0, rnr_retry = 0;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_IB_TIMEOUT", &timeout));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_IB_RETRY_CNT", &retry_cnt));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_IB_RNR_RETRY", &rnr_retry));
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
    rc = ibv_modify_qp(
        p.qp, &rts,
        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
    if (rc != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: queue pair to rank %d (%s) to RTS on %s: %s", peer,
                  describe_peer(peer).c_str(), port_.device.c_str(), std::strerror(rc));
    }
    p.connected = true;
  }
  return RCC_SUCCESS;
}

VerbsTransport::~VerbsTransport() {
  // What this rank's traffic cost the device, for docs/PERFORMANCE.md's per-message figures.
  RCC_INFO(
      "verbs: %llu work requests posted (%llu write-with-immediate, %llu notice sends, %llu writes without a "
      "notice), %llu receive and %llu send completions polled",
      static_cast<unsigned long long>(counters_.work_requests),
      static_cast<unsigned long long>(counters_.writes_with_immediate),
      static_cast<unsigned long long>(counters_.notify_sends),
      static_cast<unsigned long long>(counters_.writes_without_notice),
      static_cast<unsigned long long>(counters_.receive_completions),
      static_cast<unsigned long long>(counters_.send_completions));
  for (Peer& p : peers_) {
    if (p.cm_id != nullptr) {
      if (p.connected) rdma_disconnect(p.cm_id);
      if (p.cm_id->qp != nullptr) rdma_destroy_qp(p.cm_id);
      rdma_destroy_id(p.cm_id);
    } else if (p.qp != nullptr) {
      ibv_destroy_qp(p.qp);
    }
  }
  for (rdma_cm_id* id : parked_ids_) {
    if (id->qp != nullptr) rdma_destroy_qp(id);
    rdma_destroy_id(id);
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
  if (port_.kind != LinkKind::kIwarp && ctx_ != nullptr) ibv_close_device(ctx_);
  if (port_.context != nullptr) ibv_close_device(port_.context);
}

}  // namespace rcc::transport::verbs

namespace rcc::transport {
Status create_verbs(const Options& options, std::unique_ptr<Transport>* out) { return verbs::create(options, out); }
}  // namespace rcc::transport
