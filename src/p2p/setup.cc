// Engine set-up: the settings it reads, the registered areas, and the exchange that tells every
// peer where to write (slots, credit word) and which eager encodings this rank takes.
#include <algorithm>
#include <cstring>
#include <string>

#include "base/log.h"
#include "base/settings.h"
#include "p2p/engine.h"

namespace rcc::p2p {
Engine::Engine(std::unique_ptr<transport::Transport> transport, int rank, int size)
    : transport_(std::move(transport)),
      registrations_(std::make_unique<RegistrationCache>(*transport_)),
      rank_(rank),
      size_(size),
      peers_(static_cast<size_t>(size)),
      matcher_(size) {
  std::vector<int> everyone(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) everyone[static_cast<size_t>(r)] = r;
  groups_.push_back(std::unique_ptr<Group>(new Group(*this, 0, std::move(everyone), size)));
  world_ = groups_.back().get();
}

Engine::~Engine() {
  for (Request* request : requests_) delete request;
}

Status Engine::create(std::unique_ptr<transport::Transport> transport, bootstrap::Exchange& exchange,
                      const bootstrap::HostMap* hosts, double timeout_s, std::unique_ptr<Engine>* out) {
  std::unique_ptr<Engine> engine(new Engine(std::move(transport), exchange.rank(), exchange.size()));
  if (hosts != nullptr && hosts->size() != exchange.size()) {
    return fail(RCC_ERR_INTERNAL, "a host map of %d ranks for an engine of %d", hosts->size(), exchange.size());
  }
  RCC_RETURN_IF_ERROR(engine->read_settings(hosts));
  RCC_RETURN_IF_ERROR(engine->connect(exchange, timeout_s));
  *out = std::move(engine);
  return RCC_SUCCESS;
}

Status Engine::read_settings(const bootstrap::HostMap* hosts) {
  int64_t eager_limit = 0, net_limit = 0, net_memory = 0, slots = 0, timeout = 0;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_EAGER_LIMIT", &eager_limit));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_EAGER_LIMIT_NET", &net_limit));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_EAGER_NET_MEMORY", &net_memory));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_EAGER_SLOTS", &slots));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_TIMEOUT", &timeout));
  std::string registration_cache;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_REGISTRATION_CACHE", &registration_cache));
  RCC_RETURN_IF_ERROR(WaitPolicy::from_settings(true, &wait_policy_));
  polled_ = transport_->polled_delivery();
  RCC_RETURN_IF_ERROR(enabled_encodings(polled_, &encodings_));
  slots_ = static_cast<uint32_t>(slots);
  timeout_s_ = static_cast<double>(timeout);
  // Unknown: places alike, so every peer is near.
  bootstrap::HostMap map =
      hosts != nullptr ? *hosts : bootstrap::HostMap::of(std::vector<bootstrap::RankPlace>(static_cast<size_t>(size_)));
  const size_t near_limit = static_cast<size_t>(eager_limit);
  const size_t far_limit = far_eager_limit(near_limit, static_cast<size_t>(net_limit), transport_->network_copy_bytes(),
                                           static_cast<size_t>(net_memory), slots_, max_far_peers(map));
  layout_ = SlotLayout(std::move(map), slots_, slot_geometry(near_limit), slot_geometry(far_limit));
  if (registration_cache == "0") registrations_->disable();
  return RCC_SUCCESS;
}

Status Engine::connect(bootstrap::Exchange& exchange, double timeout_s) {
  // A job of one rank offers no slots, but a registration needs bytes: one cache line then.
  const size_t area_bytes = std::max<size_t>(layout_.area_bytes(rank_), 64);
  RCC_RETURN_IF_ERROR(recv_area_.reserve(area_bytes, "the eager receive slots"));
  RCC_RETURN_IF_ERROR(send_area_.reserve(area_bytes, "the eager send staging"));
  for (int peer = 0; peer < size_; ++peer) {
    PeerState& state = peers_[static_cast<size_t>(peer)];
    const SlotGeometry& geometry = layout_.geometry(rank_, peer);
    state.eager_limit = geometry.eager_limit;  // to itself: near's (the self-send's copy)
    state.slot_bytes = geometry.slot_bytes;
    if (peer == rank_) continue;
    state.recv_slots = recv_area_.data() + layout_.offset(rank_, peer);
    state.send_slots = send_area_.data() + layout_.offset(rank_, peer);
    // Anchors are armed before any peer can write (polled delivery never connects on demand).
    if (polled_) {
      for (uint32_t slot = 0; slot < slots_; ++slot)
        arm_anchor(state.recv_slots + slot * state.slot_bytes, state.slot_bytes);
    }
  }
  credit_area_.assign(static_cast<size_t>(size_), CreditWord{0, 0, 0});
  credit_staging_.assign(static_cast<size_t>(size_), CreditWord{0, 0, 0});
  const size_t credit_bytes = static_cast<size_t>(size_) * sizeof(CreditWord);
  RCC_RETURN_IF_ERROR(transport_->register_memory(recv_area_.data(), area_bytes, &recv_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(send_area_.data(), area_bytes, &send_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_area_.data(), credit_bytes, &credit_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_staging_.data(), credit_bytes, &credit_staging_memory_));

  std::vector<uint8_t> card;
  RCC_RETURN_IF_ERROR(make_card(&card));
  lookup_timeout_s_ = timeout_s;
  std::string when;
  RCC_RETURN_IF_ERROR(settings::choice("RCC_CONNECT", &when));
  const bool wanted = when == "lazy";
  on_demand_ = wanted && transport_->connects_on_demand() && !polled_;
  peers_[static_cast<size_t>(rank_)].connected = true;  // messages to itself need no connection
  if (on_demand_ && exchange.serves_lookups()) {
    directory_ = &exchange;
    RCC_RETURN_IF_ERROR(exchange.publish("card", card));
  } else {
    // The exchange cannot serve lookups (a PMIx server's fence gathers anyway): every card now.
    RCC_RETURN_IF_ERROR(exchange.allgather("cards", card, timeout_s, &cards_));
  }
  RCC_RETURN_IF_ERROR(check_cards());
  if (!on_demand_) {
    std::vector<std::vector<uint8_t>> addresses(static_cast<size_t>(size_));
    for (int peer = 0; peer < size_; ++peer) {
      RCC_RETURN_IF_ERROR(
          transport_address_of(peer, cards_[static_cast<size_t>(peer)], &addresses[static_cast<size_t>(peer)]));
    }
    RCC_RETURN_IF_ERROR(transport_->connect_all(addresses));
    for (int peer = 0; peer < size_; ++peer) RCC_RETURN_IF_ERROR(ensure_connected(peer));
    cards_.clear();
    cards_.shrink_to_fit();
  }
  std::string far;
  if (layout_.has_far()) {
    far = " (" + std::to_string(layout_.far_geometry().eager_limit) +
          " to ranks on other hosts: " + transport_->name() + " copies them anyway)";
  }
  RCC_INFO("engine: %d ranks over %s, %s, eager limit %zu bytes%s, %u slots per peer, %s, encodings%s%s%s", size_,
           transport_->name(),
           on_demand_        ? "each peer connected at first use"
           : when == "eager" ? "every peer connected at set-up (RCC_CONNECT=eager)"
                             : "every peer connected at set-up (this backend cannot connect on demand)",
           layout_.near_geometry().eager_limit, far.c_str(), slots_,
           polled_ ? "slot messages found by polling" : "slot messages notified",
           (encodings_ & kAnchored) ? " anchored" : "", (encodings_ & kBare) ? " bare" : "", " headed");
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
