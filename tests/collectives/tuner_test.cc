// The cost model and RCC_ALGO parsing (white box, in one process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "collectives/tuner.h"

using rcc::collectives::AlgorithmRow;
using rcc::collectives::choose_algorithm;
using rcc::collectives::estimate_seconds;
using rcc::collectives::find_algorithm;
using rcc::collectives::Kind;
using rcc::collectives::model_choice;

namespace {
const AlgorithmRow* row(Kind kind, const char* name) { return find_algorithm(kind, name); }
}  // namespace

TEST(Tuner, SmallAllreduceIsLatencyBoundLargeIsBandwidthBound) {
  for (int ranks : {2, 3, 4, 7, 8, 16, 64}) {
    EXPECT_EQ(&model_choice(Kind::kAllreduce, 8, ranks), row(Kind::kAllreduce, "recursive_doubling")) << ranks;
    EXPECT_EQ(&model_choice(Kind::kAllreduce, size_t{256} << 20, ranks), row(Kind::kAllreduce, "ring")) << ranks;
  }
  EXPECT_EQ(&model_choice(Kind::kBroadcast, 64, 8), row(Kind::kBroadcast, "tree"));
  EXPECT_EQ(&model_choice(Kind::kBroadcast, size_t{256} << 20, 8), row(Kind::kBroadcast, "pipeline"));
}

TEST(Tuner, EstimatesGrowWithBytes) {
  for (const char* name : {"ring", "tree", "recursive_doubling"}) {
    double previous = 0;
    for (size_t bytes = 1; bytes < (size_t{1} << 30); bytes *= 4) {
      const double t = estimate_seconds(*row(Kind::kAllreduce, name), bytes, 8);
      EXPECT_GE(t, previous) << name << " " << bytes;
      previous = t;
    }
  }
}

TEST(Tuner, RccAlgoOverridesAndRejectsUnknownNames) {
  const AlgorithmRow* chosen = nullptr;
  setenv("RCC_ALGO", "allreduce:tree,broadcast:pipeline", 1);
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, row(Kind::kAllreduce, "tree"));
  ASSERT_EQ(choose_algorithm(Kind::kBroadcast, 8, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, row(Kind::kBroadcast, "pipeline"));
  ASSERT_EQ(choose_algorithm(Kind::kAllgather, 8, 8, false, &chosen), RCC_SUCCESS);  // not forced: the model
  EXPECT_EQ(chosen, row(Kind::kAllgather, "ring"));
  setenv("RCC_ALGO", "allreduce:rd", 1);
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, size_t{1} << 30, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, row(Kind::kAllreduce, "recursive_doubling"));
  for (const char* bad : {"allreduce:fast", "allreduce", "bcast:tree", "broadcast:ring", "allreduce:ring,x:y"}) {
    setenv("RCC_ALGO", bad, 1);
    chosen = row(Kind::kGather, "linear");
    EXPECT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_ERR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(chosen, row(Kind::kGather, "linear")) << "output written on failure for " << bad;
  }
  unsetenv("RCC_ALGO");
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_SUCCESS);
}

// Two hosts of four ranks: the levels the communicator would make (comm/levels.cc).
rcc::collectives::Levels two_hosts_of_four() {
  rcc::collectives::Levels levels;
  levels.hosts = 2;
  levels.channels = 4;
  levels.host_sizes = {4, 4};
  for (int r = 0; r < 8; ++r) {
    levels.host_of.push_back(r / 4);
    levels.local_of.push_back(r % 4);
  }
  levels.host.size = 4;
  levels.cross.size = 2;
  return levels;
}

TEST(Tuner, LevelsMakeSmallCollectivesHierarchical) {
  const rcc::collectives::Levels levels = two_hosts_of_four();
  for (Kind kind : {Kind::kAllreduce, Kind::kBroadcast, Kind::kReduce, Kind::kBarrier}) {
    // One network step per host instead of per rank.
    EXPECT_STREQ(model_choice(kind, 8, 8, false, &levels).name, "hierarchical");
    // Without levels (one host, or one rank per host) it is never chosen.
    for (size_t bytes : {size_t{8}, size_t{256} << 20}) {
      EXPECT_STRNE(model_choice(kind, bytes, 8, false, nullptr).name, "hierarchical") << bytes;
    }
  }
}

// Run with RCC_TUNER_NET_MBPS=1250 (a 10 Gbit/s network: ctest collectives_tuner_slow_network).
// A flat ring between two hosts of four crosses each host's link with 2 * 7/8 of the data, the
// levels with half of it in each direction: large allreduces go hierarchical.
TEST(Tuner, SlowNetworkMakesLargeAllreduceHierarchical) {
  const char* rate = std::getenv("RCC_TUNER_NET_MBPS");
  if (rate == nullptr || std::atoi(rate) > 2000) GTEST_SKIP() << "needs RCC_TUNER_NET_MBPS <= 2000";
  const rcc::collectives::Levels levels = two_hosts_of_four();
  for (size_t bytes : {size_t{1} << 20, size_t{64} << 20, size_t{256} << 20}) {
    EXPECT_STREQ(model_choice(Kind::kAllreduce, bytes, 8, false, &levels).name, "hierarchical") << bytes;
  }
}

TEST(Tuner, ForcingHierarchicalWithoutLevelsSaysWhy) {
  const rcc::collectives::Levels levels = two_hosts_of_four();
  const AlgorithmRow* chosen = nullptr;
  setenv("RCC_ALGO", "allreduce:hier", 1);
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &levels, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, row(Kind::kAllreduce, "hierarchical"));
  chosen = nullptr;
  EXPECT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, nullptr, &chosen), RCC_ERR_INVALID_USAGE);
  EXPECT_EQ(chosen, nullptr);
  EXPECT_NE(std::string(rcc_last_error()).find("no levels"), std::string::npos) << rcc_last_error();
  unsetenv("RCC_ALGO");
}
