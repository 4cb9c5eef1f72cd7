// How the p2p engine delivers eager messages over verbs (run in the RDMA VM, labels verbs-rxe and
// verbs-siw). By default (EngineDelivery.*, rxe and siw) every eager message, rendezvous FIN and
// credit update is notified and nothing is a plain write the receiver must poll for. With polled
// delivery, the opt-in (EngineDeliveryPolled.*, rxe only: iWARP refuses it), a spinning receiver
// finds messages without any notice, a receiver that went to sleep is woken by one, slots reused
// with other lengths deliver intact messages, a message that repeats the previous one's tag
// travels without a header (anchored, or bare: payload and a notice, where notices ride in the
// write), and ranks that disagree on the mode refuse to connect.
// Two in-process ranks (threads), each with its own verbs transport and engine, meet through a
// real rendezvous store; the counters are the transport's own.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "bootstrap/store.h"
#include "bootstrap/store_rendezvous.h"
#include "p2p/engine.h"
#include "p2p/wire.h"
#include "rank_threads.h"
#include "transport/verbs/verbs_transport.h"

namespace {

using rcc::p2p::Engine;
using rcc::transport::verbs::VerbsInfo;
using transport_test::ScopedEnv;

constexpr int kTag = 3;

struct RankResult {
  VerbsInfo counters;               // this rank's transport after the exchange
  rcc::p2p::EngineCounters engine;  // and its engine
  size_t packet_bytes = 0;          // the transport's notice_packet_bytes toward the other rank
  bool ok = false;
};

// Runs body(rank, engine) on two threads with connected engines; returns each rank's counters.
template <typename Body>
std::vector<RankResult> run_two(const Body& body) {
  transport_test::LoopbackStore loopback;
  std::vector<RankResult> results(2);
  if (!loopback.start()) return results;
  auto run_rank = [&](int rank) {
    std::unique_ptr<rcc::bootstrap::StoreClient> store = loopback.client();
    ASSERT_NE(store, nullptr);
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    options.max_notifies_per_peer = 4 * 32;  // as comm.cc: 4 per eager slot (at most 32 here)
    std::unique_ptr<rcc::transport::Transport> transport;
    ASSERT_EQ(rcc::transport::create_transport(options, &transport), RCC_SUCCESS) << rcc::last_error();
    rcc::transport::Transport* verbs = transport.get();
    ASSERT_STREQ(verbs->name(), "verbs") << "this test needs the verbs transport (run it in the RDMA VM)";
    std::unique_ptr<Engine> engine;
    rcc::bootstrap::StoreExchange meet(*store, "delivery", rank, 2);
    ASSERT_EQ(Engine::create(std::move(transport), meet, nullptr, 60, &engine), RCC_SUCCESS) << rcc::last_error();
    rcc::WaitPolicy wait;
    ASSERT_EQ(rcc::WaitPolicy::from_settings(false, &wait), RCC_SUCCESS) << rcc::last_error();
    engine->set_wait_policy(wait);
    results[rank].packet_bytes = verbs->notice_packet_bytes(1 - rank);
    body(rank, *engine);
    ASSERT_TRUE(rcc::transport::verbs::query(*verbs, &results[rank].counters));
    results[rank].engine = engine->counters();
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

// Rank 1 tells rank 0 that it received everything; rank 0 progresses (flushing queued sends)
// until then.
void confirm_received(int rank, Engine& engine, int tag) {
  uint8_t done = 1;
  if (rank == 0) {
    ASSERT_EQ(engine.recv(&done, 1, 1, tag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
  } else {
    ASSERT_EQ(engine.send(&done, 1, 0, tag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
  }
}

constexpr int kMessages = 200;

TEST(EngineDeliveryPolled, SpinningReceiverPollsWithoutNotices) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
  ScopedEnv spin("RCC_SPIN_COUNT", "1000000000");     // nobody sleeps
  auto results = run_two([](int rank, Engine& engine) { ping_pong(rank, engine, kMessages, 100, 0); });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  for (int rank = 0; rank < 2; ++rank) {
    // Both ranks sent kMessages slot messages; none needed a notice.
    EXPECT_EQ(results[rank].counters.writes_with_immediate + results[rank].counters.notify_sends, 0u)
        << "rank " << rank;
  }
}

TEST(EngineDeliveryPolled, SleepingReceiverIsWokenByANotice) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
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
  // Repeated messages, but none anchored: those carry no notice.
  EXPECT_EQ(results[0].engine.anchored_sent, 0u);
}

// Sizes that move the tail word around within the same slots (and large ones through RTS/CTS),
// with fewer slots than messages, so every slot is reused with a different length.
void every_size_in_one_slot_ring() {
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
    // Sends beyond the 4 credits complete once queued; rank 0 keeps progressing (flushing them).
    confirm_received(rank, engine, kTag + 1);
  });
  ASSERT_TRUE(results[0].ok && results[1].ok);
}

TEST(EngineDeliveryPolled, MessagesOfEverySizeInOneSlotRing) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
  every_size_in_one_slot_ring();
}

TEST(EngineDelivery, MessagesOfEverySizeInOneSlotRing) { every_size_in_one_slot_ring(); }

// One message of the headerless-message test: its size and tag, and whether its payload ends in
// the anchor byte's idle value (then it cannot travel anchored).
struct Shaped {
  size_t bytes;
  int tag;
  bool ends_like_idle_anchor = false;
};

// How a message travels, by the engine's rule (wire.h, docs/transport.md): without a header when
// it repeats the previous eager message's tag; anchored when it also repeats its length and may
// change the anchor byte, else bare where the header would cost a packet; otherwise with a header.
// Assumes what the test below arranges: a spinning receiver, and a sender whose own consumption
// (the clear-to-send answers) is reported at once (with 4 slots every consumed slot writes a
// credit word), so that no credits are ever due when it sends.
struct Travel {
  uint64_t headed = 0, bare = 0, anchored = 0, rendezvous = 0;
};
Travel predict(const std::vector<Shaped>& stream, size_t packet, size_t eager_limit) {
  Travel travel;
  const Shaped* previous = nullptr;
  for (const Shaped& message : stream) {
    if (message.bytes > eager_limit) {
      ++travel.rendezvous;  // not an eager message: the next one still compares with `previous`
      continue;
    }
    const bool same_stream = previous != nullptr && previous->tag == message.tag;
    if (same_stream && message.bytes == previous->bytes && message.bytes > 0 && !message.ends_like_idle_anchor) {
      ++travel.anchored;
    } else if (same_stream && packet > 0 && rcc::p2p::header_costs_a_packet(message.bytes, packet)) {
      ++travel.bare;
    } else {
      ++travel.headed;
    }
    previous = &message;
  }
  return travel;
}

// Message `index`'s bytes; its last byte is the anchor's idle value only when asked for.
void fill(std::vector<uint8_t>& out, int index, bool ends_like_idle_anchor) {
  for (size_t b = 0; b < out.size(); ++b) out[b] = static_cast<uint8_t>(b * 13 + index);
  if (out.empty()) return;
  if (ends_like_idle_anchor) {
    out.back() = rcc::p2p::kAnchorIdle;
  } else if (out.back() == rcc::p2p::kAnchorIdle) {
    out.back() ^= 1;
  }
}

TEST(EngineDeliveryPolled, RepeatedMessagesTravelWithoutHeaders) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
  // Rank 0 sends a stream of messages of changing sizes and tags; each must travel the way the
  // rule above says (counted by both engines) and arrive intact, without a byte written past its
  // end. Four slots, five rounds: every slot is reused after headed, bare and anchored messages of
  // other lengths, which lie at other places in the slot.
  ScopedEnv spin("RCC_SPIN_COUNT", "1000000000");  // a spinning receiver: polled messages get no notice
  ScopedEnv slots("RCC_EAGER_SLOTS", "4");
  std::vector<Shaped> round;
  for (int i = 0; i < 10; ++i) round.push_back({1024, kTag});  // rxe (1024-byte packets): bare, then anchored
  round.push_back({1024, kTag + 1});                           // another tag: header
  for (int i = 0; i < 5; ++i) round.push_back({4096, kTag});   // header for the first (tag changed), then anchored
  for (int i = 0; i < 5; ++i) round.push_back({900, kTag});    // 900 + 68 fits one packet: header, then anchored
  round.push_back({100000, kTag});                             // rendezvous (and its notice, FIN)
  for (int i = 0; i < 5; ++i) round.push_back({1000, kTag});   // 1068 needs two packets, 1000 one: bare, then anchored
  round.push_back({1000, kTag, true});                         // would leave the anchor idle: bare instead
  round.push_back({1000, kTag});                               // anchored again
  round.push_back({0, kTag});                                  // empty: header
  round.push_back({8192, kTag});                               // the eager limit: bare
  round.push_back({8192, kTag});                               // anchored, at the slot's end
  round.push_back({8, kTag});                                  // header (fits one packet)
  round.push_back({8, kTag, true});                            // header (ends in the idle anchor byte)
  round.push_back({8, kTag});                                  // anchored
  for (int i = 0; i < 3; ++i) round.push_back({1025, kTag});   // 2 packets either way: header, then anchored
  for (int i = 0; i < 2; ++i) round.push_back({4097, kTag});   // (the last packet holds 1 byte)
  for (int i = 0; i < 3; ++i) round.push_back({1, kTag});      // header, then anchored: 1 byte
  std::vector<Shaped> stream;
  for (int r = 0; r < 5; ++r) stream.insert(stream.end(), round.begin(), round.end());
  auto results = run_two([&](int rank, Engine& engine) {
    int index = 0;
    for (const Shaped& message : stream) {
      std::vector<uint8_t> out(message.bytes), in(message.bytes + 1, 0xEE);
      fill(out, index, message.ends_like_idle_anchor);
      if (rank == 0) {
        ASSERT_EQ(engine.send(out.data(), message.bytes, 1, message.tag, rcc::p2p::kUserContext), RCC_SUCCESS)
            << rcc::last_error();
      } else {
        ASSERT_EQ(engine.recv(in.data(), message.bytes, 0, message.tag, rcc::p2p::kUserContext), RCC_SUCCESS)
            << rcc::last_error();
        for (size_t b = 0; b < message.bytes; ++b) ASSERT_EQ(in[b], out[b]) << "message " << index << ", byte " << b;
        ASSERT_EQ(in[message.bytes], 0xEE) << "write past the end of message " << index;
      }
      ++index;
    }
    confirm_received(rank, engine, kTag);  // before the counters are read
  });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  const size_t packet = results[0].packet_bytes;
  if (results[0].counters.uses_immediate) {
    ASSERT_GT(packet, 0u) << "notices ride in writes, yet nothing goes bare";
  }
  const Travel travel = predict(stream, packet, 8192);
  if (packet == 1024) {
    // Per round: 9 + 4 + 4 + 4 + 1 + 1 + 1 + 2 + 1 + 2 anchored; bare the 1000 after the 900s, the
    // idle-ended 1000 and the first 8192, and in rounds 2-5 the first 1024 (after a 1 of the same tag).
    EXPECT_EQ(travel.anchored, 5u * 29u) << "the rule changed: recount the stream above";
    EXPECT_EQ(travel.bare, 5u * 3u + 4u) << "the rule changed: recount the stream above";
  }
  const rcc::p2p::EngineCounters& sender = results[0].engine;
  const rcc::p2p::EngineCounters& receiver = results[1].engine;
  EXPECT_EQ(sender.anchored_sent, travel.anchored) << "packet size " << packet;
  EXPECT_EQ(sender.bare_sent, travel.bare) << "packet size " << packet;
  EXPECT_EQ(sender.headed_sent, travel.headed) << "packet size " << packet;
  EXPECT_EQ(receiver.anchored_received, travel.anchored);
  EXPECT_EQ(receiver.bare_received, travel.bare);
  EXPECT_EQ(receiver.headed_received, travel.headed);
  // Notices rank 0 sent: one per bare message and one per rendezvous message (its FIN); none for
  // headed and anchored messages, which the spinning receiver found by polling. rxe: notices ride
  // in the write; siw: a notice is a message of its own (and nothing goes bare).
  EXPECT_EQ(results[0].counters.writes_with_immediate + results[0].counters.notify_sends,
            travel.bare + travel.rendezvous)
      << "packet size " << packet;
}

TEST(EngineDeliveryPolled, HeaderlessMessagesLeaveNoCreditWords) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
  // A ping-pong of 1024-byte messages: after each rank's first, every message travels without a
  // header (anchored, or bare on rxe when credits are due: the credits for the other direction
  // then ride in its notice as they would in a header), so neither rank writes a separate credit
  // word (one every quarter of the slots otherwise).
  ScopedEnv spin("RCC_SPIN_COUNT", "1000000000");  // nobody sleeps (a sleep announcement is a credit write)
  auto results = run_two([](int rank, Engine& engine) { ping_pong(rank, engine, kMessages, 1024, 0); });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  for (int rank = 0; rank < 2; ++rank) {
    const VerbsInfo& counters = results[rank].counters;
    const rcc::p2p::EngineCounters& engine = results[rank].engine;
    EXPECT_EQ(counters.work_requests - counters.notify_sends, static_cast<uint64_t>(kMessages))
        << "rank " << rank << " wrote credit words besides its " << kMessages << " messages";
    EXPECT_GT(engine.anchored_sent, static_cast<uint64_t>(kMessages / 2)) << "rank " << rank;
    if (results[rank].packet_bytes == 1024) {
      EXPECT_EQ(engine.headed_sent, 1u) << "rank " << rank;
      EXPECT_EQ(engine.bare_sent + engine.anchored_sent, static_cast<uint64_t>(kMessages - 1)) << "rank " << rank;
      EXPECT_EQ(counters.writes_with_immediate, engine.bare_sent) << "rank " << rank;
      EXPECT_GT(engine.bare_sent, 0u) << "rank " << rank << ": who carried the credits?";
    }
  }
}

TEST(EngineDeliveryPolled, AnchoredMessagesWaitForCreditsAndArriveUnexpected) {
  ScopedEnv polled_mode("RCC_IB_POLLED_EAGER", "1");  // the opt-in
  // Rank 1 starts receiving only after rank 0 sent everything: four messages land unexpected, the
  // rest wait at rank 0 for credits and go out (anchored, decided then) as rank 1 consumes. The
  // last one meets a receive one byte short: truncated, and the slot is still given back.
  ScopedEnv spin("RCC_SPIN_COUNT", "1000000000");
  ScopedEnv slots("RCC_EAGER_SLOTS", "4");
  constexpr int kCount = 30;
  constexpr size_t kBytes = 1000;
  auto results = run_two([&](int rank, Engine& engine) {
    std::vector<uint8_t> out(kBytes), in(kBytes + 1);
    if (rank == 0) {
      for (int i = 0; i <= kCount; ++i) {
        fill(out, i, false);
        ASSERT_EQ(engine.send(out.data(), kBytes, 1, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      for (int i = 0; i < kCount; ++i) {
        fill(out, i, false);
        in.assign(kBytes + 1, 0xEE);
        ASSERT_EQ(engine.recv(in.data(), kBytes, 0, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
        for (size_t b = 0; b < kBytes; ++b) ASSERT_EQ(in[b], out[b]) << "message " << i << ", byte " << b;
        ASSERT_EQ(in[kBytes], 0xEE) << "write past the end of message " << i;
      }
      EXPECT_EQ(engine.recv(in.data(), kBytes - 1, 0, kTag, rcc::p2p::kUserContext), RCC_ERR_TRUNCATED);
    }
    confirm_received(rank, engine, kTag + 1);
  });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  EXPECT_EQ(results[0].engine.headed_sent, 1u);
  EXPECT_EQ(results[0].engine.anchored_sent, static_cast<uint64_t>(kCount));
  EXPECT_EQ(results[1].engine.anchored_received, static_cast<uint64_t>(kCount));
}

TEST(EngineDeliveryPolled, RanksDisagreeingOnPolledEagerFailToConnect) {
  // Rank 0's transport polls, rank 1's does not (the threads share one environment, so the
  // setting is changed around each creation). Both must refuse to connect, naming the setting.
  std::unique_ptr<rcc::transport::Transport> transports[2];
  for (int rank = 0; rank < 2; ++rank) {
    ScopedEnv polled("RCC_IB_POLLED_EAGER", rank == 0 ? "1" : "0");
    rcc::transport::Options options;
    options.rank = rank;
    options.size = 2;
    ASSERT_EQ(rcc::transport::create_transport(options, &transports[rank]), RCC_SUCCESS) << rcc::last_error();
  }
  const auto created = transport_test::create_two_engines(transports, nullptr);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(created[rank].status, RCC_ERR_MISMATCH) << "rank " << rank;
    EXPECT_NE(created[rank].message.find("RCC_IB_POLLED_EAGER"), std::string::npos) << created[rank].message;
  }
}

TEST(EngineDelivery, NotifiedByDefaultEveryMessageFinAndCreditUpdate) {
  // Nothing set: a one-way stream through 4 slots (so the receiver must hand credits back on their
  // own, not in replies), eager and rendezvous sizes, then a sleeping ping-pong. Every write either
  // rank makes carries a notice: eager messages, FINs and the receiver's credit updates.
  ASSERT_EQ(std::getenv("RCC_IB_POLLED_EAGER"), nullptr);
  ScopedEnv slots("RCC_EAGER_SLOTS", "4");
  ScopedEnv spin("RCC_SPIN_COUNT", "1");  // the sender sleeps while it waits for credits
  constexpr int kCount = 300;
  const size_t sizes[] = {8, 1000, 8192, 100000, 0};
  auto results = run_two([&](int rank, Engine& engine) {
    for (int i = 0; i < kCount; ++i) {
      const size_t bytes = sizes[i % 5];
      std::vector<uint8_t> out(bytes), in(bytes + 1, 0xEE);
      for (size_t b = 0; b < bytes; ++b) out[b] = static_cast<uint8_t>(b * 5 + i);
      if (rank == 0) {
        ASSERT_EQ(engine.send(out.data(), bytes, 1, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
      } else {
        ASSERT_EQ(engine.recv(in.data(), bytes, 0, kTag, rcc::p2p::kUserContext), RCC_SUCCESS) << rcc::last_error();
        for (size_t b = 0; b < bytes; ++b) ASSERT_EQ(in[b], out[b]) << "message " << i << ", byte " << b;
        ASSERT_EQ(in[bytes], 0xEE) << "write past the end of message " << i;
      }
    }
    confirm_received(rank, engine, kTag + 1);
    ping_pong(rank, engine, 20, 100, 0);
  });
  ASSERT_TRUE(results[0].ok && results[1].ok);
  for (int rank = 0; rank < 2; ++rank) {
    const VerbsInfo& counters = results[rank].counters;
    EXPECT_EQ(counters.writes_without_notice, 0u) << "rank " << rank << " wrote something its peer must poll for";
    EXPECT_EQ(results[rank].engine.anchored_sent, 0u) << "rank " << rank;
  }
  // Rank 1 sent 21 messages (the confirmation and 20 replies) and, through 4 slots, at least one
  // credit update per 4 of rank 0's 300 messages and 60 FINs: all as notices.
  const VerbsInfo& receiver = results[1].counters;
  EXPECT_GE(receiver.writes_with_immediate + receiver.notify_sends, 21u + (kCount + kCount / 5) / 4)
      << "rank 1's credit updates were not notified";
  EXPECT_GE(results[0].counters.writes_with_immediate + results[0].counters.notify_sends,
            static_cast<uint64_t>(kCount + 20));
}

TEST(EngineDelivery, BadPolledEagerValueIsRefused) {
  ScopedEnv polled("RCC_IB_POLLED_EAGER", "2");
  rcc::transport::Options options;
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(rcc::transport::create_verbs(options, &transport), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("RCC_IB_POLLED_EAGER"), std::string::npos) << rcc::last_error();
}

}  // namespace
