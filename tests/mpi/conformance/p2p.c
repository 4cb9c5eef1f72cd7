/* MPI-3.1 conformance: point-to-point matching, ordering and completion.
 *
 * Written from the MPI-3.1 standard (chapter 3). Every test is
 * deterministic: no check depends on timing, only on guarantees the
 * standard gives (non-overtaking, matching rules, synchronous-mode
 * completion, null processes, empty statuses, cancellation).
 * Runs at any number of ranks >= 1: pair tests use ranks 0 and 1, or
 * rank 0 talking to itself (nonblocking) when there is only one rank.
 * Tests are separated by barriers so that a fast rank's next test can
 * never feed messages into a slow rank's wildcard receives.
 * Writing past a truncated receive's buffer is only a NOTE unless
 * MPI_CONF_STRICT is set: 3.2.4 recommends, but does not require, that
 * no memory outside the receive buffer is ever written (Open MPI 4.1
 * writes past it for large truncated messages). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>
#include "conformance.h"

static int left, right; /* ring neighbours */
static int peer;        /* receiver of pair tests: 1, or 0 itself at size 1 */
static MPI_Comm ecomm;  /* dup of the world with MPI_ERRORS_RETURN */

static int pat(int seed, int k) { return seed * 7919 + k; }
static void fill(int* b, int n, int seed) {
  for (int k = 0; k < n; k++) b[k] = pat(seed, k);
}
/* Returns the first wrong index, or -1. */
static int verify(const int* b, int n, int seed) {
  for (int k = 0; k < n; k++)
    if (b[k] != pat(seed, k)) return k;
  return -1;
}
static int count_of(const MPI_Status* st, MPI_Datatype t) {
  int c = -12345;
  MPI_Get_count(st, t, &c);
  return c;
}

/* A status from MPI_PROC_NULL: source PROC_NULL, tag ANY_TAG, count 0 (3.11). */
static void check_null_status(const MPI_Status* st, const char* what) {
  CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d, want MPI_PROC_NULL", what, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, want MPI_ANY_TAG", what, st->MPI_TAG);
  CHECK(count_of(st, MPI_INT) == 0, "%s: count %d, want 0", what, count_of(st, MPI_INT));
}
/* An empty status (3.7.3): source ANY_SOURCE, tag ANY_TAG, count 0, not cancelled. */
static void check_empty_status(const MPI_Status* st, const char* what) {
  int canc = 1;
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE, "%s: source %d, want MPI_ANY_SOURCE", what, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d, want MPI_ANY_TAG", what, st->MPI_TAG);
  CHECK(count_of(st, MPI_INT) == 0, "%s: count %d, want 0", what, count_of(st, MPI_INT));
  MPI_Test_cancelled(st, &canc);
  CHECK(!canc, "%s: empty status reports cancelled", what);
}
static void poison(MPI_Status* st) { memset(st, 0x5b, sizeof *st); }

/* Non-overtaking (3.5): messages from one sender with the same (comm, tag)
 * are received in send order, whatever their sizes (eager and rendezvous
 * mixed) and whether the receive names the source or uses a wildcard. */
static void test_order(void) {
  enum { N = 40, BIG = 65536 };
  MPI_Request req[N];
  int *sb[N], *rb = malloc(BIG * sizeof(int));
  for (int i = 0; i < N; i++) {
    int n = i % 13 == 0 ? BIG : 1 + i % 3;
    sb[i] = malloc(n * sizeof(int));
    fill(sb[i], n, i);
    MPI_Isend(sb[i], n, MPI_INT, right, 10, MPI_COMM_WORLD, &req[i]);
  }
  for (int i = 0; i < N; i++) {
    MPI_Status st;
    int n = i % 13 == 0 ? BIG : 1 + i % 3;
    MPI_Recv(rb, BIG, MPI_INT, i % 2 ? MPI_ANY_SOURCE : left, 10, MPI_COMM_WORLD, &st);
    CHECK(count_of(&st, MPI_INT) == n, "order: message %d has count %d, want %d", i, count_of(&st, MPI_INT), n);
    CHECK(st.MPI_SOURCE == left, "order: message %d source %d", i, st.MPI_SOURCE);
    int bad = verify(rb, n, i);
    CHECK(bad < 0, "order: message %d overtaken or corrupt at element %d", i, bad);
  }
  MPI_Waitall(N, req, MPI_STATUSES_IGNORE);
  for (int i = 0; i < N; i++) free(sb[i]);
  free(rb);

  /* MPI_ANY_TAG receives get different-tag messages in send order. */
  int vals[8], got;
  for (int i = 0; i < 8; i++) {
    vals[i] = i;
    MPI_Isend(&vals[i], 1, MPI_INT, right, 20 + i, MPI_COMM_WORLD, &req[i]);
  }
  for (int i = 0; i < 8; i++) {
    MPI_Status st;
    MPI_Recv(&got, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_TAG == 20 + i && got == i, "order: ANY_TAG receive %d got tag %d value %d", i, st.MPI_TAG, got);
  }
  MPI_Waitall(8, req, MPI_STATUSES_IGNORE);

  /* Receives posted in order, all matching the same messages, are
   * satisfied in posting order. The barrier makes them all posted
   * before the first send starts. */
  int rv[6];
  for (int i = 0; i < 6; i++) MPI_Irecv(&rv[i], 1, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &req[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 6; i++) MPI_Send(&vals[i], 1, MPI_INT, right, 30, MPI_COMM_WORLD);
  MPI_Waitall(6, req, MPI_STATUSES_IGNORE);
  for (int i = 0; i < 6; i++) CHECK(rv[i] == i, "order: posted receive %d got %d", i, rv[i]);
}

/* A message on one communicator never matches a receive on another,
 * even with the same source and tag: the world receive skips the
 * earlier message sent on the duplicate. */
static void test_context(void) {
  MPI_Comm dup;
  MPI_Request r[2];
  int a = 1, b = 2, x = 0, y = 0;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (rank == 0) {
    MPI_Isend(&a, 1, MPI_INT, peer, 5, dup, &r[0]);
    MPI_Isend(&b, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[1]);
  }
  if (rank == peer) {
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, MPI_STATUS_IGNORE);
    CHECK(x == 2 && y == 1, "context: world got %d, dup got %d", x, y);
  }
  if (rank == 0) MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Comm_free(&dup);
}

/* Wildcard receives report the real source, tag and count. */
static void test_wildcards(void) {
  if (rank != 0) {
    int buf[8];
    fill(buf, rank % 8 + 1, rank);
    MPI_Send(buf, rank % 8 + 1, MPI_INT, 0, 100 + rank, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* keeps the tag-99 round out of ANY_TAG */
    MPI_Send(&rank, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
  } else {
    int seen[64] = {0}, buf[8];
    for (int i = 1; i < size; i++) {
      MPI_Status st;
      MPI_Recv(buf, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      int s = st.MPI_SOURCE;
      if (s < 1 || s >= size || s >= 64) {
        fail("wildcards: source %d", s);
        continue;
      }
      seen[s]++;
      CHECK(st.MPI_TAG == 100 + s, "wildcards: tag %d from %d", st.MPI_TAG, s);
      CHECK(count_of(&st, MPI_INT) == s % 8 + 1, "wildcards: count %d from %d", count_of(&st, MPI_INT), s);
      CHECK(verify(buf, s % 8 + 1, s) < 0, "wildcards: data from %d", s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 1; i < size; i++) {
      MPI_Status st;
      int v = -1;
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &st);
      CHECK(v == st.MPI_SOURCE && st.MPI_TAG == 99, "wildcards: source %d sent %d", st.MPI_SOURCE, v);
    }
    for (int i = 1; i < size; i++) CHECK(seen[i] == 1, "wildcards: rank %d seen %d times", i, seen[i]);
  }
  /* MPI_Get_count is MPI_UNDEFINED when the data is not a whole number
   * of the receive type: 3 ints received as pairs of ints (a prefix
   * match, 3.3.1). And 10 bytes received into 12 count 10. */
  MPI_Datatype pair;
  MPI_Request r[2];
  int three[3] = {4, 5, 6}, rb[4] = {0}, ten[3] = {0};
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  if (rank == 0) {
    MPI_Isend(three, 3, MPI_INT, peer, 98, MPI_COMM_WORLD, &r[0]);
    MPI_Isend("0123456789", 10, MPI_BYTE, peer, 97, MPI_COMM_WORLD, &r[1]);
  }
  if (rank == peer) {
    MPI_Status st, sb;
    MPI_Recv(rb, 2, pair, 0, 98, MPI_COMM_WORLD, &st);
    MPI_Recv(ten, 12, MPI_BYTE, 0, 97, MPI_COMM_WORLD, &sb);
    CHECK(count_of(&st, pair) == MPI_UNDEFINED, "get_count: 12 bytes as 8-byte pairs gave %d, want MPI_UNDEFINED",
          count_of(&st, pair));
    CHECK(rb[0] == 4 && rb[1] == 5 && rb[2] == 6 && rb[3] == 0, "get_count: pair data %d %d %d %d", rb[0], rb[1], rb[2],
          rb[3]);
    CHECK(count_of(&sb, MPI_BYTE) == 10 && memcmp(ten, "0123456789", 10) == 0, "get_count: 10 bytes gave %d",
          count_of(&sb, MPI_BYTE));
  }
  if (rank == 0) MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  MPI_Type_free(&pair);
  CHECK(pair == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");
}

/* MPI_PROC_NULL (3.11): sends and receives succeed at once, receives and
 * probes report source PROC_NULL, tag ANY_TAG, count 0, buffer untouched. */
static void test_proc_null(void) {
  int buf[4] = {7, 7, 7, 7}, flag = 0;
  MPI_Status st;
  MPI_Request r;
  MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
  MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
  poison(&st);
  MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_null_status(&st, "Recv(PROC_NULL)");
  poison(&st);
  MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  check_null_status(&st, "Irecv(PROC_NULL)+Wait");
  MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  CHECK(r == MPI_REQUEST_NULL, "Isend(PROC_NULL): request not freed by Wait");
  poison(&st);
  MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_null_status(&st, "Probe(PROC_NULL)");
  poison(&st);
  MPI_Iprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &flag, &st);
  CHECK(flag, "Iprobe(PROC_NULL) flag false");
  check_null_status(&st, "Iprobe(PROC_NULL)");
  poison(&st);
  MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
  check_null_status(&st, "Sendrecv(PROC_NULL)");
  for (int i = 0; i < 4; i++) CHECK(buf[i] == 7, "PROC_NULL receive modified the buffer");
}

/* A message longer than the receive buffer gives MPI_ERR_TRUNCATE; no
 * byte outside the receive buffer is written; the message is consumed,
 * so the next message on the same (source, tag) is received normally. */
static void test_truncate(int nbytes) {
  enum { GUARD = 64 };
  int half = nbytes / 2;
  char *sb = malloc(nbytes), *rb = malloc(nbytes + GUARD);
  int next = 42, got = 0;
  MPI_Request r[2];
  for (int i = 0; i < nbytes; i++) sb[i] = (char)(i * 31 + 7);
  memset(rb, 0x3c, nbytes + GUARD);
  if (rank == 0) {
    MPI_Isend(sb, nbytes, MPI_BYTE, peer, 7, ecomm, &r[0]);
    MPI_Isend(&next, 1, MPI_INT, peer, 7, ecomm, &r[1]);
  }
  if (rank == peer) {
    int rc = MPI_Recv(rb, half, MPI_BYTE, 0, 7, ecomm, MPI_STATUS_IGNORE);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "truncate %d B: class %d, want MPI_ERR_TRUNCATE", nbytes, err_class(rc));
    /* 3.2.4, advice to implementors: a quality implementation never
     * writes outside the receive buffer on overflow. */
    for (int i = half; i < nbytes + GUARD; i++)
      if (rb[i] != 0x3c) {
        quality(nbytes > 1000 ? "large truncated receive wrote past the receive buffer"
                              : "small truncated receive wrote past the receive buffer");
        break;
      }
    rc = MPI_Recv(&got, 1, MPI_INT, 0, 7, ecomm, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && got == 42, "truncate %d B: next message rc %d value %d", nbytes, rc, got);
  }
  if (rank == 0) {
    int rc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(rc == MPI_SUCCESS, "truncate %d B: sender's Waitall rc %d", nbytes, rc);
  }
  free(sb);
  free(rb);
}

/* Truncation seen through a multiple-completion call: MPI_ERR_IN_STATUS,
 * with each status' MPI_ERROR telling which receive failed. */
static void test_truncate_waitall(void) {
  int s[4] = {1, 2, 3, 4}, a[4], b[2];
  MPI_Request sr[2], rr[2];
  MPI_Status st[2];
  if (rank == 0) {
    MPI_Isend(s, 4, MPI_INT, peer, 8, ecomm, &sr[0]);
    MPI_Isend(s, 4, MPI_INT, peer, 9, ecomm, &sr[1]);
  }
  if (rank == peer) {
    MPI_Irecv(a, 4, MPI_INT, 0, 8, ecomm, &rr[0]);
    MPI_Irecv(b, 2, MPI_INT, 0, 9, ecomm, &rr[1]);
    int rc = MPI_Waitall(2, rr, st);
    CHECK(err_class(rc) == MPI_ERR_IN_STATUS, "truncate Waitall: class %d, want MPI_ERR_IN_STATUS", err_class(rc));
    if (err_class(rc) == MPI_ERR_IN_STATUS) {
      CHECK(st[0].MPI_ERROR == MPI_SUCCESS, "truncate Waitall: good receive has error %d", st[0].MPI_ERROR);
      CHECK(err_class(st[1].MPI_ERROR) == MPI_ERR_TRUNCATE, "truncate Waitall: status class %d",
            err_class(st[1].MPI_ERROR));
    }
    CHECK(a[0] == 1 && a[3] == 4, "truncate Waitall: good receive data");
  }
  if (rank == 0) MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
}

/* Zero-byte messages match, carry their tag and count 0, keep order. */
static void test_zero(void) {
  int dummy = 5, buf[4] = {9, 9, 9, 9};
  MPI_Request r[3];
  if (rank == 0) {
    MPI_Isend(&dummy, 0, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&dummy, 1, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(NULL, 0, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &r[2]);
  }
  if (rank == peer) {
    MPI_Status st;
    MPI_Recv(buf, 4, MPI_INT, 0, 11, MPI_COMM_WORLD, &st);
    CHECK(count_of(&st, MPI_INT) == 0 && st.MPI_TAG == 11 && st.MPI_SOURCE == 0, "zero: count %d tag %d source %d",
          count_of(&st, MPI_INT), st.MPI_TAG, st.MPI_SOURCE);
    CHECK(buf[0] == 9, "zero: zero-byte receive wrote the buffer");
    MPI_Recv(buf, 4, MPI_INT, 0, 11, MPI_COMM_WORLD, &st);
    CHECK(count_of(&st, MPI_INT) == 1 && buf[0] == 5, "zero: following message count %d value %d",
          count_of(&st, MPI_INT), buf[0]);
    MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK(count_of(&st, MPI_BYTE) == 0 && st.MPI_TAG == 12, "zero: NULL-buffer message count %d tag %d",
          count_of(&st, MPI_BYTE), st.MPI_TAG);
  }
  if (rank == 0) MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
}

/* Several-MiB messages around the ring, an odd byte length included so
 * that chunked transports must get the tail right; and a large Ssend. */
static void test_large(void) {
  const int n = 1 << 20; /* 4 MiB of int */
  int *sb = malloc((size_t)n * sizeof(int)), *rb = malloc((size_t)n * sizeof(int) + 8);
  MPI_Request r[2];
  MPI_Status st;
  fill(sb, n, rank + 1);
  MPI_Irecv(rb, n, MPI_INT, left, 13, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(sb, n, MPI_INT, right, 13, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  int bad = verify(rb, n, left + 1);
  CHECK(bad < 0, "large: 4 MiB ring message wrong at element %d", bad);
  const int odd = 3 * (1 << 20) + 3; /* bytes */
  memset(rb, 0, (size_t)n * sizeof(int));
  MPI_Sendrecv(sb, odd, MPI_BYTE, right, 14, rb, odd + 8, MPI_BYTE, left, 14, MPI_COMM_WORLD, &st);
  CHECK(count_of(&st, MPI_BYTE) == odd, "large: odd-size count %d", count_of(&st, MPI_BYTE));
  fill(sb, n, left + 1); /* expected bytes, built locally */
  CHECK(memcmp(rb, sb, odd) == 0, "large: odd-size message data");
  if (size > 1 && rank == 0) {
    fill(sb, n, 77);
    MPI_Ssend(sb, n, MPI_INT, 1, 15, MPI_COMM_WORLD);
  } else if (size > 1 && rank == 1) {
    MPI_Recv(rb, n, MPI_INT, 0, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    bad = verify(rb, n, 77);
    CHECK(bad < 0, "large: 4 MiB Ssend wrong at element %d", bad);
  }
  free(sb);
  free(rb);
}

/* Synchronous mode (3.4): an Issend cannot complete before the matching
 * receive has started. Rank 0 tests its Issends (0 and 64 bytes) while
 * the receiver has not posted anything, and only then enters a barrier
 * after which the receiver posts; so every test must say "not complete". */
static void test_ssend(void) {
  int zero = 0, data[16], got[16] = {0};
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  fill(data, 16, 3);
  if (rank == 0) {
    MPI_Issend(&zero, 0, MPI_INT, peer, 16, MPI_COMM_WORLD, &r[0]);
    MPI_Issend(data, 16, MPI_INT, peer, 17, MPI_COMM_WORLD, &r[1]);
    for (int i = 0; i < 20; i++) {
      int f0 = 0, f1 = 0, fall = 0;
      struct timespec ts = {0, 200000};
      MPI_Test(&r[0], &f0, MPI_STATUS_IGNORE);
      MPI_Test(&r[1], &f1, MPI_STATUS_IGNORE);
      MPI_Testall(2, r, &fall, MPI_STATUSES_IGNORE);
      if (f0 || f1 || fall) {
        fail("Issend completed before its receive was posted (try %d)", i);
        break;
      }
      nanosleep(&ts, NULL); /* give a wrong implementation time to show it */
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == peer) {
    MPI_Recv(&zero, 0, MPI_INT, 0, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(got, 16, MPI_INT, 0, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(verify(got, 16, 3) < 0, "Issend: data");
  }
  if (rank == 0) MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  if (size > 1 && rank == 0) MPI_Ssend(data, 16, MPI_INT, 1, 18, MPI_COMM_WORLD);
  if (size > 1 && rank == 1) {
    MPI_Recv(got, 16, MPI_INT, 0, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(verify(got, 16, 3) < 0, "Ssend: data");
  }
}

/* Ring exchange with both neighbours: requests 0,1 receive (from left
 * with tag 40+round, from right with tag 60+round), 2,3 send. */
static int rbuf[2][8], sbuf[2][8];
static void post_ring(MPI_Request* q, int round) {
  fill(sbuf[0], 8, rank * 100 + round);
  fill(sbuf[1], 8, rank * 100 + 50 + round);
  memset(rbuf, 0, sizeof rbuf);
  MPI_Irecv(rbuf[0], 8, MPI_INT, left, 40 + round, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(rbuf[1], 8, MPI_INT, right, 60 + round, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(sbuf[0], 8, MPI_INT, right, 40 + round, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(sbuf[1], 8, MPI_INT, left, 60 + round, MPI_COMM_WORLD, &q[3]);
}
static void check_ring(const char* what, int round) {
  CHECK(verify(rbuf[0], 8, left * 100 + round) < 0, "%s: data from left", what);
  CHECK(verify(rbuf[1], 8, right * 100 + 50 + round) < 0, "%s: data from right", what);
}
static void check_recv_status(const MPI_Status* st, int idx, int round, const char* what) {
  int src = idx == 0 ? left : right, tag = idx == 0 ? 40 + round : 60 + round;
  CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count_of(st, MPI_INT) == 8,
        "%s: request %d status source %d tag %d count %d", what, idx, st->MPI_SOURCE, st->MPI_TAG,
        count_of(st, MPI_INT));
}

/* Every completion function, with MPI_REQUEST_NULL entries, the
 * "no active request" results and MPI_STATUSES_IGNORE. */
static void test_completion(void) {
  MPI_Request q[5];
  MPI_Status st, sts[5];
  int idx, flag, done, seen[5], outc, ids[5];

  post_ring(q, 0); /* Waitany: each index once, then MPI_UNDEFINED */
  memset(seen, 0, sizeof seen);
  for (int k = 0; k < 4; k++) {
    MPI_Waitany(4, q, &idx, &st);
    if (idx < 0 || idx > 3 || seen[idx]++) {
      fail("Waitany: index %d", idx);
      continue;
    }
    CHECK(q[idx] == MPI_REQUEST_NULL, "Waitany: request %d not set to null", idx);
    if (idx < 2) check_recv_status(&st, idx, 0, "Waitany");
  }
  poison(&st);
  MPI_Waitany(4, q, &idx, &st);
  CHECK(idx == MPI_UNDEFINED, "Waitany on null requests: index %d", idx);
  check_empty_status(&st, "Waitany on null requests");
  check_ring("Waitany", 0);

  post_ring(q, 1); /* Waitsome until MPI_UNDEFINED */
  done = 0;
  for (;;) {
    MPI_Waitsome(4, q, &outc, ids, sts);
    if (outc == MPI_UNDEFINED) break;
    if (outc < 1 || outc > 4 - done) {
      fail("Waitsome: outcount %d", outc);
      break;
    }
    for (int k = 0; k < outc; k++) {
      if (ids[k] < 0 || ids[k] > 3) {
        fail("Waitsome: index %d", ids[k]);
        continue;
      }
      if (ids[k] < 2) check_recv_status(&sts[k], ids[k], 1, "Waitsome");
      CHECK(q[ids[k]] == MPI_REQUEST_NULL, "Waitsome: request %d not null", ids[k]);
    }
    done += outc;
  }
  CHECK(done == 4, "Waitsome: %d completions", done);
  check_ring("Waitsome", 1);

  post_ring(q, 2); /* Testall with a null entry in the middle */
  q[4] = q[3];
  q[3] = MPI_REQUEST_NULL;
  do MPI_Testall(5, q, &flag, sts);
  while (!flag);
  check_recv_status(&sts[0], 0, 2, "Testall");
  check_recv_status(&sts[1], 1, 2, "Testall");
  check_empty_status(&sts[3], "Testall null entry");
  check_ring("Testall", 2);

  post_ring(q, 3); /* Testany */
  for (done = 0; done < 4;) {
    MPI_Testany(4, q, &idx, &flag, &st);
    if (!flag) continue;
    if (idx < 0 || idx > 3) {
      fail("Testany: index %d", idx);
      break;
    }
    if (idx < 2) check_recv_status(&st, idx, 3, "Testany");
    done++;
  }
  MPI_Testany(4, q, &idx, &flag, &st);
  CHECK(flag && idx == MPI_UNDEFINED, "Testany on null requests: flag %d index %d", flag, idx);
  check_ring("Testany", 3);

  post_ring(q, 4); /* Test one by one */
  for (int k = 0; k < 4; k++) {
    do MPI_Test(&q[k], &flag, &st);
    while (!flag);
    if (k < 2) check_recv_status(&st, k, 4, "Test");
    CHECK(q[k] == MPI_REQUEST_NULL, "Test: request %d not null", k);
  }
  check_ring("Test", 4);
  poison(&st);
  flag = 0;
  MPI_Test(&q[0], &flag, &st);
  CHECK(flag, "Test(MPI_REQUEST_NULL): flag false");
  check_empty_status(&st, "Test(MPI_REQUEST_NULL)");
  poison(&st);
  MPI_Wait(&q[0], &st);
  check_empty_status(&st, "Wait(MPI_REQUEST_NULL)");

  post_ring(q, 5); /* Waitall/Waitsome with MPI_STATUSES_IGNORE and nulls */
  q[4] = MPI_REQUEST_NULL;
  MPI_Waitsome(5, q, &outc, ids, MPI_STATUSES_IGNORE);
  CHECK(outc >= 1 && outc <= 4, "Waitsome(STATUSES_IGNORE): outcount %d", outc);
  MPI_Waitall(5, q, MPI_STATUSES_IGNORE);
  for (int k = 0; k < 5; k++) CHECK(q[k] == MPI_REQUEST_NULL, "Waitall: request %d not null", k);
  check_ring("Waitall", 5);
  MPI_Testall(5, q, &flag, MPI_STATUSES_IGNORE);
  CHECK(flag, "Testall on null requests: flag false");
}

/* Probe/Iprobe report the next matching message without receiving it;
 * the receive of the probed size then gets exactly that message. */
static void test_probe(void) {
  int n1 = (rank + 1) * 37, n2 = 5 + rank, flag = 1;
  int *s1 = malloc(n1 * sizeof(int)), s2[16];
  MPI_Request r[2];
  MPI_Status st;
  MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(!flag, "Iprobe: found a message with a tag never sent");
  fill(s1, n1, rank);
  fill(s2, n2, rank + 1000);
  MPI_Isend(s1, n1, MPI_INT, right, 300 + rank, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(s2, n2, MPI_INT, right, 500 + rank, MPI_COMM_WORLD, &r[1]);
  for (int round = 0; round < 2; round++) {
    int want_n = round ? 5 + left : (left + 1) * 37, want_tag = (round ? 500 : 300) + left;
    if (round == 0) {
      MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Probe(left, want_tag, MPI_COMM_WORLD, &st); /* probing twice sees it again */
    } else {
      do MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      while (!flag);
    }
    int n = count_of(&st, MPI_INT);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == want_tag && n == want_n, "probe round %d: source %d tag %d count %d",
          round, st.MPI_SOURCE, st.MPI_TAG, n);
    if (n < 0 || n > 1000) continue;
    int* rb = malloc((n + 1) * sizeof(int));
    MPI_Recv(rb, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
    CHECK(verify(rb, n, round ? left + 1000 : left) < 0, "probe round %d: data", round);
    free(rb);
  }
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  free(s1);
}

/* Sendrecv and Sendrecv_replace around the ring: after size shifts of
 * Sendrecv_replace every rank holds its own data again. */
static void test_sendrecv(void) {
  int sv[5], rv[8] = {0}, n = 1000, *b = malloc(n * sizeof(int));
  MPI_Status st;
  fill(sv, 5, rank);
  MPI_Sendrecv(sv, 5, MPI_INT, right, 21, rv, 8, MPI_INT, left, 21, MPI_COMM_WORLD, &st);
  CHECK(count_of(&st, MPI_INT) == 5 && st.MPI_SOURCE == left && verify(rv, 5, left) < 0, "Sendrecv ring");
  fill(b, n, rank);
  for (int k = 1; k <= size; k++) {
    MPI_Sendrecv_replace(b, n, MPI_INT, right, 22, left, 22, MPI_COMM_WORLD, &st);
    int from = ((rank - k) % size + size) % size;
    int bad = verify(b, n, from);
    CHECK(bad < 0, "Sendrecv_replace shift %d: data (want rank %d's) wrong at %d", k, from, bad);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 22, "Sendrecv_replace status");
  }
  /* Non-periodic shift: the ends talk to MPI_PROC_NULL. */
  int dst = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, src = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  fill(b, n, rank);
  MPI_Sendrecv_replace(b, n, MPI_INT, dst, 23, src, 23, MPI_COMM_WORLD, &st);
  CHECK(verify(b, n, rank > 0 ? rank - 1 : 0) < 0, "Sendrecv_replace non-periodic data");
  free(b);
}

/* A receive that will never match can be cancelled: the wait completes
 * and MPI_Test_cancelled says so; the buffer is untouched. A normally
 * completed receive is not reported cancelled. */
static void test_cancel(void) {
  int buf[4] = {3, 3, 3, 3}, flag = 0, canc = 0, v = rank;
  MPI_Request r;
  MPI_Status st;
  MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  MPI_Test_cancelled(&st, &canc);
  CHECK(canc, "Cancel(ANY_SOURCE receive)+Wait: not cancelled");
  CHECK(r == MPI_REQUEST_NULL, "Cancel: request not freed by Wait");
  MPI_Irecv(buf, 4, MPI_INT, left, 998, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  do MPI_Test(&r, &flag, &st);
  while (!flag);
  MPI_Test_cancelled(&st, &canc);
  CHECK(canc, "Cancel(receive)+Test: not cancelled");
  CHECK(buf[0] == 3 && buf[3] == 3, "Cancel: buffer modified");
  MPI_Sendrecv(&v, 1, MPI_INT, right, 24, buf, 1, MPI_INT, left, 24, MPI_COMM_WORLD, &st);
  MPI_Test_cancelled(&st, &canc);
  CHECK(!canc && buf[0] == left, "completed receive reported cancelled");
}

/* MPI_Request_free of an active send: the send still happens; the
 * receiver's reply tells the sender the buffer may be released. */
static void test_request_free(void) {
  int *b = malloc(100 * sizeof(int)), got[100];
  MPI_Request r = MPI_REQUEST_NULL;
  fill(b, 100, 55);
  if (rank == 0) {
    MPI_Isend(b, 100, MPI_INT, peer, 25, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "Request_free: handle not MPI_REQUEST_NULL");
  }
  if (rank == peer) {
    MPI_Recv(got, 100, MPI_INT, 0, 25, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(verify(got, 100, 55) < 0, "Request_free: data");
    if (peer != 0) MPI_Send(NULL, 0, MPI_BYTE, 0, 26, MPI_COMM_WORLD);
  }
  if (rank == 0 && peer != 0) MPI_Recv(NULL, 0, MPI_BYTE, peer, 26, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  free(b);
}

int main(int argc, char** argv) {
  prog = "p2p";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;
  peer = size > 1 ? 1 : 0;
  MPI_Comm_dup(MPI_COMM_WORLD, &ecomm);
  MPI_Comm_set_errhandler(ecomm, MPI_ERRORS_RETURN);
  void (*tests[])(void) = {test_order,    test_context, test_wildcards,   test_proc_null,  test_truncate_waitall,
                           test_zero,     test_large,   test_ssend,       test_completion, test_probe,
                           test_sendrecv, test_cancel,  test_request_free};
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    tests[i]();
    MPI_Barrier(MPI_COMM_WORLD);
    if (i == 3) {
      test_truncate(16);
      MPI_Barrier(MPI_COMM_WORLD);
      test_truncate(1 << 20);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  MPI_Comm_free(&ecomm);
  return conf_finish();
}
