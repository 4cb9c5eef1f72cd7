// The cost model and RCC_ALGO parsing (white box, in one process).
#include <gtest/gtest.h>

#include <cstdlib>

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
