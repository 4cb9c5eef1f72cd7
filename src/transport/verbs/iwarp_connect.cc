// iWARP set-up through librdmacm: a listener on the device's IPv4 address, the lower rank of each
// pair connects to the higher one, private data says who is connecting and proves it knows the job
// secret (connect_request.h). A request that is not from an expected rank of this job is rejected,
// logged (rate-limited) and ignored; the listener closes once every peer is connected.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/log.h"
#include "base/settings.h"
#include "transport/verbs/connect_request.h"
#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {
namespace {

// The context of the listener, inherited by the ids of incoming requests until one is accepted:
// no peer's.
void* const kNoPeer = reinterpret_cast<void*>(static_cast<intptr_t>(-1));

std::string ipv4_text(uint32_t address) {
  in_addr ip{address};
  char buffer[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &ip, buffer, sizeof buffer);
  return buffer;
}

// The IPv4 address whose rdma_cm binding lands on `device`: binding decides the device exactly as
// connections will, so no sysfs guessing is needed.
Status find_device_ipv4(rdma_event_channel* channel, const std::string& device, uint32_t* out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return fail(RCC_ERR_NO_DEVICE, "verbs: getifaddrs: %s", std::strerror(errno));
  std::string tried;
  Status status = RCC_ERR_NO_DEVICE;
  for (ifaddrs* ifa = list; ifa != nullptr && status != RCC_SUCCESS; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != AF_INET || (ifa->ifa_flags & IFF_LOOPBACK) != 0)
      continue;
    sockaddr_in address = *reinterpret_cast<sockaddr_in*>(ifa->ifa_addr);
    address.sin_port = 0;
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) continue;
    if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&address)) == 0 && id->verbs != nullptr &&
        device == ibv_get_device_name(id->verbs->device)) {
      *out = address.sin_addr.s_addr;
      status = RCC_SUCCESS;
    }
    tried += (tried.empty() ? "" : ", ") + std::string(ifa->ifa_name) + " " + ipv4_text(address.sin_addr.s_addr);
    rdma_destroy_id(id);
  }
  freeifaddrs(list);
  if (status != RCC_SUCCESS) {
    return fail(RCC_ERR_NO_DEVICE, "verbs: no IPv4 address of this host belongs to iWARP device %s (tried: %s)",
                device.c_str(), tried.empty() ? "no IPv4 interfaces" : tried.c_str());
  }
  return RCC_SUCCESS;
}

}  // namespace

Status VerbsTransport::start_listener() {
  cm_channel_ = rdma_create_event_channel();
  if (cm_channel_ == nullptr)
    return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_event_channel: %s", std::strerror(errno));
  RCC_RETURN_IF_ERROR(find_device_ipv4(cm_channel_, port_.device, &listen_ipv4_));
  // The backlog is generous: requests from strangers wait in it beside the peers' until this rank
  // looks at them, and a full backlog would refuse a peer (which then dials again). rdma_cm picks
  // the port from its own port space; the iWARP device then listens on that TCP port, which a TCP
  // socket may hold already (EADDRINUSE): then another port.
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = listen_ipv4_;
  int error = 0;
  for (int attempt = 0; attempt < 16; ++attempt) {
    if (rdma_create_id(cm_channel_, &listener_, kNoPeer, RDMA_PS_TCP) != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_id: %s", std::strerror(errno));
    }
    if (rdma_bind_addr(listener_, reinterpret_cast<sockaddr*>(&address)) == 0 &&
        rdma_listen(listener_, std::max(options_.size, 256)) == 0) {
      error = 0;
      break;
    }
    error = errno;
    rdma_destroy_id(listener_);
    listener_ = nullptr;
    if (error != EADDRINUSE) break;
  }
  if (listener_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: listening on %s (%s): %s", ipv4_text(listen_ipv4_).c_str(),
                port_.device.c_str(), std::strerror(error));
  }
  listen_port_ = ntohs(rdma_get_src_port(listener_));
  ctx_ = listener_->verbs;
  if (ctx_ == nullptr) {
    return fail(RCC_ERR_TRANSPORT, "verbs: the rdma_cm listener on %s has no device", ipv4_text(listen_ipv4_).c_str());
  }
  // Events of all connections arrive on this channel; connect_all polls it with a deadline.
  int flags = fcntl(cm_channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(cm_channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: rdma_cm channel: %s", std::strerror(errno));
  }
  RCC_INFO("verbs: iWARP device %s listening on %s:%u", port_.device.c_str(), ipv4_text(listen_ipv4_).c_str(),
           listen_port_);
  return RCC_SUCCESS;
}

Status VerbsTransport::start_connect(int peer) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(cm_channel_, &id, reinterpret_cast<void*>(static_cast<intptr_t>(peer)), RDMA_PS_TCP) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_id toward rank %d: %s", peer, std::strerror(errno));
  }
  peers_[peer].cm_id = id;  // destroyed with the transport even if set-up fails
  ++peers_[peer].connect_attempts;
  sockaddr_in source = {};
  source.sin_family = AF_INET;
  source.sin_addr.s_addr = listen_ipv4_;
  sockaddr_in target = {};
  target.sin_family = AF_INET;
  target.sin_addr.s_addr = peers_[peer].remote.ipv4;
  target.sin_port = htons(peers_[peer].remote.cm_port);
  if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&source), reinterpret_cast<sockaddr*>(&target), 5000) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: rdma_resolve_addr to rank %d (%s): %s", peer, describe_peer(peer).c_str(),
                std::strerror(errno));
  }
  return RCC_SUCCESS;
}

void VerbsTransport::park(int peer) {
  Peer& p = peers_[peer];
  rdma_cm_id* id = p.cm_id;
  p.cm_id = nullptr;
  p.qp = nullptr;
  if (id == nullptr) return;
  // Kept, not destroyed, until the transport goes: a destroyed queue pair's number may come back
  // for the next attempt's, and its flushed receives would then pass for that one's. In the error
  // state it flushes them now; completions of a queue pair no peer has are dropped.
  if (id->qp != nullptr) {
    ibv_qp_attr error = {};
    error.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(id->qp, &error, IBV_QP_STATE);
  }
  parked_ids_.push_back(id);
  drain_completions();
}

void VerbsTransport::abandon_attempt(int peer, const std::string& why) {
  Peer& p = peers_[peer];
  RCC_INFO("verbs: iWARP connection attempt %d with rank %d failed (%s); retrying", p.connect_attempts, peer,
           why.c_str());
  p.last_connect_failure = why;
  park(peer);
  // A lower rank dials again itself; toward a higher one, again after a pause that grows to 1 s.
  const int shift = std::min(p.connect_attempts, 5);
  p.retry_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::min(1000, 30 << shift));
}

Status VerbsTransport::connect_through_cm() {  // the peers' addresses are in peers_[r].remote
  const int me = options_.rank;
  for (int peer = me + 1; peer < options_.size; ++peer) RCC_RETURN_IF_ERROR(start_connect(peer));
  int established = 0;
  const double timeout_s = options_.timeout_s;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(timeout_s));
  while (established < options_.size - 1) {
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      std::string missing, failures;
      for (int r = 0; r < options_.size; ++r) {
        if (r == me || peers_[r].connected) continue;
        missing += (missing.empty() ? "" : ",") + std::to_string(r);
        if (!peers_[r].last_connect_failure.empty()) {
          failures += "; rank " + std::to_string(r) + ": " + std::to_string(peers_[r].connect_attempts) +
                      " attempt(s), the last " + peers_[r].last_connect_failure;
        }
      }
      return fail(RCC_ERR_TIMEOUT, "verbs: iWARP connections to ranks %s not established within %.0f s (RCC_TIMEOUT)%s",
                  missing.c_str(), timeout_s, failures.c_str());
    }
    for (int peer = me + 1; peer < options_.size; ++peer) {
      if (peers_[peer].cm_id == nullptr && now >= peers_[peer].retry_at) RCC_RETURN_IF_ERROR(start_connect(peer));
    }
    pollfd fd = {cm_channel_->fd, POLLIN, 0};
    ::poll(&fd, 1, 20);
    rdma_cm_event* event = nullptr;
    while (rdma_get_cm_event(cm_channel_, &event) == 0) {
      rdma_cm_id* refused = nullptr;
      Status status = handle_cm_event(event, &established, &refused);
      rdma_ack_cm_event(event);
      if (refused != nullptr) rdma_destroy_id(refused);  // only after its event is acknowledged
      RCC_RETURN_IF_ERROR(status);
    }
  }
  // Every peer is connected: nobody else may connect, so nothing listens any more (a stranger now
  // meets a closed port, and requests cannot pile up unread). The peers' ids keep the device open.
  if (options_.size > 1) {
    rdma_destroy_id(listener_);
    listener_ = nullptr;
  }
  return RCC_SUCCESS;
}

std::string VerbsTransport::requester(rdma_cm_id* id) const {
  const sockaddr* address = rdma_get_peer_addr(id);
  if (address == nullptr || address->sa_family != AF_INET) return "?";
  const auto* in = reinterpret_cast<const sockaddr_in*>(address);
  return ipv4_text(in->sin_addr.s_addr) + ":" + std::to_string(ntohs(in->sin_port));
}

Status VerbsTransport::handle_cm_event(rdma_cm_event* event, int* established, rdma_cm_id** refused) {
  rdma_cm_id* id = event->id;
  int peer = static_cast<int>(reinterpret_cast<intptr_t>(id->context));
  // Events of an id that is no peer's (a request refused earlier) concern nobody here.
  if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST &&
      (peer < 0 || peer >= options_.size || peers_[peer].cm_id != id)) {
    return RCC_SUCCESS;
  }
  rdma_conn_param param = {};
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 6;
  switch (event->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(id, 5000) != 0) {
        abandon_attempt(peer, std::string("rdma_resolve_route: ") + std::strerror(errno));
      }
      return RCC_SUCCESS;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      if (id->verbs != ctx_) {
        return fail(RCC_ERR_TRANSPORT, "verbs: the route to rank %d (%s) leaves through %s, not %s", peer,
                    describe_peer(peer).c_str(), id->verbs ? ibv_get_device_name(id->verbs->device) : "?",
                    port_.device.c_str());
      }
      RCC_RETURN_IF_ERROR(create_queue_pair(peer, id));
      uint8_t request[kConnectRequestBytes];
      encode_connect_request(options_.rank, options_.size, options_.secret, request);
      param.private_data = request;
      param.private_data_len = sizeof request;
      if (rdma_connect(id, &param) != 0) {  // the peer's port refused (a listener overloaded by strangers?)
        abandon_attempt(peer, std::string("rdma_connect: ") + std::strerror(errno));
      }
      return RCC_SUCCESS;
    }
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
      std::string why;
      const int from = parse_connect_request(event->param.conn.private_data, event->param.conn.private_data_len,
                                             options_.secret, options_.rank, options_.size, &why);
      if (from >= 0 && peers_[from].connected) why = "rank " + std::to_string(from) + " is already connected";
      if (from >= 0 && why.empty() && peers_[from].cm_id != nullptr) {
        park(from);  // that rank gave up an attempt this rank had accepted and dials again: the new one counts
      }
      if (from >= 0 && why.empty() && id->verbs != ctx_) why = "it arrived on another device";
      if (from < 0 || !why.empty()) {
        rdma_reject(id, nullptr, 0);
        refusals_.refused(requester(id), why);
        *refused = id;
        return RCC_SUCCESS;
      }
      id->context = reinterpret_cast<void*>(static_cast<intptr_t>(from));
      Status created = create_queue_pair(from, id);
      if (created != RCC_SUCCESS) {
        rdma_reject(id, nullptr, 0);
        if (id->qp != nullptr) rdma_destroy_qp(id);  // never connected: no receive of it was flushed
        *refused = id;
        return created;
      }
      if (rdma_accept(id, &param) != 0) {
        return fail(RCC_ERR_TRANSPORT, "verbs: rdma_accept from rank %d: %s", from, std::strerror(errno));
      }
      return RCC_SUCCESS;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      if (peer >= 0 && peer < options_.size && !peers_[peer].connected) {
        peers_[peer].connected = true;
        ++*established;
      }
      return RCC_SUCCESS;
    case RDMA_CM_EVENT_DISCONNECTED:
      if (peer >= 0 && peer < options_.size) peers_[peer].connected = false;
      return fail(RCC_ERR_PEER_FAILED, "verbs: rank %d disconnected during set-up", peer);
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED: {
      // Before the connection stands: dial again until RCC_TIMEOUT (a lower rank dials us again).
      char why[160];
      std::snprintf(why, sizeof why, "%s (status %d)%s", rdma_event_str(event->event), event->status,
                    event->event == RDMA_CM_EVENT_REJECTED ? ": is the peer on the same iWARP network and job?" : "");
      abandon_attempt(peer, why);
      return RCC_SUCCESS;
    }
    default:
      return fail(RCC_ERR_TRANSPORT, "verbs: iWARP connection with rank %d (%s) on %s: %s (status %d)", peer,
                  describe_peer(peer).c_str(), port_.device.c_str(), rdma_event_str(event->event), event->status);
  }
}

}  // namespace rcc::transport::verbs
