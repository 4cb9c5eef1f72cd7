// The engine's groups (group.h): making and removing them, aborting one, and what a peer's failure
// does to each.
#include <algorithm>
#include <utility>

#include "base/log.h"
#include "p2p/engine.h"

namespace rcc::p2p {

Group::Group(Engine& engine, uint32_t id, std::vector<int> members, int engine_size)
    : engine_(engine), id_(id), members_(std::move(members)), rank_of_(static_cast<size_t>(engine_size), -1) {
  for (size_t r = 0; r < members_.size(); ++r) rank_of_[static_cast<size_t>(members_[r])] = static_cast<int>(r);
}

Status Group::health() { return engine_.health(*this); }

bool Group::maybe_unusable() const { return engine_.maybe_unusable(*this); }

uint32_t Engine::next_group_id() {
  std::lock_guard<std::mutex> guard(mutex_);
  return next_group_id_;
}

void Engine::reserve_group_id(uint32_t id) {
  std::lock_guard<std::mutex> guard(mutex_);
  next_group_id_ = std::max(next_group_id_, id + 1);
}

Group* Engine::add_group(uint32_t id, std::vector<int> members) {
  std::lock_guard<std::mutex> guard(mutex_);
  next_group_id_ = std::max(next_group_id_, id + 1);
  groups_.push_back(std::unique_ptr<Group>(new Group(*this, id, std::move(members), size_)));
  Group* group = groups_.back().get();
  // A member that died before the group was made breaks it at once, like one that dies later.
  for (int member : group->members_) {
    if (peers_[static_cast<size_t>(member)].failed && group->broken_ == RCC_SUCCESS) {
      group->broken_ = RCC_ERR_PEER_FAILED;
      group->broken_message_ = "rank " + std::to_string(member) + " (rank " + std::to_string(group->rank_of(member)) +
                               " of this communicator) failed before the communicator was made";
      group->unusable_.store(true, std::memory_order_release);
      some_group_unusable_ = true;
    }
  }
  return group;
}

void Engine::tie(Group& level, const Group& owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  level.owner_ = &owner;
  break_tied_locked();
  if (level.unusable_.load(std::memory_order_relaxed)) end_requests_of_unusable(-1);
}

// Breaks (or aborts) every group tied to a broken (or aborted) one, with that one's message.
// Owners are made before their levels and levels own nothing, so one pass in order suffices.
void Engine::break_tied_locked() {
  for (const auto& group : groups_) {
    const Group* owner = group->owner_;
    if (owner == nullptr) continue;
    if (owner->aborted_ && !group->aborted_) {
      group->aborted_ = true;
    } else if (owner->broken_ != RCC_SUCCESS && group->broken_ == RCC_SUCCESS) {
      group->broken_ = owner->broken_;
      group->broken_message_ = owner->broken_message_;
    } else {
      continue;
    }
    group->unusable_.store(true, std::memory_order_release);
    some_group_unusable_ = true;
  }
}

void Engine::remove_group(Group* group) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (const auto& other : groups_) {
    if (other->owner_ == group) other->owner_ = nullptr;
  }
  auto it = std::find_if(groups_.begin(), groups_.end(), [group](const auto& g) { return g.get() == group; });
  if (it == groups_.end()) return;
  // Its queued eager messages still go out unless it could no longer send them in order.
  if (group->aborted_ || group->broken_ != RCC_SUCCESS) drop_eager_messages_of(group->id_);
  groups_.erase(it);
}

void Engine::drop_eager_messages_of(uint32_t group_id) {
  if (!eager_messages_dropped(group_id)) dropped_groups_.push_back(group_id);
}

bool Engine::eager_messages_dropped(uint32_t group_id) const {
  return std::find(dropped_groups_.begin(), dropped_groups_.end(), group_id) != dropped_groups_.end();
}

Group* Engine::find_group(uint32_t id) const {
  for (const auto& group : groups_) {
    if (group->id_ == id) return group.get();
  }
  return nullptr;
}

Status Engine::group_state(const Group* group, std::string* message) {
  if (group == nullptr) {
    *message = "the communicator was destroyed";
    return RCC_ERR_INVALID_USAGE;
  }
  if (group->aborted_) {
    *message = "the communicator was aborted";
    return RCC_ERR_ABORTED;
  }
  *message = group->broken_message_;
  return group->broken_;
}

Status Engine::group_status(const Group* group) const {
  std::string message;
  const Status status = group_state(group, &message);
  return status == RCC_SUCCESS ? RCC_SUCCESS : fail(status, "%s", message.c_str());
}

Status Engine::health(const Group& group) {
  std::lock_guard<std::mutex> guard(mutex_);
  Status status = progress_locked();
  Status state = group_status(&group);
  return state != RCC_SUCCESS ? state : status;
}

bool Engine::peer_has_failed() {
  std::lock_guard<std::mutex> guard(mutex_);
  progress_locked();
  return some_peer_failed_;
}

void Engine::abort(Group& group) {
  std::lock_guard<std::mutex> guard(mutex_);
  group.aborted_ = true;
  group.unusable_.store(true, std::memory_order_release);
  some_group_unusable_ = true;
  break_tied_locked();
  end_requests_of_unusable(-1);
}

void Engine::fail_peer_locked(int peer, Status status, const std::string& message) {
  PeerState& state = peers_[static_cast<size_t>(peer)];
  if (!state.failed) {
    RCC_WARN("%s", message.c_str());
    state.failed = true;
  }
  some_peer_failed_ = true;
  state.pending_messages.clear();
  state.pending_writes.clear();
  matcher_.forget_arrivals_from(peer);
  // A dead member breaks its groups: their collectives would otherwise wait on ranks that wait on
  // it. Groups without it go on.
  for (const auto& group : groups_) {
    const int rank_in_group = group->rank_of(peer);
    if (rank_in_group < 0 || group->broken_ != RCC_SUCCESS) continue;
    break_group(group.get(), status,
                group.get() == world_ ? message
                                      : message + " (rank " + std::to_string(rank_in_group) + " of this communicator)");
  }
  break_tied_locked();
  end_requests_of_unusable(peer);
}

void Engine::break_group(Group* group, Status status, std::string message) {
  group->broken_ = status;
  group->broken_message_ = std::move(message);
  group->unusable_.store(true, std::memory_order_release);
  some_group_unusable_ = true;
}

void Engine::end_requests_of_unusable(int peer) {
  for (Request* request : requests_) {
    if (!request->in_use || request->done) continue;
    if (request->ending) {
      // Waiting for its transfer to end: the peer's death ends that wait.
      if (peer >= 0 && request->peer == peer) complete(request, request->status, request->error);
      continue;
    }
    const Group* group = find_group(group_of_context(request->context));
    const bool unusable = group == nullptr || group->aborted_ || group->broken_ != RCC_SUCCESS;
    if (!unusable && (peer < 0 || request->peer != peer)) continue;
    std::string message;
    const Status status = group_state(group, &message);
    if (status != RCC_SUCCESS) {
      end_request(request, status, message);
    } else {
      end_request(request, RCC_ERR_PEER_FAILED, "rank " + std::to_string(peer) + " failed");
    }
  }
}

}  // namespace rcc::p2p
