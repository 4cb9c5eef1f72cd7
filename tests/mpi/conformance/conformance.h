/* Shared helpers of the MPI conformance programs in this directory:
 * failure reporting and the job-wide verdict. Each program is one C file
 * that includes this header and sets `prog` first thing in main.
 *
 * Output contract (read by the scripts that run the programs):
 *   - each failed check prints "FAIL <prog> rank R: <what>" on stderr;
 *   - rank 0 prints "<prog>: OK" or "<prog>: N failures" on stdout,
 *     N summed over all ranks;
 *   - every rank exits 0 only when the whole job passed. */
#ifndef RCC_MPI_CONFORMANCE_H
#define RCC_MPI_CONFORMANCE_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char* prog = "?";
static int rank = -1, size, nfail;

/* One fprintf per line so that lines from different ranks do not mix. */
__attribute__((format(printf, 1, 2))) static inline void fail(const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL %s rank %d: %s\n", prog, rank, msg);
  nfail++;
}
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) fail(__VA_ARGS__); \
  } while (0)

/* Behaviour MPI-3.1 recommends ("a quality implementation will ...")
 * but does not require: a failure only when MPI_CONF_STRICT is set in
 * the environment, otherwise a NOTE line on stderr. */
static inline void quality(const char* what) {
  if (getenv("MPI_CONF_STRICT"))
    fail("%s (quality check, MPI_CONF_STRICT set)", what);
  else
    fprintf(stderr, "NOTE %s rank %d: %s (recommended by MPI-3.1, not required)\n", prog, rank, what);
}

static inline int err_class(int rc) {
  int c = -1;
  MPI_Error_class(rc, &c);
  return c;
}

/* Sums the failures over MPI_COMM_WORLD, prints the verdict on rank 0,
 * finalizes, and gives main's return value. */
static inline int conf_finish(void) {
  int total = 0;
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

#endif
