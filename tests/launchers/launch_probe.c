/* A job through the public C API alone, for the launcher tests: rcc_comm_init (whatever started
   the process), an allreduce of the ranks, a split into halves with an allreduce on each, and
   rcc_comm_destroy. Rank 0 prints "launch probe: R ranks ok, init S s, first allreduce S s" (the
   start-up time, init to the end of the first collective); every rank exits 0, or 1 with rcc's
   message. RCC_TEST_STALL_RANK=k: the process the launcher made rank k never calls rcc_comm_init
   (it sleeps until killed), so the others must fail naming it. */
#include <rcc/rcc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* This process's rank as its launcher numbers it, before rcc is asked. */
static int launcher_rank(void) {
  const char* names[] = {"RCC_RANK", "PMIX_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* value = getenv(names[i]);
    if (value != NULL && value[0] != '\0') return atoi(value);
  }
  return -1;
}

static int failed(int rank, const char* what, rcc_status_t status) {
  fprintf(stderr, "launch probe rank %d: %s failed: %s: %s\n", rank, what, rcc_status_string(status), rcc_last_error());
  return 1;
}

int main(void) {
  const char* stall = getenv("RCC_TEST_STALL_RANK");
  if (stall != NULL && atoi(stall) == launcher_rank()) {
    for (;;) sleep(60);
  }
  const double start = now();
  rcc_comm_t world;
  rcc_status_t status = rcc_comm_init(&world);
  if (status != RCC_SUCCESS) return failed(launcher_rank(), "rcc_comm_init", status);
  const double initialised = now();
  int rank = -1, size = 0;
  rcc_comm_rank(world, &rank);
  rcc_comm_size(world, &size);
  long long mine = rank + 1, sum = 0;
  status = rcc_allreduce(world, &mine, &sum, 1, RCC_INT64, RCC_SUM);
  if (status != RCC_SUCCESS) return failed(rank, "rcc_allreduce", status);
  const double first = now();
  if (sum != (long long)size * (size + 1) / 2) {
    fprintf(stderr, "launch probe rank %d: allreduce gave %lld, expected %lld\n", rank, sum,
            (long long)size * (size + 1) / 2);
    return 1;
  }
  rcc_comm_t half;
  status = rcc_comm_split(world, rank < size / 2 ? 0 : 1, rank, &half);
  if (status != RCC_SUCCESS) return failed(rank, "rcc_comm_split", status);
  int half_size = 0;
  rcc_comm_size(half, &half_size);
  long long one = 1, count = 0;
  status = rcc_allreduce(half, &one, &count, 1, RCC_INT64, RCC_SUM);
  if (status != RCC_SUCCESS) return failed(rank, "rcc_allreduce on a half", status);
  if (count != half_size) {
    fprintf(stderr, "launch probe rank %d: the half counted %lld ranks, has %d\n", rank, count, half_size);
    return 1;
  }
  status = rcc_comm_destroy(half);
  if (status == RCC_SUCCESS) status = rcc_comm_destroy(world);
  if (status != RCC_SUCCESS) return failed(rank, "rcc_comm_destroy", status);
  if (rank == 0) {
    printf("launch probe: %d ranks ok, init %.4f s, first allreduce %.4f s\n", size, initialised - start,
           first - start);
  }
  return 0;
}
