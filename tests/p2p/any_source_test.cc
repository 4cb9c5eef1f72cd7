// Wildcard receives (RCC_ANY_SOURCE, RCC_ANY_TAG) and what they report (rcc_recv_info,
// rcc_wait_info, rcc_test_info), probes, rcc_sendrecv, rcc_waitall and rcc_waitany. Part of
// p2p_test: runs on 1..8 ranks and across network namespaces over UCX TCP.
//
// Every test starts and ends with a barrier, so no message of one test can be taken by a wildcard
// receive of another (a rank that is ahead would otherwise send into a slower rank's wildcard).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

constexpr size_t kLarge = 70001;  // above the eager limit (RCC_EAGER_LIMIT, 8192 by default)

int right() { return (rank() + 1) % size(); }
int left() { return (rank() + size() - 1) % size(); }

uint8_t fill_byte(int sender, int seq, size_t i) {
  return static_cast<uint8_t>((i * 131u) ^ (static_cast<size_t>(sender) * 977u) ^ (static_cast<size_t>(seq) * 29u) ^
                              (i >> 9));
}

// A message of `bytes` bytes: when there is room, the sender and a sequence number first, then a
// pattern of both (shorter messages are told apart by their length and position).
std::vector<uint8_t> make_message(int sender, int seq, size_t bytes) {
  std::vector<uint8_t> message(bytes);
  for (size_t i = 0; i < bytes; ++i) message[i] = fill_byte(sender, seq, i);
  if (bytes >= 8) {
    int32_t head[2] = {sender, seq};
    std::memcpy(message.data(), head, sizeof head);
  }
  return message;
}

// Checks the first `bytes` bytes of got are message (sender, seq); returns a description of the
// first difference, or "".
std::string message_error(const uint8_t* got, int sender, int seq, size_t bytes) {
  std::vector<uint8_t> want = make_message(sender, seq, bytes);
  if (bytes >= 8) {
    int32_t head[2];
    std::memcpy(head, got, sizeof head);
    if (head[0] != sender || head[1] != seq) {
      return "header says sender " + std::to_string(head[0]) + " seq " + std::to_string(head[1]) +
             ", expected sender " + std::to_string(sender) + " seq " + std::to_string(seq);
    }
  }
  for (size_t i = 0; i < bytes; ++i) {
    if (got[i] != want[i]) {
      return "byte " + std::to_string(i) + " of the " + std::to_string(bytes) + "-byte message " + std::to_string(seq) +
             " from rank " + std::to_string(sender) + " is wrong";
    }
  }
  return "";
}

class AnySource : public testing::Test {
 protected:
  void SetUp() override { RCC_ASSERT_OK(rcc_barrier(comm())); }
  void TearDown() override { RCC_EXPECT_OK(rcc_barrier(comm())); }
};

// The lengths a sender's messages cycle through: empty, small (differing by sender), large, small.
size_t length_of(int sender, int seq) {
  switch (seq % 4) {
    case 0: return 0;
    case 1: return 8 + 3 * static_cast<size_t>(sender);
    case 2: return kLarge;
    default: return 12;
  }
}

// Every rank (the receiver too) sends kPerSender messages to one receiver, which takes them with
// RCC_ANY_SOURCE receives: each reports its sender, tag and length, and each sender's messages come
// in the order sent.
TEST_F(AnySource, ManySendersVariedLengthsAfterArrival) {
  constexpr int kPerSender = 8;
  constexpr int kTag = 40;
  const int receiver = 0;
  std::vector<std::vector<uint8_t>> out;
  std::vector<rcc_request_t> sends;
  for (int seq = 0; seq < kPerSender; ++seq) out.push_back(make_message(rank(), seq, length_of(rank(), seq)));
  for (int seq = 0; seq < kPerSender; ++seq) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out[seq].data(), out[seq].size(), RCC_UINT8, receiver, kTag, &request));
    sends.push_back(request);
  }
  if (rank() == receiver) {
    std::vector<int> next(size(), 0);
    std::vector<uint8_t> in(kLarge + 100);
    for (int n = 0; n < kPerSender * size(); ++n) {
      std::fill(in.begin(), in.end(), 0xEE);
      rcc_msg_info_t info{-5, -5, 12345};
      RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, kTag, &info));
      ASSERT_GE(info.source, 0) << "receive " << n;
      ASSERT_LT(info.source, size()) << "receive " << n;
      EXPECT_EQ(info.tag, kTag) << "receive " << n;
      const int seq = next[info.source]++;
      ASSERT_LT(seq, kPerSender) << "more than " << kPerSender << " messages from rank " << info.source;
      const size_t bytes = length_of(info.source, seq);
      ASSERT_EQ(info.bytes, bytes) << "receive " << n << " from rank " << info.source
                                   << ": a message out of order or the wrong length (expected message " << seq << ")";
      ASSERT_EQ(message_error(in.data(), info.source, seq, bytes), "") << "receive " << n;
      for (size_t i = bytes; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "write past the message's end";
    }
    for (int source = 0; source < size(); ++source) EXPECT_EQ(next[source], kPerSender) << "from rank " << source;
  }
  for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));
}

// The same with every receive posted before any message is sent, RCC_ANY_SOURCE and RCC_ANY_TAG,
// the tags varying by message: a message takes the earliest-posted receive it matches, so in
// posting order each sender's messages appear in the order sent.
TEST_F(AnySource, ManySendersVariedLengthsPrePosted) {
  constexpr int kPerSender = 8;
  const int receiver = size() - 1;
  auto tag_of = [](int seq) { return 50 + seq % 3; };
  std::vector<std::vector<uint8_t>> in;
  std::vector<rcc_request_t> receives;
  if (rank() == receiver) {
    for (int n = 0; n < kPerSender * size(); ++n) {
      in.emplace_back(kLarge + 8, 0xEE);
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(
          rcc_irecv(comm(), in.back().data(), in.back().size(), RCC_UINT8, RCC_ANY_SOURCE, RCC_ANY_TAG, &request));
      receives.push_back(request);
    }
  }
  RCC_ASSERT_OK(rcc_barrier(comm()));  // every receive is posted before the first send
  std::vector<std::vector<uint8_t>> out;
  std::vector<rcc_request_t> sends;
  for (int seq = 0; seq < kPerSender; ++seq) out.push_back(make_message(rank(), seq, length_of(rank(), seq)));
  for (int seq = 0; seq < kPerSender; ++seq) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out[seq].data(), out[seq].size(), RCC_UINT8, receiver, tag_of(seq), &request));
    sends.push_back(request);
  }
  if (rank() == receiver) {
    std::vector<int> next(size(), 0);
    for (size_t n = 0; n < receives.size(); ++n) {
      rcc_msg_info_t info{-5, -5, 12345};
      RCC_ASSERT_OK(rcc_wait_info(receives[n], &info));
      ASSERT_GE(info.source, 0) << "receive " << n;
      ASSERT_LT(info.source, size()) << "receive " << n;
      const int seq = next[info.source]++;
      ASSERT_LT(seq, kPerSender) << "more than " << kPerSender << " messages from rank " << info.source;
      EXPECT_EQ(info.tag, tag_of(seq)) << "receive " << n << " from rank " << info.source << " (message " << seq << ")";
      const size_t bytes = length_of(info.source, seq);
      ASSERT_EQ(info.bytes, bytes) << "receive " << n << " from rank " << info.source << ": expected message " << seq;
      ASSERT_EQ(message_error(in[n].data(), info.source, seq, bytes), "") << "receive " << n;
      for (size_t i = bytes; i < in[n].size(); ++i) ASSERT_EQ(in[n][i], 0xEE) << "write past the message's end";
    }
    for (int source = 0; source < size(); ++source) EXPECT_EQ(next[source], kPerSender) << "from rank " << source;
  }
  for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));
}

// Messages of one sender with different tags reach RCC_ANY_TAG receives in the order sent, large
// (rendezvous) and small (eager) mixed, whether they arrived before the receive or not.
TEST_F(AnySource, AnyTagDoesNotOvertake) {
  const std::vector<std::pair<int, size_t>> sent = {{7, 16},     {3, 16}, {9, kLarge}, {1, 8},  {7, 0}, {2, 9},
                                                    {2, kLarge}, {5, 24}, {5, kLarge}, {0, 24}, {4, 0}, {6, 10}};
  for (int round = 0; round < 2; ++round) {
    // Round 0: receives from the left neighbour with any tag; round 1: any source and any tag.
    const int source = round == 0 ? left() : RCC_ANY_SOURCE;
    std::vector<std::vector<uint8_t>> out;
    std::vector<rcc_request_t> sends;
    for (size_t i = 0; i < sent.size(); ++i) out.push_back(make_message(rank(), static_cast<int>(i), sent[i].second));
    for (size_t i = 0; i < sent.size(); ++i) {
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(rcc_isend(comm(), out[i].data(), out[i].size(), RCC_UINT8, right(), sent[i].first, &request));
      sends.push_back(request);
    }
    std::vector<uint8_t> in(kLarge + 1);
    for (size_t i = 0; i < sent.size(); ++i) {
      rcc_msg_info_t info{-5, -5, 12345};
      RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, source, RCC_ANY_TAG, &info));
      EXPECT_EQ(info.source, left()) << "round " << round << " receive " << i;
      ASSERT_EQ(info.tag, sent[i].first) << "round " << round << ": message " << i << " was overtaken";
      ASSERT_EQ(info.bytes, sent[i].second) << "round " << round << " receive " << i;
      ASSERT_EQ(message_error(in.data(), left(), static_cast<int>(i), sent[i].second), "") << "round " << round;
    }
    for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));
  }
}

// Receives posted before the messages: a message takes the earliest-posted receive it matches.
// Posted: (left, tag 3), (any, any), (left, any); sent: tag 7, tag 3, tag 8. The tag-3 receive gets
// the tag-3 message, the first wildcard the tag-7 one, the last the tag-8 one. Then after arrival:
// (left, tag 3) first skips the earlier tag-7 message, which the any-tag receive after it gets.
TEST_F(AnySource, SpecificAndWildcardReceivesShareOneSender) {
  int32_t a = -1, b = -1, c = -1;
  rcc_request_t r_tag3 = nullptr, r_any = nullptr, r_left_any = nullptr;
  RCC_ASSERT_OK(rcc_irecv(comm(), &a, 1, RCC_INT32, left(), 3, &r_tag3));
  RCC_ASSERT_OK(rcc_irecv(comm(), &b, 1, RCC_INT32, RCC_ANY_SOURCE, RCC_ANY_TAG, &r_any));
  RCC_ASSERT_OK(rcc_irecv(comm(), &c, 1, RCC_INT32, left(), RCC_ANY_TAG, &r_left_any));
  RCC_ASSERT_OK(rcc_barrier(comm()));
  const int32_t values[3] = {rank() * 10 + 7, rank() * 10 + 3, rank() * 10 + 8};
  const int tags[3] = {7, 3, 8};
  rcc_request_t sends[3];
  for (int i = 0; i < 3; ++i) RCC_ASSERT_OK(rcc_isend(comm(), &values[i], 1, RCC_INT32, right(), tags[i], &sends[i]));
  rcc_msg_info_t info{};
  RCC_ASSERT_OK(rcc_wait_info(r_tag3, &info));
  EXPECT_EQ(info.tag, 3);
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.bytes, 4u);
  EXPECT_EQ(a, left() * 10 + 3);
  RCC_ASSERT_OK(rcc_wait_info(r_any, &info));
  EXPECT_EQ(info.tag, 7);
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(b, left() * 10 + 7);
  RCC_ASSERT_OK(rcc_wait_info(r_left_any, &info));
  EXPECT_EQ(info.tag, 8);
  EXPECT_EQ(c, left() * 10 + 8);
  for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));

  // After arrival (or not: the result is the same either way).
  for (int i = 0; i < 2; ++i) RCC_ASSERT_OK(rcc_isend(comm(), &values[i], 1, RCC_INT32, right(), tags[i], &sends[i]));
  RCC_ASSERT_OK(rcc_recv_info(comm(), &a, 1, RCC_INT32, left(), 3, &info));
  EXPECT_EQ(info.tag, 3);
  EXPECT_EQ(a, left() * 10 + 3);
  RCC_ASSERT_OK(rcc_recv_info(comm(), &b, 1, RCC_INT32, left(), RCC_ANY_TAG, &info));
  EXPECT_EQ(info.tag, 7);
  EXPECT_EQ(b, left() * 10 + 7);
  for (int i = 0; i < 2; ++i) RCC_ASSERT_OK(rcc_wait(sends[i]));
}

// A wildcard receive takes the earliest-arrived message it matches, so a sender that keeps sending
// cannot starve another. Rank 0 directs: it lets one sender at a time send a burst followed by a
// fence (another tag), and receives the fence, so that sender's burst has arrived before the next
// sender starts. Bursts go in descending rank order, then ascending, then descending (rank 0 sends
// its bursts to itself). Then rank 0 receives everything with RCC_ANY_SOURCE and RCC_ANY_TAG: the
// messages must come exactly in arrival order, burst by burst — not one sender's all first.
TEST_F(AnySource, WildcardServesSendersInArrivalOrder) {
  constexpr int kData = 60, kFence = 61, kGo = 62;
  std::vector<std::pair<int, int>> schedule;  // (sender, burst length)
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < size(); ++i) {
      const int sender = round % 2 == 0 ? size() - 1 - i : i;
      schedule.emplace_back(sender, 1 + (sender + round) % 3);
    }
  }
  // Message seq of a sender: large (rendezvous) for the first of an odd sender's bursts.
  std::vector<std::vector<uint8_t>> out;  // this rank's messages, in order (kept until sent)
  std::vector<rcc_request_t> sends;
  int32_t fence = 0;
  auto send_burst = [&](int count) {
    for (int i = 0; i < count; ++i) {
      const int seq = static_cast<int>(out.size());
      const size_t bytes = (i == 0 && rank() % 2 == 1) ? kLarge : 8;
      out.push_back(make_message(rank(), seq, bytes));
    }
    // out may have reallocated: its vectors' data did not move.
    for (size_t seq = out.size() - static_cast<size_t>(count); seq < out.size(); ++seq) {
      rcc_request_t request = nullptr;
      ASSERT_EQ(rcc_isend(comm(), out[seq].data(), out[seq].size(), RCC_UINT8, 0, kData, &request), RCC_SUCCESS)
          << rcc_last_error();
      sends.push_back(request);
    }
  };
  if (rank() == 0) {
    std::vector<std::pair<int, int>> expected;  // (source, seq) in arrival order
    std::vector<int> count_of(size(), 0);
    for (const auto& [sender, burst] : schedule) {
      for (int i = 0; i < burst; ++i) expected.emplace_back(sender, count_of[sender]++);
      if (sender == 0) {
        send_burst(burst);
        if (HasFatalFailure()) return;
        rcc_request_t request = nullptr;
        RCC_ASSERT_OK(rcc_isend(comm(), &fence, 1, RCC_INT32, 0, kFence, &request));
        sends.push_back(request);
      } else {
        int32_t go = burst;
        RCC_ASSERT_OK(rcc_send(comm(), &go, 1, RCC_INT32, sender, kGo));
      }
      int32_t got = -1;
      RCC_ASSERT_OK(rcc_recv(comm(), &got, 1, RCC_INT32, sender, kFence));
    }
    for (int sender = 1; sender < size(); ++sender) {
      int32_t done = 0;
      RCC_ASSERT_OK(rcc_send(comm(), &done, 1, RCC_INT32, sender, kGo));
    }
    std::vector<uint8_t> in(kLarge);
    for (size_t n = 0; n < expected.size(); ++n) {
      rcc_msg_info_t info{-5, -5, 0};
      RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, RCC_ANY_TAG, &info));
      ASSERT_EQ(info.tag, kData) << "receive " << n;
      ASSERT_GE(info.source, 0);
      ASSERT_LT(info.source, size());
      int32_t head[2] = {-1, -1};
      ASSERT_GE(info.bytes, 8u);
      std::memcpy(head, in.data(), sizeof head);
      ASSERT_EQ(std::make_pair(info.source, static_cast<int>(head[1])), expected[n])
          << "receive " << n << " got message " << head[1] << " of rank " << info.source << ", but message "
          << expected[n].second << " of rank " << expected[n].first << " arrived earlier";
      ASSERT_EQ(message_error(in.data(), info.source, head[1], info.bytes), "");
    }
  } else {
    for (;;) {
      int32_t go = -1;
      RCC_ASSERT_OK(rcc_recv(comm(), &go, 1, RCC_INT32, 0, kGo));
      if (go == 0) break;
      send_burst(go);
      if (HasFatalFailure()) return;
      RCC_ASSERT_OK(rcc_send(comm(), &fence, 1, RCC_INT32, 0, kFence));
    }
  }
  for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));
}

// A message shorter than the receive is accepted (info.bytes says how long; nothing past it is
// written); a longer one fails the receive with RCC_ERR_TRUNCATED, eager or rendezvous, with
// wildcards, and the pair keeps working.
TEST_F(AnySource, ShorterAcceptedLongerTruncated) {
  const std::vector<std::pair<int, size_t>> sent = {{60, 40}, {61, kLarge}, {62, 100}, {63, kLarge}, {64, 4}};
  std::vector<std::vector<uint8_t>> out;
  std::vector<rcc_request_t> sends;
  for (size_t i = 0; i < sent.size(); ++i) out.push_back(make_message(rank(), static_cast<int>(i), sent[i].second));
  for (size_t i = 0; i < sent.size(); ++i) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out[i].data(), out[i].size(), RCC_UINT8, right(), sent[i].first, &request));
    sends.push_back(request);
  }
  rcc_msg_info_t info{};
  std::vector<uint8_t> in(1000, 0xEE);
  RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, 60, &info));
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.tag, 60);
  EXPECT_EQ(info.bytes, 40u);
  EXPECT_EQ(message_error(in.data(), left(), 0, 40), "");
  for (size_t i = 40; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "byte " << i << " written past the message";

  in.assign(200000, 0xEE);
  RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size() / 4, RCC_INT32, left(), RCC_ANY_TAG, &info));
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.tag, 61);
  EXPECT_EQ(info.bytes, kLarge) << "bytes, not elements";
  EXPECT_EQ(message_error(in.data(), left(), 1, kLarge), "");
  for (size_t i = kLarge; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "byte " << i << " written past the message";

  in.assign(50, 0);
  EXPECT_EQ(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, RCC_ANY_TAG, &info),
            RCC_ERR_TRUNCATED);
  EXPECT_NE(std::strstr(rcc_last_error(), "longer than the receive buffer"), nullptr) << rcc_last_error();
  in.assign(kLarge - 1, 0);
  EXPECT_EQ(rcc_recv(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, 63), RCC_ERR_TRUNCATED);
  EXPECT_NE(std::strstr(rcc_last_error(), "longer than the receive buffer"), nullptr) << rcc_last_error();

  in.assign(8, 0xEE);
  RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, RCC_ANY_TAG, &info));
  EXPECT_EQ(info.tag, 64);
  EXPECT_EQ(info.bytes, 4u);
  EXPECT_EQ(message_error(in.data(), left(), 4, 4), "");
  // The sender's side of a truncated message is not an error.
  for (rcc_request_t request : sends) RCC_EXPECT_OK(rcc_wait(request));
}

// rcc_probe describes a message without receiving it; the receive that follows, with a buffer of
// the probed size, gets exactly it. rcc_iprobe finds nothing where nothing was sent.
TEST_F(AnySource, ProbeThenReceiveTheProbedSize) {
  int found = -1;
  rcc_msg_info_t info{};
  RCC_ASSERT_OK(rcc_iprobe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, &found, &info));
  EXPECT_EQ(found, 0) << "a message nobody sent";
  found = -1;
  RCC_ASSERT_OK(rcc_iprobe(comm(), left(), 70, &found, &info));
  EXPECT_EQ(found, 0);
  RCC_ASSERT_OK(rcc_barrier(comm()));  // nobody sends before every rank has probed

  const std::vector<std::pair<int, size_t>> sent = {{70, 0}, {71, 13}, {72, kLarge}, {73, 9}};
  std::vector<std::vector<uint8_t>> out;
  std::vector<rcc_request_t> sends;
  for (size_t i = 0; i < sent.size(); ++i) out.push_back(make_message(rank(), static_cast<int>(i), sent[i].second));
  for (size_t i = 0; i < sent.size(); ++i) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out[i].data(), out[i].size(), RCC_UINT8, right(), sent[i].first, &request));
    sends.push_back(request);
  }
  for (size_t i = 0; i < sent.size(); ++i) {
    rcc_msg_info_t probed{-5, -5, 12345};
    if (i % 2 == 0) {
      RCC_ASSERT_OK(rcc_probe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, &probed));
    } else {
      found = 0;
      while (!found) RCC_ASSERT_OK(rcc_iprobe(comm(), left(), RCC_ANY_TAG, &found, &probed));
    }
    EXPECT_EQ(probed.source, left()) << "probe " << i;
    ASSERT_EQ(probed.tag, sent[i].first) << "probe " << i << ": not the earliest message";
    ASSERT_EQ(probed.bytes, sent[i].second) << "probe " << i;
    // A probe takes nothing: probing again finds the same message.
    rcc_msg_info_t again{-5, -5, 12345};
    RCC_ASSERT_OK(rcc_probe(comm(), probed.source, probed.tag, &again));
    EXPECT_EQ(again.source, probed.source);
    EXPECT_EQ(again.tag, probed.tag);
    EXPECT_EQ(again.bytes, probed.bytes);
    found = 0;
    RCC_ASSERT_OK(rcc_iprobe(comm(), RCC_ANY_SOURCE, 99, &found, &again));
    EXPECT_EQ(found, 0) << "tag 99 is never sent";
    std::vector<uint8_t> in(probed.bytes);
    rcc_msg_info_t received{-5, -5, 12345};
    RCC_ASSERT_OK(rcc_recv_info(comm(), in.data(), in.size(), RCC_UINT8, probed.source, probed.tag, &received));
    EXPECT_EQ(received.source, left());
    EXPECT_EQ(received.tag, sent[i].first);
    EXPECT_EQ(received.bytes, sent[i].second);
    EXPECT_EQ(message_error(in.data(), left(), static_cast<int>(i), sent[i].second), "");
  }
  found = -1;
  RCC_ASSERT_OK(rcc_iprobe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, &found, &info));
  EXPECT_EQ(found, 0) << "every message was received";
  for (rcc_request_t request : sends) RCC_ASSERT_OK(rcc_wait(request));
}

// rcc_sendrecv: ring shifts by 1 and by size-1 (on one rank, to and from itself), with the
// received message's info, and with wildcards.
TEST_F(AnySource, SendrecvRingShift) {
  std::vector<int> shifts = {1};
  if (size() > 2) shifts.push_back(size() - 1);
  if (size() > 3) shifts.push_back(size() / 2);
  for (int shift : shifts) {
    const int dest = (rank() + shift) % size(), source = (rank() + size() - shift % size()) % size();
    for (size_t bytes : {size_t{0}, size_t{8}, kLarge}) {
      const int tag = 80 + shift;
      std::vector<uint8_t> out = make_message(rank(), shift, bytes), in(bytes + 8, 0xEE);
      rcc_msg_info_t info{-5, -5, 12345};
      RCC_ASSERT_OK(
          rcc_sendrecv(comm(), out.data(), bytes, dest, tag, in.data(), in.size(), source, tag, RCC_UINT8, &info));
      EXPECT_EQ(info.source, source) << "shift " << shift << ", " << bytes << " bytes";
      EXPECT_EQ(info.tag, tag);
      EXPECT_EQ(info.bytes, bytes);
      ASSERT_EQ(message_error(in.data(), source, shift, bytes), "") << "shift " << shift;
      for (size_t i = bytes; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE);
    }
  }
  // Wildcards: only the left neighbour sends to this rank.
  int64_t out = rank() * 1000 + 5, in = -1;
  rcc_msg_info_t info{-5, -5, 12345};
  RCC_ASSERT_OK(rcc_sendrecv(comm(), &out, 1, right(), 85, &in, 1, RCC_ANY_SOURCE, RCC_ANY_TAG, RCC_INT64, &info));
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.tag, 85);
  EXPECT_EQ(info.bytes, 8u);
  EXPECT_EQ(in, left() * 1000 + 5);
  // info may be NULL.
  RCC_ASSERT_OK(rcc_sendrecv(comm(), &out, 1, right(), 86, &in, 1, left(), 86, RCC_INT64, nullptr));
  EXPECT_EQ(in, left() * 1000 + 5);
}

// rcc_waitall skips NULL entries, sets every entry to NULL, and returns the first failure having
// still waited for (and freed) the rest.
TEST_F(AnySource, WaitallWithNullEntries) {
  std::vector<int64_t> out(size()), in(size(), -1);
  std::vector<rcc_request_t> requests = {nullptr};
  for (int peer = 0; peer < size(); ++peer) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_irecv(comm(), &in[peer], 1, RCC_INT64, peer, 90, &request));
    requests.push_back(request);
    requests.push_back(nullptr);
  }
  for (int peer = 0; peer < size(); ++peer) {
    out[peer] = rank() * 100 + peer;
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), &out[peer], 1, RCC_INT64, peer, 90, &request));
    requests.push_back(request);
  }
  requests.push_back(nullptr);
  RCC_ASSERT_OK(rcc_waitall(static_cast<int>(requests.size()), requests.data()));
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(requests[i], nullptr) << "entry " << i;
  for (int peer = 0; peer < size(); ++peer) EXPECT_EQ(in[peer], peer * 100 + rank()) << "from rank " << peer;
  // Nothing left to wait for.
  RCC_ASSERT_OK(rcc_waitall(static_cast<int>(requests.size()), requests.data()));
  RCC_ASSERT_OK(rcc_waitall(0, requests.data()));

  // A truncated receive in the middle: waitall fails with it, the others still complete.
  const int64_t small[2] = {rank() * 10 + 1, rank() * 10 + 2};
  std::vector<int64_t> big(5, rank());
  int64_t got_first = -1, got_last = -1;
  int64_t got_middle[2] = {-1, -1};
  rcc_request_t mixed[6] = {};
  RCC_ASSERT_OK(rcc_irecv(comm(), &got_first, 1, RCC_INT64, left(), 91, &mixed[0]));
  RCC_ASSERT_OK(rcc_irecv(comm(), got_middle, 2, RCC_INT64, left(), 92, &mixed[2]));
  RCC_ASSERT_OK(rcc_irecv(comm(), &got_last, 1, RCC_INT64, left(), 93, &mixed[3]));
  RCC_ASSERT_OK(rcc_isend(comm(), &small[0], 1, RCC_INT64, right(), 91, &mixed[1]));
  RCC_ASSERT_OK(rcc_isend(comm(), big.data(), big.size(), RCC_INT64, right(), 92, &mixed[4]));
  RCC_ASSERT_OK(rcc_isend(comm(), &small[1], 1, RCC_INT64, right(), 93, &mixed[5]));
  EXPECT_EQ(rcc_waitall(6, mixed), RCC_ERR_TRUNCATED);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(mixed[i], nullptr) << "entry " << i;
  EXPECT_EQ(got_first, left() * 10 + 1);
  EXPECT_EQ(got_last, left() * 10 + 2);
}

// rcc_waitany returns every non-NULL index exactly once (setting it to NULL), then RCC_UNDEFINED
// with RCC_SUCCESS.
TEST_F(AnySource, WaitanyReturnsEveryIndexOnce) {
  std::vector<int64_t> out(size()), in(size(), -1);
  std::vector<rcc_request_t> requests;
  for (int peer = 0; peer < size(); ++peer) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_irecv(comm(), &in[peer], 1, RCC_INT64, peer, 95, &request));
    requests.push_back(nullptr);
    requests.push_back(request);
  }
  for (int peer = 0; peer < size(); ++peer) {
    out[peer] = rank() * 100 + peer;
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), &out[peer], 1, RCC_INT64, peer, 95, &request));
    requests.push_back(request);
  }
  requests.push_back(nullptr);
  const std::vector<rcc_request_t> original = requests;
  const int live = 2 * size();
  std::set<int> seen;
  for (int n = 0; n < live; ++n) {
    int index = -12345;
    RCC_ASSERT_OK(rcc_waitany(static_cast<int>(requests.size()), requests.data(), &index));
    ASSERT_GE(index, 0) << "call " << n;
    ASSERT_LT(index, static_cast<int>(requests.size())) << "call " << n;
    ASSERT_NE(original[index], nullptr) << "index " << index << " was a NULL entry";
    ASSERT_TRUE(seen.insert(index).second) << "index " << index << " returned twice";
    ASSERT_EQ(requests[index], nullptr) << "entry " << index << " not set to NULL";
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(live));
  int index = -12345;
  RCC_ASSERT_OK(rcc_waitany(static_cast<int>(requests.size()), requests.data(), &index));
  EXPECT_EQ(index, RCC_UNDEFINED);
  index = -12345;
  RCC_ASSERT_OK(rcc_waitany(0, requests.data(), &index));
  EXPECT_EQ(index, RCC_UNDEFINED);
  for (int peer = 0; peer < size(); ++peer) EXPECT_EQ(in[peer], peer * 100 + rank()) << "from rank " << peer;

  // A failing request: its status is returned with its index, and its entry set to NULL.
  const int64_t big[3] = {1, 2, 3};
  int64_t small = -1;
  rcc_request_t pair[3] = {nullptr, nullptr, nullptr};
  RCC_ASSERT_OK(rcc_irecv(comm(), &small, 1, RCC_INT64, left(), 96, &pair[2]));
  RCC_ASSERT_OK(rcc_isend(comm(), big, 3, RCC_INT64, right(), 96, &pair[0]));
  bool got_truncated = false;
  for (int n = 0; n < 2; ++n) {
    index = -12345;
    const rcc_status_t status = rcc_waitany(3, pair, &index);
    ASSERT_TRUE(index == 0 || index == 2) << index;
    EXPECT_EQ(pair[index], nullptr);
    if (index == 2) {
      EXPECT_EQ(status, RCC_ERR_TRUNCATED);
      got_truncated = true;
    } else {
      EXPECT_EQ(status, RCC_SUCCESS) << "the sender of a truncated message completes";
    }
  }
  EXPECT_TRUE(got_truncated);
  index = -12345;
  RCC_ASSERT_OK(rcc_waitany(3, pair, &index));
  EXPECT_EQ(index, RCC_UNDEFINED);
}

// rcc_wait_info and rcc_test_info on receive requests (wildcard and specific) and on sends.
TEST_F(AnySource, WaitInfoAndTestInfo) {
  std::vector<uint8_t> in(64, 0xEE);
  rcc_request_t receive = nullptr;
  RCC_ASSERT_OK(rcc_irecv(comm(), in.data(), in.size(), RCC_UINT8, RCC_ANY_SOURCE, RCC_ANY_TAG, &receive));
  int done = -1;
  rcc_msg_info_t info{-5, -5, 12345};
  RCC_ASSERT_OK(rcc_test_info(receive, &done, &info));
  EXPECT_EQ(done, 0) << "nothing was sent yet";
  RCC_ASSERT_OK(rcc_barrier(comm()));
  std::vector<uint8_t> out = make_message(rank(), 17, 24);
  rcc_request_t send = nullptr;
  RCC_ASSERT_OK(rcc_isend(comm(), out.data(), out.size(), RCC_UINT8, right(), 17, &send));
  info = {-5, -5, 12345};
  RCC_ASSERT_OK(rcc_wait_info(receive, &info));
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.tag, 17);
  EXPECT_EQ(info.bytes, 24u);
  EXPECT_EQ(message_error(in.data(), left(), 17, 24), "");
  info = {-5, -5, 12345};
  RCC_ASSERT_OK(rcc_wait_info(send, &info));
  EXPECT_EQ(info.source, right()) << "a send's info names its peer";
  EXPECT_EQ(info.tag, 17);
  EXPECT_EQ(info.bytes, 24u);

  // rcc_test_info until done, a large message into a larger specific receive.
  in.assign(kLarge + 5, 0xEE);
  out = make_message(rank(), 18, kLarge);
  RCC_ASSERT_OK(rcc_irecv(comm(), in.data(), in.size(), RCC_UINT8, left(), 18, &receive));
  RCC_ASSERT_OK(rcc_isend(comm(), out.data(), out.size(), RCC_UINT8, right(), 18, &send));
  for (rcc_request_t request : {receive, send}) {
    done = 0;
    info = {-5, -5, 12345};
    while (!done) RCC_ASSERT_OK(rcc_test_info(request, &done, &info));
    EXPECT_EQ(info.source, request == receive ? left() : right());
    EXPECT_EQ(info.tag, 18);
    EXPECT_EQ(info.bytes, kLarge);
    EXPECT_EQ(rcc_test_info(request, &done, &info), RCC_ERR_INVALID_USAGE) << "a finished request is freed";
  }
  EXPECT_EQ(message_error(in.data(), left(), 18, kLarge), "");
  // info may be NULL.
  int32_t value = rank(), got = -1;
  RCC_ASSERT_OK(rcc_irecv(comm(), &got, 1, RCC_INT32, RCC_ANY_SOURCE, 19, &receive));
  RCC_ASSERT_OK(rcc_isend(comm(), &value, 1, RCC_INT32, right(), 19, &send));
  RCC_ASSERT_OK(rcc_wait_info(send, nullptr));
  done = 0;
  while (!done) RCC_ASSERT_OK(rcc_test_info(receive, &done, nullptr));
  EXPECT_EQ(got, left());
}

// Collectives' own messages never match a user's wildcard receive or probe: a pending
// RCC_ANY_SOURCE/RCC_ANY_TAG receive stays pending across collectives of every algorithm that
// goes through messages, then gets the one message really sent to it.
TEST_F(AnySource, CollectivesNeverMatchWildcards) {
  int64_t in[4] = {-1, -1, -1, -1};
  rcc_request_t receive = nullptr;
  RCC_ASSERT_OK(rcc_irecv(comm(), in, 4, RCC_INT64, RCC_ANY_SOURCE, RCC_ANY_TAG, &receive));
  const int64_t expected_sum = static_cast<int64_t>(size()) * (size() - 1) / 2;
  for (const char* algo : {"", "allreduce:ring,broadcast:tree,barrier:dissemination",
                           "allreduce:tree,broadcast:pipeline", "allreduce:recursive_doubling"}) {
    SCOPED_TRACE(std::string("RCC_ALGO=") + algo);
    if (*algo != '\0') setenv("RCC_ALGO", algo, 1);
    for (int i = 0; i < 3; ++i) {
      std::vector<int64_t> values(1000 + 7000 * i, rank()), sums(values.size(), -1);
      RCC_EXPECT_OK(rcc_allreduce(comm(), values.data(), sums.data(), values.size(), RCC_INT64, RCC_SUM));
      EXPECT_EQ(sums.front(), expected_sum);
      EXPECT_EQ(sums.back(), expected_sum);
    }
    RCC_EXPECT_OK(rcc_barrier(comm()));
    std::vector<int32_t> data(20000, rank() == 0 ? 77 : -1);
    RCC_EXPECT_OK(rcc_broadcast(comm(), data.data(), data.size(), RCC_INT32, 0));
    EXPECT_EQ(data.back(), 77);
    std::vector<int32_t> mine(3, rank()), all(3 * size(), -1);
    RCC_EXPECT_OK(rcc_allgather(comm(), mine.data(), all.data(), 3, RCC_INT32));
    EXPECT_EQ(all.back(), size() - 1);
    RCC_EXPECT_OK(rcc_barrier(comm()));
    unsetenv("RCC_ALGO");
    int done = -1;
    RCC_ASSERT_OK(rcc_test(receive, &done));
    ASSERT_EQ(done, 0) << "the wildcard receive took a collective's message";
    int found = -1;
    rcc_msg_info_t info{};
    RCC_ASSERT_OK(rcc_iprobe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, &found, &info));
    EXPECT_EQ(found, 0) << "a probe saw a collective's message: source " << info.source << " tag " << info.tag;
  }
  RCC_ASSERT_OK(rcc_barrier(comm()));
  const int64_t out[2] = {rank() * 1000 + 1, rank() * 1000 + 2};
  RCC_ASSERT_OK(rcc_send(comm(), out, 2, RCC_INT64, right(), 5));
  rcc_msg_info_t info{-5, -5, 12345};
  RCC_ASSERT_OK(rcc_wait_info(receive, &info));
  EXPECT_EQ(info.source, left());
  EXPECT_EQ(info.tag, 5);
  EXPECT_EQ(info.bytes, 16u);
  EXPECT_EQ(in[0], left() * 1000 + 1);
  EXPECT_EQ(in[1], left() * 1000 + 2);
  EXPECT_EQ(in[2], -1);
}

// The new calls' arguments: wildcards only where receives and probes take them, the rest named.
TEST_F(AnySource, BadArgumentsNameTheArgument) {
  int32_t value = 0;
  int found = 0, index = 0;
  rcc_msg_info_t info{};
  rcc_request_t request = nullptr;
  auto expect_invalid = [](rcc_status_t status, const char* call, const char* word) {
    EXPECT_EQ(status, RCC_ERR_INVALID_ARGUMENT) << call;
    EXPECT_NE(std::strstr(rcc_last_error(), word), nullptr) << call << ": " << rcc_last_error();
  };
  expect_invalid(rcc_send(comm(), &value, 1, RCC_INT32, RCC_ANY_SOURCE, 0), "send to RCC_ANY_SOURCE", "peer");
  expect_invalid(rcc_isend(comm(), &value, 1, RCC_INT32, 0, RCC_ANY_TAG, &request), "isend with RCC_ANY_TAG", "tag");
  EXPECT_EQ(request, nullptr);
  expect_invalid(rcc_recv_info(comm(), &value, 1, RCC_INT32, -2, 0, &info), "recv_info from -2", "peer");
  expect_invalid(rcc_recv_info(comm(), &value, 1, RCC_INT32, size(), 0, &info), "recv_info from size", "peer");
  expect_invalid(rcc_recv_info(comm(), &value, 1, RCC_INT32, RCC_ANY_SOURCE, -2, &info), "recv_info tag -2", "tag");
  expect_invalid(rcc_irecv(comm(), &value, 1, RCC_INT32, -3, RCC_ANY_TAG, &request), "irecv from -3", "peer");
  expect_invalid(rcc_probe(comm(), -2, RCC_ANY_TAG, &info), "probe from -2", "peer");
  expect_invalid(rcc_iprobe(comm(), RCC_ANY_SOURCE, -5, &found, &info), "iprobe tag -5", "tag");
  expect_invalid(rcc_iprobe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, nullptr, &info), "iprobe found NULL", "found");
  expect_invalid(rcc_probe(nullptr, 0, 0, &info), "probe on NULL", "comm");
  expect_invalid(rcc_sendrecv(comm(), &value, 1, RCC_ANY_SOURCE, 0, &value, 1, 0, 0, RCC_INT32, &info),
                 "sendrecv to RCC_ANY_SOURCE", "dest");
  expect_invalid(rcc_sendrecv(comm(), &value, 1, 0, RCC_ANY_TAG, &value, 1, 0, 0, RCC_INT32, &info),
                 "sendrecv sendtag RCC_ANY_TAG", "tag");
  expect_invalid(rcc_sendrecv(comm(), &value, 1, 0, 0, &value, 1, -2, 0, RCC_INT32, &info), "sendrecv source -2",
                 "source");
  expect_invalid(rcc_waitall(-1, &request), "waitall n -1", "n");
  expect_invalid(rcc_waitall(2, nullptr), "waitall requests NULL", "requests");
  expect_invalid(rcc_waitany(-1, &request, &index), "waitany n -1", "n");
  expect_invalid(rcc_waitany(1, nullptr, &index), "waitany requests NULL", "requests");
  expect_invalid(rcc_waitany(1, &request, nullptr), "waitany index NULL", "index");
  expect_invalid(rcc_wait_info(nullptr, &info), "wait_info NULL", "request");
  expect_invalid(rcc_test_info(nullptr, &found, &info), "test_info NULL", "request");
  // Nothing was started by the refused calls: the communicator is quiet.
  RCC_ASSERT_OK(rcc_iprobe(comm(), RCC_ANY_SOURCE, RCC_ANY_TAG, &found, &info));
  EXPECT_EQ(found, 0);
}

}  // namespace
