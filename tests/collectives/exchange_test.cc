// Allgather, reduce-scatter and alltoall: counts 0..1 MiB+5, in place and out of place, 64 MiB.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

uint64_t tagged(int from, int to, size_t i) {
  return (static_cast<uint64_t>(from) * 131 + static_cast<uint64_t>(to) + 1) * 1000003u + i * 7919u;
}
}  // namespace

TEST(Allgather, CountsTypesInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (const char* algorithm : levels_or_tuner({"ring"}))
    for (rcc_datatype_t t : {RCC_UINT8, RCC_FLOAT16, RCC_INT32, RCC_FLOAT64}) {
      const auto forced = force_unless_empty("allgather", algorithm);
      SCOPED_TRACE(algorithm);
      const size_t element = rcc_datatype_size(t);
      for (size_t count : counts_for(t)) {
        for (bool in_place : {false, true}) {
          std::vector<uint8_t> all(count * element * ranks + 1, 0xee), mine(count * element);
          uint8_t* send = in_place ? all.data() + rank * count * element : mine.data();
          for (size_t i = 0; i < count; ++i) store_bits(t, send, i, tagged(rank, 0, i));
          RCC_ASSERT_OK(rcc_allgather(ranktest::comm(), send, all.data(), count, t));
          size_t bad = 0;
          for (int r = 0; r < ranks; ++r) {
            for (size_t i = 0; i < count; ++i) {
              bad += load_bits(t, all.data() + r * count * element, i) != masked(t, tagged(r, 0, i));
            }
          }
          ASSERT_EQ(bad, 0u) << type_name(t) << " count " << count << (in_place ? " in place" : "");
          ASSERT_EQ(all.back(), 0xee);
        }
      }
    }
}

// Even ranks first, then odd ones: each host's ranks are then (on most layouts) no longer
// consecutive. The hierarchical allgather gathers host by host and reorders; the hierarchical
// reduce_scatter needs consecutive ranks, so forcing it there is a usage error (on every rank
// alike), and the tuner never picks it.
TEST(Allgather, HostsNotConsecutiveInRankOrder) {
  RCC_SKIP_UNLESS_LEVELS("needs ranks on several hosts, several on some");
  const int ranks = ranktest::size(), rank = ranktest::rank();
  rcc_comm_t mixed = nullptr;
  RCC_ASSERT_OK(rcc_comm_split(ranktest::comm(), 0, (rank % 2) * ranks + rank, &mixed));
  int mine = 0, host = 0, hosts = 0;
  RCC_ASSERT_OK(rcc_comm_rank(mixed, &mine));
  RCC_ASSERT_OK(rcc_comm_host(mixed, &host, &hosts));
  std::vector<int32_t> host_of(ranks);
  RCC_ASSERT_OK(rcc_allgather(mixed, &host, host_of.data(), 1, RCC_INT32));
  const bool consecutive = std::is_sorted(host_of.begin(), host_of.end());
  for (size_t count : {size_t{1}, size_t{1000}, size_t{300000}}) {
    ForceAlgo forced("allgather:hierarchical");
    std::vector<uint32_t> send(count), all(count * ranks + 1, 0xeeeeeeee);
    for (size_t i = 0; i < count; ++i) send[i] = static_cast<uint32_t>(tagged(mine, 0, i));
    RCC_ASSERT_OK(rcc_allgather(mixed, send.data(), all.data(), count, RCC_UINT32));
    size_t bad = 0;
    for (int r = 0; r < ranks; ++r) {
      for (size_t i = 0; i < count; ++i) bad += all[r * count + i] != static_cast<uint32_t>(tagged(r, 0, i));
    }
    EXPECT_EQ(bad, 0u) << "count " << count;
    EXPECT_EQ(all.back(), 0xeeeeeeeeu);
  }
  if (!consecutive) {
    ForceAlgo forced("reduce_scatter:hierarchical");
    std::vector<int32_t> send(ranks, 1), out(1, 0);
    EXPECT_EQ(rcc_reduce_scatter(mixed, send.data(), out.data(), 1, RCC_INT32, RCC_SUM), RCC_ERR_INVALID_USAGE);
    EXPECT_NE(std::string(rcc_last_error()).find("consecutive"), std::string::npos) << rcc_last_error();
  }
  RCC_ASSERT_OK(rcc_comm_destroy(mixed));
}

TEST(ReduceScatter, EveryTypeOpCountInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (const char* algorithm : levels_or_tuner({"ring"}))
    for (int t = 0; t < RCC_NUM_DATATYPES; ++t) {
      const auto forced = force_unless_empty("reduce_scatter", algorithm);
      SCOPED_TRACE(algorithm);
      for (int o = 0; o < RCC_NUM_OPS; ++o) {
        const auto type = static_cast<rcc_datatype_t>(t);
        const auto op = static_cast<rcc_op_t>(o);
        if (!op_defined(type, op)) continue;
        const bool large = op == RCC_SUM || type == RCC_FLOAT32;
        const size_t element = rcc_datatype_size(type);
        for (size_t count : counts_for(type, large && !(quick() && ranks > 4))) {
          for (bool in_place : {false, true}) {
            // The input is the reference pattern over count * ranks elements; block r goes to rank r.
            std::vector<uint8_t> send(count * element * ranks + 1), recv(count * element + 1);
            fill(type, op, rank, send.data(), count * ranks, t);
            void* out = in_place ? send.data() + rank * count * element : recv.data();
            RCC_ASSERT_OK(rcc_reduce_scatter(ranktest::comm(), send.data(), out, count, type, op));
            std::string first;
            ASSERT_EQ(check_reduced(type, op, ranks, out, count, rank * count, &first, t), 0u)
                << type_name(type) << " " << op_name(op) << " count " << count << (in_place ? " in place" : "") << ": "
                << first;
          }
        }
      }
    }
}

TEST(Alltoall, CountsTypesInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (rcc_datatype_t t : {RCC_UINT8, RCC_INT32, RCC_FLOAT64}) {
    const size_t element = rcc_datatype_size(t), total_elements = 0;
    (void)total_elements;
    for (size_t count : counts_for(t)) {
      for (bool in_place : {false, true}) {
        std::vector<uint8_t> send(count * element * ranks + 1), recv(count * element * ranks + 1, 0xee);
        for (int to = 0; to < ranks; ++to) {
          for (size_t i = 0; i < count; ++i) store_bits(t, send.data() + to * count * element, i, tagged(rank, to, i));
        }
        uint8_t* out = in_place ? send.data() : recv.data();
        RCC_ASSERT_OK(rcc_alltoall(ranktest::comm(), send.data(), out, count, t));
        size_t bad = 0;
        for (int from = 0; from < ranks; ++from) {
          for (size_t i = 0; i < count; ++i) {
            bad += load_bits(t, out + from * count * element, i) != masked(t, tagged(from, rank, i));
          }
        }
        ASSERT_EQ(bad, 0u) << type_name(t) << " count " << count << (in_place ? " in place" : "");
        ASSERT_EQ(recv.back(), 0xee);
      }
    }
  }
}

TEST(Exchange, SixtyFourMiB) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const size_t block = (size_t{64} << 20) / 4 / static_cast<size_t>(ranks);  // int32 elements per rank block
  std::vector<int32_t> big(block * ranks), small(block);
  // Allgather: 64 MiB gathered.
  for (size_t i = 0; i < block; ++i) small[i] = static_cast<int32_t>(tagged(rank, 0, i));
  RCC_ASSERT_OK(rcc_allgather(ranktest::comm(), small.data(), big.data(), block, RCC_INT32));
  size_t bad = 0;
  for (int r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < block; ++i) bad += big[r * block + i] != static_cast<int32_t>(tagged(r, 0, i));
  }
  EXPECT_EQ(bad, 0u) << "allgather";
  // Reduce-scatter: 64 MiB reduced.
  for (size_t i = 0; i < block * ranks; ++i) big[i] = static_cast<int32_t>(i % 1009) + rank;
  RCC_ASSERT_OK(rcc_reduce_scatter(ranktest::comm(), big.data(), small.data(), block, RCC_INT32, RCC_SUM));
  bad = 0;
  for (size_t i = 0; i < block; ++i) {
    const int32_t base = static_cast<int32_t>((rank * block + i) % 1009);
    bad += small[i] != base * ranks + ranks * (ranks - 1) / 2;
  }
  EXPECT_EQ(bad, 0u) << "reduce_scatter";
  // Alltoall: 64 MiB exchanged, in place.
  for (int to = 0; to < ranks; ++to) {
    for (size_t i = 0; i < block; ++i) big[to * block + i] = static_cast<int32_t>(tagged(rank, to, i));
  }
  RCC_ASSERT_OK(rcc_alltoall(ranktest::comm(), big.data(), big.data(), block, RCC_INT32));
  bad = 0;
  for (int from = 0; from < ranks; ++from) {
    for (size_t i = 0; i < block; ++i) bad += big[from * block + i] != static_cast<int32_t>(tagged(from, rank, i));
  }
  EXPECT_EQ(bad, 0u) << "alltoall";
}
