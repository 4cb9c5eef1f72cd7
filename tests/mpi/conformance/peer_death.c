/* A rank dies (exits without MPI_Finalize) while the others wait on it: under MPI_ERRORS_RETURN
 * the survivors' calls return an error whose string names the dead rank, in bounded time, and they
 * can still leave. Rank size-1 dies; rank 0 waits in MPI_Recv from it, the others in MPI_Allreduce.
 * Each survivor prints "survivor R: CALL failed after S s: ..." (peer_death_test.sh checks). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    nanosleep(&(struct timespec){0, 200000000}, NULL);
    _exit(3);
  }
  const double start = MPI_Wtime();
  int value = 0, sum = 0, rc;
  const char* call;
  if (rank == 0) {
    call = "MPI_Recv";
    rc = MPI_Recv(&value, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    call = "MPI_Allreduce";
    rc = MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  char text[MPI_MAX_ERROR_STRING];
  int length = 0, error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  MPI_Error_string(rc, text, &length);
  printf("survivor %d: %s %s after %.1f s: %s\n", rank, call, rc == MPI_SUCCESS ? "succeeded" : "failed",
         MPI_Wtime() - start, text);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
