// The cost model and RCC_ALGO parsing (white box, in one process).
#include <gtest/gtest.h>

#include <cstdlib>

#include "collectives/tuner.h"

using rcc::collectives::Algorithm;
using rcc::collectives::choose_algorithm;
using rcc::collectives::estimate_seconds;
using rcc::collectives::Kind;
using rcc::collectives::model_choice;

TEST(Tuner, SmallAllreduceIsLatencyBoundLargeIsBandwidthBound) {
  for (int ranks : {2, 3, 4, 7, 8, 16, 64}) {
    EXPECT_EQ(model_choice(Kind::kAllreduce, 8, ranks), Algorithm::kRecursiveDoubling) << ranks;
    EXPECT_EQ(model_choice(Kind::kAllreduce, size_t{256} << 20, ranks), Algorithm::kRing) << ranks;
  }
  EXPECT_EQ(model_choice(Kind::kBroadcast, 64, 8), Algorithm::kTree);
  EXPECT_EQ(model_choice(Kind::kBroadcast, size_t{256} << 20, 8), Algorithm::kPipeline);
}

TEST(Tuner, EstimatesGrowWithBytes) {
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kRecursiveDoubling}) {
    double previous = 0;
    for (size_t bytes = 1; bytes < (size_t{1} << 30); bytes *= 4) {
      const double t = estimate_seconds(Kind::kAllreduce, a, bytes, 8);
      EXPECT_GE(t, previous) << rcc::collectives::algorithm_name(a) << " " << bytes;
      previous = t;
    }
  }
}

TEST(Tuner, RccAlgoOverridesAndRejectsUnknownNames) {
  Algorithm chosen;
  setenv("RCC_ALGO", "allreduce:tree,broadcast:pipeline", 1);
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, Algorithm::kTree);
  ASSERT_EQ(choose_algorithm(Kind::kBroadcast, 8, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, Algorithm::kPipeline);
  ASSERT_EQ(choose_algorithm(Kind::kAllgather, 8, 8, false, &chosen), RCC_SUCCESS);  // not forced: the model
  EXPECT_EQ(chosen, Algorithm::kRing);
  setenv("RCC_ALGO", "allreduce:rd", 1);
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, size_t{1} << 30, 8, false, &chosen), RCC_SUCCESS);
  EXPECT_EQ(chosen, Algorithm::kRecursiveDoubling);
  for (const char* bad : {"allreduce:fast", "allreduce", "bcast:tree", "broadcast:ring", "allreduce:ring,x:y"}) {
    setenv("RCC_ALGO", bad, 1);
    chosen = Algorithm::kLinear;
    EXPECT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_ERR_INVALID_ARGUMENT) << bad;
    EXPECT_EQ(chosen, Algorithm::kLinear) << "output written on failure for " << bad;
  }
  unsetenv("RCC_ALGO");
  ASSERT_EQ(choose_algorithm(Kind::kAllreduce, 8, 8, false, &chosen), RCC_SUCCESS);
}
