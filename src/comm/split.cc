// rcc_comm_split and rcc_comm_dup: the parent's ranks agree, by one allgather, on who goes where
// and on the new group's id; each new communicator then shares the parent's connections.
// rcc_comm_create_group: only the listed ranks agree on the id, through the first of them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/comm.h"
#include "comm/launch.h"
#include "comm/split.h"

namespace rcc {

Status split_comm(rcc_comm* parent, int color, int key, rcc_comm** out) {
  // What each rank says: its color, its key, and the lowest group id unused on its side. The
  // largest of those ids is unused by every rank, so all new communicators of this split take it
  // (they are disjoint: no rank can confuse their messages).
  const int64_t mine[3] = {color, key, static_cast<int64_t>(parent->engine->next_group_id())};
  std::vector<int64_t> all(3 * static_cast<size_t>(parent->size));
  RCC_RETURN_IF_ERROR(run_internal_collective(parent, collectives::Args{.kind = collectives::Kind::kAllgather,
                                                                        .sendbuf = mine,
                                                                        .recvbuf = all.data(),
                                                                        .count = 3,
                                                                        .datatype = RCC_INT64}));
  int64_t id = 0;
  for (int r = 0; r < parent->size; ++r) id = std::max(id, all[3 * static_cast<size_t>(r) + 2]);
  if (id > INT32_MAX) return fail(RCC_ERR_NO_MEMORY, "rcc_comm_split: this job has used up its 2^31 communicator ids");
  if (color == RCC_UNDEFINED) {
    parent->engine->reserve_group_id(static_cast<uint32_t>(id));
    *out = nullptr;
    return RCC_SUCCESS;
  }
  // The members: parent ranks of this color, ordered by key, ties by parent rank.
  std::vector<int> parent_ranks;
  for (int r = 0; r < parent->size; ++r) {
    if (all[3 * static_cast<size_t>(r)] == color) parent_ranks.push_back(r);
  }
  std::stable_sort(parent_ranks.begin(), parent_ranks.end(), [&all](int a, int b) {
    return all[3 * static_cast<size_t>(a) + 1] < all[3 * static_cast<size_t>(b) + 1];
  });
  std::vector<int> members;
  members.reserve(parent_ranks.size());
  for (int r : parent_ranks) members.push_back(parent->job_rank(r));
  return create_sub_comm(*parent, static_cast<uint32_t>(id), std::move(members), out);
}

// The agreement's messages travel in the parent's collective context with tags above every
// collective's (those stay below 2^28), so they meet neither user traffic nor a collective.
Status create_group_comm(rcc_comm* parent, const std::vector<int>& ranks, int tag, rcc_comm** out) {
  p2p::Engine& engine = *parent->engine;
  const uint32_t context = p2p::collective_context(parent->group->id());
  const int wire_tag = kCreateGroupTags | tag;
  const int leader = parent->job_rank(ranks.front());
  // The largest of the members' lowest unused ids is unused by every member.
  uint64_t id = engine.next_group_id();
  if (parent->rank == ranks.front()) {
    for (size_t i = 1; i < ranks.size(); ++i) {
      uint64_t theirs = 0;
      RCC_RETURN_IF_ERROR(engine.recv(&theirs, sizeof theirs, parent->job_rank(ranks[i]), wire_tag, context));
      id = std::max(id, theirs);
    }
    for (size_t i = 1; i < ranks.size(); ++i) {
      RCC_RETURN_IF_ERROR(engine.send(&id, sizeof id, parent->job_rank(ranks[i]), wire_tag, context));
    }
  } else {
    RCC_RETURN_IF_ERROR(engine.send(&id, sizeof id, leader, wire_tag, context));
    RCC_RETURN_IF_ERROR(engine.recv(&id, sizeof id, leader, wire_tag, context));
  }
  if (id > INT32_MAX) {
    return fail(RCC_ERR_NO_MEMORY, "rcc_comm_create_group: this job has used up its 2^31 communicator ids");
  }
  std::vector<int> members;
  members.reserve(ranks.size());
  for (int r : ranks) members.push_back(parent->job_rank(r));
  return create_sub_comm(*parent, static_cast<uint32_t>(id), std::move(members), out);
}

}  // namespace rcc
