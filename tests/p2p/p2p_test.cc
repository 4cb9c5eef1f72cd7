// Point-to-point over the communicator's transport: content, ordering, many outstanding requests,
// self-send, all-to-all, truncation and bad arguments. Runs on 1..8 ranks.
#include <sys/mman.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

// A byte pattern that depends on sender, size and position, so misplaced bytes are caught.
uint8_t pattern(int sender, size_t bytes, size_t i) {
  return static_cast<uint8_t>((i * 131u) ^ (static_cast<size_t>(sender) * 977u) ^ (bytes * 7u) ^ (i >> 11));
}

std::vector<uint8_t> make_message(int sender, size_t bytes) {
  std::vector<uint8_t> message(bytes);
  for (size_t i = 0; i < bytes; ++i) message[i] = pattern(sender, bytes, i);
  return message;
}

void expect_message(const std::vector<uint8_t>& got, int sender, size_t bytes) {
  ASSERT_GE(got.size(), bytes);
  for (size_t i = 0; i < bytes; ++i) {
    if (got[i] != pattern(sender, bytes, i)) {
      FAIL() << "byte " << i << " of a " << bytes << "-byte message from rank " << sender << " is wrong";
    }
  }
}

TEST(PointToPoint, PingPongSizes) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";  // the self-send test covers one rank
  // Around the eager limits too: RCC_EAGER_LIMIT (8 KiB) and, toward ranks on other hosts over
  // UCX's TCP, RCC_EAGER_LIMIT_NET (64 KiB).
  const size_t sizes[] = {0, 1, 7, 4096, 8192, 8193, 65536, 65537, (1u << 20) + 3, 64u << 20};
  // Rank 0 plays ping-pong with every other rank in turn.
  for (int partner = 1; partner < size(); ++partner) {
    for (size_t bytes : sizes) {
      if (rank() == 0) {
        std::vector<uint8_t> out = make_message(0, bytes), back(bytes + 16, 0xEE);
        RCC_ASSERT_OK(rcc_send(comm(), out.data(), bytes, RCC_UINT8, partner, 5));
        RCC_ASSERT_OK(rcc_recv(comm(), back.data(), bytes, RCC_UINT8, partner, 6));
        expect_message(back, partner, bytes);
        for (size_t i = bytes; i < back.size(); ++i) ASSERT_EQ(back[i], 0xEE) << "write past the end";
      } else if (rank() == partner) {
        std::vector<uint8_t> in(bytes + 16, 0xEE);
        RCC_ASSERT_OK(rcc_recv(comm(), in.data(), bytes, RCC_UINT8, 0, 5));
        expect_message(in, 0, bytes);
        std::vector<uint8_t> reply = make_message(partner, bytes);
        RCC_ASSERT_OK(rcc_send(comm(), reply.data(), bytes, RCC_UINT8, 0, 6));
      }
    }
  }
}

TEST(PointToPoint, ThousandOutstandingBothWays) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  constexpr int kCount = 1000;
  std::vector<int32_t> out(kCount), in(kCount, -1);
  std::vector<rcc_request_t> requests;
  for (int i = 0; i < kCount; ++i) {
    out[i] = rank() * 100000 + i;
    rcc_request_t receive = nullptr, send = nullptr;
    RCC_ASSERT_OK(rcc_irecv(comm(), &in[i], 1, RCC_INT32, peer, 9, &receive));
    RCC_ASSERT_OK(rcc_isend(comm(), &out[i], 1, RCC_INT32, peer, 9, &send));
    requests.push_back(receive);
    requests.push_back(send);
  }
  // Wait newest first: completion must not depend on the order of waits.
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) RCC_ASSERT_OK(rcc_wait(*it));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(in[i], peer * 100000 + i) << "message " << i << " out of order";
}

// Peak resident memory of this process, in bytes.
long peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

// A sender that outruns its receiver waits once a window of messages is queued, instead of
// queueing copies without bound: 100,000 blocking 4-byte sends to a rank asleep for a second grew
// the sender by about 12 MB when every one was copied into the queue; a bounded queue keeps it
// flat. Every message still arrives, in order. RCC_TEST_QUICK (the emulated guests, the sanitizer
// builds): 3,000 messages, order only. 100,000 over soft-iWARP between two one-CPU guests once ran
// 40 s, until the receiver heard no heartbeat from the sender for RCC_PEER_TIMEOUT (30 s).
TEST(PointToPoint, SenderAheadOfASleepingReceiverWaitsInsteadOfQueueing) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const char* quick_setting = std::getenv("RCC_TEST_QUICK");
  const bool quick = quick_setting != nullptr && quick_setting[0] == '1';
  const int count = quick ? 3000 : 100000;
  if (rank() == 0) {
    const long before = peak_resident_bytes();
    for (int32_t i = 0; i < count; ++i) RCC_ASSERT_OK(rcc_send(comm(), &i, 1, RCC_INT32, 1, 21));
    if (!quick) {
      EXPECT_LT(peak_resident_bytes() - before, 4L << 20) << "the sender queued its messages without bound";
    }
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    for (int32_t i = 0; i < count; ++i) {
      int32_t got = -1;
      RCC_ASSERT_OK(rcc_recv(comm(), &got, 1, RCC_INT32, 0, 21));
      ASSERT_EQ(got, i) << "message " << i << " out of order";
    }
  }
}

// Sends waiting in the queue for room (beyond the window of copies) end with their communicator:
// aborted, they fail instead of hanging or being written later, and other communicators go on.
TEST(PointToPoint, AbortEndsSendsWaitingForRoom) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  rcc_comm_t dup = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &dup));
  if (rank() == 0) {
    // No progress between the posts, so no credit comes back: most of these wait for room.
    constexpr int kCount = 300;
    std::vector<int32_t> values(kCount);
    std::vector<rcc_request_t> requests(kCount);
    for (int i = 0; i < kCount; ++i) {
      values[static_cast<size_t>(i)] = i;
      RCC_ASSERT_OK(
          rcc_isend(dup, &values[static_cast<size_t>(i)], 1, RCC_INT32, 1, 3, &requests[static_cast<size_t>(i)]));
    }
    RCC_ASSERT_OK(rcc_comm_abort(dup));
    int aborted = 0;
    for (rcc_request_t request : requests) {
      const rcc_status_t status = rcc_wait(request);
      if (status == RCC_ERR_ABORTED) {
        ++aborted;
      } else {
        EXPECT_EQ(status, RCC_SUCCESS) << rcc_last_error();
      }
    }
    EXPECT_GT(aborted, 0) << "no send waited for room";
  }
  RCC_ASSERT_OK(rcc_barrier(comm()));
  RCC_ASSERT_OK(rcc_comm_destroy(dup));
}

// A send that completed is delivered whatever its sender does next: the copies still waiting
// for a slot when their communicator is destroyed go out (rcc_comm_destroy of a communicator
// that is not the job's last does not wait; the world barrier after it progresses). The
// receiver sleeps, so the sender fills its slots and its window of copies, exactly.
TEST(PointToPoint, SendsCompletedBeforeDestroyStillArrive) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  const char* slots_setting = std::getenv("RCC_EAGER_SLOTS");
  const int slots = slots_setting != nullptr ? std::atoi(slots_setting) : 32;
  const int count = 2 * slots;  // the slots, then as many copies
  rcc_comm_t dup = nullptr;
  RCC_ASSERT_OK(rcc_comm_dup(comm(), &dup));
  if (rank() == 0) {
    for (int32_t i = 0; i < count; ++i) RCC_ASSERT_OK(rcc_send(dup, &i, 1, RCC_INT32, 1, 5));
    RCC_ASSERT_OK(rcc_comm_destroy(dup));
  } else if (rank() == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // Polled with a deadline of its own: a message lost fails here, not at RCC_TIMEOUT.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int32_t i = 0; i < count; ++i) {
      int32_t got = -1;
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(rcc_irecv(dup, &got, 1, RCC_INT32, 0, 5, &request));
      int done = 0;
      while (done == 0 && std::chrono::steady_clock::now() < deadline) RCC_ASSERT_OK(rcc_test(request, &done));
      ASSERT_EQ(done, 1) << "message " << i << " of " << count << " never arrived";
      ASSERT_EQ(got, i);
    }
    RCC_ASSERT_OK(rcc_comm_destroy(dup));
  } else {
    RCC_ASSERT_OK(rcc_comm_destroy(dup));
  }
  RCC_ASSERT_OK(rcc_barrier(comm()));
}

TEST(PointToPoint, LargeOutstandingMixedWithSmall) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  const size_t sizes[] = {100, 300000, 5, 2u << 20, 0, 70000};
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<rcc_request_t> requests;
  for (size_t bytes : sizes) {
    out.push_back(make_message(rank(), bytes));
    in.emplace_back(bytes);
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_irecv(comm(), in[i].data(), sizes[i], RCC_UINT8, peer, 3, &request));
    requests.push_back(request);
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out[i].data(), sizes[i], RCC_UINT8, peer, 3, &request));
    requests.push_back(request);
  }
  for (rcc_request_t request : requests) RCC_ASSERT_OK(rcc_wait(request));
  for (size_t i = 0; i < std::size(sizes); ++i) expect_message(in[i], peer, sizes[i]);
}

// More rendezvous messages in flight than there are eager slots and notice credits.
TEST(PointToPoint, HundredsOfLargeMessagesInFlight) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  constexpr int kCount = 300;
  constexpr size_t kBytes = 64 * 1024 + 3;
  std::vector<uint8_t> out(kCount * kBytes), in(kCount * kBytes, 0);
  for (size_t i = 0; i < out.size(); ++i) out[i] = pattern(rank(), kBytes, i);
  std::vector<rcc_request_t> requests;
  // Rank 0 posts its receives first, rank 1 its sends first: both orders must work.
  for (int pass = 0; pass < 2; ++pass) {
    const bool receives = (pass == 0) == (rank() == 0);
    for (int i = 0; i < kCount; ++i) {
      rcc_request_t request = nullptr;
      if (receives) {
        RCC_ASSERT_OK(rcc_irecv(comm(), &in[i * kBytes], kBytes, RCC_UINT8, peer, 30, &request));
      } else {
        RCC_ASSERT_OK(rcc_isend(comm(), &out[i * kBytes], kBytes, RCC_UINT8, peer, 30, &request));
      }
      requests.push_back(request);
    }
  }
  for (rcc_request_t request : requests) RCC_ASSERT_OK(rcc_wait(request));
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], pattern(peer, kBytes, i)) << "byte " << i;
}

TEST(PointToPoint, InterleavedTagsMatchByTag) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  constexpr int kPerTag = 50;
  if (rank() == 0) {
    for (int i = 0; i < kPerTag; ++i) {
      for (int tag = 0; tag < 3; ++tag) {
        int64_t value = tag * 1000 + i;
        RCC_ASSERT_OK(rcc_send(comm(), &value, 1, RCC_INT64, peer, tag));
      }
    }
  } else {
    // Receive tag 2 first, then 0, then 1: each tag's messages still arrive in the order sent.
    for (int tag : {2, 0, 1}) {
      for (int i = 0; i < kPerTag; ++i) {
        int64_t value = -1;
        RCC_ASSERT_OK(rcc_recv(comm(), &value, 1, RCC_INT64, peer, tag));
        ASSERT_EQ(value, tag * 1000 + i);
      }
    }
  }
}

TEST(PointToPoint, SelfSend) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{4096}, size_t{(1u << 20) + 3}}) {
    std::vector<uint8_t> out = make_message(rank(), bytes), in(bytes);
    rcc_request_t send = nullptr;
    RCC_ASSERT_OK(rcc_isend(comm(), out.data(), bytes, RCC_UINT8, rank(), 1, &send));
    RCC_ASSERT_OK(rcc_recv(comm(), in.data(), bytes, RCC_UINT8, rank(), 1));
    RCC_ASSERT_OK(rcc_wait(send));
    expect_message(in, rank(), bytes);
    // Receive posted first this time.
    rcc_request_t receive = nullptr;
    std::fill(in.begin(), in.end(), 0);
    RCC_ASSERT_OK(rcc_irecv(comm(), in.data(), bytes, RCC_UINT8, rank(), 2, &receive));
    RCC_ASSERT_OK(rcc_send(comm(), out.data(), bytes, RCC_UINT8, rank(), 2));
    RCC_ASSERT_OK(rcc_wait(receive));
    expect_message(in, rank(), bytes);
  }
}

TEST(PointToPoint, EveryoneToEveryoneAtOnce) {
  for (size_t bytes : {size_t{8}, size_t{20000}, size_t{300000}}) {
    std::vector<std::vector<uint8_t>> out(size()), in(size());
    std::vector<rcc_request_t> requests;
    for (int peer = 0; peer < size(); ++peer) {
      in[peer].assign(bytes, 0);
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(rcc_irecv(comm(), in[peer].data(), bytes, RCC_UINT8, peer, 4, &request));
      requests.push_back(request);
    }
    for (int peer = 0; peer < size(); ++peer) {
      out[peer] = make_message(rank() * 64 + peer, bytes);
      rcc_request_t request = nullptr;
      RCC_ASSERT_OK(rcc_isend(comm(), out[peer].data(), bytes, RCC_UINT8, peer, 4, &request));
      requests.push_back(request);
    }
    for (rcc_request_t request : requests) RCC_ASSERT_OK(rcc_wait(request));
    for (int peer = 0; peer < size(); ++peer) expect_message(in[peer], peer * 64 + rank(), bytes);
  }
}

TEST(PointToPoint, TestPollsUntilDone) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  std::vector<float> out(100000, static_cast<float>(rank())), in(100000, -1.0f);
  rcc_request_t receive = nullptr, send = nullptr;
  RCC_ASSERT_OK(rcc_irecv(comm(), in.data(), in.size(), RCC_FLOAT32, peer, 8, &receive));
  RCC_ASSERT_OK(rcc_isend(comm(), out.data(), out.size(), RCC_FLOAT32, peer, 8, &send));
  for (rcc_request_t request : {receive, send}) {
    int done = 0;
    while (!done) RCC_ASSERT_OK(rcc_test(request, &done));
    // A finished request is freed: using it again is an error, not a crash.
    EXPECT_EQ(rcc_test(request, &done), RCC_ERR_INVALID_USAGE);
  }
  for (float value : in) ASSERT_EQ(value, static_cast<float>(peer));
}

TEST(PointToPoint, TruncationIsAnError) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  for (size_t bytes : {size_t{64}, size_t{1u << 20}}) {
    if (rank() == 0) {
      std::vector<uint8_t> out = make_message(0, bytes);
      RCC_ASSERT_OK(rcc_send(comm(), out.data(), bytes, RCC_UINT8, peer, 11));
    } else {
      std::vector<uint8_t> in(bytes / 2);
      EXPECT_EQ(rcc_recv(comm(), in.data(), in.size(), RCC_UINT8, peer, 11), RCC_ERR_TRUNCATED);
      EXPECT_NE(std::strstr(rcc_last_error(), "longer than the receive buffer"), nullptr) << rcc_last_error();
    }
    // The pair still works afterwards.
    int32_t token = 42;
    if (rank() == 0) {
      RCC_ASSERT_OK(rcc_recv(comm(), &token, 1, RCC_INT32, peer, 12));
    } else {
      RCC_ASSERT_OK(rcc_send(comm(), &token, 1, RCC_INT32, peer, 12));
    }
  }
}

// Large buffers are registered once and cached. Unmapping one and mapping new pages at the same
// address must not send from (or land in) the old pages.
TEST(PointToPoint, UnmappedAndRemappedBuffersCarryTheirNewContents) {
  if (size() < 2) GTEST_SKIP() << "needs two ranks";
  if (rank() > 1) return;
  const int peer = 1 - rank();
  constexpr size_t kBytes = 4u << 20;
  void* address = nullptr;
  for (int round = 0; round < 6; ++round) {
    // The same address every round (MAP_FIXED_NOREPLACE: it was just unmapped), new zeroed pages.
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (address != nullptr ? MAP_FIXED_NOREPLACE : 0);
    void* mapped = mmap(address, kBytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED) << std::strerror(errno);
    if (address != nullptr) {
      ASSERT_EQ(mapped, address) << "the kernel moved the mapping";
    }
    address = mapped;
    auto* buffer = static_cast<uint8_t*>(mapped);
    if (rank() == 0) {
      for (size_t i = 0; i < kBytes; ++i) buffer[i] = pattern(round, kBytes, i);
      RCC_ASSERT_OK(rcc_send(comm(), buffer, kBytes, RCC_UINT8, peer, 20));
    } else {
      RCC_ASSERT_OK(rcc_recv(comm(), buffer, kBytes, RCC_UINT8, peer, 20));
      for (size_t i = 0; i < kBytes; ++i) {
        ASSERT_EQ(buffer[i], pattern(round, kBytes, i)) << "round " << round << ": byte " << i << " is stale";
      }
    }
    // Reuse without unmapping too: the cached registration is hit and the new contents travel.
    if (rank() == 0) {
      for (size_t i = 0; i < kBytes; i += 4096) buffer[i] = static_cast<uint8_t>(round + 100);
      RCC_ASSERT_OK(rcc_send(comm(), buffer, kBytes, RCC_UINT8, peer, 21));
    } else {
      RCC_ASSERT_OK(rcc_recv(comm(), buffer, kBytes, RCC_UINT8, peer, 21));
      for (size_t i = 0; i < kBytes; i += 4096) ASSERT_EQ(buffer[i], static_cast<uint8_t>(round + 100));
    }
    ASSERT_EQ(munmap(buffer, kBytes), 0);
  }
}

TEST(PointToPoint, BadArgumentsNameTheArgument) {
  int32_t value = 0;
  rcc_request_t request = nullptr;
  EXPECT_EQ(rcc_send(comm(), nullptr, 4, RCC_INT32, 0, 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "buf is NULL"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_send(comm(), &value, 1, RCC_INT32, size(), 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "peer"), nullptr) << rcc_last_error();
  // -1 is RCC_ANY_SOURCE, which receives take; -2 is no rank.
  EXPECT_EQ(rcc_recv(comm(), &value, 1, RCC_INT32, -2, 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc_send(comm(), &value, 1, RCC_INT32, 0, -3), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "tag"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_send(comm(), &value, 1, static_cast<rcc_datatype_t>(99), 0, 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "datatype"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_send(comm(), &value, SIZE_MAX / 2, RCC_INT32, 0, 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "overflows"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_isend(comm(), &value, 1, RCC_INT32, 0, 0, nullptr), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rcc_send(nullptr, &value, 1, RCC_INT32, 0, 0), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(rcc_last_error(), "comm is NULL"), nullptr) << rcc_last_error();
  EXPECT_EQ(rcc_wait(nullptr), RCC_ERR_INVALID_ARGUMENT);
  // A zero-count message with a NULL buffer is fine.
  RCC_EXPECT_OK(rcc_isend(comm(), nullptr, 0, RCC_INT32, rank(), 0, &request));
  RCC_EXPECT_OK(rcc_recv(comm(), nullptr, 0, RCC_INT32, rank(), 0));
  RCC_EXPECT_OK(rcc_wait(request));
}

}  // namespace
