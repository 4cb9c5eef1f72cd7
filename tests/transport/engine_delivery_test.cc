// How the p2p engine delivers eager messages over verbs (run in the RDMA VM, labels verbs-rxe and
// verbs-siw): with polled delivery a spinning receiver finds messages without any notice, a
// receiver that went to sleep is woken by one, slots reused with other lengths deliver intact
// messages, RCC_IB_POLLED_EAGER=0 notifies every message, and ranks that disagree on it refuse
// to connect.
// Two in-process ranks (threads), each with its own verbs transport and engine, meet through a
// real rendezvous store; the counters are the transport's own.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.h"
#include "core/status.h"
#include "p2p/engine.h"
#include "rank_threads.h"
#include "transport/verbs/verbs_transport.h"

namespace {

using rcc::p2p::Engine;
using transport_test::ScopedEnv;
using rcc::transport::verbs::VerbsInfo;

constexpr int kTag = 3;

struct RankResult {
  VerbsInfo counters;  // this rank's transport after the exchange
  bool ok = false;
};

// Runs body(rank, engine) on two threads with connected engines; returns each rank's counters.
template <typename Body>
std::vector<RankResult> run_two(const Body& body) {
  std::string secret;
  EXPECT_EQ(rcc::bootstrap::make_secret(&secret), RCC_SUCCESS);
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  EXPECT_EQ(rcc::bootstrap::StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret, &server), RCC_SUCCESS)
      << rcc::last_error();
  std::vector<RankResult> results(2);
  if (server == nullptr) return results;
  auto run_rank = [&](int rank) {
    std::unique_ptr<rcc::bootstrap::StoreClient> store;
    ASSERT_EQ(rcc::bootstrap::StoreClient::connect(server->address(), secret, 60, &store), RCC_SUCCESS)
        << rcc::last_error();
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    std::unique_ptr<rcc::transport::Transport> transport;
    ASSERT_EQ(rcc::transport::create_transport(options, &transport), RCC_SUCCESS) << rcc::last_error();
    rcc::transport::Transport* verbs = transport.get();
    ASSERT_STREQ(verbs->name(), "verbs") << "this test needs the verbs transport (run it in the RDMA VM)";
    std::unique_ptr<Engine> engine;
    ASSERT_EQ(Engine::create(std::move(transport), *store, "delivery", rank, 2, 60, &engine), RCC_SUCCESS)
        << rcc::last_error();
    engine->set_oversubscribed(false);
    body(rank, *engine);
    ASSERT_TRUE(rcc::transport::verbs::query(*verbs, &results[rank].counters));
    // Nobody tears down while the other may still write.
    ASSERT_EQ(rcc::bootstrap::barrier(*store, "delivery/end", rank, 2, 60), RCC_SUCCESS) << rcc::last_error();
    results[rank].ok = true;
  };
  std::thread other(run_rank, 1);
  run_rank(0);
  other.join();
  return results;
}

// Rank 0 sends `count` numbered messages of `bytes` each and waits for one reply per message.
void ping_pong(int rank, Engine& engine, int count, size_t bytes, int sender_pause_ms) {
  std::vector<uint8_t> out(bytes), in(bytes);
  for (int i = 0; i < count; ++i) {
    if (rank == 0) {
      if (sender_pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sender_pause_ms));
      for (size_t b = 0; b < bytes; ++b) out[b] = static_cast<uint8_t>(i + b);
      ASSERT_EQ(engine.send(out.data(), bytes, 1, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
      ASSERT_EQ(engine.recv(in.data(), bytes, 1, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    } else {
      ASSERT_EQ(engine.recv(in.data(), bytes, 0, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
      for (size_t b = 0; b < bytes; ++b) ASSERT_EQ(in[b], static_cast<uint8_t>(i + b)) << "message " << i;
      ASSERT_EQ(engine.send(in.data(), bytes, 0, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    }
  }
}

constexpr int kMessages = 200;

TEST(EngineDelivery, SpinningReceiverPollsWithoutNotices) {
  ScopedEnv spin("RCC_SPIN_COUNT", "1000000000");  // nobody sleeps
  auto results = run_two([](int rank, Engine& engine) { ping_pong(rank, engine, kMessages, 100, 0); });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  for (int rank = 0; rank < 2; ++rank) {
    // Both ranks sent kMessages slot messages; none needed a notice.
    EXPECT_EQ(results[rank].counters.writes_with_immediate + results[rank].counters.notify_sends, 0u)
        << "rank " << rank;
  }
}

TEST(EngineDelivery, SleepingReceiverIsWokenByANotice) {
  // The receiver sleeps after one idle poll; the sender pauses before each message, so the
  // receiver has announced its sleep every time and each message must carry a notice to wake it.
  ScopedEnv spin("RCC_SPIN_COUNT", "1");
  constexpr int kRounds = 20;
  auto results = run_two([](int rank, Engine& engine) { ping_pong(rank, engine, kRounds, 100, 20); });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  const VerbsInfo& sender = results[0].counters;
  EXPECT_EQ(sender.writes_with_immediate + sender.notify_sends, static_cast<uint64_t>(kRounds))
      << "rank 0's messages to a sleeping rank 1 were not all notified";
  // And the notices woke it: sleeps ended by a completion event, not by the 1 ms timeout. A notice
  // can land in the moment between two sleeps (then no event is needed), so not all of them.
  EXPECT_GE(results[1].counters.completion_wakeups, static_cast<uint64_t>(kRounds / 2))
      << "rank 1 slept through the notices (woken by its sleep timeout instead)";
}

TEST(EngineDelivery, PolledMessagesOfEverySizeInOneSlotRing) {
  // Sizes that move the tail word around within the same slots (and large ones through RTS/CTS),
  // with fewer slots than messages, so every slot is reused with a different length.
  ScopedEnv slots("RCC_EAGER_SLOTS", "4");
  const size_t sizes[] = {8192, 4, 0, 4096, 1, 100000, 8, 8191, 33, 8192, 12, 64};
  auto results = run_two([&](int rank, Engine& engine) {
    for (int round = 0; round < 5; ++round) {
      for (size_t bytes : sizes) {
        std::vector<uint8_t> out(bytes), in(bytes + 1, 0xEE);
        for (size_t b = 0; b < bytes; ++b) out[b] = static_cast<uint8_t>(b * 7 + bytes + round);
        if (rank == 0) {
          ASSERT_EQ(engine.send(out.data(), bytes, 1, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
        } else {
          ASSERT_EQ(engine.recv(in.data(), bytes, 0, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
          for (size_t b = 0; b < bytes; ++b) ASSERT_EQ(in[b], out[b]) << bytes << "-byte message, byte " << b;
          ASSERT_EQ(in[bytes], 0xEE) << "write past the end of a " << bytes << "-byte message";
        }
      }
    }
    // Sends beyond the 4 credits complete once queued; rank 0 keeps progressing (flushing them)
    // until rank 1 confirms it received everything.
    uint8_t done = 1;
    if (rank == 0) {
      ASSERT_EQ(engine.recv(&done, 1, 1, kTag + 1, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    } else {
      ASSERT_EQ(engine.send(&done, 1, 0, kTag + 1, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
    }
  });
  ASSERT_TRUE(results[0].ok && results[1].ok);
}

TEST(EngineDelivery, RanksDisagreeingOnPolledEagerFailToConnect) {
  // Rank 0's transport polls, rank 1's does not (the threads share one environment, so the
  // setting is changed around each creation). Both must refuse to connect, naming the setting.
  std::string secret;
  ASSERT_EQ(rcc::bootstrap::make_secret(&secret), RCC_SUCCESS);
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  ASSERT_EQ(rcc::bootstrap::StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret, &server), RCC_SUCCESS);
  std::vector<std::unique_ptr<rcc::transport::Transport>> transports(2);
  for (int rank = 0; rank < 2; ++rank) {
    ScopedEnv polled("RCC_IB_POLLED_EAGER", rank == 0 ? "1" : "0");
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    ASSERT_EQ(rcc::transport::create_transport(options, &transports[rank]), RCC_SUCCESS) << rcc::last_error();
  }
  rcc::Status statuses[2] = {RCC_SUCCESS, RCC_SUCCESS};
  std::string messages[2];
  auto connect = [&](int rank) {
    std::unique_ptr<rcc::bootstrap::StoreClient> store;
    ASSERT_EQ(rcc::bootstrap::StoreClient::connect(server->address(), secret, 60, &store), RCC_SUCCESS);
    std::unique_ptr<Engine> engine;
    statuses[rank] = Engine::create(std::move(transports[rank]), *store, "mismatch", rank, 2, 60, &engine);
    messages[rank] = rcc::last_error();
  };
  std::thread other(connect, 1);
  connect(0);
  other.join();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(statuses[rank], RCC_ERR_MISMATCH) << "rank " << rank;
    EXPECT_NE(messages[rank].find("RCC_IB_POLLED_EAGER"), std::string::npos) << messages[rank];
  }
}

TEST(EngineDelivery, PolledEagerZeroNotifiesEveryMessage) {
  ScopedEnv polled("RCC_IB_POLLED_EAGER", "0");
  auto results = run_two([](int rank, Engine& engine) { ping_pong(rank, engine, kMessages, 100, 0); });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(results[rank].counters.writes_with_immediate + results[rank].counters.notify_sends,
              static_cast<uint64_t>(kMessages))
        << "rank " << rank;
  }
}

TEST(EngineDelivery, BadPolledEagerValueIsRefused) {
  ScopedEnv polled("RCC_IB_POLLED_EAGER", "2");
  rcc::transport::Options options;
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(rcc::transport::create_verbs(options, &transport), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("RCC_IB_POLLED_EAGER"), std::string::npos) << rcc::last_error();
}

}  // namespace
