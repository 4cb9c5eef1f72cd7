/* rcc's MPI beyond what every MPI does alike (docs/mpi.md):
 * - MPI_Comm_free while a request on the communicator is pending is an error (MPI_ERR_COMM)
 *   naming the pending requests; after they complete the free succeeds;
 * - a cancelled receive completes with MPI_Test_cancelled true, and its buffer is untouched;
 * - an error's string names the call that failed and why (MPI_Error_string after ERRORS_RETURN);
 * - MPI_Issend completes only after the receive matched it, also for 0 bytes;
 * - MPI_Init_thread provides MPI_THREAD_MULTIPLE when asked. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures;
static int rank, size;

#define CHECK(cond, ...)                                 \
  do {                                                   \
    if (!(cond)) {                                       \
      fprintf(stderr, "FAIL semantics rank %d: ", rank); \
      fprintf(stderr, __VA_ARGS__);                      \
      fprintf(stderr, "\n");                             \
      ++failures;                                        \
    }                                                    \
  } while (0)

static void free_with_pending(void) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int value = -7;
  MPI_Request request;
  MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 99, dup, &request);
  MPI_Comm keep = dup;
  int rc = MPI_Comm_free(&dup);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_COMM, "MPI_Comm_free with a pending receive gave class %d, want MPI_ERR_COMM",
        error_class);
  CHECK(dup == keep, "a failed MPI_Comm_free changed the handle");
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  CHECK(strstr(text, "MPI_Comm_free") != NULL && strstr(text, "pending") != NULL,
        "the error string does not name MPI_Comm_free and the pending request: %s", text);
  MPI_Cancel(&request);
  MPI_Status status;
  MPI_Wait(&request, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  CHECK(cancelled == 1, "the receive was not cancelled");
  CHECK(value == -7, "a cancelled receive wrote its buffer");
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS && dup == MPI_COMM_NULL, "MPI_Comm_free after the wait failed");
}

static void error_string_names_call(void) {
  if (size < 2) return;
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int data[4] = {1, 2, 3, 4};
  if (rank == 0) {
    MPI_Send(data, 4, MPI_INT, 1, 5, dup);
  } else if (rank == 1) {
    int rc = MPI_Recv(data, 2, MPI_INT, 0, 5, dup, MPI_STATUS_IGNORE);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    CHECK(error_class == MPI_ERR_TRUNCATE, "a short receive gave class %d, want MPI_ERR_TRUNCATE", error_class);
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    CHECK(strstr(text, "MPI_Recv") != NULL && strstr(text, "16 bytes") != NULL,
          "the error string does not name MPI_Recv and the message length: %s", text);
  }
  MPI_Comm_free(&dup);
}

static void synchronous_send(void) {
  static char buffer[1 << 20];
  const int sizes[] = {0, 1, 64, 4096, 1 << 20};
  for (int k = 0; k < 5; ++k) {
    const int bytes = sizes[k];
    MPI_Request request = MPI_REQUEST_NULL;
    int done = 0;
    if (size >= 2 && rank == 0) {
      MPI_Issend(buffer, bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &request);
      for (int i = 0; i < 200; ++i) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      CHECK(!done, "MPI_Issend of %d bytes completed before the receive was posted", bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // rank 1 posts its receive only after this
    if (size >= 2 && rank == 1) MPI_Recv(buffer, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (size >= 2 && rank == 0 && !done) MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d, want MPI_THREAD_MULTIPLE", provided);
  free_with_pending();
  error_string_names_call();
  synchronous_send();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(total == 0 ? "semantics: OK\n" : "semantics: %d failures\n", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
