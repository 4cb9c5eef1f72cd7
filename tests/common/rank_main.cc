#include <cstdio>
#include <cstdlib>
#include <string>

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
  // A test run that asked for a transport must really be on it (a verbs run that quietly fell
  // back to UCX would test nothing).
  const char* wanted = std::getenv("RCC_TRANSPORT");
  const char* used = nullptr;
  rcc_comm_transport(ranktest::g_comm, &used);
  if (wanted != nullptr && std::string(wanted) != "auto" && std::string(wanted) != used) {
    std::fprintf(stderr, "RCC_TRANSPORT=%s but the communicator uses %s\n", wanted, used);
    return 4;
  }
  if (ranktest::g_rank == 0) std::printf("rank test: %d ranks over %s\n", ranktest::g_size, used);
  int result = RUN_ALL_TESTS();
  status = rcc_comm_destroy(ranktest::g_comm);
  if (status != RCC_SUCCESS) {
    std::fprintf(stderr, "rcc_comm_destroy failed: %s: %s\n", rcc_status_string(status), rcc_last_error());
    return 3;
  }
  return result;
}
