// Connections on demand (RCC_CONNECT=lazy, the default where the backend can): a rank connects to
// a peer at the first message to or from it. Random traffic among many ranks with random peers,
// tags and sizes (eager and rendezvous), wildcard receives from ranks never met, both sides of a
// pair connecting at once, sub-communicators; and how many peers each rank ends up connected to
// (rcc_comm_footprint), which must be the peers it talked to, not the job. The same program runs
// with RCC_CONNECT=eager, where every rank is connected to every peer from the start.
//
// The tests run in the order written: the first ones rely on no rank having talked to any peer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

bool eager_mode() {
  // RCC_CONNECT=lazy asks for connections at first use (the default is eager).
  const char* connect = std::getenv("RCC_CONNECT");
  if (connect == nullptr || std::string(connect) != "lazy") return true;
  // Backends that cannot connect on demand (verbs) connect every peer at set-up.
  const char* transport = nullptr;
  rcc_comm_transport(comm(), &transport);
  return transport != nullptr && std::string(transport) != "ucx";
}

rcc_footprint_t footprint() {
  rcc_footprint_t held{};
  EXPECT_EQ(rcc_comm_footprint(comm(), &held), RCC_SUCCESS) << rcc_last_error();
  return held;
}

// The peers this rank has talked to so far, to compare with what rcc says it connected to.
std::set<int>& talked_to() {
  static std::set<int> peers;
  return peers;
}

uint8_t pattern(int sender, int receiver, int tag, size_t i) {
  return static_cast<uint8_t>(i * 131u + static_cast<unsigned>(sender) * 977u + static_cast<unsigned>(receiver) * 61u +
                              static_cast<unsigned>(tag) * 29u + (i >> 11));
}

std::vector<uint8_t> message(int sender, int receiver, int tag, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) out[i] = pattern(sender, receiver, tag, i);
  return out;
}

void barrier() { ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS) << rcc_last_error(); }

TEST(LazyConnect, NothingConnectedBeforeTheFirstMessage) {
  const rcc_footprint_t held = footprint();
  EXPECT_EQ(held.job_size, size());
  if (eager_mode()) {
    EXPECT_EQ(held.connected_peers, size() - 1);
  } else {
    // Set-up (host map, shared-memory segment, levels) goes through the rendezvous and the segment.
    EXPECT_EQ(held.connected_peers, 0) << "connected before any message";
  }
  EXPECT_EQ(rcc_comm_footprint(comm(), nullptr), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rcc_last_error()).find("footprint"), std::string::npos) << rcc_last_error();
}

// Ranks r and size-1-r send to each other at the same moment, each its first message to the other.
TEST(LazyConnect, BothSidesConnectAtOnce) {
  const int partner = size() - 1 - rank();
  if (partner == rank()) {
    barrier();
    GTEST_SKIP() << "the middle rank of an odd job has no partner";
  }
  for (size_t bytes : {size_t{8}, size_t{70001}}) {
    const std::vector<uint8_t> out = message(rank(), partner, 7, bytes);
    std::vector<uint8_t> in(bytes);
    RCC_ASSERT_OK(
        rcc_sendrecv(comm(), out.data(), bytes, partner, 7, in.data(), bytes, partner, 7, RCC_UINT8, nullptr));
    EXPECT_EQ(in, message(partner, rank(), 7, bytes)) << bytes << " bytes from rank " << partner;
  }
  talked_to().insert(partner);
  barrier();  // no rank runs ahead into the next test's messages before the count below
  if (!eager_mode()) {
    // The partner, and at most the barrier's partners (none through shared memory).
    EXPECT_GE(footprint().connected_peers, 1);
    EXPECT_LE(footprint().connected_peers, 1 + 2 * static_cast<int>(std::ceil(std::log2(size()))));
  }
}

// Rank 0 takes one message from every other rank through wildcard receives; most of them never
// sent it anything before, and rank 0 has not connected to them.
TEST(LazyConnect, AnySourceFromRanksNeverMet) {
  constexpr int kTag = 11;
  if (rank() == 0) {
    std::vector<bool> seen(static_cast<size_t>(size()), false);
    for (int i = 1; i < size(); ++i) {
      int32_t got = -1;
      rcc_msg_info_t info{};
      RCC_ASSERT_OK(rcc_recv_info(comm(), &got, 1, RCC_INT32, RCC_ANY_SOURCE, kTag, &info));
      ASSERT_EQ(got, info.source) << "a message's body names its sender";
      ASSERT_GT(info.source, 0);
      EXPECT_FALSE(seen[static_cast<size_t>(info.source)]) << "rank " << info.source << " twice";
      seen[static_cast<size_t>(info.source)] = true;
      talked_to().insert(info.source);
    }
  } else {
    const int32_t me = rank();
    RCC_ASSERT_OK(rcc_send(comm(), &me, 1, RCC_INT32, 0, kTag));
    talked_to().insert(0);
  }
  barrier();
}

// Rounds of random pairs with random tags and sizes on both sides of the eager limit, the same
// plan on every rank (one seed); receives by source or by wildcard, posted before or after the
// sends.
TEST(LazyConnect, RandomTrafficArrivesIntact) {
  constexpr int kRounds = 12;
  const size_t sizes[] = {0, 1, 100, 8192, 8193, 70001, 300000};
  std::mt19937 plan(20261207);
  for (int round = 0; round < kRounds; ++round) {
    struct Transfer {
      int from, to, tag;
      size_t bytes;
      bool wildcard;
    };
    std::vector<Transfer> transfers;
    const int count = size() * 2;
    for (int i = 0; i < count; ++i) {
      Transfer t{};
      t.from = static_cast<int>(plan() % static_cast<unsigned>(size()));
      t.to = static_cast<int>(plan() % static_cast<unsigned>(size()));
      t.tag = 100 + round * 1000 + i;  // unique: a wildcard source still matches exactly one message
      t.bytes = sizes[plan() % std::size(sizes)];
      t.wildcard = plan() % 3 == 0;
      transfers.push_back(t);
    }
    const bool receives_first = round % 2 == 0;
    std::vector<rcc_request_t> requests;
    std::vector<std::vector<uint8_t>> outgoing, incoming;
    std::vector<const Transfer*> received;
    outgoing.reserve(transfers.size());
    incoming.reserve(transfers.size());
    auto post_receives = [&] {
      for (const Transfer& t : transfers) {
        if (t.to != rank()) continue;
        incoming.emplace_back(t.bytes + 16);  // room to spare: a wrong match shows as a wrong length
        received.push_back(&t);
        rcc_request_t request = nullptr;
        RCC_ASSERT_OK(rcc_irecv(comm(), incoming.back().data(), incoming.back().size(), RCC_UINT8,
                                t.wildcard ? RCC_ANY_SOURCE : t.from, t.tag, &request));
        requests.push_back(request);
        if (t.from != rank()) talked_to().insert(t.from);
      }
    };
    if (receives_first) post_receives();
    for (const Transfer& t : transfers) {
      if (t.from != rank()) continue;
      outgoing.push_back(message(t.from, t.to, t.tag, t.bytes));
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(rcc_isend(comm(), outgoing.back().data(), t.bytes, RCC_UINT8, t.to, t.tag, &request));
      requests.push_back(request);
      if (t.to != rank()) talked_to().insert(t.to);
    }
    if (!receives_first) post_receives();
    RCC_ASSERT_OK(rcc_waitall(static_cast<int>(requests.size()), requests.data()));
    for (size_t i = 0; i < received.size(); ++i) {
      const Transfer& t = *received[i];
      std::vector<uint8_t> want = message(t.from, t.to, t.tag, t.bytes);
      want.resize(t.bytes + 16, 0);
      ASSERT_TRUE(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(t.bytes), incoming[i].begin()))
          << "round " << round << ": " << t.bytes << " bytes from rank " << t.from << " tag " << t.tag;
    }
    barrier();
  }
  const rcc_footprint_t held = footprint();
  if (eager_mode()) {
    EXPECT_EQ(held.connected_peers, size() - 1);
  } else {
    // Connected to the peers it sent to or heard from (the barriers go through shared memory, or
    // through the transport's O(log N) partners).
    std::set<int> peers = talked_to();
    EXPECT_GE(held.connected_peers, 0);
    EXPECT_LE(held.connected_peers, static_cast<int>(peers.size()) + 2 * static_cast<int>(std::ceil(std::log2(size()))))
        << "connected to more peers than it talked to";
  }
}

// Sub-communicators share the job's connections: a ring in each half, then an allreduce in it.
TEST(LazyConnect, SubCommunicatorsConnectTheirOwnPeers) {
  rcc_comm_t half = nullptr;
  RCC_ASSERT_OK(rcc_comm_split(comm(), rank() % 2, rank(), &half));
  int sub_rank = 0, sub_size = 0;
  RCC_ASSERT_OK(rcc_comm_rank(half, &sub_rank));
  RCC_ASSERT_OK(rcc_comm_size(half, &sub_size));
  const int right = (sub_rank + 1) % sub_size, left = (sub_rank + sub_size - 1) % sub_size;
  int64_t out = 1000 * rank() + 5, in = -1;
  RCC_ASSERT_OK(rcc_sendrecv(half, &out, 1, right, 3, &in, 1, left, 3, RCC_INT64, nullptr));
  const int left_world = (sub_rank == 0 ? sub_size - 1 : sub_rank - 1) * 2 + rank() % 2;
  EXPECT_EQ(in, 1000 * left_world + 5);
  int64_t sum = rank(), want = 0;
  for (int r = rank() % 2; r < size(); r += 2) want += r;
  RCC_ASSERT_OK(rcc_allreduce(half, &sum, &sum, 1, RCC_INT64, RCC_SUM));
  EXPECT_EQ(sum, want);
  RCC_ASSERT_OK(rcc_comm_destroy(half));
  barrier();
}

}  // namespace

namespace {

// A job of many ranks (CI runs it at 256 with RCC_SHM=0, so that the collectives go through the
// transport): a small allreduce connects each rank to O(log N) peers; an alltoall then connects
// every pair, and the eager space that costs stays small (a slot or two per peer is touched).
TEST(Scale, SmallCollectivesConnectFewPeers) {
  const int n = size();
  const int before = footprint().connected_peers;  // earlier tests' peers, when run after them
  int64_t values[8];
  for (int i = 0; i < 8; ++i) values[i] = int64_t{rank()} * 8 + i;
  RCC_ASSERT_OK(rcc_allreduce(comm(), values, values, 8, RCC_INT64, RCC_SUM));
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(values[i], int64_t{n} * (n - 1) / 2 * 8 + int64_t{n} * i) << "element " << i;
  }
  const rcc_footprint_t after_allreduce = footprint();
  const int log_n = static_cast<int>(std::ceil(std::log2(n)));
  if (!eager_mode()) {
    EXPECT_LE(after_allreduce.connected_peers - before, 2 * log_n) << "a small allreduce at " << n << " ranks";
  }
  std::vector<int32_t> out(static_cast<size_t>(n)), in(static_cast<size_t>(n), -1);
  for (int peer = 0; peer < n; ++peer) out[static_cast<size_t>(peer)] = rank() * 100000 + peer;
  RCC_ASSERT_OK(rcc_alltoall(comm(), out.data(), in.data(), 1, RCC_INT32));
  for (int peer = 0; peer < n; ++peer) {
    ASSERT_EQ(in[static_cast<size_t>(peer)], peer * 100000 + rank()) << "from rank " << peer;
  }
  RCC_ASSERT_OK(rcc_barrier(comm()));
  const rcc_footprint_t after_alltoall = footprint();
  if (rank() == 0) {
    std::printf(
        "scale: %d ranks: connected to %d peers after a small allreduce, %d after an alltoall; eager "
        "slots %zu KiB resident\n",
        n, after_allreduce.connected_peers, after_alltoall.connected_peers, after_alltoall.eager_bytes >> 10);
  }
  EXPECT_LE(after_alltoall.connected_peers, n - 1);
}

}  // namespace
