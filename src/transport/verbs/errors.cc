// How the verbs backend reports trouble: failed completions and async events become kError events
// naming the peer, the device and a hint; addresses are described the way users look them up.
#include <arpa/inet.h>

#include <string>

#include "base/log.h"
#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {

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
      default: break;
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
  if (port_.kind == LinkKind::kRoce)
    return text + " GID " + gid_to_string(gid_.gid) + " (index " + std::to_string(gid_.index) + ")";
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

Status completion_error_status(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_ABORT_ERR:
    // A flush as a queue pair's first error: no request of ours failed, the queue pair was moved to
    // the error state under us. On iWARP that is the peer's end of the TCP connection closing (its
    // process died, or its host reset the connection), seen here before the liveness notice.
    case IBV_WC_WR_FLUSH_ERR: return RCC_ERR_PEER_FAILED;
    default: return RCC_ERR_TRANSPORT;
  }
}

const char* completion_error_hint(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "the peer did not acknowledge: it may have died; check RCC_IB_GID_INDEX, the link, or raise "
             "RCC_IB_TIMEOUT";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "the peer had no receive posted: it may have died or exceeded max_notifies_per_peer";
    case IBV_WC_REM_ACCESS_ERR:
      return "the peer refused the access: the destination is not inside a registration of that rank (key or "
             "address wrong, or the memory was deregistered)";
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
      return "the local source is not inside a registration of this rank (memory deregistered too early?)";
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR: return "the peer rejected the request (receive too small or queue pair in error)";
    case IBV_WC_LOC_LEN_ERR: return "a message was larger than the posted receive (mixed rcc builds?)";
    case IBV_WC_WR_FLUSH_ERR:
      return "the connection to the peer was closed (on iWARP: the peer's process ended or its host reset it)";
    default: return "see dmesg and ibv_devinfo for the device's state";
  }
}

}  // namespace rcc::transport::verbs
