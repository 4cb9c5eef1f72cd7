// Engine set-up: the settings it reads, the registered areas, and the exchange that tells every
// peer where to write (slots, credit word) and which eager encodings this rank takes.
#include <algorithm>
#include <cstring>
#include <string>

#include "base/log.h"
#include "base/settings.h"
#include "p2p/engine.h"

namespace rcc::p2p {
namespace {

// The blob each rank publishes after the transport is connected: where peers write, and how.
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

}  // namespace

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
  recv_area_.assign(area_bytes, 0);
  send_area_.assign(area_bytes, 0);
  for (int peer = 0; peer < size_; ++peer) {
    PeerState& state = peers_[static_cast<size_t>(peer)];
    const SlotGeometry& geometry = layout_.geometry(rank_, peer);
    state.eager_limit = geometry.eager_limit;  // to itself: near's (the self-send's copy)
    state.slot_bytes = geometry.slot_bytes;
    if (peer == rank_) continue;
    state.recv_slots = recv_area_.data() + layout_.offset(rank_, peer);
    state.send_slots = send_area_.data() + layout_.offset(rank_, peer);
    for (uint32_t slot = 0; slot < slots_; ++slot)
      arm_anchor(state.recv_slots + slot * state.slot_bytes, state.slot_bytes);
  }
  credit_area_.assign(static_cast<size_t>(size_), CreditWord{0, 0, 0});
  credit_staging_.assign(static_cast<size_t>(size_), CreditWord{0, 0, 0});
  const size_t credit_bytes = static_cast<size_t>(size_) * sizeof(CreditWord);
  RCC_RETURN_IF_ERROR(transport_->register_memory(recv_area_.data(), area_bytes, &recv_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(send_area_.data(), area_bytes, &send_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_area_.data(), credit_bytes, &credit_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_staging_.data(), credit_bytes, &credit_staging_memory_));

  std::vector<uint8_t> address;
  RCC_RETURN_IF_ERROR(transport_->local_address(&address));
  std::vector<std::vector<uint8_t>> addresses;
  RCC_RETURN_IF_ERROR(exchange.allgather("transport", address, timeout_s, &addresses));
  RCC_RETURN_IF_ERROR(transport_->connect_all(addresses));

  std::vector<uint8_t> recv_key, credit_key;
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
  std::vector<uint8_t> blob(sizeof mine + recv_key.size() + credit_key.size());
  std::memcpy(blob.data(), &mine, sizeof mine);
  std::copy(recv_key.begin(), recv_key.end(), blob.begin() + sizeof mine);
  std::copy(credit_key.begin(), credit_key.end(),
            blob.begin() + static_cast<std::ptrdiff_t>(sizeof mine + recv_key.size()));
  std::vector<std::vector<uint8_t>> areas;
  RCC_RETURN_IF_ERROR(exchange.allgather("areas", blob, timeout_s, &areas));

  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    const std::vector<uint8_t>& theirs = areas[static_cast<size_t>(peer)];
    AreaHeader header;
    if (theirs.size() < sizeof header)
      return fail(RCC_ERR_BOOTSTRAP, "rank %d published a truncated area description", peer);
    std::memcpy(&header, theirs.data(), sizeof header);
    if (theirs.size() != sizeof header + header.recv_key_bytes + header.credit_key_bytes) {
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
    const uint8_t* keys = theirs.data() + sizeof header;
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
  }
  std::string far;
  if (layout_.has_far()) {
    far = " (" + std::to_string(layout_.far_geometry().eager_limit) +
          " to ranks on other hosts: " + transport_->name() + " copies them anyway)";
  }
  RCC_INFO("engine: %d ranks connected over %s, eager limit %zu bytes%s, %u slots per peer, %s, encodings%s%s%s", size_,
           transport_->name(), layout_.near_geometry().eager_limit, far.c_str(), slots_,
           polled_ ? "slot messages found by polling" : "slot messages notified",
           (encodings_ & kAnchored) ? " anchored" : "", (encodings_ & kBare) ? " bare" : "", " headed");
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
