// Larger eager slots toward peers on other hosts (p2p/slot_layout.h). The layout: every rank's
// areas hold one run of slots per peer, none overlapping, sized by whether the peer shares its
// host, and a sender finds its slots in the receiver's area where the receiver put them (uneven
// hosts too); the far limit shrinks to fit RCC_EAGER_NET_MEMORY. The engine: two in-process ranks
// over real UCX TCP, told they run on different hosts, send up to RCC_EAGER_LIMIT_NET eagerly (a
// headed slot message) and one byte more by rendezvous, with every byte checked; told they share
// a host, they keep RCC_EAGER_LIMIT.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "bootstrap/hosts.h"
#include "bootstrap/store.h"
#include "bootstrap/store_rendezvous.h"
#include "p2p/engine.h"
#include "p2p/slot_layout.h"
#include "rank_threads.h"

namespace {

using rcc::p2p::far_eager_limit;
using rcc::p2p::max_far_peers;
using rcc::p2p::slot_geometry;
using rcc::p2p::SlotLayout;

constexpr size_t kMiB = size_t{1} << 20;

// The host map of ranks on the hosts in host_of (host h: identity "h").
rcc::bootstrap::HostMap map_of(const std::vector<int>& host_of) {
  std::vector<rcc::bootstrap::RankPlace> places(host_of.size());
  for (size_t r = 0; r < host_of.size(); ++r) places[r].identity = std::to_string(host_of[r]);
  return rcc::bootstrap::HostMap::of(std::move(places));
}

void check_layout(const std::vector<int>& host_of, size_t near_limit, size_t far_limit) {
  const uint32_t slots = 32;
  const SlotLayout layout(map_of(host_of), slots, slot_geometry(near_limit), slot_geometry(far_limit));
  const int size = static_cast<int>(host_of.size());
  for (int owner = 0; owner < size; ++owner) {
    size_t expected_offset = 0;  // runs follow each other in rank order, without gaps
    for (int peer = 0; peer < size; ++peer) {
      if (peer == owner) continue;
      const bool far = host_of[static_cast<size_t>(peer)] != host_of[static_cast<size_t>(owner)];
      EXPECT_EQ(layout.far(owner, peer), far && far_limit > near_limit) << owner << " -> " << peer;
      EXPECT_EQ(layout.far(owner, peer), layout.far(peer, owner));
      const size_t run = slots * layout.geometry(owner, peer).slot_bytes;
      EXPECT_EQ(layout.geometry(owner, peer).slot_bytes, layout.geometry(peer, owner).slot_bytes);
      EXPECT_EQ(layout.geometry(owner, peer).eager_limit, far && far_limit > near_limit ? far_limit : near_limit);
      EXPECT_EQ(layout.offset(owner, peer), expected_offset) << "owner " << owner << ", peer " << peer;
      expected_offset += run;
    }
    EXPECT_EQ(layout.area_bytes(owner), expected_offset) << "owner " << owner;
  }
}

TEST(SlotLayout, RunsFollowEachOtherSizedByHost) {
  check_layout({0}, 8192, 65536);
  check_layout({0, 0, 0, 0}, 8192, 65536);           // one host: all near
  check_layout({0, 1}, 8192, 65536);                 // 1 + 1
  check_layout({0, 0, 0, 1}, 8192, 65536);           // 3 + 1
  check_layout({0, 0, 1, 1, 2}, 8192, 65536);        // 2 + 2 + 1
  check_layout({0, 1, 0, 1, 2, 2, 0}, 8192, 65536);  // interleaved ranks
  check_layout({0, 0, 1, 1}, 8192, 8192);            // no far class
  check_layout({0, 0, 0, 0, 1, 1, 1, 1}, 16384, 131072);
}

TEST(SlotLayout, SlotsHoldTheLargestMessageWithItsHeaderTailAndAnchor) {
  for (size_t limit : {size_t{1024}, size_t{8192}, size_t{8193}, size_t{65536}}) {
    const auto geometry = slot_geometry(limit);
    EXPECT_EQ(geometry.eager_limit, limit);
    EXPECT_EQ(geometry.slot_bytes % 64, 0u);
    EXPECT_GE(geometry.slot_bytes, rcc::p2p::tail_offset(limit) + rcc::p2p::kTailBytes + rcc::p2p::kAnchorReserve);
    EXPECT_LT(geometry.slot_bytes, rcc::p2p::tail_offset(limit) + rcc::p2p::kTailBytes + rcc::p2p::kAnchorReserve + 64);
  }
}

TEST(SlotLayout, FarPeersCountedOnTheFullestSide) {
  EXPECT_EQ(max_far_peers(map_of({0, 0, 0, 0})), 0);
  EXPECT_EQ(max_far_peers(map_of({0, 1})), 1);
  EXPECT_EQ(max_far_peers(map_of({0, 0, 0, 1})), 3);  // the rank alone on host 1 has three
  EXPECT_EQ(max_far_peers(map_of({0, 0, 1, 1, 2})), 4);
  EXPECT_EQ(max_far_peers(map_of({0, 0, 0, 0, 1, 1, 1, 1})), 4);
}

TEST(SlotLayout, FarLimitFitsTheCopyAndTheMemoryBudget) {
  const size_t copy = 131072, budget = 64 * kMiB;
  // 2 x 4 ranks: 4 far peers x 2 areas x 32 slots of 64 KiB (and a header) fit 64 MiB.
  EXPECT_EQ(far_eager_limit(8192, 65536, copy, budget, 32, 4), 65536u);
  // A limit the backend's copy cannot hold whole with header and tail is cut below it.
  const size_t cut = far_eager_limit(8192, 131072, copy, budget, 32, 4);
  EXPECT_LT(cut, copy);
  EXPECT_LE(slot_geometry(cut).slot_bytes, copy + 64);
  // Many peers on other hosts: halved until it fits, never below RCC_EAGER_LIMIT.
  const size_t halved = far_eager_limit(8192, 65536, copy, budget, 32, 20);
  EXPECT_EQ(halved, 32768u);
  EXPECT_LE(2 * 32 * slot_geometry(halved).slot_bytes * 20, budget);
  EXPECT_EQ(far_eager_limit(8192, 65536, copy, budget, 32, 1000), 8192u);
  // A zero-copy backend, one host, or a limit no larger than RCC_EAGER_LIMIT: no far class.
  EXPECT_EQ(far_eager_limit(8192, 65536, 0, budget, 32, 4), 8192u);
  EXPECT_EQ(far_eager_limit(8192, 65536, copy, budget, 32, 0), 8192u);
  EXPECT_EQ(far_eager_limit(16384, 8192, copy, budget, 32, 4), 16384u);
}

// Two engines over UCX TCP in one process, told they run on the hosts in host_of.
struct EngineRun {
  rcc::p2p::EngineCounters counters[2];
  bool ok[2] = {false, false};
};

template <typename Body>
EngineRun run_two(const std::vector<int>& host_of, const Body& body) {
  EngineRun run;
  transport_test::LoopbackStore loopback;
  if (!loopback.start()) return run;
  const rcc::bootstrap::HostMap hosts = map_of(host_of);
  auto rank_body = [&](int rank) {
    std::unique_ptr<rcc::bootstrap::StoreClient> store = loopback.client();
    ASSERT_NE(store, nullptr);
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    options.host_of = host_of;
    std::unique_ptr<rcc::transport::Transport> transport;
    ASSERT_EQ(rcc::transport::create_transport(options, &transport), RCC_SUCCESS) << rcc::last_error();
    ASSERT_STREQ(transport->name(), "ucx");
    std::unique_ptr<rcc::p2p::Engine> engine;
    rcc::bootstrap::StoreExchange meet(*store, "far", rank, 2);
    ASSERT_EQ(rcc::p2p::Engine::create(std::move(transport), meet, &hosts, 60, &engine), RCC_SUCCESS)
        << rcc::last_error();
    body(rank, *engine);
    run.counters[rank] = engine->counters();
    // Each rank waits in the engine (progressing: a rendezvous needs its sender to) until the other
    // has received everything, then leaves.
    uint8_t done = 1, got = 0;
    rcc::p2p::Request* sent = nullptr;
    ASSERT_EQ(engine->isend(&done, 1, 1 - rank, 99, rcc::p2p::kUserContext, &sent), RCC_SUCCESS) << rcc::last_error();
    ASSERT_EQ(engine->recv(&got, 1, 1 - rank, 99, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    ASSERT_EQ(engine->wait(sent), RCC_SUCCESS) << rcc::last_error();
    ASSERT_EQ(rcc::bootstrap::barrier(*store, "far/end", rank, 2, 60), RCC_SUCCESS) << rcc::last_error();
    run.ok[rank] = true;
  };
  std::thread other(rank_body, 1);
  rank_body(0);
  other.join();
  return run;
}

uint8_t pattern(size_t bytes, size_t i, int round) { return static_cast<uint8_t>(i * 13 + bytes * 7 + round); }

// Rank 0 sends one message of `bytes`, rank 1 receives and checks it (and nothing past its end).
void one_message(int rank, rcc::p2p::Engine& engine, size_t bytes, int round) {
  if (rank == 0) {
    std::vector<uint8_t> out(bytes);
    for (size_t i = 0; i < bytes; ++i) out[i] = pattern(bytes, i, round);
    ASSERT_EQ(engine.send(out.data(), bytes, 1, 7, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
  } else {
    std::vector<uint8_t> in(bytes + 8, 0xEE);
    ASSERT_EQ(engine.recv(in.data(), bytes, 0, 7, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(in[i], pattern(bytes, i, round)) << "byte " << i << " of " << bytes;
    for (size_t i = bytes; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "write past the end of " << bytes;
  }
}

// How many of rank 0's messages of each size went as eager (headed) slot messages.
std::map<size_t, uint64_t> eager_by_size(const std::vector<int>& host_of, const std::vector<size_t>& sizes) {
  std::map<size_t, uint64_t> eager;
  for (size_t bytes : sizes) {
    const EngineRun run = run_two(host_of, [&](int rank, rcc::p2p::Engine& engine) {
      for (int round = 0; round < 3; ++round) one_message(rank, engine, bytes, round);
    });
    EXPECT_TRUE(run.ok[0] && run.ok[1]) << bytes << " bytes";
    eager[bytes] = run.counters[0].headed_sent;
  }
  return eager;
}

class FarSlots : public ::testing::Test {
 protected:
  void SetUp() override {
    // TCP, as between hosts (in one process UCX would otherwise take shared memory); the engine's
    // own settings stay at their defaults.
    setenv("UCX_TLS", "tcp,self", 1);
    for (const char* name : {"RCC_EAGER_LIMIT", "RCC_EAGER_LIMIT_NET", "RCC_EAGER_NET_MEMORY",
                             "RCC_UCX_NET_EAGER_BYTES", "RCC_EAGER_SLOTS", "RCC_TRANSPORT"}) {
      unsetenv(name);
    }
    setenv("RCC_TRANSPORT", "ucx", 1);
  }
};

TEST_F(FarSlots, PeersOnAnotherHostSendUpToTheNetLimitEagerly) {
  // Three messages each; the set-up sends none through the engine.
  const auto eager = eager_by_size({0, 1}, {8192, 8193, 65536, 65537});
  EXPECT_EQ(eager.at(8192), 3u);
  EXPECT_EQ(eager.at(8193), 3u);
  EXPECT_EQ(eager.at(65536), 3u);
  EXPECT_EQ(eager.at(65537), 0u) << "one byte over RCC_EAGER_LIMIT_NET goes by rendezvous";
}

TEST_F(FarSlots, PeersOnOneHostKeepTheEagerLimit) {
  const auto eager = eager_by_size({0, 0}, {8192, 8193, 65536});
  EXPECT_EQ(eager.at(8192), 3u);
  EXPECT_EQ(eager.at(8193), 0u);
  EXPECT_EQ(eager.at(65536), 0u);
}

TEST_F(FarSlots, ManyLargeEagerMessagesInFlightBothWays) {
  // More 64 KiB messages than slots, both ways at once before either side receives: the queue and
  // the credits of the larger slots, with every byte checked.
  constexpr int kCount = 100;
  constexpr size_t kBytes = 65536;
  const EngineRun run = run_two({0, 1}, [&](int rank, rcc::p2p::Engine& engine) {
    const int peer = 1 - rank;
    std::vector<std::vector<uint8_t>> out(kCount, std::vector<uint8_t>(kBytes)),
        in(kCount, std::vector<uint8_t>(kBytes));
    std::vector<rcc::p2p::Request*> sends(kCount, nullptr);
    for (int i = 0; i < kCount; ++i) {
      for (size_t b = 0; b < kBytes; ++b) out[i][b] = pattern(kBytes, b, i + rank);
      ASSERT_EQ(engine.isend(out[i].data(), kBytes, peer, i, rcc::p2p::kUserContext, &sends[i]), RCC_SUCCESS)
          << rcc::last_error();
    }
    for (int i = 0; i < kCount; ++i) {
      ASSERT_EQ(engine.recv(in[i].data(), kBytes, peer, i, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
      for (size_t b = 0; b < kBytes; ++b) ASSERT_EQ(in[i][b], pattern(kBytes, b, i + peer)) << "message " << i;
    }
    ASSERT_EQ(engine.wait_all(sends.data(), sends.size()), RCC_SUCCESS) << rcc::last_error();
  });
  ASSERT_TRUE(run.ok[0] && run.ok[1]);
  EXPECT_EQ(run.counters[0].headed_sent, static_cast<uint64_t>(kCount));
  EXPECT_EQ(run.counters[1].headed_sent, static_cast<uint64_t>(kCount));
}

TEST_F(FarSlots, RanksThatDisagreeOnTheFarSlotsRefuseToConnect) {
  // RCC_UCX_NET_EAGER_BYTES, read as each transport is created, caps the far limit: rank 1's
  // smaller one gives it smaller far slots. Each rank must say which settings to align instead of
  // writing into slots of another size.
  const std::vector<int> host_of{0, 1};
  std::unique_ptr<rcc::transport::Transport> transports[2];
  for (int rank = 0; rank < 2; ++rank) {
    if (rank == 1) setenv("RCC_UCX_NET_EAGER_BYTES", "32768", 1);
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    options.host_of = host_of;
    ASSERT_EQ(rcc::transport::create_transport(options, &transports[rank]), RCC_SUCCESS) << rcc::last_error();
  }
  unsetenv("RCC_UCX_NET_EAGER_BYTES");
  const rcc::bootstrap::HostMap hosts = map_of(host_of);
  const auto created = transport_test::create_two_engines(transports, &hosts);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(created[rank].status, RCC_ERR_MISMATCH) << "rank " << rank;
    EXPECT_NE(created[rank].message.find("RCC_EAGER_LIMIT_NET"), std::string::npos) << created[rank].message;
    EXPECT_NE(created[rank].message.find("RCC_UCX_NET_EAGER_BYTES"), std::string::npos) << created[rank].message;
  }
}

}  // namespace
