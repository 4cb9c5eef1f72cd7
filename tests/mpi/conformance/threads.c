/* MPI-3.1 conformance: MPI_THREAD_MULTIPLE (12.4).
 *
 * Two threads per rank, each on its own duplicate of MPI_COMM_WORLD,
 * exchange 1000 messages each around the ring at the same time. Thread 0
 * sends right with MPI_Sendrecv; thread 1 sends left with Irecv/Isend/
 * Waitall. Both use the same tags, so only the communicator keeps their
 * messages apart (a message is matched within its communicator only);
 * every payload names its thread, sender and iteration, and every 100th
 * message is 64 KiB so that large and small transfers interleave across
 * threads. Without MPI_THREAD_MULTIPLE the test is skipped and passes. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char* prog = "threads";
static int rank, size;
enum { ITERS = 1000, BIG = 16384 };

struct worker {
  int id;        /* 0 or 1 */
  MPI_Comm comm; /* this thread's own communicator */
  int nfail;
  pthread_t thread;
};

__attribute__((format(printf, 2, 3))) static void fail(struct worker* w, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL %s rank %d: thread %d: %s\n", prog, rank, w->id, msg);
  w->nfail++;
}

static int pat(int id, int src, int it, int k) { return ((id * 1000003 + src * 10007 + it) * 31 + k) & 0x7fffffff; }
static int msg_len(int it) { return it % 100 == 99 ? BIG : 1 + it % 7; }

static void* run(void* arg) {
  struct worker* w = arg;
  int me, np, result = -1;
  MPI_Comm_rank(w->comm, &me);
  MPI_Comm_size(w->comm, &np);
  MPI_Comm_compare(w->comm, MPI_COMM_WORLD, &result);
  if (result != MPI_CONGRUENT) fail(w, "Comm_compare(dup, world) is %d, want MPI_CONGRUENT", result);
  /* Thread 0 sends right, thread 1 sends left. */
  int to = w->id == 0 ? (me + 1) % np : (me + np - 1) % np;
  int from = w->id == 0 ? (me + np - 1) % np : (me + 1) % np;
  int *sb = malloc(BIG * sizeof(int)), *rb = malloc(BIG * sizeof(int));
  for (int it = 0; it < ITERS && w->nfail < 10; it++) {
    int n = msg_len(it), got = -1;
    MPI_Status st;
    for (int k = 0; k < n; k++) sb[k] = pat(w->id, me, it, k);
    if (w->id == 0) {
      MPI_Sendrecv(sb, n, MPI_INT, to, it, rb, BIG, MPI_INT, from, it, w->comm, &st);
    } else {
      MPI_Request r[2];
      MPI_Status sts[2];
      MPI_Irecv(rb, BIG, MPI_INT, from, it, w->comm, &r[0]);
      MPI_Isend(sb, n, MPI_INT, to, it, w->comm, &r[1]);
      MPI_Waitall(2, r, sts);
      st = sts[0];
    }
    MPI_Get_count(&st, MPI_INT, &got);
    if (got != n || st.MPI_SOURCE != from || st.MPI_TAG != it) {
      fail(w, "iteration %d: count %d source %d tag %d, want %d %d %d", it, got, st.MPI_SOURCE, st.MPI_TAG, n, from,
           it);
      continue;
    }
    for (int k = 0; k < n; k++)
      if (rb[k] != pat(w->id, from, it, k)) {
        fail(w, "iteration %d: element %d is %d, want %d", it, k, rb[k], pat(w->id, from, it, k));
        break;
      }
  }
  free(sb);
  free(rb);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1, total = 0, nfail = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("%s: skipped: MPI_THREAD_MULTIPLE not provided (level %d)\n%s: OK\n", prog, provided, prog);
    MPI_Finalize();
    return 0;
  }
  struct worker w[2];
  /* Duplication is collective on MPI_COMM_WORLD, so the main thread does
   * both, in the same order on every rank, before the threads start. */
  for (int i = 0; i < 2; i++) {
    w[i].id = i;
    w[i].nfail = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
  }
  for (int i = 0; i < 2; i++)
    if (pthread_create(&w[i].thread, NULL, run, &w[i]) != 0) {
      fprintf(stderr, "FAIL %s rank %d: pthread_create\n", prog, rank);
      nfail++;
      w[i].comm = MPI_COMM_NULL; /* marks "not started" */
    }
  for (int i = 0; i < 2; i++) {
    if (w[i].comm == MPI_COMM_NULL) continue;
    pthread_join(w[i].thread, NULL);
    nfail += w[i].nfail;
    MPI_Comm_free(&w[i].comm);
  }
  MPI_Allreduce(&nfail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf("%s: OK\n", prog);
    else
      printf("%s: %d failures\n", prog, total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
