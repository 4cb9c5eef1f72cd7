// Sub-communicators: rcc_comm_split and rcc_comm_dup over real ranks. Membership and order against
// a reference split computed on every rank, traffic separation between a communicator and its
// children (same peers, same tags), every collective on children whose ranks are not contiguous in
// the parent (exact integer results from parent ranks), many communicators, two threads on two
// communicators, argument errors, and child ranks in p2p calls and in what receives report.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

// A communicator and the world rank of each of its ranks.
struct Group {
  rcc_comm_t comm = nullptr;
  std::vector<int> world;  // world[r] = the world rank of rank r
  int rank = -1;
  int size() const { return static_cast<int>(world.size()); }
  int left() const { return (rank + size() - 1) % size(); }
  int right() const { return (rank + 1) % size(); }
};

Group world_group() {
  Group g;
  g.comm = comm();
  g.world.resize(static_cast<size_t>(size()));
  std::iota(g.world.begin(), g.world.end(), 0);
  g.rank = rank();
  return g;
}

// The reference split: the parent ranks of my_rank's new communicator, in order (ascending key,
// ties by parent rank); empty for RCC_UNDEFINED.
std::vector<int> reference_split(int parent_size, int my_rank, const std::function<int(int)>& color_of,
                                 const std::function<int(int)>& key_of) {
  std::vector<int> members;
  if (color_of(my_rank) == RCC_UNDEFINED) return members;
  for (int r = 0; r < parent_size; ++r) {
    if (color_of(r) == color_of(my_rank)) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return key_of(a) < key_of(b); });
  return members;
}

// Splits parent, checks the new communicator's rank, size and membership (an allgather of world
// ranks) against the reference, and returns it.
void split_and_check(const Group& parent, const std::function<int(int)>& color_of,
                     const std::function<int(int)>& key_of, Group* child) {
  const std::vector<int> members = reference_split(parent.size(), parent.rank, color_of, key_of);
  rcc_comm_t made = reinterpret_cast<rcc_comm_t>(&child);  // must be overwritten, with NULL too
  RCC_ASSERT_OK(rcc_comm_split(parent.comm, color_of(parent.rank), key_of(parent.rank), &made));
  child->comm = made;
  child->world.clear();
  child->rank = -1;
  if (members.empty()) {
    ASSERT_EQ(made, nullptr) << "RCC_UNDEFINED must give a NULL communicator";
    return;
  }
  ASSERT_NE(made, nullptr);
  for (int r : members) child->world.push_back(parent.world[static_cast<size_t>(r)]);
  child->rank = static_cast<int>(std::find(members.begin(), members.end(), parent.rank) - members.begin());
  int got_rank = -1, got_size = -1;
  RCC_ASSERT_OK(rcc_comm_rank(made, &got_rank));
  RCC_ASSERT_OK(rcc_comm_size(made, &got_size));
  ASSERT_EQ(got_size, child->size());
  ASSERT_EQ(got_rank, child->rank);
  const int32_t me = rank();
  std::vector<int32_t> all(static_cast<size_t>(got_size), -1);
  RCC_ASSERT_OK(rcc_allgather(made, &me, all.data(), 1, RCC_INT32));
  for (int r = 0; r < got_size; ++r) {
    ASSERT_EQ(all[static_cast<size_t>(r)], child->world[static_cast<size_t>(r)]) << "rank " << r << " of the child";
  }
  const char* parent_transport = nullptr;
  const char* child_transport = nullptr;
  RCC_ASSERT_OK(rcc_comm_transport(parent.comm, &parent_transport));
  RCC_ASSERT_OK(rcc_comm_transport(made, &child_transport));
  EXPECT_STREQ(parent_transport, child_transport);
}

void destroy(Group& g) {
  if (g.comm != nullptr) RCC_EXPECT_OK(rcc_comm_destroy(g.comm));
  g.comm = nullptr;
}

TEST(Split, ByParityAndByThree) {
  const Group world = world_group();
  Group child;
  split_and_check(
      world, [](int r) { return r % 2; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  destroy(child);
  // key = -rank reverses the order.
  split_and_check(
      world, [](int r) { return r % 3; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  destroy(child);
  // Large colors and keys.
  split_and_check(
      world, [](int r) { return r % 2 == 0 ? INT_MAX : 1000000; }, [](int r) { return r % 2 == 0 ? INT_MIN + r : 7; },
      &child);
  ASSERT_FALSE(HasFatalFailure());
  destroy(child);
}

TEST(Split, EqualKeysTieByParentRank) {
  const Group world = world_group();
  Group child;
  // Everyone in one communicator: odd ranks first (key 0), then even ranks (key 1), each in parent order.
  split_and_check(
      world, [](int) { return 0; }, [](int r) { return r % 2 == 0 ? 1 : 0; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  destroy(child);
  split_and_check(
      world, [](int) { return 3; }, [](int) { return 42; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  destroy(child);
}

TEST(Split, SingletonGroups) {
  const Group world = world_group();
  Group child;
  split_and_check(
      world, [](int r) { return r; }, [](int) { return 0; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  int64_t value = rank() + 100, sum = -1;
  RCC_ASSERT_OK(rcc_allreduce(child.comm, &value, &sum, 1, RCC_INT64, RCC_SUM));
  EXPECT_EQ(sum, rank() + 100);
  RCC_ASSERT_OK(rcc_barrier(child.comm));
  int32_t out = rank(), in = -1;
  rcc_msg_info_t info{-5, -5, 0};
  RCC_ASSERT_OK(rcc_sendrecv(child.comm, &out, 1, 0, 1, &in, 1, RCC_ANY_SOURCE, RCC_ANY_TAG, RCC_INT32, &info));
  EXPECT_EQ(in, rank());
  EXPECT_EQ(info.source, 0);
  destroy(child);
}

TEST(Split, UndefinedGivesNull) {
  const Group world = world_group();
  Group child;
  split_and_check(
      world, [](int r) { return r % 2 == 0 ? RCC_UNDEFINED : 1; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  if (child.comm != nullptr) {
    int64_t value = rank(), sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(child.comm, &value, &sum, 1, RCC_INT64, RCC_SUM));
    int64_t expected = 0;
    for (int r : child.world) expected += r;
    EXPECT_EQ(sum, expected);
  }
  destroy(child);
  split_and_check(
      world, [](int) { return RCC_UNDEFINED; }, [](int) { return 0; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(child.comm, nullptr);
  // The parent still works after a split that made nothing.
  RCC_ASSERT_OK(rcc_barrier(comm()));
}

TEST(Split, NestedSplits) {
  const Group world = world_group();
  Group child, grandchild, great;
  split_and_check(
      world, [](int r) { return r % 2; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  split_and_check(
      child, [](int r) { return r % 2; }, [](int r) { return r; }, &grandchild);
  ASSERT_FALSE(HasFatalFailure());
  split_and_check(
      grandchild, [](int r) { return r < 1 ? 0 : 1; }, [](int r) { return -r; }, &great);
  ASSERT_FALSE(HasFatalFailure());
  // All three in use, interleaved.
  for (const Group* g : std::initializer_list<const Group*>{&great, &child, &grandchild, &world}) {
    int64_t value = rank(), sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(g->comm, &value, &sum, 1, RCC_INT64, RCC_SUM));
    EXPECT_EQ(sum, std::accumulate(g->world.begin(), g->world.end(), int64_t{0}));
  }
  destroy(child);
  destroy(great);
  destroy(grandchild);
}

TEST(Dup, SameRanksOwnTraffic) {
  const Group world = world_group();
  Group dup = world;
  dup.comm = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &dup.comm));
  ASSERT_NE(dup.comm, nullptr);
  ASSERT_NE(dup.comm, comm());
  int got = -1;
  RCC_ASSERT_OK(rcc_comm_rank(dup.comm, &got));
  EXPECT_EQ(got, rank());
  RCC_ASSERT_OK(rcc_comm_size(dup.comm, &got));
  EXPECT_EQ(got, size());

  // Same peer, same tag on both: each message lands in its own communicator, whichever is sent first.
  for (int round = 0; round < 2; ++round) {
    const int source = round == 0 ? world.left() : RCC_ANY_SOURCE;
    const int tag = round == 0 ? 5 : RCC_ANY_TAG;
    int32_t in_world[2] = {-1, -1}, in_dup[2] = {-1, -1};
    rcc_request_t r_world = nullptr, r_dup = nullptr;
    RCC_ASSERT_OK(rcc_irecv(comm(), in_world, 2, RCC_INT32, source, tag, &r_world));
    RCC_ASSERT_OK(rcc_irecv(dup.comm, in_dup, 2, RCC_INT32, source, tag, &r_dup));
    const int32_t out_world[2] = {1, rank()}, out_dup[2] = {2, rank()};
    if ((rank() + round) % 2 == 0) {
      RCC_ASSERT_OK(rcc_send(comm(), out_world, 2, RCC_INT32, world.right(), 5));
      RCC_ASSERT_OK(rcc_send(dup.comm, out_dup, 2, RCC_INT32, world.right(), 5));
    } else {
      RCC_ASSERT_OK(rcc_send(dup.comm, out_dup, 2, RCC_INT32, world.right(), 5));
      RCC_ASSERT_OK(rcc_send(comm(), out_world, 2, RCC_INT32, world.right(), 5));
    }
    rcc_msg_info_t info{};
    RCC_ASSERT_OK(rcc_wait_info(r_world, &info));
    EXPECT_EQ(info.source, world.left());
    EXPECT_EQ(in_world[0], 1) << "round " << round << ": the world's receive got the dup's message";
    EXPECT_EQ(in_world[1], world.left());
    RCC_ASSERT_OK(rcc_wait_info(r_dup, &info));
    EXPECT_EQ(info.source, world.left());
    EXPECT_EQ(in_dup[0], 2) << "round " << round << ": the dup's receive got the world's message";
    EXPECT_EQ(in_dup[1], world.left());
  }

  // A message waiting on the world is invisible to the dup's probes.
  int32_t token = rank(), got_token = -1;
  rcc_request_t token_send = nullptr;
  RCC_ASSERT_OK(rcc_isend(comm(), &token, 1, RCC_INT32, world.right(), 6, &token_send));
  rcc_msg_info_t info{};
  RCC_ASSERT_OK(rcc_probe(comm(), world.left(), 6, &info));
  int found = -1;
  RCC_ASSERT_OK(rcc_iprobe(dup.comm, RCC_ANY_SOURCE, RCC_ANY_TAG, &found, &info));
  EXPECT_EQ(found, 0) << "the dup saw the world's message";
  RCC_ASSERT_OK(rcc_iprobe(dup.comm, world.left(), 6, &found, &info));
  EXPECT_EQ(found, 0);
  RCC_ASSERT_OK(rcc_recv(comm(), &got_token, 1, RCC_INT32, world.left(), 6));
  RCC_ASSERT_OK(rcc_wait(token_send));
  EXPECT_EQ(got_token, world.left());

  // Collectives on both, nonblocking, issued in opposite orders by neighbouring ranks.
  int64_t value = rank() + 1, sum_world = -1, sum_dup = -1;
  rcc_request_t a = nullptr, b = nullptr;
  if (rank() % 2 == 0) {
    RCC_ASSERT_OK(rcc_iallreduce(comm(), &value, &sum_world, 1, RCC_INT64, RCC_SUM, &a));
    RCC_ASSERT_OK(rcc_iallreduce(dup.comm, &value, &sum_dup, 1, RCC_INT64, RCC_MAX, &b));
  } else {
    RCC_ASSERT_OK(rcc_iallreduce(dup.comm, &value, &sum_dup, 1, RCC_INT64, RCC_MAX, &b));
    RCC_ASSERT_OK(rcc_iallreduce(comm(), &value, &sum_world, 1, RCC_INT64, RCC_SUM, &a));
  }
  RCC_ASSERT_OK(rcc_wait(b));
  RCC_ASSERT_OK(rcc_wait(a));
  EXPECT_EQ(sum_world, static_cast<int64_t>(size()) * (size() + 1) / 2);
  EXPECT_EQ(sum_dup, size());
  destroy(dup);
}

// A parent and its child with the same peer (a process in both) and the same tag: receives posted
// on both, sends on both in opposite orders on alternate ranks; each lands in its own communicator,
// and each reports its sender in its own communicator's ranks.
TEST(Split, ParentAndChildTrafficWithTheSameTags) {
  const Group world = world_group();
  Group child;
  split_and_check(
      world, [](int r) { return r % 2; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  const int child_right_in_world = child.world[static_cast<size_t>(child.right())];
  const int child_left_in_world = child.world[static_cast<size_t>(child.left())];
  for (int round = 0; round < 3; ++round) {
    // Round 0: specific peers and tags; 1: wildcards on both; 2: wildcards, large messages.
    const size_t count = round == 2 ? 30000 : 2;
    std::vector<int32_t> in_parent(count, -1), in_child(count, -1);
    std::vector<int32_t> out_parent(count, 10 + round), out_child(count, 20 + round);
    out_parent[1] = out_child[1] = rank();
    const bool wild = round > 0;
    rcc_request_t r_parent = nullptr, r_child = nullptr;
    RCC_ASSERT_OK(rcc_irecv(child.comm, in_child.data(), count, RCC_INT32, wild ? RCC_ANY_SOURCE : child.left(),
                            wild ? RCC_ANY_TAG : 7, &r_child));
    RCC_ASSERT_OK(rcc_irecv(comm(), in_parent.data(), count, RCC_INT32, wild ? RCC_ANY_SOURCE : child_left_in_world,
                            wild ? RCC_ANY_TAG : 7, &r_parent));
    RCC_ASSERT_OK(rcc_barrier(comm()));
    rcc_request_t s_parent = nullptr, s_child = nullptr;
    if ((rank() + round) % 2 == 0) {
      RCC_ASSERT_OK(rcc_isend(comm(), out_parent.data(), count, RCC_INT32, child_right_in_world, 7, &s_parent));
      RCC_ASSERT_OK(rcc_isend(child.comm, out_child.data(), count, RCC_INT32, child.right(), 7, &s_child));
    } else {
      RCC_ASSERT_OK(rcc_isend(child.comm, out_child.data(), count, RCC_INT32, child.right(), 7, &s_child));
      RCC_ASSERT_OK(rcc_isend(comm(), out_parent.data(), count, RCC_INT32, child_right_in_world, 7, &s_parent));
    }
    rcc_msg_info_t info{-5, -5, 0};
    RCC_ASSERT_OK(rcc_wait_info(r_child, &info));
    EXPECT_EQ(info.source, child.left()) << "round " << round << ": the source must be a child rank";
    EXPECT_EQ(info.tag, 7);
    EXPECT_EQ(info.bytes, count * 4);
    EXPECT_EQ(in_child[0], 20 + round) << "round " << round << ": the child's receive got the parent's message";
    EXPECT_EQ(in_child[1], child_left_in_world);
    EXPECT_EQ(in_child.back(), count == 2 ? child_left_in_world : 20 + round);
    info = {-5, -5, 0};
    RCC_ASSERT_OK(rcc_wait_info(r_parent, &info));
    EXPECT_EQ(info.source, child_left_in_world) << "round " << round;
    EXPECT_EQ(in_parent[0], 10 + round) << "round " << round << ": the parent's receive got the child's message";
    EXPECT_EQ(in_parent[1], child_left_in_world);
    RCC_ASSERT_OK(rcc_wait(s_parent));
    RCC_ASSERT_OK(rcc_wait(s_child));
  }
  destroy(child);
}

// Child ranks in p2p calls: all ranks in one child in reverse order, so child rank c is world rank
// size-1-c. A send to child rank 1 arrives at world rank size-2, from child rank 0 (world rank
// size-1); a peer beyond the child's size is refused.
TEST(Split, ChildRanksInPointToPoint) {
  const Group world = world_group();
  Group child;
  split_and_check(
      world, [](int) { return 0; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(child.rank, size() - 1 - rank());
  if (size() >= 2) {
    if (child.rank == 0) {
      int32_t me = rank();
      RCC_ASSERT_OK(rcc_send(child.comm, &me, 1, RCC_INT32, 1, 3));
    } else if (child.rank == 1) {
      int32_t got = -1;
      rcc_msg_info_t info{-5, -5, 0};
      RCC_ASSERT_OK(rcc_recv_info(child.comm, &got, 1, RCC_INT32, RCC_ANY_SOURCE, RCC_ANY_TAG, &info));
      EXPECT_EQ(rank(), size() - 2);
      EXPECT_EQ(got, size() - 1) << "the message came from the wrong process";
      EXPECT_EQ(info.source, 0) << "the source must be the child rank, not the world rank";
      EXPECT_EQ(info.tag, 3);
    }
  }
  // Probes report child ranks too.
  int32_t me = rank(), got = -1;
  rcc_request_t send = nullptr;
  RCC_ASSERT_OK(rcc_isend(child.comm, &me, 1, RCC_INT32, child.right(), 4, &send));
  rcc_msg_info_t info{-5, -5, 0};
  RCC_ASSERT_OK(rcc_probe(child.comm, RCC_ANY_SOURCE, RCC_ANY_TAG, &info));
  EXPECT_EQ(info.source, child.left());
  EXPECT_EQ(info.tag, 4);
  RCC_ASSERT_OK(rcc_recv(child.comm, &got, 1, RCC_INT32, info.source, info.tag));
  RCC_ASSERT_OK(rcc_wait(send));
  EXPECT_EQ(got, child.world[static_cast<size_t>(child.left())]);

  // In a parity child, a rank beyond the child's size is no peer, though the parent has it.
  Group half;
  split_and_check(
      world, [](int r) { return r % 2; }, [](int r) { return r; }, &half);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(rcc_send(half.comm, &me, 1, RCC_INT32, half.size(), 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "peer"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_recv(half.comm, &got, 1, RCC_INT32, half.size(), 0), RCC_ERR_INVALID_ARGUMENT);
  destroy(half);
  destroy(child);
}

// A message sent on a new communicator at once, before its receiver may have finished making it:
// it waits for the receive like any other.
TEST(Split, MessagesSentRightAfterTheSplit) {
  for (int round = 0; round < 5; ++round) {
    rcc_comm_t made = nullptr;
    if (round % 2 == 0) {
      RCC_ASSERT_OK(rcc_comm_dup(comm(), &made));
    } else {
      RCC_ASSERT_OK(rcc_comm_split(comm(), 0, rank() == 0 ? -1 : rank(), &made));  // rank 0 stays first
    }
    std::vector<rcc_request_t> sends;
    const int32_t out = round * 100 + rank();
    if (rank() == 0) {
      for (int peer = 0; peer < size(); ++peer) {
        rcc_request_t request = nullptr;
        RCC_ASSERT_OK(rcc_isend(made, &out, 1, RCC_INT32, peer, round, &request));
        sends.push_back(request);
      }
    }
    int32_t in = -1;
    rcc_msg_info_t info{-5, -5, 0};
    RCC_ASSERT_OK(rcc_recv_info(made, &in, 1, RCC_INT32, RCC_ANY_SOURCE, RCC_ANY_TAG, &info));
    EXPECT_EQ(in, round * 100);
    EXPECT_EQ(info.source, 0);
    EXPECT_EQ(info.tag, round);
    RCC_ASSERT_OK(rcc_waitall(static_cast<int>(sends.size()), sends.data()));
    RCC_ASSERT_OK(rcc_comm_destroy(made));
  }
}

// rcc_comm_abort on a dup aborts the dup only: the world and another dup keep working.
TEST(Dup, AbortIsPerCommunicator) {
  rcc_comm_t doomed = nullptr, other = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &doomed));
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &other));
  int32_t value = -1;
  rcc_request_t pending = nullptr;
  RCC_ASSERT_OK(rcc_irecv(doomed, &value, 1, RCC_INT32, RCC_ANY_SOURCE, RCC_ANY_TAG, &pending));
  RCC_ASSERT_OK(rcc_comm_abort(doomed));
  EXPECT_EQ(rcc_wait(pending), RCC_ERR_ABORTED);
  EXPECT_EQ(rcc_barrier(doomed), RCC_ERR_ABORTED);
  for (rcc_comm_t c : {comm(), other}) {
    int64_t one = 1, sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(c, &one, &sum, 1, RCC_INT64, RCC_SUM));
    EXPECT_EQ(sum, size());
    const int32_t out = rank();
    int32_t in = -1;
    RCC_ASSERT_OK(
        rcc_sendrecv(c, &out, 1, (rank() + 1) % size(), 0, &in, 1, RCC_ANY_SOURCE, RCC_ANY_TAG, RCC_INT32, nullptr));
    EXPECT_EQ(in, (rank() + size() - 1) % size());
  }
  RCC_EXPECT_OK(rcc_comm_destroy(doomed));
  RCC_EXPECT_OK(rcc_comm_destroy(other));
}

// ---- every collective on a child, exact integer results from world ranks ----

int64_t value(int world_rank, size_t i) {
  return static_cast<int64_t>(world_rank) * 1000 + static_cast<int64_t>(i) + 1;
}

void check_collectives(const Group& g) {
  const rcc_comm_t c = g.comm;
  const int m = g.size(), me = g.rank, w = g.world[static_cast<size_t>(me)];
  const auto W = [&](int r) { return g.world[static_cast<size_t>(r)]; };
  constexpr int64_t kUnset = -7;

  // allreduce: SUM (small and segmented), MAX, in place.
  for (size_t count : {size_t{33}, size_t{100003}}) {
    std::vector<int64_t> send(count), recv(count, kUnset);
    for (size_t i = 0; i < count; ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_allreduce(c, send.data(), recv.data(), count, RCC_INT64, RCC_SUM));
    for (size_t i = 0; i < count; ++i) {
      int64_t want = 0;
      for (int r = 0; r < m; ++r) want += value(W(r), i);
      ASSERT_EQ(recv[i], want) << "allreduce sum of " << count << ", element " << i;
    }
    RCC_ASSERT_OK(rcc_allreduce(c, send.data(), send.data(), count, RCC_INT64, RCC_MAX));
    const int top = *std::max_element(g.world.begin(), g.world.end());
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(send[i], value(top, i)) << "allreduce max in place, element " << i;
  }
  // broadcast from the last rank.
  {
    const int root = m - 1;
    std::vector<int64_t> buf(17, kUnset);
    if (me == root) {
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = value(w, i);
    }
    RCC_ASSERT_OK(rcc_broadcast(c, buf.data(), buf.size(), RCC_INT64, root));
    for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], value(W(root), i)) << "broadcast element " << i;
  }
  // reduce to the middle rank.
  {
    const int root = m / 2;
    std::vector<int64_t> send(9), recv(9, kUnset);
    for (size_t i = 0; i < send.size(); ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_reduce(c, send.data(), recv.data(), send.size(), RCC_INT64, RCC_SUM, root));
    if (me == root) {
      for (size_t i = 0; i < recv.size(); ++i) {
        int64_t want = 0;
        for (int r = 0; r < m; ++r) want += value(W(r), i);
        ASSERT_EQ(recv[i], want) << "reduce element " << i;
      }
    }
  }
  // allgather, 3 each.
  {
    std::vector<int64_t> send(3), recv(3 * static_cast<size_t>(m), kUnset);
    for (size_t i = 0; i < 3; ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_allgather(c, send.data(), recv.data(), 3, RCC_INT64));
    for (int r = 0; r < m; ++r) {
      for (size_t i = 0; i < 3; ++i) ASSERT_EQ(recv[r * 3 + i], value(W(r), i)) << "allgather block " << r;
    }
  }
  // reduce_scatter, 3 each: sendbuf[k] = w*100 + k.
  {
    std::vector<int64_t> send(3 * static_cast<size_t>(m)), recv(3, kUnset);
    for (size_t k = 0; k < send.size(); ++k) send[k] = static_cast<int64_t>(w) * 100 + static_cast<int64_t>(k);
    RCC_ASSERT_OK(rcc_reduce_scatter(c, send.data(), recv.data(), 3, RCC_INT64, RCC_SUM));
    int64_t world_sum = std::accumulate(g.world.begin(), g.world.end(), int64_t{0});
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(recv[i], world_sum * 100 + static_cast<int64_t>(m) * static_cast<int64_t>(me * 3 + i))
          << "reduce_scatter element " << i;
    }
  }
  // alltoall, 2 each: block for rank j is w*1000 + j*10 + i.
  {
    std::vector<int64_t> send(2 * static_cast<size_t>(m)), recv(send.size(), kUnset);
    for (int j = 0; j < m; ++j) {
      for (size_t i = 0; i < 2; ++i) send[j * 2 + i] = static_cast<int64_t>(w) * 1000 + j * 10 + i;
    }
    RCC_ASSERT_OK(rcc_alltoall(c, send.data(), recv.data(), 2, RCC_INT64));
    for (int j = 0; j < m; ++j) {
      for (size_t i = 0; i < 2; ++i) {
        ASSERT_EQ(recv[j * 2 + i], static_cast<int64_t>(W(j)) * 1000 + me * 10 + i) << "alltoall from " << j;
      }
    }
  }
  // gather to rank 0, scatter from the last rank.
  {
    std::vector<int64_t> send(2), recv(2 * static_cast<size_t>(m), kUnset);
    for (size_t i = 0; i < 2; ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_gather(c, send.data(), recv.data(), 2, RCC_INT64, 0));
    if (me == 0) {
      for (int r = 0; r < m; ++r) {
        for (size_t i = 0; i < 2; ++i) ASSERT_EQ(recv[r * 2 + i], value(W(r), i)) << "gather block " << r;
      }
    }
    const int root = m - 1;
    std::vector<int64_t> all(2 * static_cast<size_t>(m)), mine(2, kUnset);
    for (int j = 0; j < m; ++j) {
      for (size_t i = 0; i < 2; ++i) all[j * 2 + i] = static_cast<int64_t>(w) * 1000 + j * 10 + i;
    }
    RCC_ASSERT_OK(rcc_scatter(c, all.data(), mine.data(), 2, RCC_INT64, root));
    for (size_t i = 0; i < 2; ++i) ASSERT_EQ(mine[i], static_cast<int64_t>(W(root)) * 1000 + me * 10 + i) << "scatter";
  }
  RCC_ASSERT_OK(rcc_barrier(c));

  // allgatherv: rank r contributes W(r) % 3 elements (maybe none) at displs with gaps.
  {
    std::vector<size_t> counts(m), displs(m);
    size_t at = 1;
    for (int r = 0; r < m; ++r) {
      counts[r] = static_cast<size_t>(W(r) % 3);
      displs[r] = at;
      at += counts[r] + 2;
    }
    std::vector<int64_t> send(counts[me] + 1), recv(at, kUnset);
    for (size_t i = 0; i < send.size(); ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_allgatherv(c, send.data(), counts[me], recv.data(), counts.data(), displs.data(), RCC_INT64));
    std::vector<int64_t> want(at, kUnset);
    for (int r = 0; r < m; ++r) {
      for (size_t i = 0; i < counts[r]; ++i) want[displs[r] + i] = value(W(r), i);
    }
    for (size_t k = 0; k < at; ++k) ASSERT_EQ(recv[k], want[k]) << "allgatherv element " << k;
  }
  // alltoallv: cnt(a, b) = (W(a) + 2 W(b)) % 3 elements from a to b; send blocks in reverse order,
  // receive blocks with gaps.
  {
    auto cnt = [&](int a, int b) { return static_cast<size_t>((W(a) + 2 * W(b)) % 3); };
    std::vector<size_t> scounts(m), sdispls(m), rcounts(m), rdispls(m);
    size_t s_at = 0, r_at = 0;
    for (int j = m - 1; j >= 0; --j) {
      scounts[j] = cnt(me, j);
      sdispls[j] = s_at;
      s_at += scounts[j];
    }
    for (int j = 0; j < m; ++j) {
      rcounts[j] = cnt(j, me);
      rdispls[j] = r_at + 1;
      r_at += rcounts[j] + 1;
    }
    r_at += 1;
    std::vector<int64_t> send(s_at + 1, kUnset), recv(r_at, kUnset);
    for (int j = 0; j < m; ++j) {
      for (size_t i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = static_cast<int64_t>(w) * 1000 + W(j) * 10 + i;
    }
    RCC_ASSERT_OK(rcc_alltoallv(c, send.data(), scounts.data(), sdispls.data(), recv.data(), rcounts.data(),
                                rdispls.data(), RCC_INT64));
    std::vector<int64_t> want(r_at, kUnset);
    for (int j = 0; j < m; ++j) {
      for (size_t i = 0; i < rcounts[j]; ++i) want[rdispls[j] + i] = static_cast<int64_t>(W(j)) * 1000 + w * 10 + i;
    }
    for (size_t k = 0; k < r_at; ++k) ASSERT_EQ(recv[k], want[k]) << "alltoallv element " << k;
  }
  // gatherv to the middle rank: 1 + W(r) % 2 elements each, blocks in reverse rank order with gaps.
  {
    const int root = m / 2;
    std::vector<size_t> counts(m), displs(m);
    size_t at = 0;
    for (int r = m - 1; r >= 0; --r) {
      counts[r] = 1 + static_cast<size_t>(W(r) % 2);
      displs[r] = at;
      at += counts[r] + 1;
    }
    std::vector<int64_t> send(counts[me]), recv(at, kUnset);
    for (size_t i = 0; i < send.size(); ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_gatherv(c, send.data(), counts[me], recv.data(), counts.data(), displs.data(), RCC_INT64, root));
    if (me == root) {
      std::vector<int64_t> want(at, kUnset);
      for (int r = 0; r < m; ++r) {
        for (size_t i = 0; i < counts[r]; ++i) want[displs[r] + i] = value(W(r), i);
      }
      for (size_t k = 0; k < at; ++k) ASSERT_EQ(recv[k], want[k]) << "gatherv element " << k;
    } else {
      for (size_t k = 0; k < at; ++k) ASSERT_EQ(recv[k], kUnset) << "gatherv wrote a non-root's buffer";
    }
  }
  // scatterv from rank 0: 1 + W(r) % 3 elements to rank r, blocks with gaps.
  {
    const int root = 0;
    std::vector<size_t> counts(m), displs(m);
    size_t at = 2;
    for (int r = 0; r < m; ++r) {
      counts[r] = 1 + static_cast<size_t>(W(r) % 3);
      displs[r] = at;
      at += counts[r] + 3;
    }
    std::vector<int64_t> send(at, kUnset), recv(counts[me] + 1, kUnset);
    if (me == root) {
      for (int r = 0; r < m; ++r) {
        for (size_t i = 0; i < counts[r]; ++i) send[displs[r] + i] = static_cast<int64_t>(w) * 1000 + W(r) * 10 + i;
      }
    }
    RCC_ASSERT_OK(rcc_scatterv(c, send.data(), counts.data(), displs.data(), recv.data(), counts[me], RCC_INT64, root));
    for (size_t i = 0; i < counts[me]; ++i) {
      ASSERT_EQ(recv[i], static_cast<int64_t>(W(root)) * 1000 + w * 10 + i) << "scatterv element " << i;
    }
    ASSERT_EQ(recv[counts[me]], kUnset) << "scatterv wrote past recvcount";
  }
  // reduce_scatterv: rank r gets W(r) % 3 elements (maybe none): the sum of sendbuf[k] = w*100 + k
  // at its offset.
  {
    std::vector<size_t> counts(m);
    size_t total = 0, offset = 0;
    for (int r = 0; r < m; ++r) {
      counts[r] = static_cast<size_t>(W(r) % 3);
      if (r < me) offset += counts[r];
      total += counts[r];
    }
    std::vector<int64_t> send(total + 1), recv(counts[me] + 1, kUnset);
    for (size_t k = 0; k < send.size(); ++k) send[k] = static_cast<int64_t>(w) * 100 + static_cast<int64_t>(k);
    RCC_ASSERT_OK(rcc_reduce_scatterv(c, send.data(), recv.data(), counts.data(), RCC_INT64, RCC_SUM));
    const int64_t world_sum = std::accumulate(g.world.begin(), g.world.end(), int64_t{0});
    for (size_t i = 0; i < counts[me]; ++i) {
      ASSERT_EQ(recv[i], world_sum * 100 + static_cast<int64_t>(m) * static_cast<int64_t>(offset + i))
          << "reduce_scatterv element " << i;
    }
    ASSERT_EQ(recv[counts[me]], kUnset) << "reduce_scatterv wrote past recvcounts[rank]";
  }
  // scan and exscan (SUM, and MAX for scan).
  {
    std::vector<int64_t> send(5), recv(5, kUnset);
    for (size_t i = 0; i < 5; ++i) send[i] = value(w, i);
    RCC_ASSERT_OK(rcc_scan(c, send.data(), recv.data(), 5, RCC_INT64, RCC_SUM));
    for (size_t i = 0; i < 5; ++i) {
      int64_t want = 0;
      for (int r = 0; r <= me; ++r) want += value(W(r), i);
      ASSERT_EQ(recv[i], want) << "scan element " << i;
    }
    RCC_ASSERT_OK(rcc_scan(c, send.data(), recv.data(), 5, RCC_INT64, RCC_MAX));
    for (size_t i = 0; i < 5; ++i) {
      int top = W(0);
      for (int r = 0; r <= me; ++r) top = std::max(top, W(r));
      ASSERT_EQ(recv[i], value(top, i)) << "scan max element " << i;
    }
    std::fill(recv.begin(), recv.end(), kUnset);
    RCC_ASSERT_OK(rcc_exscan(c, send.data(), recv.data(), 5, RCC_INT64, RCC_SUM));
    for (size_t i = 0; i < 5; ++i) {
      int64_t want = kUnset;
      if (me > 0) {
        want = 0;
        for (int r = 0; r < me; ++r) want += value(W(r), i);
      }
      ASSERT_EQ(recv[i], want) << "exscan element " << i << (me == 0 ? " (rank 0's must stay untouched)" : "");
    }
    // Rank 0 may pass NULL.
    RCC_ASSERT_OK(rcc_exscan(c, send.data(), me == 0 ? nullptr : recv.data(), 5, RCC_INT64, RCC_SUM));
  }
  // Nonblocking ones in flight together, waited for in reverse.
  {
    int64_t mine = w, sum = kUnset, prefix = kUnset;
    std::vector<size_t> counts(m, 1), displs(m);
    std::iota(displs.begin(), displs.end(), size_t{0});
    std::vector<int64_t> all(m, kUnset);
    rcc_request_t requests[3] = {};
    RCC_ASSERT_OK(rcc_iallreduce(c, &mine, &sum, 1, RCC_INT64, RCC_SUM, &requests[0]));
    RCC_ASSERT_OK(rcc_iallgatherv(c, &mine, 1, all.data(), counts.data(), displs.data(), RCC_INT64, &requests[1]));
    RCC_ASSERT_OK(rcc_iscan(c, &mine, &prefix, 1, RCC_INT64, RCC_SUM, &requests[2]));
    for (int i = 2; i >= 0; --i) RCC_ASSERT_OK(rcc_wait(requests[i]));
    EXPECT_EQ(sum, std::accumulate(g.world.begin(), g.world.end(), int64_t{0}));
    EXPECT_EQ(prefix, std::accumulate(g.world.begin(), g.world.begin() + me + 1, int64_t{0}));
    for (int r = 0; r < m; ++r) EXPECT_EQ(all[r], W(r));
  }
}

TEST(SplitCollectives, WorldBaseline) { check_collectives(world_group()); }

TEST(SplitCollectives, ParityChildren) {
  Group child;
  split_and_check(
      world_group(), [](int r) { return r % 2; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  check_collectives(child);
  destroy(child);
}

TEST(SplitCollectives, ModThreeReversedChildren) {
  Group child;
  split_and_check(
      world_group(), [](int r) { return r % 3; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  check_collectives(child);
  destroy(child);
}

TEST(SplitCollectives, NestedChildAndDup) {
  Group child, grandchild;
  split_and_check(
      world_group(), [](int r) { return r % 2; }, [](int r) { return -r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  split_and_check(
      child, [](int) { return 0; }, [](int r) { return (r * 7) % 5; }, &grandchild);
  ASSERT_FALSE(HasFatalFailure());
  check_collectives(grandchild);
  ASSERT_FALSE(HasFatalFailure());
  Group dup = child;
  dup.comm = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(child.comm, &dup.comm));
  check_collectives(dup);
  destroy(dup);
  destroy(grandchild);
  destroy(child);
}

// The message-based allreduce algorithms on a parity child, forced one by one.
TEST(SplitCollectives, ForcedAllreduceAlgorithmsOnParityChild) {
  Group child;
  split_and_check(
      world_group(), [](int r) { return r % 2; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  int64_t want_small = std::accumulate(child.world.begin(), child.world.end(), int64_t{0});
  for (const char* algo : {"allreduce:ring", "allreduce:tree", "allreduce:recursive_doubling"}) {
    setenv("RCC_ALGO", algo, 1);
    for (size_t count : {size_t{1}, size_t{5}, size_t{70001}}) {
      std::vector<int64_t> send(count, rank()), recv(count, -7);
      rcc_status_t status = rcc_allreduce(child.comm, send.data(), recv.data(), count, RCC_INT64, RCC_SUM);
      EXPECT_EQ(status, RCC_SUCCESS) << algo << ": " << rcc_last_error();
      EXPECT_EQ(recv.front(), want_small) << algo << ", " << count;
      EXPECT_EQ(recv.back(), want_small) << algo << ", " << count;
    }
    unsetenv("RCC_ALGO");
  }
  destroy(child);
}

// ---- many communicators ----

TEST(ManyComms, FiftyDupsOneAtATime) {
  for (int i = 0; i < 50; ++i) {
    rcc_comm_t dup = nullptr;
    RCC_ASSERT_OK(rcc_comm_dup(comm(), &dup));
    int64_t value = rank() + i, sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(dup, &value, &sum, 1, RCC_INT64, RCC_SUM));
    ASSERT_EQ(sum, static_cast<int64_t>(size()) * (size() - 1) / 2 + static_cast<int64_t>(size()) * i) << "dup " << i;
    RCC_ASSERT_OK(rcc_comm_destroy(dup));
  }
}

TEST(ManyComms, FiftyAliveDestroyedInAnotherOrder) {
  constexpr int kCount = 50;
  std::vector<rcc_comm_t> dups(kCount, nullptr);
  std::vector<bool> reversed(kCount, false);  // ranked in reverse world order
  for (int i = 0; i < kCount; ++i) {
    reversed[i] = i % 5 == 4 || (i % 3 == 2 && reversed[i - 1]);
    // Every fifth is a split (all ranks, reversed) instead of a dup.
    if (i % 5 == 4) {
      RCC_ASSERT_OK(rcc_comm_split(i % 2 == 0 ? comm() : dups[i - 1], 0, -rank(), &dups[i]));
    } else {
      RCC_ASSERT_OK(rcc_comm_dup(i % 3 == 2 ? dups[i - 1] : comm(), &dups[i]));
    }
    ASSERT_NE(dups[i], nullptr);
  }
  // Traffic on each, newest first: p2p with the same tag on every one, then an allreduce.
  std::vector<int32_t> in(kCount, -1), out(kCount);
  std::vector<rcc_request_t> requests;
  for (int i = kCount - 1; i >= 0; --i) {
    int r = -1, n = -1;
    RCC_ASSERT_OK(rcc_comm_rank(dups[i], &r));
    RCC_ASSERT_OK(rcc_comm_size(dups[i], &n));
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_irecv(dups[i], &in[i], 1, RCC_INT32, (r + n - 1) % n, 1, &request));
    requests.push_back(request);
    out[i] = i * 1000 + rank();
    RCC_ASSERT_OK(rcc_isend(dups[i], &out[i], 1, RCC_INT32, (r + 1) % n, 1, &request));
    requests.push_back(request);
  }
  RCC_ASSERT_OK(rcc_waitall(static_cast<int>(requests.size()), requests.data()));
  for (int i = 0; i < kCount; ++i) {
    // The left neighbour in world order for a dup of the world, in reversed order for a split
    // (key -rank) and for a dup of one.
    const int left_world = reversed[i] ? (rank() + 1) % size() : (rank() + size() - 1) % size();
    EXPECT_EQ(in[i], i * 1000 + left_world) << "communicator " << i;
  }
  for (int i = kCount - 1; i >= 0; i -= 3) {
    int64_t value = i, sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(dups[i], &value, &sum, 1, RCC_INT64, RCC_SUM));
    EXPECT_EQ(sum, static_cast<int64_t>(i) * size());
  }
  // Destroyed in the order 0, 7, 14, ... (mod 50): parents before some of their children.
  for (int k = 0; k < kCount; ++k) {
    const int i = (k * 7) % kCount;
    RCC_ASSERT_OK(rcc_comm_destroy(dups[i]));
    dups[i] = nullptr;
    // The ones left still work (every tenth step, to keep it short).
    if (k % 10 == 9) {
      for (int j = 0; j < kCount; ++j) {
        if (dups[j] == nullptr) continue;
        RCC_ASSERT_OK(rcc_barrier(dups[j]));
      }
    }
  }
  rcc_comm_t again = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &again));
  RCC_ASSERT_OK(rcc_barrier(again));
  RCC_ASSERT_OK(rcc_comm_destroy(again));
}

TEST(ManyComms, ChildrenOutliveTheirParent) {
  Group parent = world_group();
  parent.comm = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &parent.comm));
  Group child, grandchild;
  split_and_check(
      parent, [](int r) { return r % 2; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  grandchild = child;
  grandchild.comm = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(child.comm, &grandchild.comm));
  destroy(parent);
  for (Group* g : {&child, &grandchild}) {
    int64_t value = rank(), sum = -1;
    RCC_ASSERT_OK(rcc_allreduce(g->comm, &value, &sum, 1, RCC_INT64, RCC_SUM));
    EXPECT_EQ(sum, std::accumulate(g->world.begin(), g->world.end(), int64_t{0}));
    int32_t out = rank(), in = -1;
    rcc_msg_info_t info{-5, -5, 0};
    RCC_ASSERT_OK(rcc_sendrecv(g->comm, &out, 1, g->right(), 2, &in, 1, RCC_ANY_SOURCE, RCC_ANY_TAG, RCC_INT32, &info));
    EXPECT_EQ(in, g->world[static_cast<size_t>(g->left())]);
    EXPECT_EQ(info.source, g->left());
    if (g == &child) destroy(child);  // then the grandchild alone
  }
  check_collectives(grandchild);
  destroy(grandchild);
}

// Two threads, each on its own dup, allreduces and p2p (the same tags) at the same time.
TEST(Threads, TwoThreadsTwoCommunicators) {
  constexpr int kThreads = 2;
  constexpr int kIterations = 200;
  rcc_comm_t dups[kThreads] = {};
  for (auto& d : dups) RCC_ASSERT_OK(rcc_comm_dup(comm(), &d));
  std::atomic<int> failures{0};
  std::string first_error[kThreads];
  auto work = [&](int t) {
    const rcc_comm_t c = dups[t];
    const int right = (rank() + 1) % size(), left = (rank() + size() - 1) % size();
    auto fail = [&](const std::string& what) {
      if (first_error[t].empty()) first_error[t] = what + ": " + rcc_last_error();
      ++failures;
    };
    for (int i = 0; i < kIterations && first_error[t].empty(); ++i) {
      std::vector<int64_t> values(i % 3 == 0 ? 20000 : 3, (rank() + 1) * (i + 1) * (t + 1)), sums(values.size(), -1);
      if (rcc_allreduce(c, values.data(), sums.data(), values.size(), RCC_INT64, RCC_SUM) != RCC_SUCCESS) {
        fail("allreduce " + std::to_string(i));
        break;
      }
      const int64_t want = static_cast<int64_t>(size()) * (size() + 1) / 2 * (i + 1) * (t + 1);
      if (sums.front() != want || sums.back() != want) fail("allreduce " + std::to_string(i) + " result");
      int32_t out[3] = {t, i, rank()}, in[3] = {-1, -1, -1};
      rcc_msg_info_t info{};
      if (rcc_sendrecv(c, out, 3, right, 9, in, 3, i % 2 ? RCC_ANY_SOURCE : left, i % 2 ? RCC_ANY_TAG : 9, RCC_INT32,
                       &info) != RCC_SUCCESS) {
        fail("sendrecv " + std::to_string(i));
        break;
      }
      if (in[0] != t || in[1] != i || in[2] != left || info.source != left || info.tag != 9) {
        fail("sendrecv " + std::to_string(i) + " got (" + std::to_string(in[0]) + "," + std::to_string(in[1]) + "," +
             std::to_string(in[2]) + ") from " + std::to_string(info.source));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(first_error[t], "") << "thread " << t;
  EXPECT_EQ(failures.load(), 0);
  for (auto& d : dups) RCC_EXPECT_OK(rcc_comm_destroy(d));
}

// ---- argument errors ----

TEST(SplitErrors, BadColorAndNullOutputs) {
  rcc_comm_t made = nullptr;
  for (int color : {-1, -5, INT_MIN, RCC_UNDEFINED - 1, RCC_UNDEFINED + 1}) {
    EXPECT_EQ(rcc_comm_split(comm(), color, 0, &made), RCC_ERR_INVALID_ARGUMENT) << "color " << color;
    EXPECT_NE(std::strstr(rcc_last_error(), "color"), nullptr) << rcc_last_error();
    EXPECT_EQ(made, nullptr) << "output written on failure";
  }
  EXPECT_EQ(rcc_comm_split(comm(), 0, 0, nullptr), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "newcomm"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_comm_split(nullptr, 0, 0, &made), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "comm"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_comm_dup(comm(), nullptr), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "newcomm"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_comm_dup(nullptr, &made), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(made, nullptr);
  // The refused calls left nothing half done: a real split and a collective on it still work.
  Group child;
  split_and_check(
      world_group(), [](int r) { return r % 2; }, [](int r) { return r; }, &child);
  ASSERT_FALSE(HasFatalFailure());
  RCC_ASSERT_OK(rcc_barrier(child.comm));
  destroy(child);
  RCC_ASSERT_OK(rcc_barrier(comm()));
}

}  // namespace
