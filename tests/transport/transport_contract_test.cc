// The transport contract (docs/transport.md), run against whichever backend RCC_TRANSPORT selects:
// ctest runs it with the default (UCX on a host without RDMA), with verbs on rxe and with verbs on
// siw inside the VM. Ranks are threads of this process; blobs are exchanged in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "rank_threads.h"
#include "transport/verbs/verbs_transport.h"

namespace transport_test {
namespace {

uint8_t pattern(int rank, int round, size_t i) {
  return static_cast<uint8_t>(rank * 31 + round * 7 + i * 13 + (i >> 8));
}

class ContractTest : public ::testing::TestWithParam<int> {};

// Notified writes of many sizes from every rank to every rank (itself included), content checked.
TEST_P(ContractTest, NotifiedWritesOfManySizesToEveryRank) {
  const std::vector<size_t> sizes = {0, 1, 3, 8, 100, 4095, 4096, 4097, 65536, 65537, 1 << 20, (8 << 20) + 3};
  const size_t max_size = sizes.back();
  run_ranks(GetParam(), [&](Rank& rank) {
    const int n = rank.size();
    Rank::Region inbox;  // one max_size slot per source rank
    if (!rank.share_region(max_size * n, &inbox)) return;
    Rank::Region outbox;
    if (!rank.share_region(max_size, &outbox)) return;
    for (int round = 0; round < static_cast<int>(sizes.size()); ++round) {
      size_t length = sizes[round];
      for (size_t i = 0; i < length; ++i) outbox.bytes[i] = pattern(rank.rank(), round, i);
      for (int dst = 0; dst < n; ++dst) {
        uint64_t cookie = (static_cast<uint64_t>(round) << 16) + dst + 1;
        uint32_t imm = (static_cast<uint32_t>(rank.rank()) << 16) | static_cast<uint32_t>(round);
        rcc::Status status = rank.transport().write(dst, outbox.bytes.data(), length, *outbox.memory,
                                                    inbox.remote_base[dst] + max_size * rank.rank(), *inbox.keys[dst],
                                                    true, imm, cookie);
        ASSERT_EQ(status, RCC_SUCCESS) << rcc::last_error();
      }
      ASSERT_TRUE(rank.progress_until([&] {
        return rank.notifies.size() >= static_cast<size_t>(n) &&
               rank.write_done_cookies.size() >= static_cast<size_t>(n);
      }));
      ASSERT_EQ(rank.notifies.size(), static_cast<size_t>(n));
      std::vector<bool> seen(n, false);
      for (const Event& e : rank.notifies) {
        ASSERT_GE(e.peer, 0);
        ASSERT_LT(e.peer, n);
        EXPECT_FALSE(seen[e.peer]) << "two notifies from rank " << e.peer;
        seen[e.peer] = true;
        EXPECT_EQ(e.imm, (static_cast<uint32_t>(e.peer) << 16) | static_cast<uint32_t>(round));
        EXPECT_EQ(e.length, length) << "from rank " << e.peer;
        const uint8_t* slot = inbox.bytes.data() + max_size * e.peer;
        for (size_t i = 0; i < length; ++i) {
          if (slot[i] != pattern(e.peer, round, i)) {
            ADD_FAILURE() << "rank " << rank.rank() << ": byte " << i << " of " << length << " from rank " << e.peer
                          << " is " << int(slot[i]) << ", expected " << int(pattern(e.peer, round, i));
            break;
          }
        }
      }
      std::vector<uint64_t> cookies = rank.write_done_cookies;
      std::sort(cookies.begin(), cookies.end());
      for (int dst = 0; dst < n; ++dst) {
        EXPECT_EQ(cookies[dst], (static_cast<uint64_t>(round) << 16) + dst + 1);
      }
      rank.notifies.clear();
      rank.write_done_cookies.clear();
      ASSERT_TRUE(rank.barrier());  // nobody overwrites a slot before its owner checked it
    }
    rank.barrier();
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, ContractTest, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

// Many unnotified writes (more than any send queue holds), then notified ones: when a notify arrives
// every earlier write is visible; notifies arrive in posting order; each cookie is reported once.
TEST(Contract, BurstOfWritesThenNotifiesKeepOrder) {
  constexpr int kWrites = 2000;
  constexpr size_t kPiece = 1024;
  constexpr int kNotifies = 40;
  const uint32_t kImms[] = {0u, 0xffffffffu, 0x80000000u, 0x12345678u};
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(kWrites * kPiece, &region)) return;
    if (rank.rank() == 0) {
      for (size_t i = 0; i < region.bytes.size(); ++i) region.bytes[i] = pattern(0, 1, i);
      for (int w = 0; w < kWrites; ++w) {
        ASSERT_EQ(rank.transport().write(1, region.bytes.data() + w * kPiece, kPiece, *region.memory,
                                         region.remote_base[1] + w * kPiece, *region.keys[1], false, 0, 1000 + w),
                  RCC_SUCCESS)
            << rcc::last_error();
      }
      for (int k = 0; k < kNotifies; ++k) {
        uint32_t imm = k < 4 ? kImms[k] : static_cast<uint32_t>(k);
        ASSERT_EQ(rank.transport().write(1, region.bytes.data(), 8, *region.memory, region.remote_base[1],
                                         *region.keys[1], true, imm, 0),
                  RCC_SUCCESS);
      }
      ASSERT_TRUE(rank.progress_until([&] { return rank.write_done_cookies.size() >= static_cast<size_t>(kWrites); }));
      std::vector<uint64_t> cookies = rank.write_done_cookies;
      std::sort(cookies.begin(), cookies.end());
      ASSERT_EQ(cookies.size(), static_cast<size_t>(kWrites)) << "cookie 0 must not give kWriteDone";
      for (int w = 0; w < kWrites; ++w) EXPECT_EQ(cookies[w], static_cast<uint64_t>(1000 + w));
    } else {
      ASSERT_TRUE(rank.progress_until([&] { return !rank.notifies.empty(); }));
      for (size_t i = 0; i < region.bytes.size(); ++i) {
        if (region.bytes[i] != pattern(0, 1, i)) {
          ADD_FAILURE() << "byte " << i << " not visible when the first notify arrived";
          break;
        }
      }
      ASSERT_TRUE(rank.progress_until([&] { return rank.notifies.size() >= static_cast<size_t>(kNotifies); }));
      for (int k = 0; k < kNotifies; ++k) {
        EXPECT_EQ(rank.notifies[k].imm, k < 4 ? kImms[k] : static_cast<uint32_t>(k)) << "notify " << k;
        EXPECT_EQ(rank.notifies[k].length, 8u);
        EXPECT_EQ(rank.notifies[k].peer, 0);
      }
    }
    rank.barrier();
  });
}

// A write larger than the backend's largest message (verbs: lowered to 64 KiB for the test) is one
// write: one kNotify with the whole length, one kWriteDone, all bytes in place.
TEST(Contract, SplitWriteIsOneWrite) {
  constexpr size_t kLength = (1 << 20) + 5;
  run_ranks(2, [&](Rank& rank) {
    rcc::transport::verbs::set_max_chunk_for_testing(rank.transport(), 64 << 10);
    Rank::Region region;
    if (!rank.share_region(2 * kLength, &region)) return;
    if (rank.rank() == 0) {
      for (size_t i = 0; i < region.bytes.size(); ++i) region.bytes[i] = pattern(0, 2, i);
      ASSERT_EQ(rank.transport().write(1, region.bytes.data(), kLength, *region.memory, region.remote_base[1],
                                       *region.keys[1], false, 0, 7),
                RCC_SUCCESS);
      ASSERT_EQ(rank.transport().write(1, region.bytes.data() + kLength, kLength, *region.memory,
                                       region.remote_base[1] + kLength, *region.keys[1], true, 99, 8),
                RCC_SUCCESS);
      ASSERT_TRUE(rank.progress_until([&] { return rank.write_done_cookies.size() >= 2; }));
      std::sort(rank.write_done_cookies.begin(), rank.write_done_cookies.end());
      EXPECT_EQ(rank.write_done_cookies, (std::vector<uint64_t>{7, 8}));
    } else {
      ASSERT_TRUE(rank.progress_until([&] { return !rank.notifies.empty(); }));
      EXPECT_EQ(rank.notifies.size(), 1u);
      EXPECT_EQ(rank.notifies[0].imm, 99u);
      EXPECT_EQ(rank.notifies[0].length, kLength);
      for (size_t i = 0; i < 2 * kLength; ++i) {
        if (region.bytes[i] != pattern(0, 2, i)) {
          ADD_FAILURE() << "byte " << i << " of the split writes is wrong";
          break;
        }
      }
    }
    rank.barrier();
  });
}

TEST(Contract, MalformedKeysAreRefused) {
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(4096, &region)) return;
    std::vector<uint8_t> key;
    ASSERT_EQ(rank.transport().pack_key(*region.memory, &key), RCC_SUCCESS);
    std::unique_ptr<RemoteKey> out;
    int peer = 1 - rank.rank();
    EXPECT_EQ(rank.transport().import_key(peer, {}, &out), RCC_ERR_INVALID_ARGUMENT);
    EXPECT_FALSE(rcc::last_error().empty());
    std::vector<uint8_t> truncated(key.begin(), key.end() - 1);
    EXPECT_EQ(rank.transport().import_key(peer, truncated, &out), RCC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(rank.transport().import_key(-1, key, &out), RCC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(rank.transport().import_key(2, key, &out), RCC_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(out, nullptr) << "outputs are set only on success";
    rank.barrier();
  });
}

// wait_for_event honours its timeout when nothing happens and wakes up for a notify.
TEST(Contract, WaitForEventWakesOnNotify) {
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(64, &region)) return;
    if (rank.rank() == 1) {
      auto start = std::chrono::steady_clock::now();
      ASSERT_EQ(rank.transport().wait_for_event(50), RCC_SUCCESS);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "timeout not honoured";
    }
    if (!rank.barrier()) return;
    if (rank.rank() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ASSERT_EQ(rank.transport().write(1, region.bytes.data(), 8, *region.memory, region.remote_base[1],
                                       *region.keys[1], true, 5, 0),
                RCC_SUCCESS);
    } else {
      auto start = std::chrono::steady_clock::now();
      while (rank.notifies.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
        ASSERT_EQ(rank.transport().wait_for_event(30000), RCC_SUCCESS);
        rank.poll_once();
      }
      ASSERT_EQ(rank.notifies.size(), 1u);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20))
          << "wait_for_event(30000) did not return when the notify arrived";
    }
    rank.barrier();
  });
}

}  // namespace
}  // namespace transport_test
