// The engine's calls: posting sends and receives, probing, testing and finishing requests, and
// what happens to them on abort or when a peer fails.
#include "p2p/engine.h"

#include <cstring>
#include <deque>

#include "base/log.h"

namespace rcc::p2p {
namespace {

std::string truncation_message(size_t length, int peer, int tag, size_t capacity) {
  return "message of " + std::to_string(length) + " bytes from rank " + std::to_string(peer) + " (tag " +
         std::to_string(tag) + ") is longer than the receive buffer of " + std::to_string(capacity) + " bytes";
}

SlotHeader message_header(int tag, uint32_t context, size_t bytes, uint32_t sender_request) {
  SlotHeader header{};
  header.type = SlotType::kEager;
  header.tag = tag;
  header.context = context;
  header.length = bytes;
  header.sender_request = sender_request;
  return header;
}

}  // namespace

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
  request->matched = MessageInfo{};
  request->done = false;
  request->status = RCC_SUCCESS;
  request->error.clear();
  request->index = index;
  request->in_use = true;
  request->transfer_in_flight = false;
  request->ending = false;
  request->refused = false;
  request->queued_eager = false;
  ++request->generation;
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

Status Engine::check_usable(uint32_t context) {
  if (has_reported_failures_.load(std::memory_order_acquire)) progress_locked();
  if (!some_group_unusable_) return RCC_SUCCESS;
  return group_status(find_group(group_of_context(context)));
}

void Engine::complete(Request* request, Status status, const std::string& message) {
  if (request->done) return;
  request->done = true;
  request->transfer_in_flight = false;
  request->ending = false;
  request->status = status;
  if (!message.empty()) request->error = message;
  if (request->memory) request->memory.reset();
  if (request->remote_key) request->remote_key.reset();
}

void Engine::end_request(Request* request, Status status, const std::string& message) {
  if (request->done || request->ending) return;
  if (request->queued_eager) {
    // Its message never goes out, so the ones queued after it must not either (the receiver would
    // take them for it): the communicator is broken, and the queue drops its eager messages.
    const uint32_t group_id = group_of_context(request->context);
    Group* group = find_group(group_id);
    if (group == nullptr) drop_eager_messages_of(group_id);
    if (group != nullptr && !group->aborted_ && group->broken_ == RCC_SUCCESS) {
      break_group(group, status,
                  "a message to rank " + std::to_string(request->peer) + " waiting for room could not be sent (" +
                      message + "); later ones would be out of step");
    }
  }
  if (request->kind == Request::Kind::kRecv && !request->transfer_in_flight) matcher_.unpost(request);
  const bool peer_alive = request->peer >= 0 && request->peer < size_ && request->peer != rank_ &&
                          !peers_[static_cast<size_t>(request->peer)].failed;
  if (request->transfer_in_flight && peer_alive) {
    // The live peer may still write into (or the transport read from) the buffer: hand it back
    // once that is over. The peer finishes or refuses every clear-to-send it got.
    request->ending = true;
    request->status = status;
    request->error = message;
    return;
  }
  complete(request, status, message);
}

void Engine::finish_transfer(Request* request) {
  if (request->ending) {
    complete(request, request->status, request->error);
  } else {
    complete(request, RCC_SUCCESS);
  }
}

void Engine::deliver(Request* receive, int source, const SlotHeader& header, const void* payload) {
  const size_t length = header.length;
  receive->matched = MessageInfo{source, header.tag, length};
  if (length > receive->bytes) {
    complete(receive, RCC_ERR_TRUNCATED, truncation_message(length, source, header.tag, receive->bytes));
    return;
  }
  if (length > 0 && payload != nullptr) std::memcpy(receive->buffer, payload, length);
  complete(receive, RCC_SUCCESS);
}

Status Engine::isend(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out,
                     bool synchronous) {
  std::lock_guard<std::mutex> guard(mutex_);
  RCC_RETURN_IF_ERROR(check_usable(context));
  RCC_RETURN_IF_ERROR(ensure_connected(peer));
  PeerState& state = peers_[static_cast<size_t>(peer)];
  const bool eager = bytes <= state.eager_limit && peer != rank_ && !synchronous;
  std::deque<PeerState::PendingMessage>& queued = state.pending_messages;
  if (eager && queued.size() < slots_) {
    // Copied into a slot (or the pending queue) before this returns: complete, no Request needed.
    RCC_RETURN_IF_ERROR(post_slot_message(peer, message_header(tag, context, bytes, 0), buffer, bytes));
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
  if (eager) {
    // A window of copies already waits for the peer's credits: this one waits as the caller's
    // buffer and completes once written into a slot, so a sender that outruns its peer waits (as
    // a standard-mode MPI send may) instead of queueing copies without bound (a root broadcasting
    // 8 bytes two million times over TCP held 250 MB of them).
    request->queued_eager = true;
    queued.push_back({message_header(tag, context, bytes, 0), {}, request, request->generation});
    *out = request;
    return RCC_SUCCESS;
  }
  SlotHeader header = message_header(tag, context, bytes, request->index);
  header.sender_generation = request->generation;
  Status status = peer == rank_ ? send_to_self(buffer, bytes, tag, context, request, synchronous)
                                : start_large_send(request, header);
  if (status != RCC_SUCCESS) {
    free_request(request);
    return status;
  }
  *out = request;
  return RCC_SUCCESS;
}

Status Engine::send_to_self(const void* buffer, size_t bytes, int tag, uint32_t context, Request* request,
                            bool synchronous) {
  const SlotHeader header = message_header(tag, context, bytes, request->index);
  if (Request* receive = matcher_.take_receive(rank_, tag, context)) {
    deliver(receive, rank_, header, buffer);
    complete(request, RCC_SUCCESS);
    return RCC_SUCCESS;
  }
  Arrival parked;
  parked.source = rank_;
  parked.header = header;
  if (bytes <= peers_[static_cast<size_t>(rank_)].eager_limit && !synchronous) {
    const auto* bytes_in = static_cast<const uint8_t*>(buffer);
    parked.payload.assign(bytes_in, bytes_in + bytes);
    complete(request, RCC_SUCCESS);
  } else {
    parked.self_send = request;  // copied from the sender's buffer when matched
  }
  matcher_.park(std::move(parked));
  return RCC_SUCCESS;
}

Status Engine::send(const void* buffer, size_t bytes, int peer, int tag, uint32_t context, bool synchronous) {
  Request* request = nullptr;
  RCC_RETURN_IF_ERROR(isend(buffer, bytes, peer, tag, context, &request, synchronous));
  return wait(request);
}

Status Engine::recv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, MessageInfo* info) {
  std::unique_lock<std::mutex> lock(mutex_);  // one lock for post, wait and free
  Request* request = nullptr;
  RCC_RETURN_IF_ERROR(irecv_locked(buffer, bytes, peer, tag, context, &request));
  wait_locked(lock, request);
  return finish_locked(request, info);
}

Status Engine::irecv(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out) {
  std::lock_guard<std::mutex> guard(mutex_);
  return irecv_locked(buffer, bytes, peer, tag, context, out);
}

Status Engine::irecv_locked(void* buffer, size_t bytes, int peer, int tag, uint32_t context, Request** out) {
  RCC_RETURN_IF_ERROR(check_usable(context));
  Request* request = new_request();
  request->kind = Request::Kind::kRecv;
  request->peer = peer;
  request->tag = tag;
  request->context = context;
  request->buffer = buffer;
  request->bytes = bytes;
  *out = request;
  Arrival message;
  if (!matcher_.take_arrival(peer, tag, context, &message)) {
    matcher_.post(request);
    return RCC_SUCCESS;
  }
  if (message.header.type == SlotType::kRts) {
    Status status = send_cts(request, message);
    if (status != RCC_SUCCESS) complete(request, status, last_error());
    return RCC_SUCCESS;
  }
  const void* source = message.self_send != nullptr ? message.self_send->buffer : message.payload.data();
  deliver(request, message.source, message.header, source);
  if (message.self_send != nullptr) complete(message.self_send, RCC_SUCCESS);
  return RCC_SUCCESS;
}

Status Engine::iprobe(int peer, int tag, uint32_t context, bool* found, MessageInfo* info) {
  std::lock_guard<std::mutex> guard(mutex_);
  RCC_RETURN_IF_ERROR(check_usable(context));
  const Arrival* message = matcher_.peek_arrival(peer, tag, context);
  if (message == nullptr) {
    RCC_RETURN_IF_ERROR(progress_locked());
    message = matcher_.peek_arrival(peer, tag, context);
  }
  *found = message != nullptr;
  if (message != nullptr && info != nullptr)
    *info = MessageInfo{message->source, message->header.tag, message->header.length};
  return RCC_SUCCESS;
}

Status Engine::cancel(Request* request, bool* cancelled) {
  *cancelled = false;
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  std::lock_guard<std::mutex> guard(mutex_);
  // A receive that is neither done nor in a transfer (nor refused, nor ending) is still posted:
  // eager messages complete it when matched, a rendezvous sets transfer_in_flight.
  if (request->kind != Request::Kind::kRecv || request->done || request->transfer_in_flight || request->ending ||
      request->refused) {
    return RCC_SUCCESS;
  }
  matcher_.unpost(request);
  complete(request, RCC_ERR_CANCELLED, "the receive was cancelled before a message matched it");
  *cancelled = true;
  return RCC_SUCCESS;
}

Status Engine::test(Request* request, bool* done) {
  if (request == nullptr) {  // a send that completed when posted
    *done = true;
    return RCC_SUCCESS;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  if (!request->done) {
    Status status = progress_locked();
    if (status != RCC_SUCCESS && !request->done) end_request(request, status, last_error());
  }
  *done = request->done;
  return RCC_SUCCESS;
}

Status Engine::finish(Request* request, MessageInfo* info) {
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  std::lock_guard<std::mutex> guard(mutex_);
  return finish_locked(request, info);
}

Status Engine::finish_locked(Request* request, MessageInfo* info) {
  const Status status = request->status;
  if (status != RCC_SUCCESS) {
    set_last_error(request->error);
  } else if (info != nullptr) {
    *info = request->matched;
  }
  free_request(request);
  return status;
}

Status Engine::wait(Request* request, MessageInfo* info) {
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  std::unique_lock<std::mutex> lock(mutex_);
  wait_locked(lock, request);
  return finish_locked(request, info);
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

void Engine::peer_failed(int peer, const std::string& why) {
  if (peer < 0 || peer >= size_) return;
  // The transport's view of the peer (its device address) helps find which node or port it was.
  const std::string address = transport_->describe_peer(peer);
  std::lock_guard<std::mutex> guard(reported_mutex_);
  reported_failures_.emplace_back(
      peer, address.empty() ? why : why + "; its " + transport_->name() + " address was " + address);
  has_reported_failures_.store(true, std::memory_order_release);
}

std::vector<Engine::PendingRequest> Engine::pending_requests() {
  std::lock_guard<std::mutex> guard(mutex_);
  return pending_requests_locked();
}

std::vector<Engine::PendingRequest> Engine::pending_requests_locked() const {
  std::vector<PendingRequest> pending;
  for (const Request* request : requests_) {
    if (!request->in_use || request->done) continue;
    pending.push_back(PendingRequest{request->context, request->peer, request->tag,
                                     request->kind == Request::Kind::kSend, request->bytes});
  }
  return pending;
}

Engine::GroupMembers Engine::group_members() {
  std::lock_guard<std::mutex> guard(mutex_);
  return group_members_locked();
}

Engine::GroupMembers Engine::group_members_locked() const {
  GroupMembers groups;
  for (const auto& group : groups_) groups.emplace_back(group->id(), group->members());
  return groups;
}

void Engine::set_timeout_hook(TimeoutHook hook) {
  std::lock_guard<std::mutex> guard(mutex_);
  timeout_hook_ = std::move(hook);
}

void Engine::progress() {
  std::lock_guard<std::mutex> guard(mutex_);
  progress_locked();
}

bool Engine::broken() {
  std::lock_guard<std::mutex> guard(mutex_);
  progress_locked();
  return some_peer_failed_ || some_group_unusable_;
}

}  // namespace rcc::p2p
