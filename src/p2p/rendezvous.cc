// Large messages, zero copy: the sender announces the message (RTS, a slot message), the matched
// receive answers with its buffer's address and key (CTS), and the sender writes the payload
// straight into it with a notice (FIN) naming the receive, which completes it. FINs are bounded by
// the same number of credits as slot messages.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "p2p/engine.h"

namespace rcc::p2p {

Status Engine::start_large_send(Request* send, SlotHeader header) {
  // A synchronous send of no bytes has nothing to register: its receiver answers with an empty
  // clear-to-send, which completes it.
  Status status =
      send->bytes == 0 ? Status{RCC_SUCCESS} : registrations_->acquire(send->buffer, send->bytes, &send->memory);
  if (status == RCC_SUCCESS) {
    header.type = SlotType::kRts;
    status = post_slot_message(send->peer, header, nullptr, 0);
  }
  return status;
}

Status Engine::handle_rts(int peer, const SlotHeader& header) {
  Arrival rts;
  rts.source = peer;
  rts.header = header;
  Request* receive = matcher_.take_receive(peer, header.tag, header.context);
  if (receive == nullptr) {
    matcher_.park(std::move(rts));
    return RCC_SUCCESS;
  }
  return send_cts(receive, rts);
}

Status Engine::send_cts(Request* receive, const Arrival& rts) {
  const int peer = rts.source;
  SlotHeader cts{};
  cts.type = SlotType::kCts;
  cts.tag = rts.header.tag;
  cts.context = rts.header.context;
  cts.sender_request = rts.header.sender_request;
  cts.sender_generation = rts.header.sender_generation;
  cts.receiver_request = receive->index;
  const size_t length = rts.header.length;
  receive->matched = MessageInfo{peer, rts.header.tag, length};
  // The receive's peer is the sender from now on (it may have been posted for any source), so
  // the FIN is checked against it.
  receive->peer = peer;
  if (length > receive->bytes || length == 0) {
    // Truncated: fails the receive; empty (a synchronous send of no bytes): completes it. Either
    // way the empty answer completes the sender without a write.
    deliver(receive, peer, rts.header, nullptr);
    cts.length = 0;
    return post_slot_message(peer, cts, nullptr, 0);
  }
  std::vector<uint8_t> key;
  RCC_RETURN_IF_ERROR(registrations_->acquire(receive->buffer, length, &receive->memory));
  RCC_RETURN_IF_ERROR(transport_->pack_key(*receive->memory, &key));
  if (key.size() > std::min<size_t>(peers_[static_cast<size_t>(peer)].eager_limit, UINT16_MAX)) {
    return fail(RCC_ERR_INTERNAL, "a remote key of %zu bytes does not fit a slot", key.size());
  }
  cts.length = length;
  cts.target_addr = reinterpret_cast<uint64_t>(receive->buffer);
  cts.key_length = static_cast<uint16_t>(key.size());
  // From here the sender may write into the buffer at any time, until its FIN or refusal.
  receive->transfer_in_flight = true;
  Status status = post_slot_message(peer, cts, key.data(), key.size());
  if (status != RCC_SUCCESS) receive->transfer_in_flight = false;
  return status;
}

Status Engine::handle_cts(int peer, const SlotHeader& header, const uint8_t* key) {
  Request* send = request_at(header.sender_request);
  const bool current = send != nullptr && send->kind == Request::Kind::kSend && send->peer == peer &&
                       send->generation == header.sender_generation && send->context == header.context;
  if (!current || send->done || send->ending) {
    // After a failure the send was already ended with the error: a late answer is expected. The
    // receiver keeps its buffer until it hears that nothing will be written.
    if (some_peer_failed_ || some_group_unusable_) {
      return header.length == 0 ? RCC_SUCCESS : refuse_cts(peer, header.receiver_request);
    }
    return fail(RCC_ERR_TRANSPORT, "protocol error: unexpected clear-to-send from rank %d", peer);
  }
  if (send->transfer_in_flight || header.length > send->bytes ||
      header.key_length > peers_[static_cast<size_t>(peer)].eager_limit) {
    return fail(RCC_ERR_TRANSPORT, "protocol error: a clear-to-send from rank %d that does not fit its send", peer);
  }
  if (header.length == 0) {
    complete(send, RCC_SUCCESS);  // the receiver refused a truncated message
    return RCC_SUCCESS;
  }
  RCC_RETURN_IF_ERROR(
      transport_->import_key(peer, std::vector<uint8_t>(key, key + header.key_length), &send->remote_key));
  send->transfer_in_flight = true;
  peers_[static_cast<size_t>(peer)].pending_writes.push_back(
      {send, header.target_addr, header.length, header.receiver_request});
  return flush_pending(peer);
}

Status Engine::refuse_cts(int peer, uint32_t receiver_request) {
  if (peers_[static_cast<size_t>(peer)].failed) return RCC_SUCCESS;
  peers_[static_cast<size_t>(peer)].pending_writes.push_back({nullptr, 0, 0, receiver_request});
  return flush_pending(peer);
}

Status Engine::handle_fin(int peer, uint32_t request_index, bool refused) {
  RCC_TRACE("write %s by rank %d for receive %u", refused ? "refused" : "finished", peer, request_index);
  Request* receive = request_at(request_index);
  if (receive == nullptr || receive->kind != Request::Kind::kRecv || receive->peer != peer || receive->done ||
      !receive->transfer_in_flight) {
    if (some_peer_failed_ || some_group_unusable_) return RCC_SUCCESS;  // ended by the failure already
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d finished a write for an unknown receive", peer);
  }
  if (!refused || receive->ending) {
    finish_transfer(receive);
  } else {
    // Nothing will land, but the failure that made the sender give up is not known here yet:
    // the receive waits for it (or RCC_TIMEOUT), so its error names the rank that failed.
    receive->transfer_in_flight = false;
    receive->refused = true;
  }
  ++peers_[static_cast<size_t>(peer)].fins_consumed;
  return send_credits(peer, false);
}

Status Engine::handle_write_done(uint64_t cookie) {
  Request* send = request_at((cookie & 0xffffffffu) - 1);
  if (send == nullptr || send->kind != Request::Kind::kSend || send->generation != cookie >> 32 ||
      !send->transfer_in_flight) {
    if (some_peer_failed_ || some_group_unusable_) return RCC_SUCCESS;  // ended by the failure already
    return fail(RCC_ERR_INTERNAL, "write completion for an unknown request %llu",
                static_cast<unsigned long long>(cookie));
  }
  finish_transfer(send);
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
