/* rcc's MPI beyond what every MPI does alike (docs/mpi.md):
 * - MPI_Comm_free while a request on the communicator is pending is an error (MPI_ERR_COMM)
 *   naming the pending requests; after they complete the free succeeds;
 * - a cancelled receive completes with MPI_Test_cancelled true, and its buffer is untouched;
 * - an error's string names the call that failed and why (MPI_Error_string after ERRORS_RETURN);
 * - MPI_Issend completes only after the receive matched it, also for 0 bytes;
 * - MPI_Init_thread provides MPI_THREAD_MULTIPLE when asked;
 * - what a review found: a reduction on a contiguous derived type whose data starts past its
 *   lower bound's zero, an alltoall whose ranks use different receive types of one signature, a
 *   user operation reading a double of a struct type whose data starts at 4 (its buffers must be
 *   aligned as a C array's), a receive into a vector type freed with MPI_Request_free (its data
 *   lands while the program runs on). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void offset_contiguous_reduction(void) {
  int length = 3, displacement = 1;
  MPI_Datatype tail;
  MPI_Type_indexed(1, &length, &displacement, MPI_INT, &tail);  // ints 1..3 of 4: lb 4, no gap
  MPI_Type_commit(&tail);
  int in[4] = {100, rank + 1, 2 * (rank + 1), 3 * (rank + 1)}, out[4] = {-1, -1, -1, -1};
  MPI_Allreduce(in, out, 1, tail, MPI_SUM, MPI_COMM_WORLD);
  const int sum = size * (size + 1) / 2;
  CHECK(out[0] == -1 && out[1] == sum && out[2] == 2 * sum && out[3] == 3 * sum,
        "allreduce of a type with lb 4: %d %d %d %d, want -1 %d %d %d", out[0], out[1], out[2], out[3], sum, 2 * sum,
        3 * sum);
  MPI_Type_free(&tail);
}

static void alltoall_mixed_types(void) {
  enum { k = 3 };
  int send[8 * k], recv[8 * (2 * k - 1) + 1];
  for (int i = 0; i < size * k; ++i) send[i] = rank * 1000 + i;
  for (int i = 0; i < 8 * (2 * k - 1) + 1; ++i) recv[i] = -1;
  MPI_Datatype strided;
  MPI_Type_vector(k, 1, 2, MPI_INT, &strided);  // k ints, every other one: one signature with k MPI_INT
  MPI_Type_commit(&strided);
  const int odd = rank % 2;
  MPI_Alltoall(send, k, MPI_INT, recv, odd ? 1 : k, odd ? strided : MPI_INT, MPI_COMM_WORLD);
  int wrong = 0;
  for (int from = 0; from < size; ++from) {
    for (int j = 0; j < k; ++j) {
      const int at = odd ? from * (2 * k - 1) + 2 * j : from * k + j;
      wrong += recv[at] != from * 1000 + rank * k + j;
    }
  }
  CHECK(wrong == 0, "alltoall with MPI_INT on even ranks and a vector type on odd ones: %d wrong", wrong);
  MPI_Type_free(&strided);
}

typedef struct {
  int unused;  // not in the datatype: its data starts at 4
  int count;
  double total;
} Tally;

static void add_tallies(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const Tally* a = in;
  Tally* b = inout;
  for (int i = 0; i < *len; ++i) {
    b[i].count += a[i].count;
    b[i].total += a[i].total;
  }
}

static void user_op_alignment(void) {
  int lengths[2] = {1, 1};
  MPI_Aint displacements[2] = {offsetof(Tally, count), offsetof(Tally, total)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, tally;
  MPI_Type_create_struct(2, lengths, displacements, types, &tally);
  MPI_Type_commit(&tally);
  MPI_Op add;
  MPI_Op_create(add_tallies, 1, &add);
  Tally in[2] = {{-7, rank, 0.5 * rank}, {-7, 1, 1.0}}, out[2] = {{-9, 0, 0}, {-9, 0, 0}};
  MPI_Allreduce(in, out, 2, tally, add, MPI_COMM_WORLD);
  const int sum = size * (size - 1) / 2;
  CHECK(out[0].unused == -9 && out[0].count == sum && out[0].total == 0.5 * sum && out[1].count == size &&
            out[1].total == size,
        "user operation on a struct type with lb 4: %d %d %g %d %g", out[0].unused, out[0].count, out[0].total,
        out[1].count, out[1].total);
  MPI_Op_free(&add);
  MPI_Type_free(&tally);
}

static void freed_strided_receive(void) {
  if (size < 2) return;
  int data[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  MPI_Datatype strided;
  MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  if (rank == 1) {
    MPI_Request request;
    MPI_Irecv(data, 1, strided, 0, 21, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const int values[4] = {10, 11, 12, 13};
    MPI_Send(values, 4, MPI_INT, 1, 21, MPI_COMM_WORLD);
  } else if (rank == 1) {
    // The program learns of the data only through its buffer: it keeps calling MPI, as it would.
    const double start = MPI_Wtime();
    while (data[6] != 13 && MPI_Wtime() - start < 20) {
      MPI_Request none = MPI_REQUEST_NULL;
      int flag = 0;
      MPI_Test(&none, &flag, MPI_STATUS_IGNORE);
      nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    CHECK(data[0] == 10 && data[2] == 11 && data[4] == 12 && data[6] == 13 && data[1] == -1 && data[7] == -1,
          "a freed receive into a vector type: %d %d %d %d (gaps %d %d)", data[0], data[2], data[4], data[6], data[1],
          data[7]);
  }
  MPI_Type_free(&strided);
  MPI_Barrier(MPI_COMM_WORLD);
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
  offset_contiguous_reduction();
  if (size <= 8) alltoall_mixed_types();
  user_op_alignment();
  freed_strided_receive();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf(total == 0 ? "semantics: OK\n" : "semantics: %d failures\n", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
