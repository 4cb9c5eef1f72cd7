/* A job in which one rank goes astray, for tests/debugging/stuck_test.sh (issue: a stuck job
 * explains itself). Every rank runs ITERATIONS allreduces of int32 sums on COMM (the world, or the
 * half of it that holds ODD when COMM is "sub") and checks each result; at iteration 3, rank ODD:
 *   sleep:   sleeps SLEEP_S seconds outside rcc (the others time out in that allreduce)
 *   other:   calls a broadcast instead (with RCC_CHECK=1 every rank reports the mismatch)
 *   root:    the loop is of broadcasts; ODD names another root (RCC_CHECK=1 reports it)
 *   healthy: does nothing odd (rccrun is sent SIGUSR1 meanwhile; the job must still succeed)
 *   record:  nothing odd; ITERATIONS calls, then a dump of the recorder to check its size bound
 * Prints "stuck: rank R status S message M" for a failing call and "stuck: rank R ok" at the end.
 *   stuck MODE ODD world|sub [ITERATIONS] [SLEEP_S] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rcc/rcc.h"

static int report(int rank, rcc_status_t status, const char* what) {
  printf("stuck: rank %d status %s in %s message %s\n", rank, rcc_status_string(status), what, rcc_last_error());
  fflush(stdout);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: stuck sleep|other|root|healthy|record ODD world|sub [ITERATIONS] [SLEEP_S]\n");
    return 2;
  }
  const char* mode = argv[1];
  const int odd = atoi(argv[2]);
  const int use_sub = strcmp(argv[3], "sub") == 0;
  const int iterations = argc > 4 ? atoi(argv[4]) : 6;
  const int sleep_s = argc > 5 ? atoi(argv[5]) : 8;
  rcc_comm_t world = NULL, comm = NULL;
  if (rcc_comm_init(&world) != RCC_SUCCESS) {
    fprintf(stderr, "stuck: rcc_comm_init: %s\n", rcc_last_error());
    return 2;
  }
  int world_rank = 0, world_size = 0;
  rcc_comm_rank(world, &world_rank);
  rcc_comm_size(world, &world_size);
  comm = world;
  if (use_sub) {
    /* Halves: the odd rank's half is where things go wrong. */
    const int color = world_rank < world_size / 2 ? 0 : 1;
    if (rcc_comm_split(world, color, world_rank, &comm) != RCC_SUCCESS) {
      fprintf(stderr, "stuck: rcc_comm_split: %s\n", rcc_last_error());
      return 2;
    }
  }
  int rank = 0, size = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  const int odd_here = world_rank == odd;
  int failed = 0;
  for (int i = 0; i < iterations && !failed; ++i) {
    int value = rank + i, sum = 0;
    rcc_status_t status = RCC_SUCCESS;
    if (i == 3 && odd_here && strcmp(mode, "sleep") == 0) {
      sleep((unsigned)sleep_s);
      break; /* leaves without the remaining collectives */
    }
    if (strcmp(mode, "root") == 0) {
      int root = (i == 3 && odd_here) ? size - 1 : 0; /* ODD is not rank 0 of COMM */
      value = rank == root ? 1000 + i : -1;
      status = rcc_broadcast(comm, &value, 1, RCC_INT32, root);
      if (status != RCC_SUCCESS)
        failed = report(world_rank, status, "broadcast");
      else if (value != 1000 + i)
        failed = report(world_rank, RCC_ERR_INTERNAL, "a wrong broadcast value");
      continue;
    }
    if (i == 3 && odd_here && strcmp(mode, "other") == 0) {
      status = rcc_broadcast(comm, &value, 1, RCC_INT32, 0);
      if (status != RCC_SUCCESS) failed = report(world_rank, status, "broadcast");
      continue;
    }
    status = rcc_allreduce(comm, &value, &sum, 1, RCC_INT32, RCC_SUM);
    if (status != RCC_SUCCESS) {
      failed = report(world_rank, status, "allreduce");
    } else if (sum != size * (size - 1) / 2 + size * i) {
      failed = report(world_rank, RCC_ERR_INTERNAL, "a wrong allreduce sum");
    }
    if (strcmp(mode, "healthy") == 0) usleep(20000); /* long enough for a SIGUSR1 to come meanwhile */
  }
  if (strcmp(mode, "record") == 0 && !failed) {
    raise(SIGUSR1); /* RCC_DEBUG_DUMP_SIGNAL=1: the library's thread writes the dump */
    usleep(500000);
  }
  if (!failed) {
    printf("stuck: rank %d ok\n", world_rank);
    fflush(stdout);
  }
  if (failed) {
    /* The ranks no longer agree on where they are: leave without meeting. */
    rcc_comm_abort(comm);
    if (comm != world) rcc_comm_abort(world);
  }
  if (comm != world) rcc_comm_destroy(comm);
  rcc_comm_destroy(world);
  return failed ? 1 : 0;
}
