/* Communicator churn: MPI_Comm_dup + MPI_Comm_free and MPI_Comm_split + MPI_Comm_free per second,
 * the same program under every MPI (bench/comm-rate runs it beside Open MPI and MPICH).
 *   comm_rate [SECONDS]   (default 1: each kind runs at least that long, in rounds of 100)
 * Rank 0 prints "comm-rate ranks=N dup_per_s=X split_per_s=Y"; a communicator of the wrong size or
 * rank prints FAIL and exits 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int check(MPI_Comm comm, int want_size, int want_rank) {
  int size = -1, rank = -1;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (size != want_size || rank != want_rank) {
    fprintf(stderr, "FAIL: a communicator of %d ranks (rank %d), expected %d (rank %d)\n", size, rank, want_size,
            want_rank);
    return 0;
  }
  return 1;
}

/* Runs rounds of 100 until `seconds` passed on rank 0; returns the rate. */
static double rate(int split, double seconds, int rank, int size) {
  long done = 0;
  const double start = MPI_Wtime();
  for (;;) {
    for (int i = 0; i < 100; ++i) {
      MPI_Comm comm;
      if (split) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &comm);
        /* key -rank: the ranks of one parity in descending order */
        if (!check(comm, rank % 2 == 0 ? (size + 1) / 2 : size / 2, (size - 1 - rank) / 2)) exit(1);
      } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (!check(comm, size, rank)) exit(1);
      }
      MPI_Comm_free(&comm);
    }
    done += 100;
    int stop = MPI_Wtime() - start >= seconds;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (stop) break;
  }
  return (double)done / (MPI_Wtime() - start);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  rate(0, seconds / 10, rank, size); /* warm-up */
  const double dups = rate(0, seconds, rank, size);
  const double splits = rate(1, seconds, rank, size);
  if (rank == 0) printf("comm-rate ranks=%d dup_per_s=%.0f split_per_s=%.0f\n", size, dups, splits);
  MPI_Finalize();
  return 0;
}
