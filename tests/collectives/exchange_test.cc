// Allgather, reduce-scatter and alltoall: counts 0..1 MiB+5, in place and out of place, 64 MiB.
#include "coll_test_util.h"

using namespace coll_test;

namespace {

uint64_t tagged(int from, int to, size_t i) {
  return (static_cast<uint64_t>(from) * 131 + static_cast<uint64_t>(to) + 1) * 1000003u + i * 7919u;
}
uint64_t masked(rcc_datatype_t t, uint64_t v) {
  const size_t bits = rcc_datatype_size(t) * 8;
  return bits == 64 ? v : v & ((uint64_t{1} << bits) - 1);
}

}  // namespace

TEST(Allgather, CountsTypesInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (rcc_datatype_t t : {RCC_UINT8, RCC_FLOAT16, RCC_INT32, RCC_FLOAT64}) {
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

TEST(ReduceScatter, EveryTypeOpCountInAndOutOfPlace) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  for (int t = 0; t < RCC_NUM_DATATYPES; ++t) {
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
