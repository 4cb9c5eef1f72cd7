#include "p2p/engine.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/config.h"
#include "core/log.h"

namespace rcc::p2p {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kAlign = 64;

size_t round_up(size_t value, size_t align) { return (value + align - 1) / align * align; }

std::string truncation_message(size_t length, int peer, int tag, size_t capacity) {
  return "message of " + std::to_string(length) + " bytes from rank " + std::to_string(peer) + " (tag " +
         std::to_string(tag) + ") is longer than the receive buffer of " + std::to_string(capacity) + " bytes";
}

// The blob each rank publishes after the transport is connected: where peers write.
struct AreaHeader {
  uint64_t recv_area;
  uint64_t credit_area;
  uint32_t recv_key_bytes;
  uint32_t credit_key_bytes;
  uint32_t slots;
  uint32_t slot_bytes;
  uint32_t polled;  // 1: slot messages are found by polling (the transport's polled_delivery)
  uint32_t accepts_bare;  // 1: this rank takes bare eager messages (ImmKind::kBareSlot)
  // 1: this rank watches its slots' anchor bytes (anchored eager messages). Equals `polled` in this
  // version; a field of its own so that a later receiver can decline them.
  uint32_t accepts_anchored;
};


// The header of a message from this rank: what the receiver matches on.
SlotHeader message_header(SlotType type, int tag, uint32_t context, size_t bytes, uint32_t sender_request) {
  SlotHeader header{};
  header.type = type;
  header.tag = tag;
  header.context = context;
  header.length = bytes;
  header.sender_request = sender_request;
  return header;
}

// Zeroes a consumed slot's header sequence word: a bare message reuses the slot without writing a
// header, and the old number must never pass for a later one.
void clear_sequence(uint8_t* slot) {
  const uint32_t zero = 0;
  std::memcpy(slot + offsetof(SlotHeader, sequence), &zero, sizeof zero);
}

void arm_anchor(uint8_t* slot, size_t slot_bytes) { slot[slot_bytes - 1] = kAnchorIdle; }

// Removes a matched receive. The oldest is the usual match, and a pop costs less than an erase.
void take_posted(std::deque<Request*>& posted, std::deque<Request*>::iterator it) {
  if (it == posted.begin()) {
    posted.pop_front();
  } else {
    posted.erase(it);
  }
}

}  // namespace

struct Engine::Unexpected {
  SlotHeader header{};
  std::vector<uint8_t> payload;  // kEager
  Request* self_send = nullptr;  // a large send to oneself, copied when matched
};

struct Engine::PeerState {
  struct PendingMessage {
    SlotHeader header;
    std::vector<uint8_t> payload;
  };
  struct PendingWrite {
    Request* send;
    uint64_t target;
    uint64_t bytes;
    uint64_t receiver_request;
  };

  uint64_t remote_slots = 0;   // my slots inside the peer's receive area
  uint64_t remote_credit = 0;  // my credit word inside the peer's credit area
  std::unique_ptr<transport::RemoteKey> slots_key, credit_key;

  uint64_t slots_sent = 0, fins_sent = 0;
  uint64_t notified_epoch = 0;  // polled: the peer's sleep epoch when my last notified slot message went out
  // The peer's consumption of my messages as last carried by one of its slot headers.
  uint64_t granted_slots = 0, granted_fins = 0;
  std::deque<PendingMessage> pending_messages;  // waiting for a slot credit
  std::deque<PendingWrite> pending_writes;      // waiting for a FIN credit

  uint64_t slots_consumed = 0, fins_consumed = 0, reported_slots = 0, reported_fins = 0;
  // Slot messages handled so far. Polled delivery releases the last one (zeroes what it wrote,
  // counts it consumed) at the next pass or when the next message is found, so in a ping-pong the
  // clean-up runs after the caller's reply went out rather than before the receive completes: at
  // most one slot (slots_consumed % slots) waits, and these are the bytes its message wrote.
  uint64_t slots_delivered = 0;
  uint64_t unreleased_offset = 0, unreleased_bytes = 0;
  // The slot consumption my last slot message carried (header or bare notice): what a bare
  // notice's credit bits are relative to.
  uint64_t carried_slots = 0;
  std::deque<Request*> posted;  // receives in the order posted
  std::deque<Unexpected> unexpected;

  // Bare and anchored eager messages. Sending: the packet size on the path (0: never bare), whether
  // the peer watches anchor bytes, and my last eager message's tag, context and length;
  // receiving: the peer's last ones, and per slot the notice of a bare message that arrived: its
  // argument << 32 | length + 1 (0: none).
  size_t packet_bytes = 0;
  bool anchors_watched = false;
  bool sent_eager = false, received_eager = false;
  int32_t sent_tag = 0, received_tag = 0;
  uint32_t sent_context = 0, received_context = 0;
  uint64_t sent_length = 0, received_length = 0;
  std::vector<uint64_t> bare_notices;

  bool failed = false;
};

Engine::Engine(std::unique_ptr<transport::Transport> transport, int rank, int size)
    : transport_(std::move(transport)),
      registrations_(std::make_unique<RegistrationCache>(*transport_)),
      rank_(rank),
      size_(size),
      peers_(size) {}

Engine::~Engine() {
  for (Request* request : requests_) delete request;
}

Status Engine::create(std::unique_ptr<transport::Transport> transport, bootstrap::StoreClient& store,
                      const std::string& key_prefix, int rank, int size, double timeout_s,
                      std::unique_ptr<Engine>* out) {
  std::unique_ptr<Engine> engine(new Engine(std::move(transport), rank, size));
  RCC_RETURN_IF_ERROR(engine->connect(store, key_prefix, timeout_s));
  *out = std::move(engine);
  return RCC_SUCCESS;
}

Status Engine::connect(bootstrap::StoreClient& store, const std::string& key_prefix, double timeout_s) {
  int64_t eager_limit = config::get_int_or_default("RCC_EAGER_LIMIT");
  int64_t slots = config::get_int_or_default("RCC_EAGER_SLOTS");
  if (eager_limit < 1024 || eager_limit > (64 << 20)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_EAGER_LIMIT=%lld is outside [1024, 64 MiB]", static_cast<long long>(eager_limit));
  }
  if (slots < 4 || slots > 4096 || slots % 4 != 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_EAGER_SLOTS=%lld must be a multiple of 4 in [4, 4096]", static_cast<long long>(slots));
  }
  eager_limit_ = static_cast<size_t>(eager_limit);
  slots_ = static_cast<uint32_t>(slots);
  // The anchor byte after the longest message's tail word: no headed or bare message reaches it.
  slot_bytes_ = round_up(tail_offset(eager_limit_) + kTailBytes + kAnchorReserve, kAlign);
  if (config::get_string("RCC_SPIN_COUNT") != "auto") {
    int64_t spins = 0;
    if (config::get_int("RCC_SPIN_COUNT", &spins) != RCC_SUCCESS || spins < 1 || spins > (1 << 30)) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_SPIN_COUNT='%s' is not auto or a poll count in [1, 2^30]",
                  config::get_string("RCC_SPIN_COUNT").c_str());
    }
    spin_count_ = static_cast<int>(spins);
    spin_count_explicit_ = true;
  }
  timeout_s_ = static_cast<double>(std::max<int64_t>(1, config::get_int_or_default("RCC_TIMEOUT")));
  const std::string registration_cache = config::get_string("RCC_REGISTRATION_CACHE");
  if (registration_cache != "auto" && registration_cache != "0") {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_REGISTRATION_CACHE='%s' is not auto or 0", registration_cache.c_str());
  }
  if (registration_cache == "0") registrations_->disable();

  const size_t area_bytes = static_cast<size_t>(size_) * slots_ * slot_bytes_;
  recv_area_.assign(area_bytes, 0);
  send_area_.assign(area_bytes, 0);
  for (size_t slot = 0; slot < static_cast<size_t>(size_) * slots_; ++slot) {
    arm_anchor(recv_area_.data() + slot * slot_bytes_, slot_bytes_);
  }
  credit_area_.assign(size_, CreditWord{0, 0, 0});
  credit_staging_.assign(size_, CreditWord{0, 0, 0});
  RCC_RETURN_IF_ERROR(transport_->register_memory(recv_area_.data(), area_bytes, &recv_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(send_area_.data(), area_bytes, &send_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_area_.data(), size_ * sizeof(CreditWord), &credit_memory_));
  RCC_RETURN_IF_ERROR(transport_->register_memory(credit_staging_.data(), size_ * sizeof(CreditWord),
                                                  &credit_staging_memory_));

  std::vector<uint8_t> address;
  RCC_RETURN_IF_ERROR(transport_->local_address(&address));
  std::vector<std::vector<uint8_t>> addresses;
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, key_prefix + "/transport", rank_, size_, address, timeout_s, &addresses));
  RCC_RETURN_IF_ERROR(transport_->connect_all(addresses));

  std::vector<uint8_t> recv_key, credit_key;
  RCC_RETURN_IF_ERROR(transport_->pack_key(*recv_memory_, &recv_key));
  RCC_RETURN_IF_ERROR(transport_->pack_key(*credit_memory_, &credit_key));
  polled_ = transport_->polled_delivery();
  AreaHeader mine{reinterpret_cast<uint64_t>(recv_area_.data()), reinterpret_cast<uint64_t>(credit_area_.data()),
                  static_cast<uint32_t>(recv_key.size()), static_cast<uint32_t>(credit_key.size()), slots_,
                  static_cast<uint32_t>(slot_bytes_), polled_ ? 1u : 0u, polled_ ? 1u : 0u, polled_ ? 1u : 0u};
  std::vector<uint8_t> blob(sizeof mine + recv_key.size() + credit_key.size());
  std::memcpy(blob.data(), &mine, sizeof mine);
  std::copy(recv_key.begin(), recv_key.end(), blob.begin() + sizeof mine);
  std::copy(credit_key.begin(), credit_key.end(), blob.begin() + sizeof mine + recv_key.size());
  std::vector<std::vector<uint8_t>> areas;
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, key_prefix + "/areas", rank_, size_, blob, timeout_s, &areas));

  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    const std::vector<uint8_t>& theirs = areas[peer];
    AreaHeader header;
    if (theirs.size() < sizeof header) return fail(RCC_ERR_BOOTSTRAP, "rank %d published a truncated area description", peer);
    std::memcpy(&header, theirs.data(), sizeof header);
    if (theirs.size() != sizeof header + header.recv_key_bytes + header.credit_key_bytes) {
      return fail(RCC_ERR_BOOTSTRAP, "rank %d published a malformed area description", peer);
    }
    if (header.slots != slots_ || header.slot_bytes != slot_bytes_) {
      return fail(RCC_ERR_MISMATCH,
                  "rank %d uses %u eager slots of %u bytes, this rank %u of %zu: set RCC_EAGER_LIMIT and "
                  "RCC_EAGER_SLOTS the same on every rank",
                  peer, header.slots, header.slot_bytes, slots_, slot_bytes_);
    }
    if (header.polled != (polled_ ? 1u : 0u)) {
      // A polling sender would never notify a rank that only looks at notices.
      return fail(RCC_ERR_MISMATCH,
                  "rank %d %s its eager slots, this rank %s: set RCC_IB_POLLED_EAGER the same on every rank", peer,
                  header.polled != 0 ? "polls" : "does not poll", polled_ ? "polls" : "does not");
    }
    const uint8_t* keys = theirs.data() + sizeof header;
    std::vector<uint8_t> their_recv_key(keys, keys + header.recv_key_bytes);
    std::vector<uint8_t> their_credit_key(keys + header.recv_key_bytes,
                                          keys + header.recv_key_bytes + header.credit_key_bytes);
    PeerState& state = peers_[peer];
    RCC_RETURN_IF_ERROR(transport_->import_key(peer, their_recv_key, &state.slots_key));
    RCC_RETURN_IF_ERROR(transport_->import_key(peer, their_credit_key, &state.credit_key));
    state.remote_slots = header.recv_area + static_cast<uint64_t>(rank_) * slots_ * slot_bytes_;
    state.remote_credit = header.credit_area + static_cast<uint64_t>(rank_) * sizeof(CreditWord);
    if (polled_) {
      state.packet_bytes = header.accepts_bare != 0 ? transport_->notice_packet_bytes(peer) : 0;
      state.anchors_watched = header.accepts_anchored != 0;
      state.bare_notices.assign(slots_, 0);
    }
  }
  RCC_INFO("engine: %d ranks connected over %s, eager limit %zu bytes, %u slots per peer, %s", size_,
           transport_->name(), eager_limit_, slots_,
           polled_ ? "slot messages found by polling" : "slot messages notified");
  return RCC_SUCCESS;
}

uint64_t Engine::slots_consumed_by(int peer) {
  return std::max(__atomic_load_n(&credit_area_[peer].slots_consumed, __ATOMIC_ACQUIRE), peers_[peer].granted_slots);
}

uint64_t Engine::fins_consumed_by(int peer) {
  return std::max(__atomic_load_n(&credit_area_[peer].fins_consumed, __ATOMIC_ACQUIRE), peers_[peer].granted_fins);
}

uint8_t* Engine::recv_slot(int peer, uint32_t slot) {
  return recv_area_.data() + (static_cast<size_t>(peer) * slots_ + slot) * slot_bytes_;
}

uint64_t Engine::remote_slot(int peer, uint32_t slot) const {
  return peers_[peer].remote_slots + static_cast<uint64_t>(slot) * slot_bytes_;
}

uint8_t* Engine::send_slot(int peer, uint32_t slot) {
  return send_area_.data() + (static_cast<size_t>(peer) * slots_ + slot) * slot_bytes_;
}

Request* Engine::new_request() {
  uint32_t index;
  if (!free_indexes_.empty()) {
    index = free_indexes_.back();
    free_indexes_.pop_back();
  } else {
    index = static_cast<uint32_t>(requests_.size());
    requests_.push_back(new Request);
  }
  Request* request = requests_[index];
  // Field by field: assigning a fresh Request would build and destroy a string and two pointers
  // per message (memory and remote_key were already released by free_request).
  request->received = 0;
  request->done = false;
  request->status = RCC_SUCCESS;
  request->error.clear();
  request->index = index;
  request->in_use = true;
  return request;
}

void Engine::free_request(Request* request) {
  request->memory.reset();
  request->remote_key.reset();
  request->in_use = false;
  free_indexes_.push_back(request->index);
}

Request* Engine::request_at(uint64_t index) {
  if (index >= requests_.size() || !requests_[index]->in_use) return nullptr;
  return requests_[index];
}

Status Engine::check_usable(int peer) {
  (void)peer;
  if (aborted_) return fail(RCC_ERR_ABORTED, "the communicator was aborted");
  if (has_reported_failures_.load(std::memory_order_acquire)) progress_locked();
  if (broken_ != RCC_SUCCESS) return fail(broken_, "%s", broken_message_.c_str());
  return RCC_SUCCESS;
}

void Engine::complete(Request* request, Status status, const std::string& message) {
  if (request->done) return;
  request->done = true;
  request->status = status;
  if (!message.empty()) request->error = message;
  if (request->memory) request->memory.reset();
  if (request->remote_key) request->remote_key.reset();
}

Status Engine::isend(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out) {
  std::lock_guard<std::mutex> guard(mutex_);
  RCC_RETURN_IF_ERROR(check_usable(peer));
  if (bytes <= eager_limit_ && peer != rank_) {
    // Copied into a slot (or the pending queue) before this returns: complete, no Request needed.
    RCC_RETURN_IF_ERROR(post_slot_message(peer, message_header(SlotType::kEager, tag, context, bytes, 0), buffer, bytes));
    *out = nullptr;
    return RCC_SUCCESS;
  }
  Request* request = new_request();
  request->kind = Request::Kind::kSend;
  request->peer = peer;
  request->tag = tag;
  request->context = context;
  request->buffer = const_cast<void*>(buffer);
  request->bytes = bytes;

  SlotHeader header = message_header(SlotType::kEager, tag, context, bytes, request->index);

  if (peer == rank_) {
    // Sending to oneself: match a posted receive directly, else park the message.
    PeerState& self = peers_[rank_];
    for (auto it = self.posted.begin(); it != self.posted.end(); ++it) {
      Request* receive = *it;
      if (receive->tag != tag || receive->context != context) continue;
      take_posted(self.posted, it);
      if (bytes > receive->bytes) {
        complete(receive, RCC_ERR_TRUNCATED,
                 truncation_message(bytes, peer, tag, receive->bytes));
      } else {
        if (bytes > 0) std::memcpy(receive->buffer, buffer, bytes);
        receive->received = bytes;
        complete(receive, RCC_SUCCESS);
      }
      complete(request, RCC_SUCCESS);
      *out = request;
      return RCC_SUCCESS;
    }
    Unexpected parked;
    parked.header = header;
    if (bytes <= eager_limit_) {
      const auto* bytes_in = static_cast<const uint8_t*>(buffer);
      parked.payload.assign(bytes_in, bytes_in + bytes);
      complete(request, RCC_SUCCESS);
    } else {
      parked.self_send = request;
    }
    self.unexpected.push_back(std::move(parked));
    *out = request;
    return RCC_SUCCESS;
  }

  // A large message: announce it; the receiver's clear-to-send starts the zero-copy write.
  Status status = registrations_->acquire(request->buffer, bytes, &request->memory);
  if (status == RCC_SUCCESS) {
    header.type = SlotType::kRts;
    status = post_slot_message(peer, header, nullptr, 0);
  }
  if (status != RCC_SUCCESS) {
    free_request(request);
    return status;
  }
  *out = request;
  return RCC_SUCCESS;
}

Status Engine::send(const void* buffer, size_t bytes, int peer, int tag, uint32_t context) {
  Request* request = nullptr;
  RCC_RETURN_IF_ERROR(isend(buffer, bytes, peer, tag, context, &request));
  return wait(request);
}

Status Engine::recv(void* buffer, size_t bytes, int peer, int tag, uint32_t context) {
  std::unique_lock<std::mutex> lock(mutex_);  // one lock for post, wait and free
  Request* request = nullptr;
  RCC_RETURN_IF_ERROR(irecv_locked(buffer, bytes, peer, tag, context, &request));
  wait_locked(lock, request);
  return finish_locked(request);
}

Status Engine::irecv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out) {
  std::lock_guard<std::mutex> guard(mutex_);
  return irecv_locked(buffer, bytes, peer, tag, context, out);
}

Status Engine::irecv_locked(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out) {
  RCC_RETURN_IF_ERROR(check_usable(peer));
  Request* request = new_request();
  request->kind = Request::Kind::kRecv;
  request->peer = peer;
  request->tag = tag;
  request->context = context;
  request->buffer = buffer;
  request->bytes = bytes;
  *out = request;

  PeerState& state = peers_[peer];
  for (auto it = state.unexpected.begin(); it != state.unexpected.end(); ++it) {
    if (it->header.tag != tag || it->header.context != context) continue;
    Unexpected message = std::move(*it);
    state.unexpected.erase(it);
    if (message.header.type == SlotType::kRts) {
      Status status = send_cts(request, message);
      if (status != RCC_SUCCESS) complete(request, status, last_error());
      return RCC_SUCCESS;
    }
    size_t length = message.header.length;
    if (length > bytes) {
      complete(request, RCC_ERR_TRUNCATED,
               truncation_message(length, peer, tag, bytes));
    } else {
      const void* source = message.self_send != nullptr ? message.self_send->buffer : message.payload.data();
      if (length > 0) std::memcpy(buffer, source, length);
      request->received = length;
      complete(request, RCC_SUCCESS);
    }
    if (message.self_send != nullptr) complete(message.self_send, RCC_SUCCESS);
    return RCC_SUCCESS;
  }
  state.posted.push_back(request);
  return RCC_SUCCESS;
}

Status Engine::post_slot_message(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes) {
  PeerState& state = peers_[peer];
  if (!state.pending_messages.empty() || state.slots_sent - slots_consumed_by(peer) >= slots_) {
    const auto* bytes = static_cast<const uint8_t*>(payload);
    state.pending_messages.push_back({header, std::vector<uint8_t>(bytes, bytes + payload_bytes)});
    return RCC_SUCCESS;
  }
  return write_slot(peer, header, payload, payload_bytes);
}

Status Engine::write_slot(int peer, const SlotHeader& header, const void* payload, size_t payload_bytes) {
  PeerState& state = peers_[peer];
  if (header.type == SlotType::kEager) {
    // A message that repeats the previous one's tag and context needs no header: anchored when
    // it may be (wire.h), else bare where the header would cost a packet of its own.
    const bool same_stream = state.sent_eager && header.tag == state.sent_tag && header.context == state.sent_context;
    if (same_stream && anchored_allowed(peer, payload, payload_bytes)) return write_anchored(peer, payload, payload_bytes);
    if (same_stream && state.packet_bytes > 0 && header_costs_a_packet(payload_bytes, state.packet_bytes) &&
        state.slots_consumed - state.carried_slots < (uint64_t{1} << kBareCreditBits)) {
      return write_bare(peer, payload, payload_bytes);
    }
  }
  const uint32_t slot = static_cast<uint32_t>(state.slots_sent % slots_);
  uint8_t* staging = send_slot(peer, slot);
  std::memcpy(staging, &header, sizeof header);
  // Piggyback this rank's credits for the peer: they count as reported.
  SlotHeader* sent = reinterpret_cast<SlotHeader*>(staging);
  sent->credit_slots = state.reported_slots = state.carried_slots = state.slots_consumed;
  sent->credit_fins = state.reported_fins = state.fins_consumed;
  const uint32_t sequence = slot_sequence(state.slots_sent);
  sent->sequence = sequence;
  if (payload_bytes > 0) std::memcpy(staging + sizeof header, payload, payload_bytes);
  const uint64_t tail = tail_offset(payload_bytes);
  std::memcpy(staging + tail, &sequence, kTailBytes);
  // Polled delivery notifies only a receiver that announced it sleeps (once per announcement).
  bool notify = true;
  if (polled_) {
    const uint64_t epoch = __atomic_load_n(&credit_area_[peer].sleep_epoch, __ATOMIC_ACQUIRE);
    notify = epoch != state.notified_epoch;
    state.notified_epoch = epoch;
  }
  RCC_RETURN_IF_ERROR(transport_->write(peer, staging, tail + kTailBytes, *send_memory_, remote_slot(peer, slot),
                                        *state.slots_key, notify, make_imm(ImmKind::kSlot, slot), 0));
  if (header.type == SlotType::kEager) {  // the receiver's "previous eager message" from now on
    state.sent_eager = true;
    state.sent_tag = header.tag;
    state.sent_context = header.context;
    state.sent_length = payload_bytes;
    ++counters_.headed_sent;
  }
  ++state.slots_sent;
  return RCC_SUCCESS;
}

Status Engine::write_payload(int peer, const void* payload, size_t bytes, uint64_t offset, bool notify, uint32_t imm) {
  PeerState& state = peers_[peer];
  const uint32_t slot = static_cast<uint32_t>(state.slots_sent % slots_);
  uint8_t* staged = send_slot(peer, slot) + offset;
  std::memcpy(staged, payload, bytes);
  RCC_RETURN_IF_ERROR(transport_->write(peer, staged, bytes, *send_memory_, remote_slot(peer, slot) + offset,
                                        *state.slots_key, notify, imm, 0));
  ++state.slots_sent;
  return RCC_SUCCESS;
}

Status Engine::write_bare(int peer, const void* payload, size_t bytes) {
  PeerState& state = peers_[peer];
  const uint32_t slot = static_cast<uint32_t>(state.slots_sent % slots_);
  // Notified, so it also wakes a receiver that announced it sleeps.
  state.notified_epoch = __atomic_load_n(&credit_area_[peer].sleep_epoch, __ATOMIC_ACQUIRE);
  const uint32_t imm = make_imm(ImmKind::kBareSlot, bare_imm_arg(slot, state.slots_consumed));
  RCC_RETURN_IF_ERROR(write_payload(peer, payload, bytes, sizeof(SlotHeader), true, imm));
  state.reported_slots = state.carried_slots = state.slots_consumed;
  state.sent_length = bytes;
  ++counters_.bare_sent;
  return RCC_SUCCESS;
}

bool Engine::anchored_allowed(int peer, const void* payload, size_t bytes) {
  PeerState& state = peers_[peer];
  if (!state.anchors_watched || bytes != state.sent_length || !changes_anchor(payload, bytes)) return false;
  // An anchored message carries no notice: a receiver that announced it sleeps needs a bare one.
  if (__atomic_load_n(&credit_area_[peer].sleep_epoch, __ATOMIC_ACQUIRE) != state.notified_epoch) return false;
  // Nor credits: when this rank's next consumption would make it write a credit word, a headed or
  // bare message carries them instead (in a ping-pong no credit word is written at all).
  const uint64_t unreported = state.slots_consumed - state.reported_slots;
  return unreported == 0 || !credits_due(unreported + 1);
}

Status Engine::write_anchored(int peer, const void* payload, size_t bytes) {
  RCC_RETURN_IF_ERROR(write_payload(peer, payload, bytes, slot_bytes_ - bytes, false, 0));  // ends on the anchor byte
  ++counters_.anchored_sent;
  return RCC_SUCCESS;
}

Status Engine::flush_pending(int peer) {
  PeerState& state = peers_[peer];
  while (!state.pending_messages.empty()) {
    if (state.slots_sent - slots_consumed_by(peer) >= slots_) break;
    PeerState::PendingMessage message = std::move(state.pending_messages.front());
    state.pending_messages.pop_front();
    RCC_RETURN_IF_ERROR(write_slot(peer, message.header, message.payload.data(), message.payload.size()));
  }
  while (!state.pending_writes.empty()) {
    if (state.fins_sent - fins_consumed_by(peer) >= slots_) break;
    PeerState::PendingWrite write = state.pending_writes.front();
    state.pending_writes.pop_front();
    Request* send = write.send;
    RCC_TRACE("writing %llu bytes to rank %d for its receive %llu", static_cast<unsigned long long>(write.bytes),
              peer, static_cast<unsigned long long>(write.receiver_request));
    RCC_RETURN_IF_ERROR(transport_->write(peer, send->buffer, write.bytes, *send->memory, write.target,
                                          *send->remote_key, true,
                                          make_imm(ImmKind::kFin, static_cast<uint32_t>(write.receiver_request)),
                                          send->index + 1));
    ++state.fins_sent;
  }
  return RCC_SUCCESS;
}

Status Engine::send_credits(int peer, bool force) {
  PeerState& state = peers_[peer];
  const uint64_t slots = state.slots_consumed - state.reported_slots;
  const uint64_t fins = state.fins_consumed - state.reported_fins;
  if (!(credits_due(slots) || credits_due(fins) || (force && (slots > 0 || fins > 0)))) return RCC_SUCCESS;
  return write_credit_word(peer);
}

Status Engine::write_credit_word(int peer) {
  PeerState& state = peers_[peer];
  credit_staging_[peer] = CreditWord{state.slots_consumed, state.fins_consumed, sleep_epoch_};
  state.reported_slots = state.slots_consumed;
  state.reported_fins = state.fins_consumed;
  return transport_->write(peer, &credit_staging_[peer], sizeof(CreditWord), *credit_staging_memory_,
                           state.remote_credit, *state.credit_key, false, 0, 0);
}

Status Engine::send_cts(Request* receive, const Unexpected& rts) {
  const int peer = receive->peer;
  SlotHeader cts{};
  cts.type = SlotType::kCts;
  cts.tag = rts.header.tag;
  cts.context = rts.header.context;
  cts.sender_request = rts.header.sender_request;
  cts.receiver_request = receive->index;
  const size_t length = rts.header.length;
  if (length > receive->bytes) {
    complete(receive, RCC_ERR_TRUNCATED,
             truncation_message(length, peer, receive->tag, receive->bytes));
    cts.length = 0;  // refused: the sender completes without writing
    return post_slot_message(peer, cts, nullptr, 0);
  }
  std::vector<uint8_t> key;
  RCC_RETURN_IF_ERROR(registrations_->acquire(receive->buffer, length, &receive->memory));
  RCC_RETURN_IF_ERROR(transport_->pack_key(*receive->memory, &key));
  if (key.size() > std::min<size_t>(eager_limit_, UINT16_MAX)) {
    return fail(RCC_ERR_INTERNAL, "a remote key of %zu bytes does not fit a slot", key.size());
  }
  cts.length = length;
  cts.target_addr = reinterpret_cast<uint64_t>(receive->buffer);
  cts.key_length = static_cast<uint16_t>(key.size());
  receive->received = length;
  return post_slot_message(peer, cts, key.data(), key.size());
}

Status Engine::start_rendezvous_write(Request* send, uint64_t target, const std::vector<uint8_t>& key, uint64_t bytes,
                                      uint64_t receiver_request) {
  RCC_RETURN_IF_ERROR(transport_->import_key(send->peer, key, &send->remote_key));
  peers_[send->peer].pending_writes.push_back({send, target, bytes, receiver_request});
  return flush_pending(send->peer);
}

void Engine::match_or_queue_eager(int peer, const SlotHeader& header, const uint8_t* payload) {
  PeerState& state = peers_[peer];
  for (auto it = state.posted.begin(); it != state.posted.end(); ++it) {
    Request* receive = *it;
    if (receive->tag != header.tag || receive->context != header.context) continue;
    take_posted(state.posted, it);
    if (header.length > receive->bytes) {
      complete(receive, RCC_ERR_TRUNCATED,
               truncation_message(header.length, peer, header.tag, receive->bytes));
      return;
    }
    if (header.length > 0) std::memcpy(receive->buffer, payload, header.length);
    receive->received = header.length;
    complete(receive, RCC_SUCCESS);
    return;
  }
  Unexpected parked;
  parked.header = header;
  parked.payload.assign(payload, payload + header.length);
  state.unexpected.push_back(std::move(parked));
}

Status Engine::handle_slot(int peer, uint32_t slot) {
  PeerState& state = peers_[peer];
  const uint32_t expected = static_cast<uint32_t>(state.slots_delivered % slots_);
  if (slot != expected) {
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d wrote slot %u, expected slot %u", peer, slot, expected);
  }
  SlotHeader header;
  uint8_t* bytes = recv_slot(peer, slot);
  std::memcpy(&header, bytes, sizeof header);
  uint8_t* payload = bytes + sizeof header;
  // Credits piggybacked by the peer (cumulative; slot messages arrive in order).
  state.granted_slots = std::max(state.granted_slots, header.credit_slots);
  state.granted_fins = std::max(state.granted_fins, header.credit_fins);
  RCC_TRACE("slot %u from rank %d: type %u tag %d length %llu", slot, peer, static_cast<unsigned>(header.type),
            header.tag, static_cast<unsigned long long>(header.length));
  switch (header.type) {
    case SlotType::kEager:
      if (header.length > eager_limit_) return fail(RCC_ERR_TRANSPORT, "protocol error: oversized eager message from rank %d", peer);
      state.received_eager = true;
      state.received_tag = header.tag;
      state.received_context = header.context;
      state.received_length = header.length;
      ++counters_.headed_received;
      match_or_queue_eager(peer, header, payload);
      break;
    case SlotType::kRts: {
      Unexpected rts;
      rts.header = header;
      bool matched = false;
      for (auto it = state.posted.begin(); it != state.posted.end(); ++it) {
        if ((*it)->tag != header.tag || (*it)->context != header.context) continue;
        Request* receive = *it;
        take_posted(state.posted, it);
        RCC_RETURN_IF_ERROR(send_cts(receive, rts));
        matched = true;
        break;
      }
      if (!matched) state.unexpected.push_back(std::move(rts));
      break;
    }
    case SlotType::kCts: {
      Request* send = request_at(header.sender_request);
      if (send == nullptr || send->kind != Request::Kind::kSend || send->peer != peer || send->done ||
          header.length > send->bytes || header.key_length > eager_limit_) {
        // After a failure the send was already ended with the error: a late answer is expected.
        if (broken_ != RCC_SUCCESS || aborted_) break;
        return fail(RCC_ERR_TRANSPORT, "protocol error: unexpected clear-to-send from rank %d", peer);
      }
      if (header.length == 0) {
        complete(send, RCC_SUCCESS);  // the receiver refused a truncated message
      } else {
        std::vector<uint8_t> key(payload, payload + header.key_length);
        RCC_RETURN_IF_ERROR(start_rendezvous_write(send, header.target_addr, key, header.length,
                                                   header.receiver_request));
      }
      break;
    }
    default:
      return fail(RCC_ERR_TRANSPORT, "protocol error: unknown message type %u from rank %d",
                  static_cast<unsigned>(header.type), peer);
  }
  return release_slot(peer, sizeof header, tail_offset(body_bytes(header)) + kTailBytes - sizeof header);
}

Status Engine::release_slot(int peer, uint64_t offset, uint64_t written) {
  PeerState& state = peers_[peer];
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
  PeerState& state = peers_[peer];
  if (state.slots_consumed == state.slots_delivered) return RCC_SUCCESS;
  // The next message into this slot may be shorter (or bare): its tail word would then sit on
  // bytes of this body, and a bare one leaves the old header in place; neither may pass for a
  // message before it lands. Zeroed before the slot goes back to the sender, and the anchor byte
  // (which an anchored message overwrote) idle again.
  uint8_t* bytes = recv_slot(peer, static_cast<uint32_t>(state.slots_consumed % slots_));
  std::memset(bytes + state.unreleased_offset, 0, state.unreleased_bytes);
  clear_sequence(bytes);
  arm_anchor(bytes, slot_bytes_);
  ++state.slots_consumed;
  return send_credits(peer, false);
}

Status Engine::handle_bare(int peer, uint32_t slot) {
  PeerState& state = peers_[peer];
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
  PeerState& state = peers_[peer];
  const uint64_t length = state.received_length;
  if (!state.received_eager || length == 0) {
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d sent an anchored message without a previous non-empty eager message",
                peer);
  }
  ++counters_.anchored_received;
  return deliver_payload(peer, slot, slot_bytes_ - length, length);
}

Status Engine::deliver_payload(int peer, uint32_t slot, uint64_t offset, uint64_t length) {
  const PeerState& state = peers_[peer];
  uint8_t* bytes = recv_slot(peer, slot);
  match_or_queue_eager(peer, message_header(SlotType::kEager, state.received_tag, state.received_context, length, 0),
                       bytes + offset);
  return release_slot(peer, offset, length);
}

Status Engine::poll_slots(int peer, uint64_t* delivered) {
  PeerState& state = peers_[peer];
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
      if (__atomic_load_n(bytes + slot_bytes_ - 1, __ATOMIC_ACQUIRE) == kAnchorIdle) return RCC_SUCCESS;
      RCC_RETURN_IF_ERROR(release_delivered(peer));
      RCC_RETURN_IF_ERROR(handle_anchored(peer, slot));
      ++*delivered;
      continue;
    }
    // The header is whole (its sequence is its last word); the body is once its tail word is too.
    const auto* header = reinterpret_cast<const SlotHeader*>(bytes);
    const uint64_t body = body_bytes(*header);
    if (body > eager_limit_) {
      return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d wrote a slot message of %llu bytes (limit %zu)", peer,
                  static_cast<unsigned long long>(body), eager_limit_);
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
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_ || peers_[peer].failed) continue;
    RCC_RETURN_IF_ERROR(write_credit_word(peer));
  }
  return RCC_SUCCESS;
}

Status Engine::handle_fin(int peer, uint32_t request_index) {
  RCC_TRACE("write finished by rank %d for receive %u", peer, request_index);
  Request* receive = request_at(request_index);
  if (receive == nullptr || receive->kind != Request::Kind::kRecv || receive->peer != peer || receive->done) {
    if (broken_ != RCC_SUCCESS || aborted_) return RCC_SUCCESS;  // ended by the failure already
    return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d finished a write for an unknown receive", peer);
  }
  complete(receive, RCC_SUCCESS);
  ++peers_[peer].fins_consumed;
  return send_credits(peer, false);
}

Status Engine::handle_write_done(uint64_t cookie) {
  Request* send = request_at(cookie - 1);
  if (send == nullptr || send->kind != Request::Kind::kSend) {
    if (broken_ != RCC_SUCCESS || aborted_) return RCC_SUCCESS;  // ended by the failure already
    return fail(RCC_ERR_INTERNAL, "write completion for an unknown request %llu", static_cast<unsigned long long>(cookie));
  }
  complete(send, RCC_SUCCESS);
  return RCC_SUCCESS;
}

Status Engine::handle_event(const transport::Event& event) {
  switch (event.kind) {
    case transport::EventKind::kNotify: {
      if (event.peer < 0 || event.peer >= size_ || event.peer == rank_) {
        return fail(RCC_ERR_TRANSPORT, "notice from an invalid rank %d", event.peer);
      }
      if (peers_[event.peer].failed) return RCC_SUCCESS;
      const ImmKind kind = imm_kind(event.imm);
      // Polled: the notice only woke this rank; the slot is consumed by poll_slots in order.
      if (kind == ImmKind::kSlot) return polled_ ? RCC_SUCCESS : handle_slot(event.peer, imm_arg(event.imm));
      if (kind == ImmKind::kFin) return handle_fin(event.peer, imm_arg(event.imm));
      if (kind == ImmKind::kBareSlot && polled_) {
        // Consumed in order by poll_slots, after the messages before it.
        PeerState& state = peers_[event.peer];
        const uint32_t arg = imm_arg(event.imm);
        const uint32_t slot = bare_slot(arg);
        if (slot >= slots_ || state.bare_notices[slot] != 0 || event.length > eager_limit_) {
          return fail(RCC_ERR_TRANSPORT, "protocol error: rank %d sent a bare message of %llu bytes to slot %u", event.peer,
                      static_cast<unsigned long long>(event.length), slot);
        }
        state.bare_notices[slot] = static_cast<uint64_t>(arg) << 32 | (event.length + 1);
        return RCC_SUCCESS;
      }
      return fail(RCC_ERR_TRANSPORT, "protocol error: unknown immediate 0x%08x from rank %d", event.imm, event.peer);
    }
    case transport::EventKind::kWriteDone:
      return handle_write_done(event.cookie);
    case transport::EventKind::kError:
      if (event.peer >= 0 && event.peer < size_) {
        fail_peer_locked(event.peer, event.status, event.message);
      } else {
        for (int peer = 0; peer < size_; ++peer) {
          if (peer != rank_) fail_peer_locked(peer, event.status, event.message);
        }
      }
      return RCC_SUCCESS;
  }
  return RCC_SUCCESS;
}

Status Engine::progress_locked() {
  if (has_reported_failures_.load(std::memory_order_acquire)) {
    std::vector<std::pair<int, std::string>> failures;
    {
      std::lock_guard<std::mutex> guard(reported_mutex_);
      failures.swap(reported_failures_);
      has_reported_failures_.store(false, std::memory_order_release);
    }
    for (const auto& [peer, why] : failures) fail_peer_locked(peer, RCC_ERR_PEER_FAILED, why);
  }
  events_.clear();
  Status status = transport_->poll(&events_);
  for (const transport::Event& event : events_) {
    Status handled = handle_event(event);
    if (handled != RCC_SUCCESS && status == RCC_SUCCESS) status = handled;
  }
  last_pass_delivered_ = 0;
  if (polled_) {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_ || peers_[peer].failed) continue;
      Status polled = poll_slots(peer, &last_pass_delivered_);
      if (polled != RCC_SUCCESS && status == RCC_SUCCESS) status = polled;
    }
  }
  for (int peer = 0; peer < size_; ++peer) {
    PeerState& state = peers_[peer];
    if (state.failed || (state.pending_messages.empty() && state.pending_writes.empty())) continue;
    Status flushed = flush_pending(peer);
    if (flushed != RCC_SUCCESS && status == RCC_SUCCESS) status = flushed;
  }
  return status;
}

void Engine::fail_peer_locked(int peer, Status status, const std::string& message) {
  PeerState& state = peers_[peer];
  if (!state.failed) {
    RCC_WARN("%s", message.c_str());
    state.failed = true;
  }
  state.posted.clear();
  state.pending_messages.clear();
  state.pending_writes.clear();
  // One dead rank breaks the communicator: collectives would otherwise wait on ranks that wait on it.
  if (broken_ == RCC_SUCCESS) {
    broken_ = status;
    unusable_.store(true, std::memory_order_release);
    broken_message_ = message;
  }
  for (PeerState& other : peers_) other.posted.clear();
  for (Request* request : requests_) {
    if (request->in_use && !request->done) complete(request, broken_, broken_message_);
  }
}

void Engine::peer_failed(int peer, const std::string& why) {
  if (peer < 0 || peer >= size_) return;
  // The transport's view of the peer (its device address) helps find which node or port it was.
  const std::string address = transport_->describe_peer(peer);
  std::lock_guard<std::mutex> guard(reported_mutex_);
  reported_failures_.emplace_back(peer, address.empty() ? why : why + "; its " + transport_->name() + " address was " + address);
  has_reported_failures_.store(true, std::memory_order_release);
}

void Engine::progress() {
  std::lock_guard<std::mutex> guard(mutex_);
  progress_locked();
}

bool Engine::broken() {
  std::lock_guard<std::mutex> guard(mutex_);
  progress_locked();
  return aborted_ || broken_ != RCC_SUCCESS;
}

Status Engine::health() {
  std::lock_guard<std::mutex> guard(mutex_);
  Status status = progress_locked();
  if (aborted_) return fail(RCC_ERR_ABORTED, "the communicator was aborted");
  if (broken_ != RCC_SUCCESS) return fail(broken_, "%s", broken_message_.c_str());
  return status;
}

void Engine::abort() {
  std::lock_guard<std::mutex> guard(mutex_);
  aborted_ = true;
  unusable_.store(true, std::memory_order_release);
  for (Request* request : requests_) {
    if (request->in_use && !request->done) complete(request, RCC_ERR_ABORTED, "the communicator was aborted");
  }
}

Status Engine::test(Request* request, bool* done) {
  if (request == nullptr) {  // a send that completed when posted
    *done = true;
    return RCC_SUCCESS;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  if (!request->done) {
    Status status = progress_locked();
    if (status != RCC_SUCCESS && !request->done) complete(request, status, last_error());
  }
  *done = request->done;
  return RCC_SUCCESS;
}

Status Engine::finish(Request* request) {
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  std::lock_guard<std::mutex> guard(mutex_);
  return finish_locked(request);
}

Status Engine::finish_locked(Request* request) {
  Status status = request->status;
  if (status != RCC_SUCCESS) set_last_error(request->error);
  free_request(request);
  return status;
}

bool Engine::waiting_for_credits() const {
  for (const PeerState& state : peers_) {
    if (!state.failed && (!state.pending_messages.empty() || !state.pending_writes.empty())) return true;
  }
  return false;
}

Status Engine::wait_locked(std::unique_lock<std::mutex>& lock, Request* request) {
  int idle = 0;
  // The no-progress deadline starts at the first idle stretch (and again after every event): the
  // clock is not read while events keep coming. Reading it can be a system call (VMs without a
  // usable TSC), which is a large part of a small message's latency.
  bool progressed = true;
  bool announced = false;  // polled delivery: peers were asked to notify (once per idle stretch)
  Clock::time_point last_event;
  while (!request->done) {
    Status status = progress_locked();
    if (status != RCC_SUCCESS) {
      complete(request, status, last_error());
      break;
    }
    if (request->done) break;
    if (!events_.empty() || last_pass_delivered_ > 0) {
      idle = 0;
      progressed = true;
      announced = false;
      continue;
    }
    if (++idle < spin_count_) {
      if (idle % 64 == 0) {
        // Let other threads of this process take the lock; give the core away only when ranks
        // outnumber cores (otherwise the yield is a wasted system call per 64 polls).
        lock.unlock();
        if (oversubscribed_) sched_yield();
        lock.lock();
      }
      continue;
    }
    if (progressed) {
      last_event = Clock::now();
      progressed = false;
    }
    if (waiting_for_credits()) {
      // Credit words land without a notice, so there is no event to sleep on: keep polling, but
      // let other ranks on this core run.
      lock.unlock();
      sched_yield();
      lock.lock();
    } else if (polled_ && !announced) {
      // Slot messages land without a notice: ask the peers for one before sleeping, then look
      // once more for a message that landed before they saw the request. One that lands later
      // without a notice waits for the 1 ms timeout of the sleep below at most.
      announced = true;
      Status announced_status = announce_sleep();
      if (announced_status != RCC_SUCCESS) {
        complete(request, announced_status, last_error());
        break;
      }
      continue;
    } else {
      // Nothing happens: sleep on the transport so that other ranks on this core can run.
      transport_->wait_for_event(1);
      lock.unlock();
      lock.lock();
    }
    if (std::chrono::duration<double>(Clock::now() - last_event).count() > timeout_s_) {
      char message[256];
      std::snprintf(message, sizeof message,
                    "no progress for %.0f s (RCC_TIMEOUT) on a %s of %zu bytes with rank %d (tag %d)", timeout_s_,
                    request->kind == Request::Kind::kSend ? "send" : "receive", request->bytes, request->peer,
                    request->tag);
      complete(request, RCC_ERR_TIMEOUT, message);
    }
  }
  return RCC_SUCCESS;
}

Status Engine::wait(Request* request) {
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  std::unique_lock<std::mutex> lock(mutex_);
  wait_locked(lock, request);
  return finish_locked(request);
}

Status Engine::wait_all(Request* const* requests, size_t count) {
  Status first = RCC_SUCCESS;
  std::string first_message;
  for (size_t i = 0; i < count; ++i) {
    Status status = wait(requests[i]);
    if (status != RCC_SUCCESS && first == RCC_SUCCESS) {
      first = status;
      first_message = last_error();
    }
  }
  if (first != RCC_SUCCESS) set_last_error(first_message);
  return first;
}

}  // namespace rcc::p2p
