// Broadcast, reduce, gather and scatter from every root, each algorithm forced.
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

// A value unique to (source rank, element), for data-movement collectives.
uint64_t tagged(int r, size_t i) { return (static_cast<uint64_t>(r) + 1) * 1000003u + i * 7919u; }

void fill_tagged(rcc_datatype_t t, int r, void* p, size_t count) {
  for (size_t i = 0; i < count; ++i) store_bits(t, p, i, tagged(r, i));
}

size_t count_untagged(rcc_datatype_t t, int r, const void* p, size_t count) {
  const size_t bits = rcc_datatype_size(t) * 8;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += load_bits(t, p, i) != (tagged(r, i) & mask);
  return bad;
}

std::vector<int> roots_for(size_t count) {
  std::vector<int> roots;
  // Every root for small and mid counts; the large count from the first and last rank.
  if (count > 4096) return {0, ranktest::size() - 1};
  for (int r = 0; r < ranktest::size(); ++r) roots.push_back(r);
  return roots;
}

}  // namespace

TEST(Broadcast, EveryRootCountPerAlgorithm) {
  for (const char* algorithm : and_local({"tree", "pipeline"})) {
    ForceAlgo force(std::string("broadcast:") + algorithm);
    for (rcc_datatype_t t : {RCC_INT8, RCC_FLOAT16, RCC_FLOAT64}) {
      for (size_t count : counts_for(t)) {
        for (int root : roots_for(count)) {
          std::vector<uint8_t> buf(count * rcc_datatype_size(t) + 1, 0xee);
          if (ranktest::rank() == root) fill_tagged(t, root, buf.data(), count);
          RCC_ASSERT_OK(rcc_broadcast(ranktest::comm(), buf.data(), count, t, root));
          ASSERT_EQ(count_untagged(t, root, buf.data(), count), 0u)
              << algorithm << " " << type_name(t) << " count " << count << " root " << root;
          ASSERT_EQ(buf.back(), 0xee) << "wrote past the end";
        }
      }
    }
  }
}

// Small broadcasts go through a ring of cells per root when ranks outnumber cores, so a root can
// run several calls ahead of slow receivers (the cell it writes must be one every rank has read).
// Receivers that sleep between calls make the root fill the ring and wait; the root changes every
// seven calls while ranks are at different steps; sizes around the cell's limit (8 KiB) switch
// paths; a gather now and then takes the slots one-sidedly; every call's bytes differ from the
// call before, so a cell written too early shows.
TEST(Broadcast, RootRunsAheadOfSlowReceivers) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (const char* algorithm : and_local({"tree"})) {
    ForceAlgo force(std::string("broadcast:") + algorithm);
    for (int round = 0; round < 3; ++round) {
      for (int call = 0; call < 60; ++call) {
        const int root = (round + call / 7) % ranks;
        const size_t bytes = call % 20 == 19  ? 8193 + call
                             : call % 20 == 9 ? 8192
                                              : 1 + static_cast<size_t>(call) * 137 % 8192;
        std::vector<uint8_t> buf(bytes + 1, 0xee);
        const int id = round * 1000 + call;
        if (rank == root) fill_tagged(RCC_UINT8, id, buf.data(), bytes);
        // Receivers lag behind the root in the first half of each round.
        if (rank != root && call < 30 && (rank + call) % 3 == 0) usleep(300);
        RCC_ASSERT_OK(rcc_broadcast(ranktest::comm(), buf.data(), bytes, RCC_UINT8, root));
        ASSERT_EQ(count_untagged(RCC_UINT8, id, buf.data(), bytes), 0u)
            << algorithm << " round " << round << " call " << call << " root " << root << " bytes " << bytes;
        ASSERT_EQ(buf.back(), 0xee) << "wrote past the end";
        if (call % 13 == 12) {
          int32_t mine = rank * 10 + call;
          std::vector<int32_t> all(static_cast<size_t>(ranks), -1);
          RCC_ASSERT_OK(rcc_gather(ranktest::comm(), &mine, rank == root ? all.data() : nullptr, 1, RCC_INT32, root));
          if (rank == root) {
            for (int r = 0; r < ranks; ++r)
              ASSERT_EQ(all[static_cast<size_t>(r)], r * 10 + call) << "gather, call " << call;
          }
        }
      }
      // Other collectives between rounds must pair up with the steps the ring used.
      int32_t one = 1, sum = 0;
      RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), &one, &sum, 1, RCC_INT32, RCC_SUM));
      ASSERT_EQ(sum, ranks);
    }
  }
}

// The hierarchical broadcast has three forms by size: one message per host (4 KiB), a slice per
// channel (768 KiB), and pieces of 1 MiB along a chain of hosts (3 MiB and 4 bytes: more pieces
// than it posts receives ahead, and a short last piece with fewer elements than channels). Roots
// first, middle and last: the chain wraps round past the last host.
TEST(Broadcast, HierarchicalEveryForm) {
  RCC_SKIP_UNLESS_LEVELS("no levels on this communicator");
  ForceAlgo force("broadcast:hierarchical");
  for (size_t count : {size_t{1024}, size_t{192} << 10, (size_t{3} << 20) / 4 + 1}) {
    for (int root : {0, ranktest::size() / 2, ranktest::size() - 1}) {
      std::vector<int32_t> buf(count + 1, -1);
      if (ranktest::rank() == root) fill_tagged(RCC_INT32, root, buf.data(), count);
      RCC_ASSERT_OK(rcc_broadcast(ranktest::comm(), buf.data(), count, RCC_INT32, root));
      ASSERT_EQ(count_untagged(RCC_INT32, root, buf.data(), count), 0u) << "count " << count << " root " << root;
      ASSERT_EQ(buf.back(), -1) << "wrote past the end";
    }
  }
}

TEST(Broadcast, SixtyFourMiB) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const size_t count = (size_t{64} << 20) / 4;
  const int root = ranktest::size() - 1;
  std::vector<int32_t> buf(count, -1);
  if (ranktest::rank() == root) fill_tagged(RCC_INT32, root, buf.data(), count);
  RCC_ASSERT_OK(rcc_broadcast(ranktest::comm(), buf.data(), count, RCC_INT32, root));
  EXPECT_EQ(count_untagged(RCC_INT32, root, buf.data(), count), 0u);
}

TEST(Reduce, EveryTypeOpRootCount) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  // The tuner's choice; on a communicator with levels, the tree and the hierarchical one each.
  for (const char* algorithm : levels_or_tuner({"tree"}))
    for (int t = 0; t < RCC_NUM_DATATYPES; ++t) {
      const auto forced = force_unless_empty("reduce", algorithm);
      SCOPED_TRACE(algorithm);
      for (int o = 0; o < RCC_NUM_OPS; ++o) {
        const auto type = static_cast<rcc_datatype_t>(t);
        const auto op = static_cast<rcc_op_t>(o);
        if (!op_defined(type, op)) continue;
        // Every root for two representative pairs; the last root for the others.
        const bool all_roots = (type == RCC_FLOAT32 && op == RCC_SUM) || (type == RCC_INT32 && op == RCC_MAX);
        const bool large = op == RCC_SUM || type == RCC_FLOAT32;
        for (size_t count : counts_for(type, large)) {
          std::vector<int> roots = all_roots ? roots_for(count) : std::vector<int>{ranks - 1};
          for (int root : roots) {
            for (bool in_place : {false, true}) {
              const size_t element = rcc_datatype_size(type);
              std::vector<uint8_t> send(count * element + 1), recv(count * element + 1);
              fill(type, op, rank, send.data(), count, t);
              void* out = rank == root ? (in_place ? send.data() : recv.data()) : nullptr;
              RCC_ASSERT_OK(rcc_reduce(ranktest::comm(), send.data(), out, count, type, op, root));
              if (rank == root) {
                std::string first;
                ASSERT_EQ(check_reduced(type, op, ranks, out, count, 0, &first, t), 0u)
                    << type_name(type) << " " << op_name(op) << " count " << count << " root " << root << ": " << first;
              }
            }
          }
        }
      }
    }
}

TEST(Reduce, SixtyFourMiB) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const size_t count = (size_t{64} << 20) / 4;
  const int ranks = ranktest::size(), root = 0;
  std::vector<int32_t> send(count), recv(ranktest::rank() == root ? count : 0);
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<int32_t>(i % 1000) * (ranktest::rank() + 1);
  RCC_ASSERT_OK(rcc_reduce(ranktest::comm(), send.data(), recv.data(), count, RCC_INT32, RCC_SUM, root));
  if (ranktest::rank() == root) {
    size_t bad = 0;
    for (size_t i = 0; i < count; ++i) bad += recv[i] != static_cast<int32_t>(i % 1000) * ranks * (ranks + 1) / 2;
    EXPECT_EQ(bad, 0u);
  }
}

TEST(GatherScatter, EveryRootCountInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (rcc_datatype_t t : {RCC_UINT8, RCC_BFLOAT16, RCC_INT64}) {
    const size_t element = rcc_datatype_size(t);
    for (size_t count : counts_for(t)) {
      for (int root : roots_for(count)) {
        for (bool in_place : {false, true}) {
          // Gather: block r of the root's buffer is rank r's data.
          std::vector<uint8_t> all(count * element * ranks + 1, 0xee), mine(count * element + 1);
          uint8_t* send = mine.data();
          if (in_place && rank == root) send = all.data() + root * count * element;
          fill_tagged(t, rank, send, count);
          RCC_ASSERT_OK(rcc_gather(ranktest::comm(), send, rank == root ? all.data() : nullptr, count, t, root));
          if (rank == root) {
            for (int r = 0; r < ranks; ++r) {
              ASSERT_EQ(count_untagged(t, r, all.data() + r * count * element, count), 0u)
                  << "gather " << type_name(t) << " count " << count << " root " << root << " block " << r;
            }
            ASSERT_EQ(all.back(), 0xee);
          }
          // Scatter: rank r receives block r of the root's buffer.
          std::vector<uint8_t> source(rank == root ? count * element * ranks : 0), got(count * element + 1, 0xee);
          if (rank == root) {
            for (int r = 0; r < ranks; ++r) fill_tagged(t, r, source.data() + r * count * element, count);
          }
          uint8_t* recv = got.data();
          if (in_place && rank == root) recv = source.data() + root * count * element;
          RCC_ASSERT_OK(rcc_scatter(ranktest::comm(), rank == root ? source.data() : nullptr, recv, count, t, root));
          ASSERT_EQ(count_untagged(t, rank, recv, count), 0u)
              << "scatter " << type_name(t) << " count " << count << " root " << root;
          ASSERT_EQ(got.back(), 0xee);
        }
      }
    }
  }
}

TEST(GatherScatter, SixtyFourMiB) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const int ranks = ranktest::size(), rank = ranktest::rank(), root = ranks / 2;
  const size_t count = (size_t{64} << 20) / 4 / static_cast<size_t>(ranks);
  std::vector<int32_t> mine(count), all(rank == root ? count * ranks : 0);
  fill_tagged(RCC_INT32, rank, mine.data(), count);
  RCC_ASSERT_OK(rcc_gather(ranktest::comm(), mine.data(), all.data(), count, RCC_INT32, root));
  std::fill(mine.begin(), mine.end(), 0);
  RCC_ASSERT_OK(rcc_scatter(ranktest::comm(), all.data(), mine.data(), count, RCC_INT32, root));
  EXPECT_EQ(count_untagged(RCC_INT32, rank, mine.data(), count), 0u);
}
