// Connections: each rank's card (its transport address, where its slot and credit areas lie and
// how it takes eager messages), and setting a peer up from its card, at set-up (RCC_CONNECT=eager)
// or when the peer is first needed: the first message to it, or the first notice from it.
//
// A card is: u32 transport address bytes | transport address | AreaHeader | receive area key |
// credit area key. Nothing in it depends on the peer, so one published card serves every rank.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "p2p/engine.h"

namespace rcc::p2p {
struct AreaHeader {
  uint64_t recv_area;
  uint64_t credit_area;
  uint32_t recv_key_bytes;
  uint32_t credit_key_bytes;
  uint32_t slots;
  uint32_t slot_bytes;      // toward peers on this host
  uint32_t far_slot_bytes;  // toward peers on other hosts (slot_layout.h)
  uint32_t polled;          // 1: slot messages are found by polling (the transport's polled_delivery)
  uint32_t encodings;       // the eager encodings this rank takes (eager.h's bits)
};

namespace {

// Splits a card into its transport address and the rest; false when it is malformed.
bool split_card(const std::vector<uint8_t>& card, size_t* address_bytes) {
  uint32_t bytes = 0;
  if (card.size() < sizeof bytes) return false;
  std::memcpy(&bytes, card.data(), sizeof bytes);
  if (card.size() - sizeof bytes < bytes) return false;
  *address_bytes = bytes;
  return true;
}

}  // namespace

Status Engine::make_card(std::vector<uint8_t>* card) {
  std::vector<uint8_t> address, recv_key, credit_key;
  RCC_RETURN_IF_ERROR(transport_->local_address(&address));
  RCC_RETURN_IF_ERROR(transport_->pack_key(*recv_memory_, &recv_key));
  RCC_RETURN_IF_ERROR(transport_->pack_key(*credit_memory_, &credit_key));
  const AreaHeader mine{reinterpret_cast<uint64_t>(recv_area_.data()),
                        reinterpret_cast<uint64_t>(credit_area_.data()),
                        static_cast<uint32_t>(recv_key.size()),
                        static_cast<uint32_t>(credit_key.size()),
                        slots_,
                        static_cast<uint32_t>(layout_.near_geometry().slot_bytes),
                        static_cast<uint32_t>(layout_.far_geometry().slot_bytes),
                        polled_ ? 1u : 0u,
                        encodings_};
  const uint32_t address_bytes = static_cast<uint32_t>(address.size());
  std::vector<uint8_t> out;
  out.reserve(sizeof address_bytes + address.size() + sizeof mine + recv_key.size() + credit_key.size());
  const auto append = [&out](const void* data, size_t bytes) {
    const auto* begin = static_cast<const uint8_t*>(data);
    out.insert(out.end(), begin, begin + bytes);
  };
  append(&address_bytes, sizeof address_bytes);
  append(address.data(), address.size());
  append(&mine, sizeof mine);
  append(recv_key.data(), recv_key.size());
  append(credit_key.data(), credit_key.size());
  *card = std::move(out);
  return RCC_SUCCESS;
}

Status Engine::transport_address_of(int peer, const std::vector<uint8_t>& card, std::vector<uint8_t>* address) {
  size_t bytes = 0;
  if (!split_card(card, &bytes)) return fail(RCC_ERR_BOOTSTRAP, "rank %d published a truncated card", peer);
  address->assign(card.begin() + sizeof(uint32_t),
                  card.begin() + static_cast<std::ptrdiff_t>(sizeof(uint32_t) + bytes));
  return RCC_SUCCESS;
}

Status Engine::connect_peer(int peer) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  if (state.connected) return RCC_SUCCESS;
  if (state.failed) return fail(RCC_ERR_PEER_FAILED, "rank %d has failed: not connecting to it", peer);
  std::vector<uint8_t> fetched;
  const std::vector<uint8_t>* card = nullptr;
  if (!cards_.empty()) {
    card = &cards_[static_cast<size_t>(peer)];
  } else if (directory_ != nullptr) {
    const Status found = directory_->lookup("card", peer, lookup_timeout_s_, &fetched);
    if (found != RCC_SUCCESS) {
      return fail(found, "connecting to rank %d: its card could not be fetched: %s", peer, last_error().c_str());
    }
    card = &fetched;
  } else {
    return fail(RCC_ERR_INTERNAL, "connecting to rank %d: no card and nowhere to look it up", peer);
  }
  if (on_demand_) {
    std::vector<uint8_t> address;
    RCC_RETURN_IF_ERROR(transport_address_of(peer, *card, &address));
    const Status connected = transport_->connect(peer, address);
    if (connected != RCC_SUCCESS) {
      return fail(connected, "connecting to rank %d (%s): %s", peer, transport_->describe_peer(peer).c_str(),
                  last_error().c_str());
    }
  }
  RCC_RETURN_IF_ERROR(adopt_card(peer, *card));
  state.connected = true;
  connected_peers_.push_back(peer);
  RCC_TRACE("engine: connected to rank %d (%zu peers now)", peer, connected_peers_.size());
  return RCC_SUCCESS;
}

Status Engine::check_cards() {
  AreaHeader header{};
  size_t at = 0;
  if (!cards_.empty()) {
    for (int peer = 0; peer < size_; ++peer)
      RCC_RETURN_IF_ERROR(check_card(peer, cards_[static_cast<size_t>(peer)], &header, &at));
    return RCC_SUCCESS;
  }
  if (size_ == 1) return RCC_SUCCESS;
  // Settings that must agree (slot sizes, polling) are compared with one neighbour at set-up, so a
  // job whose ranks disagree fails in rcc_comm_init (on a rank beside a disagreeing one) rather
  // than at some later first message.
  const int neighbour = (rank_ + 1) % size_;
  std::vector<uint8_t> card;
  const Status found = directory_->lookup("card", neighbour, lookup_timeout_s_, &card);
  if (found != RCC_SUCCESS) return found;
  return check_card(neighbour, card, &header, &at);
}

Status Engine::check_card(int peer, const std::vector<uint8_t>& card, AreaHeader* out, size_t* header_at) {
  size_t address_bytes = 0;
  if (!split_card(card, &address_bytes)) return fail(RCC_ERR_BOOTSTRAP, "rank %d published a truncated card", peer);
  const size_t at = sizeof(uint32_t) + address_bytes;
  AreaHeader header;
  if (card.size() - at < sizeof header)
    return fail(RCC_ERR_BOOTSTRAP, "rank %d published a truncated area description", peer);
  std::memcpy(&header, card.data() + at, sizeof header);
  if (card.size() - at != sizeof header + header.recv_key_bytes + header.credit_key_bytes) {
    return fail(RCC_ERR_BOOTSTRAP, "rank %d published a malformed area description", peer);
  }
  const size_t near_bytes = layout_.near_geometry().slot_bytes;
  if (header.slots != slots_ || header.slot_bytes != near_bytes ||
      header.far_slot_bytes != layout_.far_geometry().slot_bytes) {
    return fail(RCC_ERR_MISMATCH,
                "rank %d uses %u eager slots of %u bytes (%u to other hosts), this rank %u of %zu (%zu): set "
                "RCC_EAGER_LIMIT, RCC_EAGER_LIMIT_NET, RCC_EAGER_NET_MEMORY, RCC_UCX_NET_EAGER_BYTES and "
                "RCC_EAGER_SLOTS the same on every rank",
                peer, header.slots, header.slot_bytes, header.far_slot_bytes, slots_, near_bytes,
                layout_.far_geometry().slot_bytes);
  }
  if (header.polled != (polled_ ? 1u : 0u)) {
    // A polling sender would never notify a rank that only looks at notices.
    return fail(RCC_ERR_MISMATCH,
                "rank %d %s its eager slots, this rank %s: set RCC_IB_POLLED_EAGER the same on every rank", peer,
                header.polled != 0 ? "polls" : "does not poll", polled_ ? "polls" : "does not");
  }
  *out = header;
  *header_at = at;
  return RCC_SUCCESS;
}

Status Engine::adopt_card(int peer, const std::vector<uint8_t>& card) {
  AreaHeader header{};
  size_t at = 0;
  RCC_RETURN_IF_ERROR(check_card(peer, card, &header, &at));
  if (peer == rank_) return RCC_SUCCESS;
  const uint8_t* keys = card.data() + at + sizeof header;
  const std::vector<uint8_t> their_recv_key(keys, keys + header.recv_key_bytes);
  const std::vector<uint8_t> their_credit_key(keys + header.recv_key_bytes,
                                              keys + header.recv_key_bytes + header.credit_key_bytes);
  PeerState& state = peers_[static_cast<size_t>(peer)];
  RCC_RETURN_IF_ERROR(transport_->import_key(peer, their_recv_key, &state.slots_key));
  RCC_RETURN_IF_ERROR(transport_->import_key(peer, their_credit_key, &state.credit_key));
  state.remote_slots = header.recv_area + layout_.offset(peer, rank_);
  state.remote_credit = header.credit_area + static_cast<uint64_t>(rank_) * sizeof(CreditWord);
  state.encodings = encodings_ & header.encodings;
  state.packet_bytes = transport_->notice_packet_bytes(peer);
  state.bare_notices.assign(slots_, 0);
  return RCC_SUCCESS;
}

Engine::Footprint Engine::footprint() {
  std::lock_guard<std::mutex> guard(mutex_);
  Footprint out;
  out.connected_peers = static_cast<int>(connected_peers_.size());
  out.on_demand = on_demand_;
  out.eager_reserved_bytes = recv_area_.size() + send_area_.size();
  out.eager_resident_bytes = recv_area_.resident_bytes() + send_area_.resident_bytes();
  return out;
}

}  // namespace rcc::p2p
