// The eager slots: sending a slot message (through the first eager encoding that applies, or into a
// queue while the peer has no free slot), the credits that free slots, and receiving: finding a
// message in a slot (by its notice, or by polling), matching it and releasing the slot.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "p2p/engine.h"

namespace rcc::p2p {
namespace {

// Zeroes a consumed slot's header sequence word: a bare message reuses the slot without writing a
// header, and the old number must never pass for a later one.
void clear_sequence(uint8_t* slot) {
  const uint32_t zero = 0;
  std::memcpy(slot + offsetof(SlotHeader, sequence), &zero, sizeof zero);
}

SlotHeader eager_header(int tag, uint32_t context, uint64_t length) {
  SlotHeader header{};
  header.type = SlotType::kEager;
  header.tag = tag;
  header.context = context;
  header.length = length;
  return header;
}

}  // namespace

uint64_t Engine::slots_consumed_by(int peer) const {
  if (!polled_) return peers_[static_cast<size_t>(peer)].granted_slots;
  return std::max(__atomic_load_n(&credit_area_[static_cast<size_t>(peer)].slots_consumed, __ATOMIC_ACQUIRE),
                  peers_[static_cast<size_t>(peer)].granted_slots);
}

uint64_t Engine::fins_consumed_by(int peer) const {
  if (!polled_) return peers_[static_cast<size_t>(peer)].granted_fins;
  return std::max(__atomic_load_n(&credit_area_[static_cast<size_t>(peer)].fins_consumed, __ATOMIC_ACQUIRE),
                  peers_[static_cast<size_t>(peer)].granted_fins);
}

uint8_t* Engine::recv_slot(int peer, uint32_t slot) {
  const PeerState& state = peers_[static_cast<size_t>(peer)];
  return state.recv_slots + static_cast<size_t>(slot) * state.slot_bytes;
}

uint8_t* Engine::send_slot(int peer, uint32_t slot) {
  const PeerState& state = peers_[static_cast<size_t>(peer)];
  return state.send_slots + static_cast<size_t>(slot) * state.slot_bytes;
}

uint64_t Engine::remote_slot(int peer, uint32_t slot) const {
  const PeerState& state = peers_[static_cast<size_t>(peer)];
  return state.remote_slots + static_cast<uint64_t>(slot) * state.slot_bytes;
}

SlotLink Engine::link_to(int peer) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const uint32_t slot = static_cast<uint32_t>(state.slots_sent % slots_);
  return SlotLink{
      *transport_,
      *send_memory_,
      state,
      counters_,
      peer,
      send_slot(peer, slot),
      remote_slot(peer, slot),
      state.slot_bytes,
      slots_,
      polled_,
      polled_ ? __atomic_load_n(&credit_area_[static_cast<size_t>(peer)].sleep_epoch, __ATOMIC_ACQUIRE) : 0};
}

Status Engine::post_slot_message(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  if (!state.pending_messages.empty() || state.slots_sent - slots_consumed_by(peer) >= slots_) {
    const auto* bytes = static_cast<const uint8_t*>(payload);
    state.pending_messages.push_back({header, std::vector<uint8_t>(bytes, bytes + payload_bytes)});
    return RCC_SUCCESS;
  }
  return write_slot(peer, header, payload, payload_bytes);
}

Status Engine::write_slot(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes) {
  SlotLink link = link_to(peer);
  for (const EagerEncoding* encoding : eager_encodings()) {
    if (encoding->applies(link, header, payload, payload_bytes))
      return encoding->send(link, header, payload, payload_bytes);
  }
  return fail(RCC_ERR_INTERNAL, "no eager encoding applies to a message to rank %d", peer);
}

Status Engine::flush_pending(int peer) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  while (!state.pending_messages.empty()) {
    if (state.slots_sent - slots_consumed_by(peer) >= slots_) break;
    PeerState::PendingMessage message = std::move(state.pending_messages.front());
    state.pending_messages.pop_front();
    Request* send = message.send;
    const bool live = send == nullptr || (send->in_use && !send->done && send->generation == message.send_generation);
    if (message.header.type == SlotType::kEager) {
      // A message of a communicator aborted or broken meanwhile is dropped (its receiver no longer
      // takes it in order), and a referenced buffer not read: its caller may have let it go. One of
      // a communicator destroyed since is still written, unless it was destroyed unusable or lost
      // a message since (dropped_groups_): its send completed (a copy) or is still pending (the
      // buffer is the request's until it ends), and the receiver's communicator may wait for it.
      // rcc_comm_destroy progresses until every peer has left, so it goes out.
      const uint32_t group_id = group_of_context(message.header.context);
      const Group* group = find_group(group_id);
      const bool usable =
          group == nullptr ? !eager_messages_dropped(group_id) : !group->aborted_ && group->broken_ == RCC_SUCCESS;
      if (!usable || !live) {
        std::string why;  // built only for a message dropped
        const Status status = group_state(group, &why);
        if (live && send != nullptr) complete(send, status, why);
        continue;
      }
    }
    if (send == nullptr) {
      RCC_RETURN_IF_ERROR(write_slot(peer, message.header, message.payload.data(), message.payload.size()));
      continue;
    }
    send->queued_eager = false;
    const Status status = write_slot(peer, message.header, send->buffer, send->bytes);
    if (status != RCC_SUCCESS) {
      complete(send, status, last_error());
      return status;
    }
    complete(send, RCC_SUCCESS);
  }
  while (!state.pending_writes.empty()) {
    if (state.fins_sent - fins_consumed_by(peer) >= slots_) break;
    PeerState::PendingWrite write = state.pending_writes.front();
    state.pending_writes.pop_front();
    Request* send = write.send;
    const uint32_t receiver = static_cast<uint32_t>(write.receiver_request);
    if (send == nullptr || send->done) {
      // A refusal (or a send the timeout ended meanwhile): a notice of no bytes, so the receiver
      // hands its buffer back.
      RCC_RETURN_IF_ERROR(transport_->write(peer, &credit_staging_[static_cast<size_t>(peer)], 0,
                                            *credit_staging_memory_, state.remote_credit, *state.credit_key, true,
                                            make_imm(ImmKind::kFinRefused, receiver), 0));
      ++state.fins_sent;
      continue;
    }
    RCC_TRACE("writing %llu bytes to rank %d for its receive %u", static_cast<unsigned long long>(write.bytes), peer,
              receiver);
    // The cookie names the request and its generation, so a late completion never ends a reuse.
    const uint64_t cookie = static_cast<uint64_t>(send->generation) << 32 | (send->index + 1);
    Status status = transport_->write(peer, send->buffer, write.bytes, *send->memory, write.target, *send->remote_key,
                                      true, make_imm(ImmKind::kFin, receiver), cookie);
    if (status != RCC_SUCCESS) {
      complete(send, status, last_error());
      return status;
    }
    ++state.fins_sent;
  }
  return RCC_SUCCESS;
}

Status Engine::send_credits(int peer, bool force) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const uint64_t slots = state.slots_consumed - state.reported_slots;
  const uint64_t fins = state.fins_consumed - state.reported_fins;
  const uint64_t due = slots_ / 4;
  if (!(slots >= due || fins >= due || (force && (slots > 0 || fins > 0)))) return RCC_SUCCESS;
  return write_credit_word(peer);
}

Status Engine::write_credit_word(int peer) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  if (!polled_) {  // the counts travel in the notice of a write of no bytes
    state.reported_slots = state.slots_consumed;
    state.reported_fins = state.fins_consumed;
    return transport_->write(peer, &credit_staging_[static_cast<size_t>(peer)], 0, *credit_staging_memory_,
                             state.remote_credit, *state.credit_key, true,
                             make_imm(ImmKind::kCredit, credit_imm_arg(state.slots_consumed, state.fins_consumed)), 0);
  }
  credit_staging_[static_cast<size_t>(peer)] = CreditWord{state.slots_consumed, state.fins_consumed, sleep_epoch_};
  state.reported_slots = state.slots_consumed;
  state.reported_fins = state.fins_consumed;
  return transport_->write(peer, &credit_staging_[static_cast<size_t>(peer)], sizeof(CreditWord),
                           *credit_staging_memory_, state.remote_credit, *state.credit_key, false, 0, 0);
}

bool Engine::waiting_for_credits() const {
  for (const PeerState& state : peers_) {
    if (!state.failed && (!state.pending_messages.empty() || !state.pending_writes.empty())) return true;
  }
  return false;
}

void Engine::arrive_eager(int peer, const SlotHeader& header, const uint8_t* payload) {
  Request* receive = matcher_.take_receive(peer, header.tag, header.context);
  if (receive != nullptr) {
    deliver(receive, peer, header, payload);
    return;
  }
  Arrival parked;
  parked.source = peer;
  parked.header = header;
  parked.payload.assign(payload, payload + header.length);
  matcher_.park(std::move(parked));
}

Status Engine::handle_slot(int peer, uint32_t slot) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const uint32_t expected = static_cast<uint32_t>(state.slots_delivered % slots_);
  if (slot != expected) {
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d wrote slot %u, expected slot %u", peer, slot, expected);
  }
  SlotHeader header;
  uint8_t* bytes = recv_slot(peer, slot);
  std::memcpy(&header, bytes, sizeof header);
  const uint8_t* payload = bytes + sizeof header;
  // Credits piggybacked by the peer (cumulative; slot messages arrive in order).
  state.granted_slots = std::max(state.granted_slots, header.credit_slots);
  state.granted_fins = std::max(state.granted_fins, header.credit_fins);
  RCC_TRACE("slot %u from rank %d: type %u tag %d length %llu", slot, peer, static_cast<unsigned>(header.type),
            header.tag, static_cast<unsigned long long>(header.length));
  switch (header.type) {
    case SlotType::kEager:
      if (header.length > state.eager_limit) {
        return fail(RCC_ERR_TRANSPORT, "protocol error: oversized eager message from rank %d", peer);
      }
      state.received_eager = true;
      state.received_tag = header.tag;
      state.received_context = header.context;
      state.received_length = header.length;
      ++counters_.headed_received;
      arrive_eager(peer, header, payload);
      break;
    case SlotType::kRts: RCC_RETURN_IF_ERROR(handle_rts(peer, header)); break;
    case SlotType::kCts: RCC_RETURN_IF_ERROR(handle_cts(peer, header, payload)); break;
    default:
      return fail(RCC_ERR_TRANSPORT, "protocol error: unknown message type %u from rank %d",
                  static_cast<unsigned>(header.type), peer);
  }
  return release_slot(peer, sizeof header, tail_offset(body_bytes(header)) + kTailBytes - sizeof header);
}

Status Engine::release_slot(int peer, uint64_t offset, uint64_t written) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  ++state.slots_delivered;
  if (polled_) {
    state.unreleased_offset = offset;
    state.unreleased_bytes = written;
    return RCC_SUCCESS;
  }
  ++state.slots_consumed;
  return send_credits(peer, false);
}

Status Engine::release_delivered(int peer) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  if (state.slots_consumed == state.slots_delivered) return RCC_SUCCESS;
  // The next message into this slot may be shorter (or bare): its tail word would then sit on
  // bytes of this body, and a bare one leaves the old header in place; neither may pass for a
  // message before it lands. Zeroed before the slot goes back to the sender, and the anchor byte
  // (which an anchored message overwrote) idle again.
  uint8_t* bytes = recv_slot(peer, static_cast<uint32_t>(state.slots_consumed % slots_));
  std::memset(bytes + state.unreleased_offset, 0, state.unreleased_bytes);
  clear_sequence(bytes);
  arm_anchor(bytes, state.slot_bytes);
  ++state.slots_consumed;
  return send_credits(peer, false);
}

Status Engine::handle_bare(int peer, uint32_t slot) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const uint64_t notice = state.bare_notices[slot];
  state.bare_notices[slot] = 0;
  const uint64_t length = (notice & 0xffffffffu) - 1;
  if (!state.received_eager) {
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d sent a bare message before any eager message", peer);
  }
  // Its piggybacked credits, relative to those of the peer's previous slot message.
  state.granted_slots = bare_credit(static_cast<uint32_t>(notice >> 32), state.granted_slots);
  state.received_length = length;
  ++counters_.bare_received;
  return deliver_payload(peer, slot, sizeof(SlotHeader), length);
}

Status Engine::handle_anchored(int peer, uint32_t slot) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const uint64_t length = state.received_length;
  if (!state.received_eager || length == 0) {
    return fail(RCC_ERR_TRANSPORT,
                "protocol error: rank %d sent an anchored message without a previous non-empty eager message", peer);
  }
  ++counters_.anchored_received;
  return deliver_payload(peer, slot, state.slot_bytes - length, length);
}

Status Engine::deliver_payload(int peer, uint32_t slot, uint64_t offset, uint64_t length) {
  const PeerState& state = peers_[static_cast<size_t>(peer)];
  arrive_eager(peer, eager_header(state.received_tag, state.received_context, length), recv_slot(peer, slot) + offset);
  return release_slot(peer, offset, length);
}

Status Engine::poll_slots(int peer, uint64_t* delivered) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  // The message delivered last stays unreleased until the next pass or until another one is found:
  // at most one slot at a time, so the slot looked at next is never one still holding its message.
  RCC_RETURN_IF_ERROR(release_delivered(peer));
  for (;;) {
    const uint32_t expected = slot_sequence(state.slots_delivered);
    const uint32_t slot = static_cast<uint32_t>(state.slots_delivered % slots_);
    if (state.bare_notices[slot] != 0) {  // its notice came (earlier messages have all landed)
      RCC_RETURN_IF_ERROR(release_delivered(peer));
      RCC_RETURN_IF_ERROR(handle_bare(peer, slot));
      ++*delivered;
      continue;
    }
    const uint8_t* bytes = recv_slot(peer, slot);
    const auto* sequence = reinterpret_cast<const uint32_t*>(bytes + offsetof(SlotHeader, sequence));
    if (__atomic_load_n(sequence, __ATOMIC_ACQUIRE) != expected) {
      // No header: an anchored message, once its last byte (the anchor's) has landed.
      if (__atomic_load_n(bytes + state.slot_bytes - 1, __ATOMIC_ACQUIRE) == kAnchorIdle) return RCC_SUCCESS;
      RCC_RETURN_IF_ERROR(release_delivered(peer));
      RCC_RETURN_IF_ERROR(handle_anchored(peer, slot));
      ++*delivered;
      continue;
    }
    // The header is whole (its sequence is its last word); the body is once its tail word is too.
    const auto* header = reinterpret_cast<const SlotHeader*>(bytes);
    const uint64_t body = body_bytes(*header);
    if (body > state.eager_limit) {
      return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d wrote a slot message of %llu bytes (limit %zu)", peer,
                  static_cast<unsigned long long>(body), state.eager_limit);
    }
    const auto* tail = reinterpret_cast<const uint32_t*>(bytes + tail_offset(body));
    if (__atomic_load_n(tail, __ATOMIC_ACQUIRE) != expected) return RCC_SUCCESS;
    RCC_RETURN_IF_ERROR(release_delivered(peer));
    RCC_RETURN_IF_ERROR(handle_slot(peer, slot));
    ++*delivered;
  }
}

Status Engine::announce_sleep() {
  ++sleep_epoch_;
  for (int peer : connected_peers_) {
    if (peers_[static_cast<size_t>(peer)].failed) continue;
    RCC_RETURN_IF_ERROR(write_credit_word(peer));
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
