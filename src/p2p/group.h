// A communicator's part of the engine. Every communicator of one job shares the job's engine (its
// connections, slots and credits); a group is the ranks of one communicator among the engine's,
// and whether that communicator still works. Its messages carry contexts of its own (below), so
// they never match another communicator's receives. A peer's death breaks every group that holds
// it, with an error naming the rank in the job and in the group; the other groups keep working.
// Aborting a communicator aborts its group only.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/health.h"
#include "base/status.h"

namespace rcc::p2p {

class Engine;

// Group g's point-to-point messages travel with context 2g, its collectives' with 2g + 1. Group 0
// is the communicator the engine was made for.
inline uint32_t user_context(uint32_t group) { return 2 * group; }
inline uint32_t collective_context(uint32_t group) { return 2 * group + 1; }
inline uint32_t group_of_context(uint32_t context) { return context / 2; }
constexpr uint32_t kUserContext = 0;        // group 0's
constexpr uint32_t kCollectiveContext = 1;  // group 0's

class Group final : public PeerHealth {
 public:
  uint32_t id() const { return id_; }
  int size() const { return static_cast<int>(members_.size()); }
  // The engine's rank of the group's rank r, and the group's rank of an engine rank (-1: none).
  int member(int rank) const { return members_[static_cast<size_t>(rank)]; }
  int rank_of(int engine_rank) const { return rank_of_[static_cast<size_t>(engine_rank)]; }
  const std::vector<int>& members() const { return members_; }

  // PeerHealth: one progress pass of the engine, then RCC_ERR_ABORTED or the failure of a member
  // (naming it) if this group can no longer be used.
  Status health() override;
  bool maybe_unusable() const override;

 private:
  friend class Engine;
  Group(Engine& engine, uint32_t id, std::vector<int> members, int engine_size);

  Engine& engine_;
  uint32_t id_;
  std::vector<int> members_;
  std::vector<int> rank_of_;
  const Group* owner_ = nullptr;  // Engine::tie: breaks and aborts with this group
  // Under the engine's lock; unusable_ mirrors them for lock-free reads.
  Status broken_ = RCC_SUCCESS;
  std::string broken_message_;
  bool aborted_ = false;
  std::atomic<bool> unusable_{false};
};

}  // namespace rcc::p2p
