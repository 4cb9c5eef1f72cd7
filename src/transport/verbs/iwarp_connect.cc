// iWARP set-up through librdmacm: a listener on the device's IPv4 address, the lower rank of each
// pair connects to the higher one, private data says who is connecting.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>

#include <chrono>
#include <cerrno>
#include <cstring>

#include "core/config.h"
#include "core/log.h"
#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {
namespace {

struct ConnectRequest {
  uint32_t magic;
  uint32_t rank;
  uint32_t size;
};
constexpr uint32_t kConnectMagic = 0x43434352;  // "RCCC"

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
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != AF_INET || (ifa->ifa_flags & IFF_LOOPBACK) != 0) continue;
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
  if (cm_channel_ == nullptr) return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_event_channel: %s", std::strerror(errno));
  RCC_RETURN_IF_ERROR(find_device_ipv4(cm_channel_, port_.device, &listen_ipv4_));
  if (rdma_create_id(cm_channel_, &listener_, nullptr, RDMA_PS_TCP) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_id: %s", std::strerror(errno));
  }
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = listen_ipv4_;
  if (rdma_bind_addr(listener_, reinterpret_cast<sockaddr*>(&address)) != 0 ||
      rdma_listen(listener_, options_.size + 8) != 0) {
    return fail(RCC_ERR_TRANSPORT, "verbs: listening on %s (%s): %s", ipv4_text(listen_ipv4_).c_str(),
                port_.device.c_str(), std::strerror(errno));
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

Status VerbsTransport::connect_through_cm(const std::vector<RankAddress>& addresses) {
  int me = options_.rank;
  for (int peer = me + 1; peer < options_.size; ++peer) {
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(cm_channel_, &id, reinterpret_cast<void*>(static_cast<intptr_t>(peer)), RDMA_PS_TCP) != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: rdma_create_id toward rank %d: %s", peer, std::strerror(errno));
    }
    peers_[peer].cm_id = id;  // destroyed with the transport even if set-up fails
    sockaddr_in source = {};
    source.sin_family = AF_INET;
    source.sin_addr.s_addr = listen_ipv4_;
    sockaddr_in target = {};
    target.sin_family = AF_INET;
    target.sin_addr.s_addr = addresses[peer].ipv4;
    target.sin_port = htons(addresses[peer].cm_port);
    if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&source), reinterpret_cast<sockaddr*>(&target), 5000) != 0) {
      return fail(RCC_ERR_TRANSPORT, "verbs: rdma_resolve_addr to rank %d (%s): %s", peer, describe_peer(peer).c_str(),
                  std::strerror(errno));
    }
  }
  int established = 0;
  int64_t timeout_s = config::get_int_or_default("RCC_TIMEOUT");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (established < options_.size - 1) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::string missing;
      for (int r = 0; r < options_.size; ++r) {
        if (r != me && !peers_[r].connected) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      }
      return fail(RCC_ERR_TIMEOUT, "verbs: iWARP connections to ranks %s not established within %llds (RCC_TIMEOUT)",
                  missing.c_str(), static_cast<long long>(timeout_s));
    }
    pollfd fd = {cm_channel_->fd, POLLIN, 0};
    ::poll(&fd, 1, 100);
    rdma_cm_event* event = nullptr;
    while (rdma_get_cm_event(cm_channel_, &event) == 0) {
      Status status = handle_cm_event(event, &established);
      rdma_ack_cm_event(event);
      RCC_RETURN_IF_ERROR(status);
    }
  }
  return RCC_SUCCESS;
}

Status VerbsTransport::handle_cm_event(rdma_cm_event* event, int* established) {
  rdma_cm_id* id = event->id;
  int peer = static_cast<int>(reinterpret_cast<intptr_t>(id->context));
  rdma_conn_param param = {};
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 6;
  switch (event->event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(id, 5000) != 0) {
        return fail(RCC_ERR_TRANSPORT, "verbs: rdma_resolve_route to rank %d: %s", peer, std::strerror(errno));
      }
      return RCC_SUCCESS;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      if (id->verbs != ctx_) {
        return fail(RCC_ERR_TRANSPORT, "verbs: the route to rank %d (%s) leaves through %s, not %s", peer,
                    describe_peer(peer).c_str(), id->verbs ? ibv_get_device_name(id->verbs->device) : "?",
                    port_.device.c_str());
      }
      RCC_RETURN_IF_ERROR(create_queue_pair(peer, id));
      ConnectRequest request = {kConnectMagic, static_cast<uint32_t>(options_.rank), static_cast<uint32_t>(options_.size)};
      param.private_data = &request;
      param.private_data_len = sizeof request;
      if (rdma_connect(id, &param) != 0) {
        return fail(RCC_ERR_TRANSPORT, "verbs: rdma_connect to rank %d: %s", peer, std::strerror(errno));
      }
      return RCC_SUCCESS;
    }
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
      ConnectRequest request = {};
      if (event->param.conn.private_data == nullptr || event->param.conn.private_data_len < sizeof request) {
        rdma_reject(id, nullptr, 0);
        return fail(RCC_ERR_TRANSPORT, "verbs: a connection request without rcc's private data (another program?)");
      }
      std::memcpy(&request, event->param.conn.private_data, sizeof request);
      int from = static_cast<int>(request.rank);
      if (request.magic != kConnectMagic || request.size != static_cast<uint32_t>(options_.size) || from >= options_.rank ||
          peers_[from].cm_id != nullptr) {
        rdma_reject(id, nullptr, 0);
        return fail(RCC_ERR_TRANSPORT, "verbs: unexpected connection request (rank %u of %u) at rank %d of %d",
                    request.rank, request.size, options_.rank, options_.size);
      }
      if (id->verbs != ctx_) {
        rdma_reject(id, nullptr, 0);
        return fail(RCC_ERR_TRANSPORT, "verbs: connection from rank %d arrived on another device", from);
      }
      id->context = reinterpret_cast<void*>(static_cast<intptr_t>(from));
      RCC_RETURN_IF_ERROR(create_queue_pair(from, id));
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
    default:
      return fail(RCC_ERR_TRANSPORT, "verbs: iWARP connection with rank %d (%s) on %s: %s (status %d)%s", peer,
                  peer >= 0 && peer < options_.size ? describe_peer(peer).c_str() : "?", port_.device.c_str(),
                  rdma_event_str(event->event), event->status,
                  event->event == RDMA_CM_EVENT_REJECTED ? "; is the peer on the same iWARP network?" : "");
  }
}

}  // namespace rcc::transport::verbs
