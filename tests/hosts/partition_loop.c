/* For the partition and freeze tests: collectives in a loop (a hierarchical allreduce and a
 * barrier) until one fails; then prints which error, and how long the failing call took:
 *   rank R failed after S s: MESSAGE
 * Prints "rank R ready" after the first round. Exit status 2 on the failure, 0 if nothing failed
 * within the given seconds (argv[1], default 120). Public C API only. */
#include <rcc/rcc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const double limit = argc > 1 ? atof(argv[1]) : 120.0;
  rcc_comm_t comm = NULL;
  if (rcc_comm_init(&comm) != RCC_SUCCESS) {
    fprintf(stderr, "partition_loop: rcc_comm_init: %s\n", rcc_last_error());
    return 1;
  }
  int rank = 0;
  rcc_comm_rank(comm, &rank);
  enum { kCount = 16384 };
  static int32_t data[kCount];
  const double start = now();
  for (long round = 0; now() - start < limit; ++round) {
    for (int i = 0; i < kCount; ++i) data[i] = rank + i;
    const double before = now();
    rcc_status_t status = rcc_allreduce(comm, data, data, kCount, RCC_INT32, RCC_SUM);
    if (status == RCC_SUCCESS) status = rcc_barrier(comm);
    if (status != RCC_SUCCESS) {
      printf("rank %d failed after %.1f s: %s\n", rank, now() - before, rcc_last_error());
      fflush(stdout);
      /* Stay a moment, so that the other survivors learn of the unreachable ranks themselves, not
       * from this rank's exit. */
      struct timespec pause = {3, 0};
      nanosleep(&pause, NULL);
      return 2;
    }
    if (round == 0) {
      printf("rank %d ready\n", rank);
      fflush(stdout);
    }
  }
  rcc_comm_destroy(comm);
  return 0;
}
