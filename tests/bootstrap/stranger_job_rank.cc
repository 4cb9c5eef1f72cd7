// The rank program of stranger_job_test: allreduces for RCC_STRANGER_JOB_SECONDS (default 8)
// while the test attacks the job's listening sockets, checking every result. Rank 0 decides when
// to stop (broadcast each round, so every rank runs the same rounds). Prints
// "stranger-job rank=R ok rounds=N" on success.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rcc/rcc.h"

int main() {
  const char* seconds_text = std::getenv("RCC_STRANGER_JOB_SECONDS");
  const double seconds = seconds_text != nullptr ? std::atof(seconds_text) : 8.0;
  rcc_comm_t comm = nullptr;
  if (rcc_comm_init(&comm) != RCC_SUCCESS) {
    std::fprintf(stderr, "stranger_job_rank: rcc_comm_init: %s\n", rcc_last_error());
    return 1;
  }
  int rank = 0, size = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  const auto start = std::chrono::steady_clock::now();
  long failures = 0;
  int rounds = 0;
  for (;; ++rounds) {
    int32_t go = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds;
    if (rcc_broadcast(comm, &go, 1, RCC_INT32, 0) != RCC_SUCCESS) {
      std::fprintf(stderr, "stranger_job_rank: rcc_broadcast: %s\n", rcc_last_error());
      return 1;
    }
    if (!go) break;
    std::vector<int32_t> data(4096 + rounds % 7 * 1000, rank + rounds);
    if (rcc_allreduce(comm, data.data(), data.data(), data.size(), RCC_INT32, RCC_SUM) != RCC_SUCCESS) {
      std::fprintf(stderr, "stranger_job_rank: rcc_allreduce: %s\n", rcc_last_error());
      return 1;
    }
    const int32_t expected = size * (size - 1) / 2 + size * rounds;
    for (int32_t value : data) failures += value != expected;
  }
  if (rcc_barrier(comm) != RCC_SUCCESS || rcc_comm_destroy(comm) != RCC_SUCCESS) {
    std::fprintf(stderr, "stranger_job_rank: barrier/destroy: %s\n", rcc_last_error());
    return 1;
  }
  if (failures != 0) {
    std::fprintf(stderr, "stranger_job_rank: %ld wrong allreduce values\n", failures);
    return 1;
  }
  std::printf("stranger-job rank=%d ok rounds=%d\n", rank, rounds);
  return 0;
}
