/* bench/scale's probe: what one launch of N ranks costs, in plain MPI C (builds unchanged with
 * rcc-mpicc, mpicc.openmpi and mpicc.mpich).
 *
 *   init      the slowest rank's MPI_Init (CLOCK_MONOTONIC around it: MPI-3.1 does not allow
 *             MPI_Wtime before MPI_Init; every library's MPI_Wtime reads the same clock anyway)
 *   first     one MPI_Allreduce of 1024 doubles, max over ranks
 *   steady    10 more, each rank's median per call, max over ranks
 *   alltoall  after a barrier, one MPI_Alltoall of 1 int per peer, max over ranks
 *   memory    VmRSS (/proc/self/status) and Pss (/proc/self/smaps_rollup) after the alltoall,
 *             summed and maxed over ranks
 *
 * Every result is checked exactly (sums of rank-dependent integers, exact in doubles); a rank that
 * sees a wrong value prints "FAIL ..." and the job exits 1 (after a final count of the failures,
 * so no rank is left waiting). Rank 0 prints one line:
 *   scale-probe ranks=N init_s=... first_allreduce_us=... steady_allreduce_us=... alltoall_us=...
 *   rss_mb_sum=... rss_mb_max=... pss_mb_sum=... pss_mb_max=... ok
 * SCALE_PROBE_CORRUPT=1 in the environment makes the last rank contribute a wrong value to the
 * first allreduce (to test that the check and bench/scale catch it).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c99 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COUNT 1024
#define STEADY 10

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The value of KEY (in kB) in a /proc file of "Key:   123 kB" lines, in MB; -1 when absent. */
static double proc_mb(const char* path, const char* key) {
  FILE* file = fopen(path, "r");
  if (file == NULL) return -1.0;
  char line[256];
  size_t key_len = strlen(key);
  double mb = -1.0;
  while (fgets(line, sizeof line, file) != NULL) {
    if (strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      mb = strtod(line + key_len + 1, NULL) / 1024.0;
      break;
    }
  }
  fclose(file);
  return mb;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Allreduce number ITER: rank r contributes r + i + ITER at element i, so element i of the sum is
 * n(n-1)/2 + n(i + ITER), an integer far below 2^53. Returns the wrong elements (the first printed). */
static int allreduce_checked(int rank, int n, int iter, double* in, double* out, double* seconds) {
  for (int i = 0; i < COUNT; ++i) {
    in[i] = (double)(rank + i + iter);
    out[i] = -1.0;
  }
  const char* corrupt = getenv("SCALE_PROBE_CORRUPT");
  if (iter == 0 && rank == n - 1 && corrupt != NULL && strcmp(corrupt, "1") == 0) in[COUNT / 2] += 1.0;
  double start = MPI_Wtime();
  int rc = MPI_Allreduce(in, out, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  *seconds = MPI_Wtime() - start;
  if (rc != MPI_SUCCESS) {
    printf("FAIL rank %d: MPI_Allreduce #%d returned %d\n", rank, iter, rc);
    return COUNT;
  }
  int wrong = 0;
  double base = (double)n * (double)(n - 1) / 2.0;
  for (int i = 0; i < COUNT; ++i) {
    double expected = base + (double)n * (double)(i + iter);
    if (out[i] != expected) {
      if (wrong == 0)
        printf("FAIL rank %d: allreduce #%d element %d is %.17g, expected %.17g\n", rank, iter, i, out[i], expected);
      ++wrong;
    }
  }
  if (wrong > 1) printf("FAIL rank %d: allreduce #%d has %d wrong elements\n", rank, iter, wrong);
  return wrong;
}

int main(int argc, char** argv) {
  double before = now_s();
  MPI_Init(&argc, &argv);
  double init_s = now_s() - before;

  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double init_max = 0.0;
  MPI_Reduce(&init_s, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  double* in = malloc(COUNT * sizeof(double));
  double* out = malloc(COUNT * sizeof(double));
  if (in == NULL || out == NULL) {
    printf("FAIL rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long wrong = 0;

  double first_s = 0.0;
  wrong += allreduce_checked(rank, n, 0, in, out, &first_s);

  double steady[STEADY];
  for (int iter = 1; iter <= STEADY; ++iter) wrong += allreduce_checked(rank, n, iter, in, out, &steady[iter - 1]);
  qsort(steady, STEADY, sizeof(double), compare_doubles);
  double steady_s = (steady[STEADY / 2 - 1] + steady[STEADY / 2]) / 2.0;

  MPI_Barrier(MPI_COMM_WORLD);

  /* Alltoall: rank r sends r*n + j to rank j, so it receives j*n + r from rank j. */
  int* send = malloc((size_t)n * sizeof(int));
  int* recv = malloc((size_t)n * sizeof(int));
  if (send == NULL || recv == NULL) {
    printf("FAIL rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int j = 0; j < n; ++j) {
    send[j] = rank * n + j;
    recv[j] = -1;
  }
  double start = MPI_Wtime();
  int rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
  double alltoall_s = MPI_Wtime() - start;
  if (rc != MPI_SUCCESS) {
    printf("FAIL rank %d: MPI_Alltoall returned %d\n", rank, rc);
    ++wrong;
  } else {
    int bad = 0;
    for (int j = 0; j < n; ++j) {
      if (recv[j] != j * n + rank) {
        if (bad == 0)
          printf("FAIL rank %d: alltoall element from rank %d is %d, expected %d\n", rank, j, recv[j], j * n + rank);
        ++bad;
      }
    }
    if (bad > 1) printf("FAIL rank %d: alltoall has %d wrong elements\n", rank, bad);
    wrong += bad;
  }

  double memory[2] = {proc_mb("/proc/self/status", "VmRSS"), proc_mb("/proc/self/smaps_rollup", "Pss")};
  double memory_sum[2] = {0.0, 0.0}, memory_max[2] = {0.0, 0.0};
  MPI_Reduce(memory, memory_sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(memory, memory_max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  double times[3] = {first_s, steady_s, alltoall_s}, times_max[3] = {0.0, 0.0, 0.0};
  MPI_Reduce(times, times_max, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  /* Every rank learns whether any rank saw a wrong value, so all of them exit alike. */
  long wrong_total = 0;
  MPI_Allreduce(&wrong, &wrong_total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

  if (rank == 0) {
    /* A Pss of -1 (no smaps_rollup, kernels before 4.14) sums to a negative figure: print -1. */
    double pss_sum = memory_sum[1] < 0 ? -1.0 : memory_sum[1];
    printf(
        "scale-probe ranks=%d init_s=%.6f first_allreduce_us=%.1f steady_allreduce_us=%.1f alltoall_us=%.1f "
        "rss_mb_sum=%.1f rss_mb_max=%.1f pss_mb_sum=%.1f pss_mb_max=%.1f %s\n",
        n, init_max, times_max[0] * 1e6, times_max[1] * 1e6, times_max[2] * 1e6, memory_sum[0], memory_max[0], pss_sum,
        memory_max[1], wrong_total == 0 ? "ok" : "FAIL");
    if (wrong_total != 0) printf("FAIL %ld wrong values over all ranks\n", wrong_total);
    fflush(stdout);
  }
  fflush(stdout);
  free(send);
  free(recv);
  free(in);
  free(out);
  MPI_Finalize();
  return wrong != 0 || wrong_total != 0 ? 1 : 0;
}
