/* MPI-3.1 conformance: MPI_ERRORS_ARE_FATAL is the default handler of
 * MPI_COMM_WORLD (8.3), and an error raised under it ends the job: the
 * failing call never returns to the program.
 *
 * Rank 0 sends to rank == size (an invalid rank, MPI_ERR_RANK) on
 * MPI_COMM_WORLD without changing the handler; every other rank waits in
 * a barrier that rank 0 would join only if the send returned. Expected
 * result, checked by the calling script: the job exits non-zero and the
 * error output names MPI_Send. If MPI_Send returns, the program prints
 * UNREACHABLE, joins the barrier and exits 0 from every rank, so the
 * script sees a job that succeeded when it should have died. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, x = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    fflush(stdout);
    int rc = MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    printf("UNREACHABLE (MPI_Send returned %d)\n", rc);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
