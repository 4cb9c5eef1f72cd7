/* MPI-3.1 conformance: datatypes (chapter 4) and their use in
 * point-to-point and collective communication.
 *
 * Written from the MPI-3.1 standard. Checks type sizes, extents and
 * lower bounds of predefined and derived types, the names of predefined
 * types (6.8), and that data moves element by element through derived
 * types: a receive writes only the locations of its type map, never the
 * gaps between them (strided columns, struct padding, indexed holes).
 * Reductions on derived types use a user-defined operation, because
 * MPI-3.1 5.9.1 allows predefined operations only on the predefined types
 * listed in 5.9.2 (the pair types included for MINLOC/MAXLOC). */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>
#include "conformance.h"

static int peer; /* receiver of pair tests: 1, or 0 itself at size 1 */

enum { ROWS = 6, COLS = 5 };
/* Indexed layout used throughout: blocks of 2, 1, 3 ints at 1, 4, 9. */
static const int ix_len[3] = {2, 1, 3}, ix_disp[3] = {1, 4, 9};
enum { IX_ELEMS = 6, IX_EXTENT = 11 }; /* ints: from 1 up to 12 */
/* Offset (in ints) of element j (0..5) of copy k of the indexed type. */
static int ix_off(int k, int j) {
  int b = 0;
  while (j >= ix_len[b]) j -= ix_len[b++];
  return k * IX_EXTENT + ix_disp[b] + j;
}

/* A struct with interior padding (after c) and none at the end, so that
 * its natural MPI extent equals sizeof and arrays of it work without
 * MPI_Type_create_resized. */
struct rec {
  char c;
  double d;
  int i[2];
};
_Static_assert(sizeof(struct rec) == offsetof(struct rec, i) + 2 * sizeof(int), "no tail padding");

static void expect_shape(MPI_Datatype t, const char* name, int sz, MPI_Aint lb, MPI_Aint ext) {
  int s = -1;
  MPI_Aint l = -1, e = -1;
  MPI_Type_size(t, &s);
  MPI_Type_get_extent(t, &l, &e);
  CHECK(s == sz, "%s: size %d, want %d", name, s, sz);
  CHECK(l == lb && e == ext, "%s: lb %ld extent %ld, want %ld %ld", name, (long)l, (long)e, (long)lb, (long)ext);
}
static void expect_name(MPI_Datatype t, const char* want) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  MPI_Type_get_name(t, name, &len);
  CHECK(strcmp(name, want) == 0 && len == (int)strlen(want), "Type_get_name: \"%s\" (len %d), want \"%s\"", name, len,
        want);
}

struct di {
  double v;
  int i;
};
struct fi {
  float v;
  int i;
};
struct li {
  long v;
  int i;
};

static void test_predefined(void) {
  expect_name(MPI_INT, "MPI_INT");
  expect_name(MPI_DOUBLE, "MPI_DOUBLE");
  expect_name(MPI_CHAR, "MPI_CHAR");
  expect_name(MPI_BYTE, "MPI_BYTE");
  expect_name(MPI_FLOAT, "MPI_FLOAT");
  expect_name(MPI_UNSIGNED, "MPI_UNSIGNED");
  expect_name(MPI_2INT, "MPI_2INT");
  expect_name(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
  expect_shape(MPI_CHAR, "MPI_CHAR", 1, 0, 1);
  expect_shape(MPI_SHORT, "MPI_SHORT", sizeof(short), 0, sizeof(short));
  expect_shape(MPI_INT, "MPI_INT", sizeof(int), 0, sizeof(int));
  expect_shape(MPI_LONG, "MPI_LONG", sizeof(long), 0, sizeof(long));
  expect_shape(MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long), 0, sizeof(long long));
  expect_shape(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(long long), 0, sizeof(long long));
  expect_shape(MPI_FLOAT, "MPI_FLOAT", sizeof(float), 0, sizeof(float));
  expect_shape(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), 0, sizeof(double));
  expect_shape(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), 0, sizeof(wchar_t));
  expect_shape(MPI_INT8_T, "MPI_INT8_T", 1, 0, 1);
  expect_shape(MPI_UINT16_T, "MPI_UINT16_T", 2, 0, 2);
  expect_shape(MPI_INT32_T, "MPI_INT32_T", 4, 0, 4);
  expect_shape(MPI_UINT64_T, "MPI_UINT64_T", 8, 0, 8);
  expect_shape(MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool), 0, sizeof(bool));
  expect_shape(MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), 0, sizeof(MPI_Aint));
  expect_shape(MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), 0, sizeof(MPI_Offset));
  expect_shape(MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), 0, sizeof(MPI_Count));
  /* Pair types are laid out like the C structs (5.9.4). */
  expect_shape(MPI_2INT, "MPI_2INT", 2 * sizeof(int), 0, 2 * sizeof(int));
  expect_shape(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double) + sizeof(int), 0, sizeof(struct di));
  expect_shape(MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float) + sizeof(int), 0, sizeof(struct fi));
  expect_shape(MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + sizeof(int), 0, sizeof(struct li));
}

/* Derived types used below; built once, freed at the end. */
static MPI_Datatype t_quad, t_col, t_vec3, t_idx, t_rec, t_alt;

static void build_types(void) {
  MPI_Type_contiguous(4, MPI_INT, &t_quad);
  MPI_Type_vector(ROWS, 1, COLS, MPI_INT, &t_col); /* a column of int m[ROWS][COLS] */
  MPI_Type_vector(4, 2, 3, MPI_INT, &t_vec3);      /* xx.xx.xx.xx */
  MPI_Type_vector(3, 1, 2, MPI_INT, &t_alt);       /* x.x.x */
  MPI_Type_indexed(3, ix_len, ix_disp, MPI_INT, &t_idx);
  int bl[3] = {1, 1, 2};
  MPI_Aint disp[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
  MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(3, bl, disp, ty, &t_rec);
  MPI_Datatype all[] = {t_quad, t_col, t_vec3, t_alt, t_idx, t_rec};
  for (int i = 0; i < 6; i++) MPI_Type_commit(&all[i]);
  t_quad = all[0], t_col = all[1], t_vec3 = all[2], t_alt = all[3], t_idx = all[4], t_rec = all[5];
}

static void test_shapes(void) {
  const int I = sizeof(int);
  expect_shape(t_quad, "contiguous(4,INT)", 4 * I, 0, 4 * I);
  expect_shape(t_col, "vector column", ROWS * I, 0, ((ROWS - 1) * COLS + 1) * I);
  expect_shape(t_vec3, "vector(4,2,3)", 8 * I, 0, 11 * I);
  expect_shape(t_idx, "indexed", IX_ELEMS * I, 1 * I, IX_EXTENT * I);
  expect_shape(t_rec, "struct rec", 1 + sizeof(double) + 2 * I, 0, sizeof(struct rec));
  expect_name(t_quad, ""); /* derived types have no name until one is set (6.8) */
  MPI_Datatype tmp;
  MPI_Type_contiguous(0, MPI_INT, &tmp);
  MPI_Type_commit(&tmp);
  expect_shape(tmp, "contiguous(0,INT)", 0, 0, 0);
  MPI_Type_free(&tmp);
  CHECK(tmp == MPI_DATATYPE_NULL, "Type_free did not set MPI_DATATYPE_NULL");
}

/* Pair pattern: sender 0, receiver peer (0 itself at one rank). */
static void pair_send(void* buf, int n, MPI_Datatype t, int tag, MPI_Request* r) {
  *r = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Isend(buf, n, t, peer, tag, MPI_COMM_WORLD, r);
}
static void pair_done(MPI_Request* r) { MPI_Wait(r, MPI_STATUS_IGNORE); }

static int val(int i) { return 1000 + 7 * i; }

static void test_p2p_vector(void) {
  int m[ROWS][COLS], lin[2 * ROWS * COLS], got[2 * ROWS + 2];
  MPI_Request r;
  MPI_Status st;
  for (int i = 0; i < ROWS * COLS; i++) m[i / COLS][i % COLS] = val(i);
  for (int i = 0; i < 2 * ROWS * COLS; i++) lin[i] = val(i);

  /* Column 2 sent as a vector, received contiguous; a guard after. */
  pair_send(&m[0][2], 1, t_col, 1, &r);
  if (rank == peer) {
    memset(got, 0x7f, sizeof got);
    MPI_Recv(got, ROWS, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == ROWS, "vector->contiguous: count %d", n);
    for (int k = 0; k < ROWS; k++)
      CHECK(got[k] == val(k * COLS + 2), "vector->contiguous: element %d is %d", k, got[k]);
    CHECK(got[ROWS] == 0x7f7f7f7f, "vector->contiguous: wrote past the buffer");
  }
  pair_done(&r);

  /* Two copies of the column type: the second starts one extent
   * ((ROWS-1)*COLS+1 ints) after the first, not at the next column. */
  pair_send(lin, 2, t_col, 2, &r);
  if (rank == peer) {
    MPI_Recv(got, 2 * ROWS, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int c = 0; c < 2; c++)
      for (int k = 0; k < ROWS; k++) {
        int off = c * ((ROWS - 1) * COLS + 1) + k * COLS;
        CHECK(got[c * ROWS + k] == val(off), "2 x vector: copy %d element %d is %d, want %d", c, k, got[c * ROWS + k],
              val(off));
      }
  }
  pair_done(&r);

  /* Contiguous sent, received into column 3: nothing else changes. */
  int col[ROWS];
  for (int k = 0; k < ROWS; k++) col[k] = -100 - k;
  pair_send(col, ROWS, MPI_INT, 3, &r);
  if (rank == peer) {
    int dst[ROWS][COLS];
    memset(dst, 0x55, sizeof dst);
    MPI_Recv(&dst[0][3], 1, t_col, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < ROWS; i++)
      for (int j = 0; j < COLS; j++) {
        int want = j == 3 ? -100 - i : 0x55555555;
        CHECK(dst[i][j] == want, "contiguous->vector: m[%d][%d] is %d, want %d", i, j, dst[i][j], want);
      }
  }
  pair_done(&r);

  /* Blocked vector (4 blocks of 2, stride 3) to itself: gaps untouched. */
  pair_send(lin, 1, t_vec3, 4, &r);
  if (rank == peer) {
    int dst[12];
    for (int i = 0; i < 12; i++) dst[i] = -1;
    MPI_Recv(dst, 1, t_vec3, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 12; i++) {
      int want = i < 11 && i % 3 != 2 ? val(i) : -1;
      CHECK(dst[i] == want, "vector(4,2,3): element %d is %d, want %d", i, dst[i], want);
    }
  }
  pair_done(&r);
}

static void test_p2p_indexed(void) {
  int src[3 * IX_EXTENT + 1], got[2 * IX_ELEMS + 1];
  MPI_Request r;
  for (int i = 0; i < 3 * IX_EXTENT + 1; i++) src[i] = val(i);
  /* Two indexed copies sent, received contiguous. */
  pair_send(src, 2, t_idx, 5, &r);
  if (rank == peer) {
    got[2 * IX_ELEMS] = -7;
    MPI_Recv(got, 2 * IX_ELEMS, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < IX_ELEMS; j++)
        CHECK(got[k * IX_ELEMS + j] == val(ix_off(k, j)), "indexed->contiguous: copy %d element %d", k, j);
    CHECK(got[2 * IX_ELEMS] == -7, "indexed->contiguous: wrote past the buffer");
  }
  pair_done(&r);
  /* Contiguous sent, received as two indexed copies: holes untouched. */
  pair_send(src, 2 * IX_ELEMS, MPI_INT, 6, &r);
  if (rank == peer) {
    int dst[2 * IX_EXTENT + 2], want[2 * IX_EXTENT + 2];
    for (int i = 0; i < 2 * IX_EXTENT + 2; i++) dst[i] = want[i] = -1;
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < IX_ELEMS; j++) want[ix_off(k, j)] = val(k * IX_ELEMS + j);
    MPI_Recv(dst, 2, t_idx, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * IX_EXTENT + 2; i++)
      CHECK(dst[i] == want[i], "contiguous->indexed: int %d is %d, want %d", i, dst[i], want[i]);
  }
  pair_done(&r);
}

static void fill_rec(struct rec* x, int n, int seed) {
  memset(x, 0x11, n * sizeof *x); /* padding the receiver must not see */
  for (int k = 0; k < n; k++) {
    x[k].c = (char)('a' + (seed + k) % 26);
    x[k].d = 0.5 + seed * 3 + k;
    x[k].i[0] = seed * 100 + k;
    x[k].i[1] = -(seed * 100 + k);
  }
}
/* Fields equal, padding bytes still the receiver's 0xA5. */
static void check_rec(const struct rec* x, int n, int seed, const char* what) {
  for (int k = 0; k < n; k++) {
    CHECK(x[k].c == (char)('a' + (seed + k) % 26) && x[k].d == 0.5 + seed * 3 + k && x[k].i[0] == seed * 100 + k &&
              x[k].i[1] == -(seed * 100 + k),
          "%s: record %d fields", what, k);
    const unsigned char* p = (const unsigned char*)&x[k];
    for (size_t b = 1; b < offsetof(struct rec, d); b++)
      if (p[b] != 0xA5) {
        fail("%s: record %d padding byte %zu written", what, k, b);
        break;
      }
  }
}

static void test_p2p_struct_and_pairs(void) {
  struct rec s[3], d[3];
  MPI_Request r;
  fill_rec(s, 3, 4);
  pair_send(s, 3, t_rec, 7, &r);
  if (rank == peer) {
    MPI_Status st;
    int n = -1;
    memset(d, 0xA5, sizeof d);
    MPI_Recv(d, 3, t_rec, 0, 7, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, t_rec, &n);
    CHECK(n == 3, "struct: Get_count %d", n);
    check_rec(d, 3, 4, "struct p2p");
  }
  pair_done(&r);

  /* Pair types, 4 elements each, into buffers the receiver pre-fills. */
  int i2[4][2], g2[4][2];
  struct di sd[4], gd[4];
  struct fi sf[4], gf[4];
  struct li sl[4], gl[4];
  for (int k = 0; k < 4; k++) {
    i2[k][0] = k * 3, i2[k][1] = -k;
    sd[k].v = k + 0.25, sd[k].i = 10 + k;
    sf[k].v = k + 0.75f, sf[k].i = 20 + k;
    sl[k].v = 4000000000L * (long)(sizeof(long) > 4) + k, sl[k].i = 30 + k;
  }
  MPI_Request q[4];
  pair_send(i2, 4, MPI_2INT, 8, &q[0]);
  pair_send(sd, 4, MPI_DOUBLE_INT, 9, &q[1]);
  pair_send(sf, 4, MPI_FLOAT_INT, 10, &q[2]);
  pair_send(sl, 4, MPI_LONG_INT, 11, &q[3]);
  if (rank == peer) {
    MPI_Status st[4];
    int n[4];
    memset(g2, 0, sizeof g2), memset(gd, 0, sizeof gd), memset(gf, 0, sizeof gf), memset(gl, 0, sizeof gl);
    MPI_Recv(g2, 4, MPI_2INT, 0, 8, MPI_COMM_WORLD, &st[0]);
    MPI_Recv(gd, 4, MPI_DOUBLE_INT, 0, 9, MPI_COMM_WORLD, &st[1]);
    MPI_Recv(gf, 4, MPI_FLOAT_INT, 0, 10, MPI_COMM_WORLD, &st[2]);
    MPI_Recv(gl, 4, MPI_LONG_INT, 0, 11, MPI_COMM_WORLD, &st[3]);
    MPI_Datatype pt[4] = {MPI_2INT, MPI_DOUBLE_INT, MPI_FLOAT_INT, MPI_LONG_INT};
    for (int t = 0; t < 4; t++) {
      MPI_Get_count(&st[t], pt[t], &n[t]);
      CHECK(n[t] == 4, "pair type %d: count %d", t, n[t]);
    }
    for (int k = 0; k < 4; k++) {
      CHECK(g2[k][0] == i2[k][0] && g2[k][1] == i2[k][1], "MPI_2INT element %d", k);
      CHECK(gd[k].v == sd[k].v && gd[k].i == sd[k].i, "MPI_DOUBLE_INT element %d", k);
      CHECK(gf[k].v == sf[k].v && gf[k].i == sf[k].i, "MPI_FLOAT_INT element %d", k);
      CHECK(gl[k].v == sl[k].v && gl[k].i == sl[k].i, "MPI_LONG_INT element %d", k);
    }
  }
  for (int t = 0; t < 4; t++) pair_done(&q[t]);
}

static void test_bcast_struct(void) {
  struct rec x[4];
  int root = size - 1;
  if (rank == root)
    fill_rec(x, 4, 9);
  else
    memset(x, 0xA5, sizeof x);
  MPI_Bcast(x, 4, t_rec, root, MPI_COMM_WORLD);
  if (rank != root) check_rec(x, 4, 9, "Bcast struct");
}

static void test_allgather_vector(void) {
  int six[6], *got = malloc(5 * size * sizeof(int)), three[3];
  for (int j = 0; j < 6; j++) six[j] = rank * 10 + j;
  /* Strided send (elements 0, 2, 4), contiguous receive. */
  MPI_Allgather(six, 1, t_alt, got, 3, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++)
    for (int k = 0; k < 3; k++)
      CHECK(got[i * 3 + k] == i * 10 + 2 * k, "Allgather vector->int: [%d][%d] is %d", i, k, got[i * 3 + k]);
  /* Contiguous send, strided receive: rank i's block starts at i times
   * the extent (5 ints); its gaps keep their -1. */
  for (int k = 0; k < 3; k++) three[k] = rank * 10 + k;
  for (int i = 0; i < 5 * size; i++) got[i] = -1;
  MPI_Allgather(three, 3, MPI_INT, got, 1, t_alt, MPI_COMM_WORLD);
  for (int i = 0; i < 5 * size; i++) {
    int b = i / 5, o = i % 5, want = o % 2 == 0 ? b * 10 + o / 2 : -1;
    CHECK(got[i] == want, "Allgather int->vector: int %d is %d, want %d", i, got[i], want);
  }
  free(got);
}

/* Alltoall with a vector send type whose natural extent tiles the
 * buffer: block j = ints 3j and 3j+2 (the middle int is skipped). */
static void test_alltoall_vector(void) {
  MPI_Datatype two;
  MPI_Type_vector(2, 1, 2, MPI_INT, &two); /* extent 3 ints */
  MPI_Type_commit(&two);
  int *s = malloc(3 * size * sizeof(int)), *g = malloc(2 * size * sizeof(int));
  for (int i = 0; i < 3 * size; i++) s[i] = rank * 1000 + i;
  MPI_Alltoall(s, 1, two, g, 2, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; i++)
    for (int k = 0; k < 2; k++)
      CHECK(g[2 * i + k] == i * 1000 + 3 * rank + 2 * k, "Alltoall vector: from %d element %d is %d", i, k,
            g[2 * i + k]);
  MPI_Type_free(&two);
  free(s);
  free(g);
}

/* User operation on the contiguous type: len counts quads. */
static void quad_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len * 4; i++) ((int*)inout)[i] += ((int*)in)[i];
}

static void test_reductions(void) {
  MPI_Op op;
  int v[12], g[12];
  MPI_Op_create(quad_sum, 1, &op);
  for (int e = 0; e < 12; e++) v[e] = (rank + 1) * (e + 1);
  MPI_Allreduce(v, g, 3, t_quad, op, MPI_COMM_WORLD);
  for (int e = 0; e < 12; e++)
    CHECK(g[e] == (e + 1) * size * (size + 1) / 2, "Allreduce contiguous user sum: element %d is %d", e, g[e]);
  MPI_Op_free(&op);
  CHECK(op == MPI_OP_NULL, "Op_free did not set MPI_OP_NULL");
  /* MAXLOC/MINLOC on pair types: the value peaks at the middle rank;
   * ties (the ends) resolve to the lower index. */
  struct di dv = {-(double)abs(2 * rank - (size - 1)), rank}, dr;
  int iv[2] = {abs(2 * rank - (size - 1)), rank}, ir[2];
  MPI_Allreduce(&dv, &dr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  MPI_Allreduce(iv, ir, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  int mid = (size - 1) / 2;
  CHECK(dr.v == -(double)abs(2 * mid - (size - 1)) && dr.i == mid, "MAXLOC DOUBLE_INT: %g at %d", dr.v, dr.i);
  CHECK(ir[0] == abs(2 * mid - (size - 1)) && ir[1] == mid, "MINLOC 2INT: %d at %d", ir[0], ir[1]);
}

/* Gatherv from an indexed send type: rank i sends i%3+1 copies; the
 * root lays the blocks out in reverse rank order with one-int gaps. */
static void test_gatherv_indexed(void) {
  int src[3 * IX_EXTENT + 1], m = rank % 3 + 1;
  for (int i = 0; i < 3 * IX_EXTENT + 1; i++) src[i] = rank * 1000 + i;
  int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int)), total = 0;
  for (int i = size - 1; i >= 0; i--) {
    counts[i] = IX_ELEMS * (i % 3 + 1);
    displs[i] = total;
    total += counts[i] + 1;
  }
  int* g = malloc((total + 1) * sizeof(int));
  for (int i = 0; i <= total; i++) g[i] = -1;
  MPI_Gatherv(src, m, t_idx, g, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int* want = malloc((total + 1) * sizeof(int));
    for (int i = 0; i <= total; i++) want[i] = -1;
    for (int i = 0; i < size; i++)
      for (int k = 0; k < i % 3 + 1; k++)
        for (int j = 0; j < IX_ELEMS; j++) want[displs[i] + k * IX_ELEMS + j] = i * 1000 + ix_off(k, j);
    for (int i = 0; i <= total; i++) CHECK(g[i] == want[i], "Gatherv indexed: int %d is %d, want %d", i, g[i], want[i]);
    free(want);
  }
  free(g);
  free(counts);
  free(displs);
}

int main(int argc, char** argv) {
  prog = "datatypes";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  peer = size > 1 ? 1 : 0;
  test_predefined();
  build_types();
  test_shapes();
  test_p2p_vector();
  test_p2p_indexed();
  test_p2p_struct_and_pairs();
  test_bcast_struct();
  test_allgather_vector();
  test_alltoall_vector();
  test_reductions();
  test_gatherv_indexed();
  MPI_Datatype all[] = {t_quad, t_col, t_vec3, t_alt, t_idx, t_rec};
  for (int i = 0; i < 6; i++) {
    MPI_Type_free(&all[i]);
    CHECK(all[i] == MPI_DATATYPE_NULL, "Type_free: handle %d not MPI_DATATYPE_NULL", i);
  }
  return conf_finish();
}
