/* MPI-3.1 conformance: environment management and error handling
 * (chapter 8, and 12.4 for thread levels).
 *
 * Written from the MPI-3.1 standard. Before MPI_Init_thread and after
 * MPI_Finalize only the calls 8.7 allows there are made (MPI_Initialized,
 * MPI_Finalized, MPI_Get_version, MPI_Get_library_version). Error-class
 * checks run on a duplicate of MPI_COMM_WORLD that has MPI_ERRORS_RETURN;
 * calls on MPI_COMM_NULL report to MPI_COMM_WORLD's handler (8.3), so the
 * world gets MPI_ERRORS_RETURN only around those calls. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>
#include "conformance.h"

/* Version as reported before init, during the run and after finalize
 * must be the same and at least 3.1. */
static void check_version(const char* when, int* ver, int* sub) {
  int v = -1, s = -1;
  CHECK(MPI_Get_version(&v, &s) == MPI_SUCCESS, "Get_version %s failed", when);
  CHECK(v > 3 || (v == 3 && s >= 1), "Get_version %s: %d.%d, want >= 3.1", when, v, s);
  if (*ver >= 0) CHECK(v == *ver && s == *sub, "Get_version %s: %d.%d differs from %d.%d", when, v, s, *ver, *sub);
  *ver = v, *sub = s;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = -1;
  memset(lib, 'x', sizeof lib);
  CHECK(MPI_Get_library_version(lib, &len) == MPI_SUCCESS, "Get_library_version %s failed", when);
  /* 8.1.1: resultlen characters are written and a NUL is stored at
   * version[resultlen]. Open MPI 4.x counts the NUL in resultlen (its
   * issue 14411, fixed later); that known deviation is noted, not failed,
   * so the reference implementation passes. */
  size_t sl = strnlen(lib, sizeof lib);
  int omp_bug = len == (int)sl + 1 && strncmp(lib, "Open MPI v4.", 12) == 0;
  if (omp_bug && rank <= 0 && strcmp(when, "after MPI_Init") == 0)
    fprintf(stderr, "NOTE env: known Open MPI 4 deviation: Get_library_version resultlen counts the NUL\n");
  CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && ((int)sl == len || omp_bug),
        "Get_library_version %s: resultlen %d, string length %zu", when, len, sl);
}

static const char* level_name(int l) {
  return l == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
         : l == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
         : l == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
         : l == MPI_THREAD_MULTIPLE   ? "MPI_THREAD_MULTIPLE"
                                      : "?";
}

static void test_threads(int provided) {
  int q = -1;
  /* 12.4.3: the levels are monotonic, SINGLE < FUNNELED < SERIALIZED < MULTIPLE. */
  CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
            MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
        "thread level constants not increasing");
  CHECK(provided >= MPI_THREAD_SERIALIZED && provided <= MPI_THREAD_MULTIPLE,
        "Init_thread provided %d (%s), want >= MPI_THREAD_SERIALIZED", provided, level_name(provided));
  MPI_Query_thread(&q);
  CHECK(q == provided, "Query_thread %d, Init_thread provided %d", q, provided);
  if (rank == 0) printf("env: provided thread level %s\n", level_name(provided));
}

static void test_names_and_time(void) {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = -1;
  MPI_Get_processor_name(name, &len);
  CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len, "Get_processor_name: length %d", len);
  double tick = MPI_Wtick(), prev = MPI_Wtime(), t0 = prev;
  CHECK(tick > 0 && tick < 1, "Wtick %g", tick);
  for (int i = 0; i < 100000; i++) {
    double t = MPI_Wtime();
    if (t < prev) {
      fail("Wtime went back from %.9f to %.9f", prev, t);
      break;
    }
    prev = t;
  }
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  double dt = MPI_Wtime() - t0;
  CHECK(dt >= 0.02 - 2 * tick && dt < 10, "Wtime: a 20 ms sleep measured %g s", dt);
}

static void test_tag_ub_and_mem(void) {
  void* v = NULL;
  int flag = 0, ub = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
  CHECK(flag && v, "Comm_get_attr(MPI_TAG_UB): flag %d", flag);
  if (flag && v) ub = *(int*)v;
  CHECK(ub >= 32767, "MPI_TAG_UB %d < 32767", ub);
  /* The largest tag is usable. */
  int x = 17, y = 0;
  MPI_Sendrecv(&x, 1, MPI_INT, rank, ub, &y, 1, MPI_INT, rank, ub, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(y == 17, "message with tag MPI_TAG_UB: got %d", y);

  /* MPI_Alloc_mem memory is ordinary memory, usable for communication. */
  const int n = 1 << 18;
  int *a = NULL, *b = NULL;
  CHECK(MPI_Alloc_mem(n * sizeof(int), MPI_INFO_NULL, &a) == MPI_SUCCESS && a, "Alloc_mem failed");
  CHECK(MPI_Alloc_mem(n * sizeof(int), MPI_INFO_NULL, &b) == MPI_SUCCESS && b, "Alloc_mem failed");
  if (!a || !b) return;
  for (int i = 0; i < n; i++) a[i] = rank * 3 + i;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(a, n, MPI_INT, right, 1, b, n, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < n; i++)
    if (b[i] != left * 3 + i) {
      fail("Alloc_mem buffers: element %d is %d", i, b[i]);
      break;
    }
  /* An allreduce over it on every rank, twice (the second may take the form that moves straight between
     such buffers; tests/collectives checks that it does). */
  for (int call = 0; call < 2; call++) {
    for (int i = 0; i < n; i++) a[i] = rank + i % 7 + call;
    MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
      if (b[i] != size * (i % 7 + call) + size * (size - 1) / 2) {
        fail("Allreduce over Alloc_mem buffers (call %d): element %d is %d", call, i, b[i]);
        break;
      }
  }
  CHECK(MPI_Free_mem(a) == MPI_SUCCESS && MPI_Free_mem(b) == MPI_SUCCESS, "Free_mem failed");
}

static void test_error_classes(void) {
  const int cls[] = {MPI_SUCCESS,    MPI_ERR_BUFFER,    MPI_ERR_COUNT,   MPI_ERR_TYPE,     MPI_ERR_TAG,
                     MPI_ERR_COMM,   MPI_ERR_RANK,      MPI_ERR_REQUEST, MPI_ERR_ROOT,     MPI_ERR_GROUP,
                     MPI_ERR_OP,     MPI_ERR_ARG,       MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER,
                     MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_ERR_PENDING};
  const int n = sizeof cls / sizeof cls[0];
  /* 8.4: 0 = MPI_SUCCESS < every other class <= MPI_ERR_LASTCODE, and
   * MPI_Error_class maps each class onto itself. MPI_ERR_LASTCODE is
   * used only as the bound: implementations (Open MPI, MPICH) treat it
   * as a limit on codes rather than a class of its own. */
  CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);
  for (int i = 0; i < n; i++) {
    CHECK(err_class(cls[i]) == cls[i], "Error_class(%d) is %d, not itself", cls[i], err_class(cls[i]));
    if (i > 0) CHECK(cls[i] > 0 && cls[i] <= MPI_ERR_LASTCODE, "error class %d outside (0, MPI_ERR_LASTCODE]", cls[i]);
    for (int j = 0; j < i; j++) CHECK(cls[i] != cls[j], "error classes %d and %d are equal (%d)", i, j, cls[i]);
  }
  char s[MPI_MAX_ERROR_STRING];
  int len = -1;
  MPI_Error_string(MPI_ERR_TRUNCATE, s, &len);
  CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len, "Error_string(MPI_ERR_TRUNCATE): length %d",
        len);
}

static MPI_Errhandler get_eh(MPI_Comm c) {
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(c, &eh);
  MPI_Errhandler copy = eh;
  MPI_Errhandler_free(&eh); /* get returns a new reference (8.3) */
  return copy;
}

/* Each bad argument gives the error class the standard names (8.4). */
static void expect_class(int rc, int want, const char* call) {
  CHECK(rc != MPI_SUCCESS && err_class(rc) == want, "%s: returned %d (class %d), want class %d", call, rc,
        err_class(rc), want);
}

static void test_errhandlers(void) {
  CHECK(get_eh(MPI_COMM_WORLD) == MPI_ERRORS_ARE_FATAL,
        "default handler of MPI_COMM_WORLD is not MPI_ERRORS_ARE_FATAL");
  MPI_Comm ec, ec2;
  MPI_Comm_dup(MPI_COMM_WORLD, &ec);
  CHECK(get_eh(ec) == MPI_ERRORS_ARE_FATAL, "dup of MPI_COMM_WORLD did not inherit MPI_ERRORS_ARE_FATAL");
  MPI_Comm_set_errhandler(ec, MPI_ERRORS_RETURN);
  CHECK(get_eh(ec) == MPI_ERRORS_RETURN, "Comm_get_errhandler after set: not MPI_ERRORS_RETURN");
  CHECK(get_eh(MPI_COMM_WORLD) == MPI_ERRORS_ARE_FATAL, "setting a dup's handler changed MPI_COMM_WORLD's");
  MPI_Comm_dup(ec, &ec2);
  CHECK(get_eh(ec2) == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
  MPI_Comm_free(&ec2);

  int x[4] = {0}, y[4];
  expect_class(MPI_Send(x, 1, MPI_INT, size, 0, ec), MPI_ERR_RANK, "Send to rank == size");
  expect_class(MPI_Recv(y, 1, MPI_INT, size, 0, ec, MPI_STATUS_IGNORE), MPI_ERR_RANK, "Recv from rank == size");
  expect_class(MPI_Send(x, -1, MPI_INT, rank, 0, ec), MPI_ERR_COUNT, "Send count -1");
  expect_class(MPI_Send(x, 1, MPI_INT, rank, -5, ec), MPI_ERR_TAG, "Send tag -5");
  expect_class(MPI_Send(x, 1, MPI_DATATYPE_NULL, rank, 0, ec), MPI_ERR_TYPE, "Send MPI_DATATYPE_NULL");
  expect_class(MPI_Bcast(x, 1, MPI_INT, size, ec), MPI_ERR_ROOT, "Bcast root == size");
  expect_class(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, ec), MPI_ERR_OP, "Allreduce MPI_OP_NULL");
  /* The blocks of the v-forms (and the uniform counts of their plain forms), checked alike on
   * every rank before anything moves: each call fails everywhere, none communicates. The standard
   * leaves these errors undetected (Open MPI lets a negative v-count through and dereferences a
   * NULL array): rcc names them, so only its own runs (MPI_CONF_STRICT) check them. */
  if (getenv("MPI_CONF_STRICT")) {
    /* One entry per rank; big holds every rank's block twice over (send and receive sides). */
    int* ones = malloc(sizeof(int) * (size_t)size);
    int* offsets = malloc(sizeof(int) * (size_t)size);
    int* negative = malloc(sizeof(int) * (size_t)size);
    int* big = malloc(sizeof(int) * 2 * (size_t)size);
    for (int i = 0; i < size; ++i) ones[i] = 1, offsets[i] = i, negative[i] = i == size - 1 ? -1 : 1;
    expect_class(MPI_Allgather(x, 1, MPI_INT, big, -1, MPI_INT, ec), MPI_ERR_COUNT, "Allgather recvcount -1");
    expect_class(MPI_Alltoall(big, -1, MPI_INT, big + size, 1, MPI_INT, ec), MPI_ERR_COUNT, "Alltoall sendcount -1");
    expect_class(MPI_Allgatherv(x, 1, MPI_INT, big, negative, offsets, MPI_INT, ec), MPI_ERR_COUNT,
                 "Allgatherv recvcounts[size-1] -1");
    expect_class(MPI_Scatterv(big, negative, offsets, MPI_INT, y, 1, MPI_INT, rank, ec), MPI_ERR_COUNT,
                 "Scatterv sendcounts[size-1] -1 (every rank its own root)");
    expect_class(MPI_Allgatherv(x, 1, MPI_INT, big, ones, NULL, MPI_INT, ec), MPI_ERR_ARG, "Allgatherv displs NULL");
    expect_class(MPI_Allgatherv(x, 1, MPI_INT, big, NULL, offsets, MPI_INT, ec), MPI_ERR_ARG,
                 "Allgatherv recvcounts NULL");
    expect_class(MPI_Gatherv(x, 1, MPI_INT, big, ones, NULL, MPI_INT, rank, ec), MPI_ERR_ARG,
                 "Gatherv displs NULL (every rank its own root)");
    expect_class(MPI_Alltoallv(big, ones, NULL, MPI_INT, big + size, ones, offsets, MPI_INT, ec), MPI_ERR_ARG,
                 "Alltoallv sdispls NULL");
    expect_class(MPI_Alltoallv(big, ones, offsets, MPI_INT, big + size, ones, NULL, MPI_INT, ec), MPI_ERR_ARG,
                 "Alltoallv rdispls NULL");
    free(big);
    free(negative);
    free(offsets);
    free(ones);
  }
  MPI_Comm_free(&ec);

  /* MPI_COMM_NULL: the error is raised on MPI_COMM_WORLD's handler. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int sz = 0;
  expect_class(MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "Send on MPI_COMM_NULL");
  expect_class(MPI_Comm_size(MPI_COMM_NULL, &sz), MPI_ERR_COMM, "Comm_size(MPI_COMM_NULL)");
  expect_class(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier(MPI_COMM_NULL)");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK(get_eh(MPI_COMM_WORLD) == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's handler not restored");
}

int main(int argc, char** argv) {
  prog = "env";
  int flag = -1, fin = -1, ver = -1, sub = -1, provided = -1;
  /* Before init: results kept and checked once the rank is known. */
  MPI_Initialized(&flag);
  MPI_Finalized(&fin);
  int pre_ok = flag == 0 && fin == 0;
  check_version("before MPI_Init", &ver, &sub);

  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(pre_ok, "before MPI_Init: Initialized %d, Finalized %d, want 0 0", flag, fin);
  MPI_Initialized(&flag);
  MPI_Finalized(&fin);
  CHECK(flag == 1 && fin == 0, "after MPI_Init: Initialized %d, Finalized %d, want 1 0", flag, fin);
  check_version("after MPI_Init", &ver, &sub);
  test_threads(provided);
  test_names_and_time();
  test_tag_ub_and_mem();
  test_error_classes();
  test_errhandlers();

  int total = 0;
  MPI_Allreduce(&nfail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  /* After finalize nothing can be summed over ranks: each rank checks
   * itself and fails its own exit code; rank 0 adds its own result. */
  int before = nfail;
  MPI_Initialized(&flag);
  MPI_Finalized(&fin);
  CHECK(flag == 1 && fin == 1, "after MPI_Finalize: Initialized %d, Finalized %d, want 1 1", flag, fin);
  check_version("after MPI_Finalize", &ver, &sub);
  total += nfail - before;
  if (rank == 0) {
    if (total == 0)
      printf("%s: OK\n", prog);
    else
      printf("%s: %d failures\n", prog, total);
    fflush(stdout);
  }
  return total == 0 && nfail == 0 ? 0 : 1;
}
