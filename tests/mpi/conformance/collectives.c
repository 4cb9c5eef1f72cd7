/*
 * collectives.c - MPI-3.1 conformance test for every collective operation on
 * MPI_COMM_WORLD, written from the standard (chapter 5).
 *
 * Each collective is exercised blocking and in its nonblocking MPI_I form,
 * with every root for the rooted ones, with and without MPI_IN_PLACE where the
 * standard allows it, at counts 0, 1, 7 and one large count, with uneven
 * v-counts (some zero) and gapped, non-monotonic displacements.  Every test
 * case builds an exact image of the expected receive buffer (including the
 * untouched gaps and a sentinel tail past the end) and compares byte for byte;
 * send buffers must come back unchanged.  Reductions use small integers so
 * that every datatype (floats included) and every evaluation order gives one
 * exact answer.
 *
 * Only functions from the rcc MPI subset are used.  Runs at any size >= 1.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "collectives"
#define TAIL 2       /* sentinel elements after every buffer: catch overruns */
#define SENT 0xA5    /* sentinel byte: "never written by MPI" */
#define LARGE 300000 /* large count (per-block collectives divide it by size) */
#define MAXBATCH 16  /* nonblocking operations in flight at once */

static int rank, nprocs, nfail, nprinted;
static uint64_t rhash = 1469598103934665603ull; /* FNV-1a of replicated results */

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
fail(const char* fmt, ...) {
  va_list ap;
  nfail++;
  if (nprinted++ >= 60) /* keep stderr readable if everything breaks */
    return;
  /* one write per line so lines from different ranks do not interleave */
  char line[512];
  int len = snprintf(line, sizeof line, "FAIL " PROG " rank %d: ", rank);
  va_start(ap, fmt);
  vsnprintf(line + len, sizeof line - (size_t)len - 1, fmt, ap);
  va_end(ap);
  strcat(line, "\n");
  fputs(line, stderr);
}

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "FAIL " PROG " rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* ---- datatypes: table-driven so every case can use any of them ---- */
enum { T_INT, T_LONG, T_UCHAR, T_SHORT, T_FLOAT, T_DOUBLE, T_I64, T_U16, T_BOOL, NT };
enum { K_S, K_U, K_F, K_B }; /* signed int, unsigned int, floating, C bool */
static const char* tname[NT] = {"MPI_INT",    "MPI_LONG",    "MPI_UNSIGNED_CHAR", "MPI_SHORT", "MPI_FLOAT",
                                "MPI_DOUBLE", "MPI_INT64_T", "MPI_UINT16_T",      "MPI_C_BOOL"};
static const int tkind[NT] = {K_S, K_S, K_U, K_S, K_F, K_F, K_S, K_U, K_B};
static const size_t tsize[NT] = {sizeof(int),     sizeof(long),     1,
                                 sizeof(short),   sizeof(float),    sizeof(double),
                                 sizeof(int64_t), sizeof(uint16_t), sizeof(bool)};
/* Filled at run time: the standard does not promise handles are constant expressions. */
static MPI_Datatype tdt[NT];

static void tset(int t, void* b, size_t i, long long v) {
  switch (t) {
    case T_INT: ((int*)b)[i] = (int)v; break;
    case T_LONG: ((long*)b)[i] = (long)v; break;
    case T_UCHAR: ((unsigned char*)b)[i] = (unsigned char)v; break;
    case T_SHORT: ((short*)b)[i] = (short)v; break;
    case T_FLOAT: ((float*)b)[i] = (float)v; break;
    case T_DOUBLE: ((double*)b)[i] = (double)v; break;
    case T_I64: ((int64_t*)b)[i] = (int64_t)v; break;
    case T_U16: ((uint16_t*)b)[i] = (uint16_t)v; break;
    default: ((bool*)b)[i] = v != 0; break;
  }
}

/* For messages only; bool is read as a byte so a bad value is shown, not UB. */
static double tget(int t, const void* b, size_t i) {
  switch (t) {
    case T_INT: return ((const int*)b)[i];
    case T_LONG: return (double)((const long*)b)[i];
    case T_UCHAR: return ((const unsigned char*)b)[i];
    case T_SHORT: return ((const short*)b)[i];
    case T_FLOAT: return ((const float*)b)[i];
    case T_DOUBLE: return ((const double*)b)[i];
    case T_I64: return (double)((const int64_t*)b)[i];
    case T_U16: return ((const uint16_t*)b)[i];
    default: return ((const unsigned char*)b)[i * sizeof(bool)];
  }
}

/* ---- reduction operations ---- */
enum { O_SUM, O_PROD, O_MIN, O_MAX, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, O_LXOR, NO };
static const char* oname[NO] = {"SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR"};
static MPI_Op odt[NO];

/* Standard 5.9.2: SUM/PROD/MIN/MAX on integers and floats, bitwise ops on
 * integers, logical ops on integers and MPI_C_BOOL (logical). */
static int op_valid(int o, int t) {
  if (tkind[t] == K_B) return o >= O_LAND;
  return o <= O_MAX || tkind[t] != K_F;
}

/* Contribution of rank r at element i.  Ranges keep every partial result of
 * any association order inside every type (e.g. sums <= 160 for unsigned
 * char), so the answer is exact.  Logical "true" is 6 or -2 (4 unsigned) on
 * ranks > 0, so a bitwise implementation or an unnormalised result (not 0/1)
 * is caught; rank 0 uses 1 because it is the sole operand of some results
 * (Scan on rank 0, Exscan on rank 1, size 1), where no operation is applied. */
static long long rval(int o, int t, int r, long long i) {
  int sg = tkind[t] == K_S || tkind[t] == K_F;
  long long v, m;
  switch (o) {
    case O_SUM: v = (r * 7 + i * 3 + 1) % 21; return sg ? v - 10 : v;
    case O_PROD: m = (r + i) % 6; return m == 0 ? 2 : (m == 3 && sg) ? -1 : 1;
    case O_MIN:
    case O_MAX: v = (r * 13 + i * 5 + 3) % 97; return sg ? v - 48 : v;
    case O_BAND:
    case O_BOR:
    case O_BXOR: return ((r * 37 + i * 11 + 5) % 256) ^ (1 << (r % 8));
    default:
      v = r == 0 ? 1 : (r % 2) ? 6 : sg ? -2 : 4;
      if (i % 5 == 1) return 0; /* all false: LOR gives 0 */
      if (i % 4 == 0) return v; /* all true: LAND gives 1 */
      return ((r + i) % 3) ? v : 0;
  }
}

static long long fold(int o, long long a, long long b) {
  switch (o) {
    case O_SUM: return a + b;
    case O_PROD: return a * b;
    case O_MIN: return a < b ? a : b;
    case O_MAX: return a > b ? a : b;
    case O_BAND: return a & b;
    case O_BOR: return a | b;
    case O_BXOR: return a ^ b;
    case O_LAND: return a && b;
    case O_LOR: return a || b;
    default: return !a != !b;
  }
}

/* Reduction of ranks lo..hi at element i.  Values pass through the type
 * first (bool inputs are 0/1 on the wire). */
static long long red(int o, int t, int lo, int hi, long long i) {
  long long a = rval(o, t, lo, i);
  if (tkind[t] == K_B) a = a != 0;
  for (int r = lo + 1; r <= hi; r++) {
    long long b = rval(o, t, r, i);
    a = fold(o, a, tkind[t] == K_B ? b != 0 : b);
  }
  return a;
}

/* Data-movement payload: element i of the block src sends to dst.  Distinct
 * per (src, dst, i) so a block landing in the wrong place is detected. */
static long long mv(int t, int src, int dst, long long i) {
  static const long long mod[NT] = {1000000007, 1000000007, 256, 32768, 16777216, 1000000007, 1000000007, 65536, 2};
  return (src * 7919LL + dst * 104729LL + i * 31 + 17) % mod[t];
}

/* ---- test cases ---- */
enum {
  C_BARRIER,
  C_BCAST,
  C_REDUCE,
  C_ALLREDUCE,
  C_GATHER,
  C_GATHERV,
  C_SCATTER,
  C_SCATTERV,
  C_ALLGATHER,
  C_ALLGATHERV,
  C_ALLTOALL,
  C_ALLTOALLV,
  C_RSCAT,
  C_RSCATB,
  C_SCAN,
  C_EXSCAN,
  NC
};
static const char* cname[NC] = {
    "Barrier",  "Bcast",     "Reduce",     "Allreduce", "Gather",    "Gatherv",        "Scatter",
    "Scatterv", "Allgather", "Allgatherv", "Alltoall",  "Alltoallv", "Reduce_scatter", "Reduce_scatter_block",
    "Scan",     "Exscan"};

static int rooted(int c) { return c == C_BCAST || c == C_REDUCE || (c >= C_GATHER && c <= C_SCATTERV); }
static int reducing(int c) { return c == C_REDUCE || c == C_ALLREDUCE || c >= C_RSCAT; }
static int replicated(int c) { return c == C_BCAST || c == C_ALLREDUCE || c == C_ALLGATHER || c == C_ALLGATHERV; }
/* Collectives whose buffers hold one block per rank get LARGE/size per block. */
static int perblock(int c) { return (c >= C_GATHER && c <= C_RSCATB); }

typedef struct {
  int c, root, count, ip, t, o;
} spec;

typedef struct {
  spec s;
  char *sb, *rb, *ex, *sc; /* send, receive, expected receive image, send copy */
  size_t sn, rn, chk;      /* elements in send / receive buffer, checked prefix */
  int ips, ipr;            /* MPI_IN_PLACE passed as sendbuf / recvbuf here */
  int rsig, rchk;          /* recvbuf significant here / its content defined */
  int *scnt, *sdsp, *rcnt, *rdsp;
  MPI_Request req;
} tcase;

static char* balloc(int t, size_t n) {
  char* p = xmalloc((n + TAIL) * tsize[t]);
  memset(p, SENT, (n + TAIL) * tsize[t]);
  return p;
}

static void put_mv(const tcase* k, char* b, size_t off, int cnt, int src, int dst) {
  for (int i = 0; i < cnt; i++) tset(k->s.t, b, off + i, mv(k->s.t, src, dst, i));
}

static void put_rv(const tcase* k, char* b, int cnt, int r) {
  for (int i = 0; i < cnt; i++) tset(k->s.t, b, i, rval(k->s.o, k->s.t, r, i));
}

static void put_red(const tcase* k, char* b, int cnt, int lo, int hi, long long gi) {
  for (int i = 0; i < cnt; i++) tset(k->s.t, b, i, red(k->s.o, k->s.t, lo, hi, gi + i));
}

/* Uneven counts, every third rank contributes nothing. */
static int vc1(int j, int c) { return j % 3 == 1 ? 0 : c + j % 4; }
/* Pairwise counts for Alltoallv; symmetric when used in place (the standard
 * requires send and receive signatures to coincide then). */
static int vc2(int a, int b, int c, int sym, int nozero) {
  int key = sym ? a + b : 2 * a + b;
  return key % 3 == 1 && !nozero ? 0 : c + (sym ? key : a + 3 * b) % 4;
}

/* Open MPI 4.1.4 (libnbc) mishandles MPI_Ialltoallv with MPI_IN_PLACE when
 * some counts are zero (the blocking form is fine): a rank whose counts are
 * all zero returns early without using up a collective tag, so later
 * nonblocking collectives mismatch (MPI_ERR_TRUNCATE, hangs), and at 4 ranks a
 * large block comes back wrong.  Newer libnbc sources reserve the tag on that
 * path.  Only when building against Open MPI <= 4 do those cases use nonzero
 * counts; every other MPI (rcc included) gets the full test. */
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION <= 4
#define IA2AV_INPLACE_NOZERO 1
#else
#define IA2AV_INPLACE_NOZERO 0
#endif

/* Displacements with a gap before every block and after the last one, in
 * reverse rank order when rev: gaps must stay untouched. Returns extent. */
static int layout(const int* cnt, int* dsp, int gap, int rev) {
  int pos = 0;
  for (int k = 0; k < nprocs; k++) {
    int j = rev ? nprocs - 1 - k : k;
    pos += gap;
    dsp[j] = pos;
    pos += cnt[j];
  }
  return pos + gap;
}

static void kinit(tcase* k, int nb) {
  const spec* s = &k->s;
  int n = nprocs, r = rank, c = s->count, t = s->t, root = s->root, j, tot = 0, off = 0;
  int atroot = r == root;
  k->scnt = xmalloc(4 * n * sizeof(int));
  k->sdsp = k->scnt + n;
  k->rcnt = k->scnt + 2 * n;
  k->rdsp = k->scnt + 3 * n;
  k->sb = k->sc = NULL;
  k->sn = k->rn = 0;
  k->chk = (size_t)-1;
  k->ips = k->ipr = 0;
  k->rsig = k->rchk = 1;
  k->req = MPI_REQUEST_NULL;

  switch (s->c) {
    case C_BARRIER: k->rsig = k->rchk = 0; break;
    case C_BCAST: k->rn = c; break;
    case C_REDUCE:
    case C_ALLREDUCE:
    case C_SCAN:
    case C_EXSCAN:
      k->rn = c;
      k->ips = s->ip && (s->c != C_REDUCE || atroot); /* Reduce: in place at root only */
      k->rsig = s->c != C_REDUCE || atroot;
      k->rchk = k->rsig && !(s->c == C_EXSCAN && r == 0); /* Exscan: rank 0 undefined */
      if (!k->ips) {
        k->sn = c;
        k->sb = balloc(t, c);
        put_rv(k, k->sb, c, r);
      }
      break;
    case C_GATHER:
    case C_GATHERV:
      for (j = 0; j < n; j++) k->rcnt[j] = s->c == C_GATHER ? c : vc1(j, c);
      k->ips = s->ip && atroot;
      k->rsig = k->rchk = atroot;
      if (!k->ips) {
        k->sn = k->rcnt[r];
        k->sb = balloc(t, k->sn);
        put_mv(k, k->sb, 0, k->rcnt[r], r, root);
      }
      if (s->c == C_GATHER) {
        for (j = 0; j < n; j++) k->rdsp[j] = j * c;
        k->rn = (size_t)n * c;
      } else
        k->rn = layout(k->rcnt, k->rdsp, 2, 1);
      break;
    case C_SCATTER:
    case C_SCATTERV:
      for (j = 0; j < n; j++) k->scnt[j] = s->c == C_SCATTER ? c : vc1(j, c);
      k->ipr = s->ip && atroot;
      k->rsig = k->rchk = !k->ipr;
      if (atroot) {
        if (s->c == C_SCATTER) {
          for (j = 0; j < n; j++) k->sdsp[j] = j * c;
          k->sn = (size_t)n * c;
        } else
          k->sn = layout(k->scnt, k->sdsp, 3, 1);
        k->sb = balloc(t, k->sn);
        for (j = 0; j < n; j++) put_mv(k, k->sb, k->sdsp[j], k->scnt[j], root, j);
      }
      k->rn = k->scnt[r];
      break;
    case C_ALLGATHER:
    case C_ALLGATHERV:
      for (j = 0; j < n; j++) k->rcnt[j] = s->c == C_ALLGATHER ? c : vc1(j, c);
      if (s->c == C_ALLGATHER) {
        for (j = 0; j < n; j++) k->rdsp[j] = j * c;
        k->rn = (size_t)n * c;
      } else
        k->rn = layout(k->rcnt, k->rdsp, 2, 1);
      k->ips = s->ip;
      if (!k->ips) {
        k->sn = k->rcnt[r];
        k->sb = balloc(t, k->sn);
        put_mv(k, k->sb, 0, k->rcnt[r], r, 0);
      }
      break;
    case C_ALLTOALL:
    case C_ALLTOALLV:
      for (j = 0; j < n; j++) {
        int nz = nb && s->ip && IA2AV_INPLACE_NOZERO;
        k->scnt[j] = s->c == C_ALLTOALL ? c : vc2(r, j, c, s->ip, nz);
        k->rcnt[j] = s->c == C_ALLTOALL ? c : vc2(j, r, c, s->ip, nz);
      }
      if (s->c == C_ALLTOALL) {
        for (j = 0; j < n; j++) k->sdsp[j] = k->rdsp[j] = j * c;
        k->sn = k->rn = (size_t)n * c;
      } else {
        k->rn = layout(k->rcnt, k->rdsp, 2, 0);
        k->sn = layout(k->scnt, k->sdsp, 1, 1);
      }
      k->ips = s->ip;
      if (!k->ips) {
        k->sb = balloc(t, k->sn);
        for (j = 0; j < n; j++) put_mv(k, k->sb, k->sdsp[j], k->scnt[j], r, j);
      } else
        k->sn = 0;
      break;
    case C_RSCAT:
    case C_RSCATB:
      for (j = 0; j < n; j++) {
        k->rcnt[j] = s->c == C_RSCATB ? c : vc1(j, c);
        tot += k->rcnt[j];
        if (j < r) off += k->rcnt[j];
      }
      k->ips = s->ip;
      k->rn = k->ips ? (size_t)tot : (size_t)k->rcnt[r]; /* in place: input comes in recvbuf */
      k->chk = k->rcnt[r];                               /* ...and only the first block is defined after */
      if (!k->ips) {
        k->sn = tot;
        k->sb = balloc(t, tot);
        put_rv(k, k->sb, tot, r);
      }
      break;
  }
  if (k->chk == (size_t)-1) k->chk = k->rn;
  k->rb = balloc(t, k->rn);
  k->ex = balloc(t, k->rn);

  /* Receive-buffer contents before the call (in-place input) and after it. */
  switch (s->c) {
    case C_BCAST:
      put_mv(k, k->ex, 0, c, root, 0);
      if (atroot) put_mv(k, k->rb, 0, c, root, 0);
      break;
    case C_REDUCE:
    case C_ALLREDUCE:
    case C_SCAN:
    case C_EXSCAN:
      if (k->ips) put_rv(k, k->rb, c, r);
      if (s->c == C_SCAN)
        put_red(k, k->ex, c, 0, r, 0);
      else if (s->c == C_EXSCAN) {
        if (r > 0) put_red(k, k->ex, c, 0, r - 1, 0);
      } else
        put_red(k, k->ex, c, 0, n - 1, 0);
      break;
    case C_GATHER:
    case C_GATHERV:
    case C_ALLGATHER:
    case C_ALLGATHERV: {
      int dst = rooted(s->c) ? root : 0;
      for (j = 0; j < n; j++) put_mv(k, k->ex, k->rdsp[j], k->rcnt[j], j, dst);
      if (k->ips) put_mv(k, k->rb, k->rdsp[r], k->rcnt[r], r, dst);
      break;
    }
    case C_SCATTER:
    case C_SCATTERV: put_mv(k, k->ex, 0, k->scnt[r], root, r); break;
    case C_ALLTOALL:
    case C_ALLTOALLV:
      for (j = 0; j < n; j++) {
        put_mv(k, k->ex, k->rdsp[j], k->rcnt[j], j, r);
        if (k->ips) put_mv(k, k->rb, k->rdsp[j], k->rcnt[j], r, j);
      }
      break;
    case C_RSCAT:
    case C_RSCATB:
      if (k->ips) put_rv(k, k->rb, tot, r);
      put_red(k, k->ex, k->rcnt[r], 0, n - 1, off);
      break;
  }
  if (k->sb) {
    k->sc = xmalloc((k->sn + TAIL) * tsize[t]);
    memcpy(k->sc, k->sb, (k->sn + TAIL) * tsize[t]);
  }
}

static void kfree(tcase* k) {
  free(k->sb);
  free(k->rb);
  free(k->ex);
  free(k->sc);
  free(k->scnt);
}

/* Start the collective: blocking when q is NULL, else its MPI_I form. */
static int kstart(tcase* k, MPI_Request* q) {
  const spec* s = &k->s;
  MPI_Datatype d = tdt[s->t];
  MPI_Op op = odt[s->o];
  MPI_Comm w = MPI_COMM_WORLD;
  const void* sb = k->ips ? MPI_IN_PLACE : k->sb;
  void* rb = k->ipr ? MPI_IN_PLACE : k->rsig ? k->rb : NULL; /* NULL where not significant */
  int c = s->count, root = s->root, me = rank;
#define CALL(B, NB) (q ? (NB) : (B))
  switch (s->c) {
    case C_BARRIER: return CALL(MPI_Barrier(w), MPI_Ibarrier(w, q));
    case C_BCAST: return CALL(MPI_Bcast(rb, c, d, root, w), MPI_Ibcast(rb, c, d, root, w, q));
    case C_REDUCE: return CALL(MPI_Reduce(sb, rb, c, d, op, root, w), MPI_Ireduce(sb, rb, c, d, op, root, w, q));
    case C_ALLREDUCE: return CALL(MPI_Allreduce(sb, rb, c, d, op, w), MPI_Iallreduce(sb, rb, c, d, op, w, q));
    case C_GATHER: return CALL(MPI_Gather(sb, c, d, rb, c, d, root, w), MPI_Igather(sb, c, d, rb, c, d, root, w, q));
    case C_GATHERV:
      return CALL(MPI_Gatherv(sb, k->rcnt[me], d, rb, k->rcnt, k->rdsp, d, root, w),
                  MPI_Igatherv(sb, k->rcnt[me], d, rb, k->rcnt, k->rdsp, d, root, w, q));
    case C_SCATTER:
      return CALL(MPI_Scatter(k->sb, c, d, rb, c, d, root, w), MPI_Iscatter(k->sb, c, d, rb, c, d, root, w, q));
    case C_SCATTERV:
      return CALL(MPI_Scatterv(k->sb, k->scnt, k->sdsp, d, rb, k->scnt[me], d, root, w),
                  MPI_Iscatterv(k->sb, k->scnt, k->sdsp, d, rb, k->scnt[me], d, root, w, q));
    case C_ALLGATHER: return CALL(MPI_Allgather(sb, c, d, rb, c, d, w), MPI_Iallgather(sb, c, d, rb, c, d, w, q));
    case C_ALLGATHERV:
      return CALL(MPI_Allgatherv(sb, k->rcnt[me], d, rb, k->rcnt, k->rdsp, d, w),
                  MPI_Iallgatherv(sb, k->rcnt[me], d, rb, k->rcnt, k->rdsp, d, w, q));
    case C_ALLTOALL: return CALL(MPI_Alltoall(sb, c, d, rb, c, d, w), MPI_Ialltoall(sb, c, d, rb, c, d, w, q));
    case C_ALLTOALLV:
      return CALL(MPI_Alltoallv(sb, k->scnt, k->sdsp, d, rb, k->rcnt, k->rdsp, d, w),
                  MPI_Ialltoallv(sb, k->scnt, k->sdsp, d, rb, k->rcnt, k->rdsp, d, w, q));
    case C_RSCAT:
      return CALL(MPI_Reduce_scatter(sb, rb, k->rcnt, d, op, w), MPI_Ireduce_scatter(sb, rb, k->rcnt, d, op, w, q));
    case C_RSCATB:
      return CALL(MPI_Reduce_scatter_block(sb, rb, c, d, op, w), MPI_Ireduce_scatter_block(sb, rb, c, d, op, w, q));
    case C_SCAN: return CALL(MPI_Scan(sb, rb, c, d, op, w), MPI_Iscan(sb, rb, c, d, op, w, q));
    default: return CALL(MPI_Exscan(sb, rb, c, d, op, w), MPI_Iexscan(sb, rb, c, d, op, w, q));
  }
#undef CALL
}

static void describe(const tcase* k, const char* mode, char* out, size_t len) {
  const spec* s = &k->s;
  snprintf(out, len, "%s (%s) %s%s%s count=%d root=%d in_place=%d", cname[s->c], mode, tname[s->t],
           reducing(s->c) ? "/" : "", reducing(s->c) ? oname[s->o] : "", s->count, rooted(s->c) ? s->root : -1, s->ip);
}

/* Compare elements [lo, hi); at most 4 lines per check. */
static void cmpbuf(int t, const char* got, const char* exp, size_t lo, size_t hi, const char* what, const char* which) {
  size_t es = tsize[t], bad = 0;
  if (hi <= lo || memcmp(got + lo * es, exp + lo * es, (hi - lo) * es) == 0) return;
  for (size_t i = lo; i < hi; i++) {
    if (memcmp(got + i * es, exp + i * es, es) == 0) continue;
    if (bad++ < 3) fail("%s: %s element %zu is %g, expected %g", what, which, i, tget(t, got, i), tget(t, exp, i));
  }
  if (bad > 3) fail("%s: %s has %zu wrong elements", what, which, bad);
}

static void kcheck(tcase* k, const char* mode, int rc) {
  char what[200];
  size_t es = tsize[k->s.t];
  describe(k, mode, what, sizeof what);
  if (rc != MPI_SUCCESS) fail("%s: returned error %d", what, rc);
  if (k->rchk) cmpbuf(k->s.t, k->rb, k->ex, 0, k->chk, what, "recvbuf");
  if (k->rsig && !k->ipr) cmpbuf(k->s.t, k->rb, k->ex, k->rn, k->rn + TAIL, what, "recvbuf tail (overrun)");
  if (k->sb) cmpbuf(k->s.t, k->sb, k->sc, 0, k->sn + TAIL, what, "sendbuf (must stay unchanged)");
  if (replicated(k->s.c)) /* must be identical everywhere: hashed, compared at the end */
    for (size_t i = 0; i < k->chk * es; i++) rhash = (rhash ^ (unsigned char)k->rb[i]) * 1099511628211ull;
}

static void run_blocking(const spec* s) {
  tcase k = {.s = *s};
  kinit(&k, 0);
  int rc = kstart(&k, NULL);
  kcheck(&k, "blocking", rc);
  kfree(&k);
}

/* Start one nonblocking collective and complete it by polling MPI_Test. */
static void run_polled(const spec* s) {
  tcase k = {.s = *s};
  int flag = 0, rc, rc2 = MPI_SUCCESS;
  kinit(&k, 1);
  rc = kstart(&k, &k.req);
  while (!flag && rc2 == MPI_SUCCESS) rc2 = MPI_Test(&k.req, &flag, MPI_STATUS_IGNORE);
  if (k.req != MPI_REQUEST_NULL) fail("polled %s: request not MPI_REQUEST_NULL after MPI_Test", cname[s->c]);
  kcheck(&k, "nonblocking, polled with MPI_Test", rc != MPI_SUCCESS ? rc : rc2);
  kfree(&k);
}

/* Start ns nonblocking collectives back to back (all in flight at once) and
 * complete them with one MPI_Waitall over the requests in reverse order. */
static void run_batch(const spec* s, int ns) {
  tcase k[MAXBATCH];
  MPI_Request rq[MAXBATCH];
  int rc[MAXBATCH], wrc;
  for (int i = 0; i < ns; i++) {
    k[i].s = s[i];
    kinit(&k[i], 1);
  }
  for (int i = 0; i < ns; i++) rc[i] = kstart(&k[i], &k[i].req);
  for (int i = 0; i < ns; i++) rq[i] = k[ns - 1 - i].req;
  wrc = MPI_Waitall(ns, rq, MPI_STATUSES_IGNORE);
  for (int i = 0; i < ns; i++) {
    if (rq[i] != MPI_REQUEST_NULL) fail("batch: request %d not MPI_REQUEST_NULL after MPI_Waitall", i);
    kcheck(&k[i], "nonblocking, in-flight batch", rc[i] != MPI_SUCCESS ? rc[i] : wrc);
    kfree(&k[i]);
  }
}

/* All valid (type, op) pairs; reductions cycle through them. */
static int combos[NT * NO][2], ncombo, combo_next;

static void pick(spec* s) {
  static int tnext;
  if (reducing(s->c)) {
    s->t = combos[combo_next % ncombo][0];
    s->o = combos[combo_next++ % ncombo][1];
  } else {
    s->t = tnext++ % NT;
    s->o = O_SUM;
  }
}

/* Every root x {no in place, in place} x counts {0, 1, 7}, then one large case. */
static int gen(int c, spec* out) {
  static const int counts[3] = {0, 1, 7};
  int ns = 0, nroots = rooted(c) ? nprocs : 1, ipmax = c != C_BARRIER && c != C_BCAST;
  if (c == C_BARRIER) {
    out[0] = (spec){c, 0, 0, 0, T_INT, O_SUM};
    return 1;
  }
  for (int root = 0; root < nroots; root++)
    for (int ip = 0; ip <= ipmax; ip++)
      for (int ci = 0; ci < 3; ci++) {
        out[ns] = (spec){c, root, counts[ci], ip, 0, 0};
        pick(&out[ns++]);
      }
  out[ns++] = (spec){c, nroots - 1, perblock(c) ? LARGE / nprocs : LARGE, ipmax && c % 2, T_INT, O_SUM};
  return ns;
}

static void run_collective(int c) {
  spec* s = xmalloc((size_t)(nprocs * 6 + 1) * sizeof(spec));
  int ns = gen(c, s);
  for (int i = 0; i < ns; i++) run_blocking(&s[i]);
  for (int i = 0; i < ns; i += MAXBATCH) run_batch(&s[i], ns - i < MAXBATCH ? ns - i : MAXBATCH);
  run_polled(&s[ns > 3 ? ns - 2 : 0]); /* a count-7 case (the last root's, in place if allowed) */
  free(s);
}

/* Every valid (type, op) pair through every reducing collective, blocking and
 * with all six nonblocking reductions in flight together. */
static void run_matrix(void) {
  static const int rc[6] = {C_REDUCE, C_ALLREDUCE, C_RSCAT, C_RSCATB, C_SCAN, C_EXSCAN};
  for (int m = 0; m < ncombo; m++) {
    spec s[6];
    for (int i = 0; i < 6; i++) {
      s[i] = (spec){rc[i], (m + i) % nprocs, 7, (m + i) % 2, combos[m][0], combos[m][1]};
      run_blocking(&s[i]);
    }
    run_batch(s, 6);
  }
}

/* One of each collective in flight at once (MPI_Waitall in reverse order). */
static void run_mixed(int ip) {
  spec s[NC];
  for (int c = 0; c < NC; c++) {
    s[c] = (spec){c, (c + nprocs / 2) % nprocs, 7, ip && c != C_BARRIER && c != C_BCAST, 0, 0};
    pick(&s[c]);
  }
  run_batch(s, NC);
}

/* MPI_Ibarrier may not complete anywhere before every rank has entered it:
 * rank 0 enters, MPI_Test must say "not done" because the others only enter
 * after a message that rank 0 sends after that test. */
static void barrier_semantics(void) {
  MPI_Request q;
  int flag = 1, token = 42;
  if (nprocs < 2) return;
  if (rank == 0) {
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
    MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
    if (flag) fail("MPI_Ibarrier completed on rank 0 before the other ranks entered it");
    for (int r = 1; r < nprocs; r++) MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &q);
  }
  MPI_Wait(&q, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  int total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  /* Report errors as FAIL lines with the failing case rather than aborting. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* Handles are assigned at run time (they need not be compile-time constants). */
  tdt[T_INT] = MPI_INT;
  tdt[T_LONG] = MPI_LONG;
  tdt[T_UCHAR] = MPI_UNSIGNED_CHAR;
  tdt[T_SHORT] = MPI_SHORT;
  tdt[T_FLOAT] = MPI_FLOAT;
  tdt[T_DOUBLE] = MPI_DOUBLE;
  tdt[T_I64] = MPI_INT64_T;
  tdt[T_U16] = MPI_UINT16_T;
  tdt[T_BOOL] = MPI_C_BOOL;
  odt[O_SUM] = MPI_SUM;
  odt[O_PROD] = MPI_PROD;
  odt[O_MIN] = MPI_MIN;
  odt[O_MAX] = MPI_MAX;
  odt[O_BAND] = MPI_BAND;
  odt[O_BOR] = MPI_BOR;
  odt[O_BXOR] = MPI_BXOR;
  odt[O_LAND] = MPI_LAND;
  odt[O_LOR] = MPI_LOR;
  odt[O_LXOR] = MPI_LXOR;
  for (int t = 0; t < NT; t++)
    for (int o = 0; o < NO; o++)
      if (op_valid(o, t)) {
        combos[ncombo][0] = t;
        combos[ncombo++][1] = o;
      }

  for (int c = 0; c < NC; c++) run_collective(c);
  run_matrix();
  run_mixed(0);
  run_mixed(1);
  barrier_semantics();

  /* Replicated results (Bcast, Allreduce, Allgather[v]) must be bit-identical
   * on all ranks: compare the running hash of all of them. */
  uint64_t* all = xmalloc((size_t)nprocs * sizeof(uint64_t));
  MPI_Allgather(&rhash, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < nprocs; r++)
    if (all[r] != rhash) {
      fail("replicated results differ between rank %d and this rank", r);
      break;
    }
  free(all);

  MPI_Allreduce(&nfail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total == 0)
      printf(PROG ": OK\n");
    else
      printf(PROG ": %d failures\n", total);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
