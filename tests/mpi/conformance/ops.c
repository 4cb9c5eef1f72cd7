/*
 * ops.c - MPI-3.1 conformance test for reduction operations beyond the simple
 * arithmetic ones, written from the standard (sections 5.9.4 - 5.9.7).
 *
 *  - MPI_MINLOC / MPI_MAXLOC on MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT and
 *    MPI_LONG_INT, with many ties: on equal values the lower index wins.
 *  - User operations from MPI_Op_create: a commutative int sum, a
 *    NON-commutative one (composition of affine maps x -> a*x+b modulo a prime,
 *    applied in rank order), and two on a derived datatype (MPI_Type_contiguous
 *    of 2 ints) whose function must receive that datatype.  For the
 *    non-commutative ops the result must be exactly the rank-ordered product.
 *  - Each through Reduce (every root), Allreduce, Scan, Exscan,
 *    Reduce_scatter_block and Reduce_scatter, blocking and nonblocking
 *    (batches in flight completed by MPI_Waitall in reverse order, and one
 *    polled with MPI_Test), with and without MPI_IN_PLACE, counts 0, 1, 7 and
 *    one large count; then MPI_Op_free must reset the handle to MPI_OP_NULL.
 *
 * Only functions from the rcc MPI subset are used.  Runs at any size >= 1.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "ops"
#define TAIL 2 /* sentinel elements after each receive buffer */
#define SENT 0xA5
#define LARGE 100000
#define MAXBATCH 16
#define P1 46337LL      /* prime with P1*P1 < 2^31: an affine map packs into one int */
#define P2 2147483647LL /* prime 2^31-1: each coefficient fills an int */

static int rank, nprocs, nfail, nprinted;
static volatile int bad_dtype; /* user function called with a wrong datatype */

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void
fail(const char* fmt, ...) {
  va_list ap;
  nfail++;
  if (nprinted++ >= 60) return;
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

/* ---- element storage: the C layouts the standard gives the pair types ---- */
typedef struct {
  int v, i;
} s2int;
typedef struct {
  float v;
  int i;
} sfltint;
typedef struct {
  double v;
  int i;
} sdblint;
typedef struct {
  long v;
  int i;
} slngint;
enum { E_2INT, E_FLTINT, E_DBLINT, E_LNGINT, E_INT, E_PAIR, NE };
static const size_t esz[NE] = {sizeof(s2int),   sizeof(sfltint), sizeof(sdblint),
                               sizeof(slngint), sizeof(int),     2 * sizeof(int)};
static MPI_Datatype edt[NE]; /* E_PAIR is the derived contiguous(2, MPI_INT) */

/* ---- operations ---- */
enum { OP_MINLOC, OP_MAXLOC, OP_USUM, OP_AFF, OP_PAFF, OP_PCOMM, NOP };
static MPI_Op mop[NOP];

typedef struct {
  long long a, b;
} ev; /* an element's value: (value, index) or (a, b) */

typedef struct {
  const char* name;
  int e, op;
} kind;
static const kind kinds[] = {
    {"MPI_MINLOC on MPI_2INT", E_2INT, OP_MINLOC},
    {"MPI_MINLOC on MPI_FLOAT_INT", E_FLTINT, OP_MINLOC},
    {"MPI_MINLOC on MPI_DOUBLE_INT", E_DBLINT, OP_MINLOC},
    {"MPI_MINLOC on MPI_LONG_INT", E_LNGINT, OP_MINLOC},
    {"MPI_MAXLOC on MPI_2INT", E_2INT, OP_MAXLOC},
    {"MPI_MAXLOC on MPI_FLOAT_INT", E_FLTINT, OP_MAXLOC},
    {"MPI_MAXLOC on MPI_DOUBLE_INT", E_DBLINT, OP_MAXLOC},
    {"MPI_MAXLOC on MPI_LONG_INT", E_LNGINT, OP_MAXLOC},
    {"user commutative sum on MPI_INT", E_INT, OP_USUM},
    {"user non-commutative affine composition on MPI_INT", E_INT, OP_AFF},
    {"user non-commutative affine composition on contiguous(2,MPI_INT)", E_PAIR, OP_PAFF},
    {"user commutative (sum,max) on contiguous(2,MPI_INT)", E_PAIR, OP_PCOMM},
};
#define NK ((int)(sizeof kinds / sizeof kinds[0]))

static void store(int e, int op, void* b, size_t k, ev x) {
  switch (e) {
    case E_2INT:
      ((s2int*)b)[k].v = (int)x.a;
      ((s2int*)b)[k].i = (int)x.b;
      break;
    case E_FLTINT:
      ((sfltint*)b)[k].v = (float)x.a;
      ((sfltint*)b)[k].i = (int)x.b;
      break;
    case E_DBLINT:
      ((sdblint*)b)[k].v = (double)x.a;
      ((sdblint*)b)[k].i = (int)x.b;
      break;
    case E_LNGINT:
      ((slngint*)b)[k].v = (long)x.a;
      ((slngint*)b)[k].i = (int)x.b;
      break;
    case E_INT: ((int*)b)[k] = (int)(op == OP_AFF ? x.a * P1 + x.b : x.a); break;
    default:
      ((int*)b)[2 * k] = (int)x.a;
      ((int*)b)[2 * k + 1] = (int)x.b;
      break;
  }
}

/* Floating values are small integers; a non-integral one maps to a value
 * that is never expected, so it cannot compare equal by accident. */
static long long fint(double d) { return d == (double)(long long)d ? (long long)d : -999999; }

static ev load(int e, int op, const void* b, size_t k) {
  ev x = {0, 0};
  int v;
  switch (e) {
    case E_2INT:
      x.a = ((const s2int*)b)[k].v;
      x.b = ((const s2int*)b)[k].i;
      break;
    case E_FLTINT:
      x.a = fint(((const sfltint*)b)[k].v);
      x.b = ((const sfltint*)b)[k].i;
      break;
    case E_DBLINT:
      x.a = fint(((const sdblint*)b)[k].v);
      x.b = ((const sdblint*)b)[k].i;
      break;
    case E_LNGINT:
      x.a = ((const slngint*)b)[k].v;
      x.b = ((const slngint*)b)[k].i;
      break;
    case E_INT:
      v = ((const int*)b)[k];
      if (op == OP_AFF) {
        x.a = v / P1;
        x.b = v % P1;
      } else
        x.a = v;
      break;
    default:
      x.a = ((const int*)b)[2 * k];
      x.b = ((const int*)b)[2 * k + 1];
      break;
  }
  return x;
}

/* Input of rank r at global element index g.  MINLOC/MAXLOC values lie in
 * [-2, 1] so most elements tie; indices are sometimes the rank, sometimes a
 * scrambled number (so the lowest index is not simply the lowest rank), and
 * every fifth element ties on the value at every rank. */
static ev input(int op, int r, long long g) {
  ev x;
  switch (op) {
    case OP_MINLOC:
    case OP_MAXLOC:
      x.a = g % 5 == 4 ? 1 : (r * 3 + g) % 4 - 2;
      x.b = g % 3 == 0 ? r : (r * 5 + g * 3) % 7;
      break;
    case OP_USUM:
      x.a = (r * 7 + g * 3) % 100 - 50;
      x.b = 0;
      break;
    case OP_AFF:
      x.a = 1 + (r * 7919LL + g * 31) % (P1 - 1);
      x.b = (r * 104729LL + g * 17 + 3) % P1;
      break;
    case OP_PAFF:
      x.a = 1 + (long long)(((unsigned long long)r + 1) * 2654435761ull + (unsigned long long)g * 40503ull) % (P2 - 1);
      x.b = (long long)(((unsigned long long)r + 7) * 2246822519ull + (unsigned long long)g * 3266489917ull) % P2;
      break;
    default:
      x.a = (r * 11 + g) % 50 - 25;
      x.b = (r * 13 + g * 7) % 101;
      break;
  }
  return x;
}

/* x op y, x being the operand from the lower ranks (standard 5.9.5: the
 * function computes inoutvec[i] = invec[i] op inoutvec[i]). */
static ev comb(int op, ev x, ev y) {
  ev z = x;
  switch (op) {
    case OP_MINLOC:
      if (y.a < x.a)
        z = y;
      else if (y.a == x.a && y.b < x.b)
        z.b = y.b;
      break;
    case OP_MAXLOC:
      if (y.a > x.a)
        z = y;
      else if (y.a == x.a && y.b < x.b)
        z.b = y.b;
      break;
    case OP_USUM: z.a = x.a + y.a; break;
    case OP_AFF:
      z.a = y.a * x.a % P1;
      z.b = (y.a * x.b + y.b) % P1;
      break; /* apply x, then y */
    case OP_PAFF:
      z.a = (long long)((unsigned long long)y.a * (unsigned long long)x.a % P2);
      z.b = (long long)(((unsigned long long)y.a * (unsigned long long)x.b + (unsigned long long)y.b) % P2);
      break;
    default:
      z.a = x.a + y.a;
      z.b = x.b > y.b ? x.b : y.b;
      break;
  }
  return z;
}

/* Rank-ordered reduction of ranks lo..hi (lo <= hi) at element g. */
static ev expect(int op, int lo, int hi, long long g) {
  ev x = input(op, lo, g);
  for (int r = lo + 1; r <= hi; r++) x = comb(op, x, input(op, r, g));
  return x;
}

/* The user functions: apply comb() element-wise on their own datatype. */
static void user_apply(int e, int op, MPI_Datatype want, void* in, void* io, const int* len, const MPI_Datatype* dt) {
  if (*dt != want || *len < 0) bad_dtype++;
  for (int k = 0; k < *len; k++) store(e, op, io, k, comb(op, load(e, op, in, k), load(e, op, io, k)));
}
static void f_usum(void* in, void* io, int* len, MPI_Datatype* dt) {
  user_apply(E_INT, OP_USUM, MPI_INT, in, io, len, dt);
}
static void f_aff(void* in, void* io, int* len, MPI_Datatype* dt) {
  user_apply(E_INT, OP_AFF, MPI_INT, in, io, len, dt);
}
static void f_paff(void* in, void* io, int* len, MPI_Datatype* dt) {
  user_apply(E_PAIR, OP_PAFF, edt[E_PAIR], in, io, len, dt);
}
static void f_pcomm(void* in, void* io, int* len, MPI_Datatype* dt) {
  user_apply(E_PAIR, OP_PCOMM, edt[E_PAIR], in, io, len, dt);
}

/* ---- test cases ---- */
enum { C_REDUCE, C_ALLREDUCE, C_SCAN, C_EXSCAN, C_RSB, C_RS, NC };
static const char* cname[NC] = {"Reduce", "Allreduce", "Scan", "Exscan", "Reduce_scatter_block", "Reduce_scatter"};

typedef struct {
  int k, c, root, count, ip;
} spec;
typedef struct {
  spec s;
  char *sb, *rb, *sc; /* send, receive, copy of send */
  size_t sn, rn, chk; /* elements: send, receive, checked prefix of receive */
  int ips, rsig, rchk, lo, hi;
  long long off; /* global index of the first result element */
  int* rcnt;
  MPI_Request req;
} tcase;

static int vc(int j, int c) { return j % 3 == 1 ? 0 : c + j % 4; } /* uneven, some zero */

static char* balloc(int e, size_t n) {
  char* p = xmalloc((n + TAIL) * esz[e]);
  memset(p, SENT, (n + TAIL) * esz[e]);
  return p;
}

static void fill(const tcase* k, char* b, size_t n, int r) {
  const kind* kd = &kinds[k->s.k];
  for (size_t i = 0; i < n; i++) store(kd->e, kd->op, b, i, input(kd->op, r, (long long)i));
}

static void kinit(tcase* k) {
  const spec* s = &k->s;
  int n = nprocs, r = rank, c = s->count, e = kinds[s->k].e, tot = 0;
  k->rcnt = xmalloc(n * sizeof(int));
  for (int j = 0; j < n; j++) k->rcnt[j] = s->c == C_RS ? vc(j, c) : c;
  k->sb = k->sc = NULL;
  k->req = MPI_REQUEST_NULL;
  k->ips = s->ip && (s->c != C_REDUCE || r == s->root);
  k->rsig = s->c != C_REDUCE || r == s->root;
  k->rchk = k->rsig && !(s->c == C_EXSCAN && r == 0); /* Exscan: rank 0 undefined */
  k->lo = 0;
  k->hi = s->c == C_SCAN ? r : s->c == C_EXSCAN ? r - 1 : n - 1;
  k->off = 0;
  k->sn = k->rn = k->chk = c;
  if (s->c == C_RSB || s->c == C_RS) {
    for (int j = 0; j < n; j++) {
      if (j < r) k->off += k->rcnt[j];
      tot += k->rcnt[j];
    }
    k->sn = tot;
    k->chk = k->rcnt[r];
    k->rn = k->ips ? (size_t)tot : k->chk; /* in place: input in recvbuf, result in its start */
  }
  k->rb = balloc(e, k->rn);
  if (k->ips)
    fill(k, k->rb, k->sn, r);
  else {
    k->sb = balloc(e, k->sn);
    fill(k, k->sb, k->sn, r);
    k->sc = xmalloc((k->sn + TAIL) * esz[e]);
    memcpy(k->sc, k->sb, (k->sn + TAIL) * esz[e]);
  }
}

static void kfree(tcase* k) {
  free(k->sb);
  free(k->rb);
  free(k->sc);
  free(k->rcnt);
}

static int kstart(tcase* k, MPI_Request* q) {
  const spec* s = &k->s;
  MPI_Datatype d = edt[kinds[s->k].e];
  MPI_Op op = mop[kinds[s->k].op];
  MPI_Comm w = MPI_COMM_WORLD;
  const void* sb = k->ips ? MPI_IN_PLACE : k->sb;
  void* rb = k->rsig ? k->rb : NULL;
  int c = s->count;
#define CALL(B, NB) (q ? (NB) : (B))
  switch (s->c) {
    case C_REDUCE: return CALL(MPI_Reduce(sb, rb, c, d, op, s->root, w), MPI_Ireduce(sb, rb, c, d, op, s->root, w, q));
    case C_ALLREDUCE: return CALL(MPI_Allreduce(sb, rb, c, d, op, w), MPI_Iallreduce(sb, rb, c, d, op, w, q));
    case C_SCAN: return CALL(MPI_Scan(sb, rb, c, d, op, w), MPI_Iscan(sb, rb, c, d, op, w, q));
    case C_EXSCAN: return CALL(MPI_Exscan(sb, rb, c, d, op, w), MPI_Iexscan(sb, rb, c, d, op, w, q));
    case C_RSB:
      return CALL(MPI_Reduce_scatter_block(sb, rb, c, d, op, w), MPI_Ireduce_scatter_block(sb, rb, c, d, op, w, q));
    default:
      return CALL(MPI_Reduce_scatter(sb, rb, k->rcnt, d, op, w), MPI_Ireduce_scatter(sb, rb, k->rcnt, d, op, w, q));
  }
#undef CALL
}

static void kcheck(tcase* k, const char* mode, int rc) {
  const spec* s = &k->s;
  const kind* kd = &kinds[s->k];
  char what[200];
  size_t bad = 0, es = esz[kd->e];
  snprintf(what, sizeof what, "%s (%s) %s count=%d root=%d in_place=%d", cname[s->c], mode, kd->name, s->count,
           s->c == C_REDUCE ? s->root : -1, s->ip);
  if (rc != MPI_SUCCESS) fail("%s: returned error %d", what, rc);
  for (size_t i = 0; k->rchk && i < k->chk; i++) {
    ev got = load(kd->e, kd->op, k->rb, i), want = expect(kd->op, k->lo, k->hi, k->off + (long long)i);
    if (got.a == want.a && got.b == want.b) continue;
    if (bad++ < 3) fail("%s: element %zu is (%lld,%lld), expected (%lld,%lld)", what, i, got.a, got.b, want.a, want.b);
  }
  if (bad > 3) fail("%s: %zu wrong elements", what, bad);
  for (size_t i = k->rn * es; k->rsig && i < (k->rn + TAIL) * es; i++)
    if ((unsigned char)k->rb[i] != SENT) {
      fail("%s: write past the end of recvbuf", what);
      break;
    }
  if (k->sb && memcmp(k->sb, k->sc, (k->sn + TAIL) * es) != 0) fail("%s: send buffer modified", what);
}

static void run_blocking(const spec* s) {
  tcase k = {.s = *s};
  kinit(&k);
  int rc = kstart(&k, NULL);
  kcheck(&k, "blocking", rc);
  kfree(&k);
}

static void run_polled(const spec* s) {
  tcase k = {.s = *s};
  int flag = 0, rc, rc2 = MPI_SUCCESS;
  kinit(&k);
  rc = kstart(&k, &k.req);
  while (!flag && rc2 == MPI_SUCCESS) rc2 = MPI_Test(&k.req, &flag, MPI_STATUS_IGNORE);
  if (k.req != MPI_REQUEST_NULL) fail("%s: request not freed by a successful MPI_Test", cname[s->c]);
  kcheck(&k, "nonblocking, polled with MPI_Test", rc != MPI_SUCCESS ? rc : rc2);
  kfree(&k);
}

/* All started before any completes; MPI_Waitall gets them in reverse order. */
static void run_batch(const spec* s, int ns) {
  tcase k[MAXBATCH];
  MPI_Request rq[MAXBATCH];
  int rc[MAXBATCH], wrc;
  for (int i = 0; i < ns; i++) {
    k[i].s = s[i];
    kinit(&k[i]);
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

static void run_list(const spec* s, int ns) {
  for (int i = 0; i < ns; i++) run_blocking(&s[i]);
  for (int i = 0; i < ns; i += MAXBATCH) run_batch(&s[i], ns - i < MAXBATCH ? ns - i : MAXBATCH);
}

/* For one operation kind: every collective, every root of Reduce, with and
 * without MPI_IN_PLACE, counts 0, 1, 7. */
static void run_kind(int kk) {
  static const int counts[3] = {0, 1, 7};
  spec* s = xmalloc((size_t)(nprocs * 6 + 5 * 6) * sizeof(spec));
  int ns = 0;
  for (int c = 0; c < NC; c++)
    for (int root = 0; root < (c == C_REDUCE ? nprocs : 1); root++)
      for (int ip = 0; ip < 2; ip++)
        for (int ci = 0; ci < 3; ci++) s[ns++] = (spec){kk, c, root, counts[ci], ip};
  run_list(s, ns);
  run_polled(&(spec){kk, kk % NC, nprocs - 1, 7, kk % 2});
  free(s);
}

/* Large counts make implementations segment and pipeline; a non-commutative
 * op must still be applied in rank order. */
static void run_large(int kk) {
  spec s[NC];
  for (int c = 0; c < NC; c++)
    s[c] = (spec){kk, c, (c + kk) % nprocs, c >= C_RSB ? LARGE / nprocs : LARGE, (c + kk) % 2};
  run_list(s, NC);
}

/* Guard against a vacuous test: the non-commutative data must give a
 * different answer in another order. */
static void check_order_sensitive(void) {
  static const int ops[2] = {OP_AFF, OP_PAFF};
  if (nprocs < 2) return;
  for (int i = 0; i < 2; i++) {
    ev up = expect(ops[i], 0, nprocs - 1, 3), down = input(ops[i], nprocs - 1, 3);
    for (int r = nprocs - 2; r >= 0; r--) down = comb(ops[i], down, input(ops[i], r, 3));
    if (up.a == down.a && up.b == down.b) fail("test data for op %d is not order-sensitive", ops[i]);
  }
}

/* MPI_Op_free sets the handle to MPI_OP_NULL, also for an op never used. */
static void free_ops(void) {
  MPI_Op spare;
  MPI_Op_create(f_usum, 1, &spare);
  MPI_Op_free(&spare);
  if (spare != MPI_OP_NULL) fail("MPI_Op_free of an unused op did not set MPI_OP_NULL");
  for (int o = OP_USUM; o < NOP; o++) {
    MPI_Op_free(&mop[o]);
    if (mop[o] != MPI_OP_NULL) fail("MPI_Op_free did not set op %d to MPI_OP_NULL", o);
  }
}

int main(int argc, char** argv) {
  int total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* report, don't abort */

  edt[E_2INT] = MPI_2INT;
  edt[E_FLTINT] = MPI_FLOAT_INT;
  edt[E_DBLINT] = MPI_DOUBLE_INT;
  edt[E_LNGINT] = MPI_LONG_INT;
  edt[E_INT] = MPI_INT;
  MPI_Type_contiguous(2, MPI_INT, &edt[E_PAIR]);
  MPI_Type_commit(&edt[E_PAIR]);
  mop[OP_MINLOC] = MPI_MINLOC;
  mop[OP_MAXLOC] = MPI_MAXLOC;
  MPI_Op_create(f_usum, 1, &mop[OP_USUM]);
  MPI_Op_create(f_aff, 0, &mop[OP_AFF]);
  MPI_Op_create(f_paff, 0, &mop[OP_PAFF]);
  MPI_Op_create(f_pcomm, 1, &mop[OP_PCOMM]);

  check_order_sensitive();
  for (int kk = 0; kk < NK; kk++) run_kind(kk);
  for (int kk = 0; kk < NK; kk++)
    if (kk == 2 || kinds[kk].op >= OP_USUM) run_large(kk); /* DOUBLE_INT MINLOC and all user ops */
  if (bad_dtype) fail("user functions were called %d times with a wrong datatype or length", bad_dtype);
  free_ops();
  MPI_Type_free(&edt[E_PAIR]);
  if (edt[E_PAIR] != MPI_DATATYPE_NULL) fail("MPI_Type_free did not set MPI_DATATYPE_NULL");

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
