// Allreduce with each algorithm forced: every datatype x op against an exact reference, in place
// and out of place, counts 0..1 MiB+5, results bitwise equal on every rank.
#include <functional>
#include <utility>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

// A function, not a global: whether "shm" is available depends on the communicator (made in main).
std::vector<const char*> algorithms() { return and_local({"ring", "tree", "recursive_doubling"}); }

// One allreduce checked against the reference; returns false (with gtest failures) if wrong.
void run_allreduce(rcc_datatype_t t, rcc_op_t op, size_t count, bool in_place, int salt) {
  const size_t element = rcc_datatype_size(t);
  std::vector<uint8_t> send(count * element + 1), recv(count * element + 1);
  fill(t, op, ranktest::rank(), send.data(), count, salt);
  void* out = in_place ? send.data() : recv.data();
  RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), send.data(), out, count, t, op));
  std::string first;
  const size_t bad = check_reduced(t, op, ranktest::size(), out, count, 0, &first, salt);
  EXPECT_EQ(bad, 0u) << type_name(t) << " " << op_name(op) << " count " << count << (in_place ? " in place" : "")
                     << ": " << first;
  EXPECT_TRUE(same_on_all_ranks(out, count * element)) << type_name(t) << " " << op_name(op) << " count " << count;
}

}  // namespace

TEST(Allreduce, EveryTypeOpCountPerAlgorithm) {
  for (const char* algorithm : algorithms()) {
    ForceAlgo force(std::string("allreduce:") + algorithm);
    SCOPED_TRACE(algorithm);
    for (int t = 0; t < RCC_NUM_DATATYPES; ++t) {
      for (int o = 0; o < RCC_NUM_OPS; ++o) {
        const auto type = static_cast<rcc_datatype_t>(t);
        const auto op = static_cast<rcc_op_t>(o);
        if (!op_defined(type, op)) continue;
        // The 1 MiB+5 case: every type with SUM, and every op on float32/int32.
        // (RCC_TEST_QUICK: SUM and float32 only.)
        const bool large = op == RCC_SUM || type == RCC_FLOAT32 || (type == RCC_INT32 && !quick());
        for (size_t count : counts_for(type, large)) {
          run_allreduce(type, op, count, false, t + o);
          run_allreduce(type, op, count, true, t + o + 1);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Non-integer inputs: the sum differs from the exact one by at most (P-1) roundings of partial
// sums bounded by sum |x|, and still agrees bit for bit across ranks.
TEST(Allreduce, RandomFloatsWithinRoundingBound) {
  const int ranks = ranktest::size();
  for (const char* algorithm : algorithms()) {
    ForceAlgo force(std::string("allreduce:") + algorithm);
    for (size_t count : {size_t{1023}, size_t{300001}}) {
      auto value = [](int r, size_t i) {
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(r) + 1) * 0xBF58476D1CE4E5B9ull;
        x ^= x >> 31;
        return static_cast<double>(x % 2000001) / 1000000.0 - 1.0;
      };
      std::vector<float> send(count), recv(count);
      for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>(value(ranktest::rank(), i));
      RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), send.data(), recv.data(), count, RCC_FLOAT32, RCC_SUM));
      size_t bad = 0;
      for (size_t i = 0; i < count; ++i) {
        double exact = 0, magnitude = 0;
        for (int r = 0; r < ranks; ++r) {
          const double v = static_cast<float>(value(r, i));
          exact += v;
          magnitude += std::fabs(v);
        }
        const double bound = (ranks - 1) * 0x1p-24 * magnitude + 1e-30;
        if (std::fabs(recv[i] - exact) > bound) ++bad;
      }
      EXPECT_EQ(bad, 0u) << algorithm << " count " << count;
      EXPECT_TRUE(same_on_all_ranks(recv.data(), count * sizeof(float))) << algorithm;
    }
  }
}

// The hierarchical allreduce of 512 KiB or more runs in pieces (of 128-512 KiB, by the size and
// the layout), three in flight: 4 MiB and one element of int32 is nine pieces (the last of one
// element: empty slices and parts on some ranks), 3 MiB of float64 with RCC_AVG six to eight, 1 MiB
// and 3 bytes of int8 with RCC_MAX three to nine (the last of 3 bytes at 2 x 2: pieces of 256 KiB).
TEST(Allreduce, HierarchicalInPieces) {
  RCC_SKIP_UNLESS_LEVELS("no levels on this communicator");
  ForceAlgo force("allreduce:hierarchical");
  struct Case {
    rcc_datatype_t type;
    rcc_op_t op;
    size_t count;
  };
  for (const Case& c :
       {Case{RCC_INT32, RCC_SUM, (size_t{4} << 20) / 4 + 1}, Case{RCC_FLOAT64, RCC_AVG, (size_t{3} << 20) / 8},
        Case{RCC_INT8, RCC_MAX, (size_t{1} << 20) + 3}}) {
    for (bool in_place : {false, true}) {
      run_allreduce(c.type, c.op, c.count, in_place, 7);
      if (HasFailure()) return;
    }
  }
}

// From 8 MiB a 2-rank allreduce through shared memory reduces in halves unless every rank works in
// place, which the ranks tell each other with the first chunk: all in place, none, and each rank
// its own way (rank 0 in place, then the others), one call after another so a stale choice from the
// call before would show; counts not a whole number of chunks or cache lines.
TEST(Allreduce, LargeInPlaceOnSomeRanks) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const int rank = ranktest::rank();
  const std::vector<std::pair<const char*, std::function<bool(int)>>> patterns = {
      {"none in place", [](int) { return false; }},
      {"all in place", [](int) { return true; }},
      {"rank 0 in place", [](int r) { return r == 0; }},
      {"all in place", [](int) { return true; }},
      {"all but rank 0 in place", [](int r) { return r != 0; }},
      {"none in place", [](int) { return false; }}};
  for (const char* algorithm : and_shm({"ring"})) {
    ForceAlgo force(std::string("allreduce:") + algorithm);
    for (const auto& [name, in_place] : patterns) {
      SCOPED_TRACE(std::string(algorithm) + ", " + name);
      run_allreduce(RCC_INT32, RCC_SUM, (size_t{8} << 20) / 4 + 21, in_place(rank), 3);
      run_allreduce(RCC_FLOAT64, RCC_AVG, (size_t{9} << 20) / 8 + 3, in_place(rank), 5);
      if (HasFailure()) return;
    }
  }
}

TEST(Allreduce, SixtyFourMiB) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const size_t count = (size_t{64} << 20) / sizeof(float);
  const int ranks = ranktest::size(), rank = ranktest::rank();
  std::vector<float> buf(count);
  for (size_t i = 0; i < count; ++i) buf[i] = static_cast<float>((i + static_cast<size_t>(rank)) % 97);
  RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), buf.data(), buf.data(), count, RCC_FLOAT32, RCC_SUM));
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    double expected = 0;
    for (int r = 0; r < ranks; ++r) expected += static_cast<double>((i + static_cast<size_t>(r)) % 97);
    if (buf[i] != static_cast<float>(expected)) ++bad;
  }
  EXPECT_EQ(bad, 0u);
}
