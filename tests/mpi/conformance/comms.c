/*
 * comms.c - MPI-3.1 conformance test for communicators and groups (chapter
 * 6), written from the standard.
 *
 * Every communicator the test creates is checked against an independently
 * computed member list (world ranks in new-rank order) and then exercised:
 * size/rank, its group translated back to MPI_COMM_WORLD, collectives with
 * every root, a nonblocking pair, and point-to-point whose statuses must carry
 * ranks of that communicator.  Covered: MPI_Comm_split (parity, mod 3,
 * reversing keys, tied keys, MPI_UNDEFINED, nested), MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED: one host here, so it must hold every rank),
 * MPI_Comm_dup (its traffic never mixes with the parent's), MPI_Comm_compare,
 * MPI_Comm_create from MPI_Group_incl / MPI_Group_excl groups, the group
 * calls, names, MPI_COMM_SELF, MPI_Comm_free, and a 2D process grid.
 *
 * Only functions from the rcc MPI subset are used.  Runs at any size >= 1.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "comms"
#define MAXP 64 /* largest world size this test supports */

static int rank, nprocs, nfail, nprinted;

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

static void check_int(const char* what, int got, int want) {
  if (got != want) fail("%s: got %d, expected %d", what, got, want);
}

static int index_of(const int* v, int n, int x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

/* The communicator's group, translated to MPI_COMM_WORLD ranks, must be mem. */
static void check_group(MPI_Comm comm, const int* mem, int nm, int me, const char* what) {
  MPI_Group g, wg;
  int idx[MAXP], tr[MAXP], v;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(g, &v);
  if (v != nm) fail("%s: MPI_Group_size %d, expected %d", what, v, nm);
  MPI_Group_rank(g, &v);
  if (v != me) fail("%s: MPI_Group_rank %d, expected %d", what, v, me);
  for (int i = 0; i < nm; i++) idx[i] = i;
  MPI_Group_translate_ranks(g, nm, idx, wg, tr);
  for (int i = 0; i < nm; i++)
    if (tr[i] != mem[i]) {
      fail("%s: rank %d translates to world rank %d, expected %d", what, i, tr[i], mem[i]);
      break;
    }
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  if (g != MPI_GROUP_NULL || wg != MPI_GROUP_NULL) fail("%s: MPI_Group_free did not set MPI_GROUP_NULL", what);
}

/* Check comm against its expected members (world ranks in comm rank order)
 * and use it: collectives and point-to-point must work on every new one. */
static void exercise(MPI_Comm comm, const int* mem, int nm, const char* what) {
  int sz = -1, me = -1, myidx = index_of(mem, nm, rank), v, all[MAXP], got, next, prev;
  long sum = 0, lsum = -1;
  MPI_Status st;
  MPI_Request rq[2];
  MPI_Comm_size(comm, &sz);
  MPI_Comm_rank(comm, &me);
  if (sz != nm || me != myidx) {
    fail("%s: size %d rank %d, expected size %d rank %d", what, sz, me, nm, myidx);
    return; /* the rest would deadlock or cascade */
  }
  check_group(comm, mem, nm, me, what);

  for (int i = 0; i < nm; i++) sum += mem[i];
  long mine = rank;
  MPI_Allreduce(&mine, &lsum, 1, MPI_LONG, MPI_SUM, comm);
  if (lsum != sum) fail("%s: Allreduce sum of world ranks %ld, expected %ld", what, lsum, sum);
  for (int root = 0; root < nm; root++) { /* roots are ranks in comm, not in world */
    v = me == root ? rank : -1;
    MPI_Bcast(&v, 1, MPI_INT, root, comm);
    if (v != mem[root]) {
      fail("%s: Bcast from root %d gave %d, expected %d", what, root, v, mem[root]);
      break;
    }
  }
  MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, comm);
  for (int i = 0; i < nm; i++)
    if (all[i] != mem[i]) {
      fail("%s: Allgather slot %d is %d, expected %d", what, i, all[i], mem[i]);
      break;
    }
  v = 1;
  MPI_Scan(&v, &got, 1, MPI_INT, MPI_SUM, comm);
  if (got != me + 1) fail("%s: Scan gave %d, expected %d", what, got, me + 1);
  MPI_Iallreduce(&me, &got, 1, MPI_INT, MPI_MAX, comm, &rq[0]);
  MPI_Ibarrier(comm, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  if (got != nm - 1) fail("%s: Iallreduce max of ranks %d, expected %d", what, got, nm - 1);

  /* Ring exchange; the status must name the source by its rank in comm.
   * (ANY_SOURCE with a fixed tag: a fast neighbour may already be sending
   * the tag-12 message below.) */
  next = (me + 1) % nm;
  prev = (me + nm - 1) % nm;
  MPI_Sendrecv(&rank, 1, MPI_INT, next, 11, &got, 1, MPI_INT, MPI_ANY_SOURCE, 11, comm, &st);
  if (got != mem[prev] || st.MPI_SOURCE != prev || st.MPI_TAG != 11)
    fail("%s: ring got %d from %d tag %d, expected %d from %d tag 11", what, got, st.MPI_SOURCE, st.MPI_TAG, mem[prev],
         prev);
  /* The wildcard receive above could otherwise take the next ring's message (tag 12) of a
   * rank that is already ahead: both are legal matches, so the phases are kept apart. */
  MPI_Barrier(comm);
  /* And the other way round with a synchronous send. */
  MPI_Irecv(&got, 1, MPI_INT, next, MPI_ANY_TAG, comm, &rq[0]);
  MPI_Ssend(&rank, 1, MPI_INT, prev, 12, comm);
  MPI_Wait(&rq[0], &st);
  if (got != mem[next] || st.MPI_SOURCE != next || st.MPI_TAG != 12)
    fail("%s: reverse ring got %d tag %d, expected %d tag 12", what, got, st.MPI_TAG, mem[next]);
  MPI_Barrier(comm);
}

static void free_comm(MPI_Comm* c, const char* what) {
  if (*c == MPI_COMM_NULL) return;
  MPI_Comm_free(c);
  if (*c != MPI_COMM_NULL) fail("%s: MPI_Comm_free did not set MPI_COMM_NULL", what);
}

/* Split parent (members pm, world ranks in parent rank order) with per-parent
 * rank color/key; the standard orders each new communicator by key, ties by
 * rank in the parent; MPI_UNDEFINED yields MPI_COMM_NULL.  Fills mem/nm. */
static MPI_Comm split_check(MPI_Comm parent, const int* pm, int np, const int* color, const int* key, const char* what,
                            int* mem, int* nm) {
  MPI_Comm c;
  int me = index_of(pm, np, rank), p[MAXP], n = 0;
  MPI_Comm_split(parent, color[me], key[me], &c);
  *nm = 0;
  if (color[me] == MPI_UNDEFINED) {
    if (c != MPI_COMM_NULL) {
      fail("%s: MPI_UNDEFINED color did not give MPI_COMM_NULL", what);
      free_comm(&c, what);
    }
    return MPI_COMM_NULL;
  }
  if (c == MPI_COMM_NULL) {
    fail("%s: got MPI_COMM_NULL", what);
    return c;
  }
  for (int q = 0; q < np; q++) /* insertion sort by (key, parent rank) */
    if (color[q] == color[me]) {
      int i = n++;
      while (i > 0 && key[p[i - 1]] > key[q]) {
        p[i] = p[i - 1];
        i--;
      }
      p[i] = q;
    }
  for (int i = 0; i < n; i++) mem[i] = pm[p[i]];
  *nm = n;
  exercise(c, mem, n, what);
  return c;
}

static int world[MAXP]; /* 0..nprocs-1 */

static void test_splits(void) {
  int color[MAXP], key[MAXP], mem[MAXP], mem2[MAXP], nm, nm2;
  MPI_Comm a, b;
  /* parity, keys reversing the order */
  for (int r = 0; r < nprocs; r++) {
    color[r] = r % 2;
    key[r] = -r;
  }
  a = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(rank%2, key=-rank)", mem, &nm);
  /* nested: split that communicator again by its own rank parity */
  int c2[MAXP], k2[MAXP];
  for (int i = 0; i < nm; i++) {
    c2[i] = i % 2;
    k2[i] = 0;
  }
  b = split_check(a, mem, nm, c2, k2, "split of split(rank%2)", mem2, &nm2);
  free_comm(&b, "nested split");
  free_comm(&a, "split(rank%2)");
  /* mod 3, keys in order */
  for (int r = 0; r < nprocs; r++) {
    color[r] = r % 3;
    key[r] = r;
  }
  a = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(rank%3, key=rank)", mem, &nm);
  free_comm(&a, "split(rank%3)");
  /* mod 3, all keys equal: order falls back to the parent rank */
  for (int r = 0; r < nprocs; r++) key[r] = 0;
  a = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(rank%3, key=0)", mem, &nm);
  free_comm(&a, "split(rank%3, key=0)");
  /* MPI_UNDEFINED for every rank = 3 mod 4; keys tie in groups of three */
  for (int r = 0; r < nprocs; r++) {
    color[r] = r % 4 == 3 ? MPI_UNDEFINED : 5;
    key[r] = (nprocs - r) / 3;
  }
  a = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(UNDEFINED if rank%4==3, tied keys)", mem, &nm);
  free_comm(&a, "split(UNDEFINED)");
}

static void test_split_type(void) {
  MPI_Comm c;
  /* All ranks of this test run on one host, so the shared-memory domain is
   * the whole world; key = rank keeps the world order. */
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
  if (c == MPI_COMM_NULL) {
    fail("MPI_Comm_split_type(SHARED) gave MPI_COMM_NULL");
    return;
  }
  exercise(c, world, nprocs, "split_type(SHARED)");
  free_comm(&c, "split_type(SHARED)");
  /* MPI_UNDEFINED as split_type gives MPI_COMM_NULL on the ranks using it. */
  MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
  if ((rank % 2) != (c == MPI_COMM_NULL)) fail("split_type with MPI_UNDEFINED on odd ranks: wrong MPI_COMM_NULL-ness");
  if (c != MPI_COMM_NULL) {
    int mem[MAXP], nm = 0;
    for (int r = 0; r < nprocs; r += 2) mem[nm++] = r;
    exercise(c, mem, nm, "split_type(SHARED on even ranks)");
  }
  free_comm(&c, "split_type(UNDEFINED)");
}

/* A message on a dup must never match a receive on the parent, even with
 * MPI_ANY_SOURCE / MPI_ANY_TAG and even when it is already waiting. */
static void test_dup(void) {
  MPI_Comm d;
  MPI_Request rq[3];
  MPI_Status st;
  int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs, v = -1, res, a = 1000 + rank, b = 2000 + rank;
  int bw, bd, cnt = -1;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_compare(MPI_COMM_WORLD, d, &res);
  check_int("compare(WORLD, dup)", res, MPI_CONGRUENT);
  exercise(d, world, nprocs, "dup(WORLD)");

  MPI_Isend(&a, 1, MPI_INT, next, 5, d, &rq[0]);
  MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, d, &st); /* the dup message has arrived */
  MPI_Get_count(&st, MPI_INT, &cnt);
  if (st.MPI_SOURCE != prev || st.MPI_TAG != 5 || cnt != 1)
    fail("Probe on dup: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
  MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(&b, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &rq[2]);
  MPI_Wait(&rq[1], &st);
  if (v != 2000 + prev || st.MPI_TAG != 7)
    fail("receive on WORLD matched %d tag %d: dup traffic leaked", v, st.MPI_TAG);
  MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &st);
  if (v != 1000 + prev || st.MPI_TAG != 5)
    fail("receive on dup got %d tag %d, expected %d tag 5", v, st.MPI_TAG, 1000 + prev);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  MPI_Wait(&rq[2], MPI_STATUS_IGNORE);

  /* Nonblocking collectives on both at once, different roots: no mixing. */
  bw = rank == nprocs - 1 ? 77 : -1;
  bd = rank == 0 ? 88 : -1;
  MPI_Ibcast(&bd, 1, MPI_INT, 0, d, &rq[0]);
  MPI_Ibcast(&bw, 1, MPI_INT, nprocs - 1, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  if (bw != 77 || bd != 88) fail("concurrent Ibcast on WORLD and dup gave %d and %d, expected 77 and 88", bw, bd);

  /* a dup of a dup is again congruent, and itself identical */
  MPI_Comm dd;
  MPI_Comm_dup(d, &dd);
  MPI_Comm_compare(d, dd, &res);
  check_int("compare(dup, dup of dup)", res, MPI_CONGRUENT);
  MPI_Comm_compare(dd, dd, &res);
  check_int("compare(dup of dup, itself)", res, MPI_IDENT);
  free_comm(&dd, "dup of dup");
  free_comm(&d, "dup");
}

static void test_compare(void) {
  int color[MAXP], key[MAXP], mem[MAXP], nm, res;
  MPI_Comm c;
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res);
  check_int("compare(WORLD, WORLD)", res, MPI_IDENT);
  MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_SELF, &res);
  check_int("compare(SELF, SELF)", res, MPI_IDENT);
  /* same group, different context: congruent only when the world is one process */
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res);
  check_int("compare(WORLD, SELF)", res, nprocs == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);
  /* same members in reverse order */
  for (int r = 0; r < nprocs; r++) {
    color[r] = 0;
    key[r] = nprocs - r;
  }
  c = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(0, reversed)", mem, &nm);
  MPI_Comm_compare(MPI_COMM_WORLD, c, &res);
  check_int("compare(WORLD, reversed split)", res, nprocs == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
  free_comm(&c, "reversed split");
  /* a proper subset */
  for (int r = 0; r < nprocs; r++) {
    color[r] = r % 2;
    key[r] = r;
  }
  c = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(rank%2)", mem, &nm);
  MPI_Comm_compare(c, MPI_COMM_WORLD, &res);
  check_int("compare(split(rank%2), WORLD)", res, nprocs == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);
  free_comm(&c, "split(rank%2)");
}

/* Create a communicator from group g of parent (members pm) and check it:
 * group members get it with the group's order, others MPI_COMM_NULL. */
static void create_check(MPI_Comm parent, const int* pm, MPI_Group g, const char* what) {
  MPI_Comm c;
  MPI_Group pg;
  int n, idx[MAXP], tr[MAXP], mem[MAXP], me;
  MPI_Group_size(g, &n);
  MPI_Comm_group(parent, &pg);
  for (int i = 0; i < n; i++) idx[i] = i;
  MPI_Group_translate_ranks(g, n, idx, pg, tr);
  for (int i = 0; i < n; i++) mem[i] = pm[tr[i]];
  MPI_Group_free(&pg);
  MPI_Comm_create(parent, g, &c);
  me = index_of(mem, n, rank);
  if (me < 0) {
    if (c != MPI_COMM_NULL) {
      fail("%s: non-member got a communicator", what);
      free_comm(&c, what);
    }
    return;
  }
  if (c == MPI_COMM_NULL) {
    fail("%s: member got MPI_COMM_NULL", what);
    return;
  }
  exercise(c, mem, n, what);
  free_comm(&c, what);
}

static void test_groups(void) {
  MPI_Group wg, gi, ge, gp;
  int incl[MAXP], ni = 0, excl[MAXP], ne = 0, idx[MAXP + 1], tr[MAXP + 1], v, res;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_size(wg, &v);
  check_int("world group size", v, nprocs);
  MPI_Group_rank(wg, &v);
  check_int("world group rank", v, rank);

  /* incl: even ranks in descending order */
  for (int r = (nprocs - 1) / 2 * 2; r >= 0; r -= 2) incl[ni++] = r;
  MPI_Group_incl(wg, ni, incl, &gi);
  MPI_Group_size(gi, &v);
  check_int("incl group size", v, ni);
  MPI_Group_rank(gi, &v);
  check_int("incl group rank (MPI_UNDEFINED if not a member)", v, rank % 2 ? MPI_UNDEFINED : index_of(incl, ni, rank));
  for (int r = 0; r < nprocs; r++) idx[r] = r;
  idx[nprocs] = MPI_PROC_NULL; /* translates to MPI_PROC_NULL (MPI-2.2 on) */
  MPI_Group_translate_ranks(wg, nprocs + 1, idx, gi, tr);
  for (int r = 0; r <= nprocs; r++) {
    int want = r == nprocs ? MPI_PROC_NULL : r % 2 ? MPI_UNDEFINED : index_of(incl, ni, r);
    if (tr[r] != want) {
      fail("translate world rank %d to incl group: %d, expected %d", idx[r], tr[r], want);
      break;
    }
  }
  create_check(MPI_COMM_WORLD, world, gi, "create(incl evens descending)");

  /* excl: ranks 0, 3, 6, ...; for one process that leaves an empty group */
  for (int r = 0; r < nprocs; r += 3) excl[ne++] = r;
  MPI_Group_excl(wg, ne, excl, &ge);
  MPI_Group_size(ge, &v);
  check_int("excl group size", v, nprocs - ne);
  MPI_Group_rank(ge, &v);
  if ((rank % 3 == 0) != (v == MPI_UNDEFINED)) fail("excl group rank %d on world rank %d", v, rank);
  for (int i = 0, r = 0; r < nprocs; r++) /* the remaining ranks keep their order */
    if (r % 3) {
      MPI_Group_translate_ranks(ge, 1, &i, wg, &v);
      if (v != r) fail("excl group rank %d is world rank %d, expected %d", i, v, r);
      i++;
    }
  create_check(MPI_COMM_WORLD, world, ge, "create(excl every third)");

  /* the standard: MPI_Group_incl with n = 0 gives MPI_GROUP_EMPTY */
  MPI_Group_incl(wg, 0, incl, &gp);
  if (gp != MPI_GROUP_EMPTY) fail("MPI_Group_incl with n=0 is not MPI_GROUP_EMPTY");
  MPI_Group_size(MPI_GROUP_EMPTY, &v);
  check_int("size of MPI_GROUP_EMPTY", v, 0);
  MPI_Group_rank(MPI_GROUP_EMPTY, &v);
  check_int("rank in MPI_GROUP_EMPTY", v, MPI_UNDEFINED);
  create_check(MPI_COMM_WORLD, world, MPI_GROUP_EMPTY, "create(MPI_GROUP_EMPTY)");
  if (gp != MPI_GROUP_EMPTY) MPI_Group_free(&gp);

  /* the whole world group: congruent with MPI_COMM_WORLD */
  MPI_Comm cw;
  MPI_Comm_create(MPI_COMM_WORLD, wg, &cw);
  MPI_Comm_compare(MPI_COMM_WORLD, cw, &res);
  check_int("compare(WORLD, create(world group))", res, MPI_CONGRUENT);
  free_comm(&cw, "create(world group)");

  /* create on a sub-communicator: group ranks are relative to that parent */
  int color[MAXP], key[MAXP], mem[MAXP], nm, rev[MAXP];
  MPI_Comm half;
  MPI_Group hg, hr;
  for (int r = 0; r < nprocs; r++) {
    color[r] = r < (nprocs + 1) / 2;
    key[r] = r;
  }
  half = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "split(lower/upper half)", mem, &nm);
  MPI_Comm_group(half, &hg);
  for (int i = 0; i < nm; i++) rev[i] = nm - 1 - i;
  MPI_Group_incl(hg, nm, rev, &hr);
  create_check(half, mem, hr, "create(reversed group of a half)");
  MPI_Group_free(&hr);
  MPI_Group_free(&hg);
  free_comm(&half, "half");

  MPI_Group_free(&gi);
  if (ge != MPI_GROUP_EMPTY) MPI_Group_free(&ge);
  MPI_Group_free(&wg);
  if (gi != MPI_GROUP_NULL || wg != MPI_GROUP_NULL) fail("MPI_Group_free did not set MPI_GROUP_NULL");
}

static void expect_name(MPI_Comm c, const char* want, const char* what) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  memset(name, 'x', sizeof name);
  MPI_Comm_get_name(c, name, &len);
  if (strcmp(name, want) != 0 || len != (int)strlen(want))
    fail("%s: name \"%.*s\" (length %d), expected \"%s\"", what, MPI_MAX_OBJECT_NAME - 1, name, len, want);
}

static void test_names(void) {
  MPI_Comm d;
  expect_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "default name of MPI_COMM_WORLD");
  expect_name(MPI_COMM_SELF, "MPI_COMM_SELF", "default name of MPI_COMM_SELF");
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  /* "If the user has not associated a name with a communicator ...
   * MPI_COMM_GET_NAME will return an empty string" (6.8) */
  expect_name(d, "", "name of a new, unnamed dup");
  MPI_Comm_set_name(d, "conformance dup");
  expect_name(d, "conformance dup", "name set on a dup");
  MPI_Comm_set_name(d, "renamed"); /* a new name replaces the old one */
  expect_name(d, "renamed", "second name set on a dup");
  expect_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "MPI_COMM_WORLD after naming its dup");
  /* names are local: ranks may give different names to one communicator */
  char mine[32];
  snprintf(mine, sizeof mine, "rank %d's name", rank);
  MPI_Comm_set_name(d, mine);
  MPI_Barrier(d);
  expect_name(d, mine, "per-rank name");
  free_comm(&d, "named dup");
  /* predefined communicators may be renamed too */
  MPI_Comm_set_name(MPI_COMM_SELF, "my self");
  expect_name(MPI_COMM_SELF, "my self", "renamed MPI_COMM_SELF");
  MPI_Comm_set_name(MPI_COMM_SELF, "MPI_COMM_SELF");
}

static void test_self(void) {
  int v = -1, got = -1;
  MPI_Comm_size(MPI_COMM_SELF, &v);
  check_int("size of MPI_COMM_SELF", v, 1);
  MPI_Comm_rank(MPI_COMM_SELF, &v);
  check_int("rank in MPI_COMM_SELF", v, 0);
  exercise(MPI_COMM_SELF, &rank, 1, "MPI_COMM_SELF");
  v = rank;
  MPI_Reduce(&v, &got, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_SELF);
  check_int("Reduce on MPI_COMM_SELF", got, rank);
  MPI_Alltoall(&v, 1, MPI_INT, &got, 1, MPI_INT, MPI_COMM_SELF);
  check_int("Alltoall on MPI_COMM_SELF", got, rank);
}

/* A 2D decomposition: rows of C = ceil(sqrt(size)) ranks (the last row may be
 * short), split into row and column communicators as a stencil code would. */
static void test_grid(void) {
  int C = 1, color[MAXP] = {0}, key[MAXP] = {0}, rmem[MAXP], cmem[MAXP], nr, nc, v, me, left, right;
  long total = -1, part = -1, mine = rank;
  MPI_Comm row, col;
  MPI_Status st;
  while (C * C < nprocs) C++;
  for (int r = 0; r < nprocs; r++) {
    color[r] = r / C;
    key[r] = r % C;
  }
  row = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "grid row", rmem, &nr);
  for (int r = 0; r < nprocs; r++) {
    color[r] = r % C;
    key[r] = r / C;
  }
  col = split_check(MPI_COMM_WORLD, world, nprocs, color, key, "grid column", cmem, &nc);
  MPI_Comm_rank(row, &v);
  check_int("rank in grid row = column index", v, rank % C);
  MPI_Comm_rank(col, &v);
  check_int("rank in grid column = row index", v, rank / C);

  /* global sum in two stages: along rows, then down column 0 (which meets
   * every row), then back along rows */
  MPI_Allreduce(&mine, &part, 1, MPI_LONG, MPI_SUM, row);
  if (rank % C == 0) MPI_Allreduce(&part, &total, 1, MPI_LONG, MPI_SUM, col);
  MPI_Bcast(&total, 1, MPI_LONG, 0, row);
  if (total != (long)nprocs * (nprocs - 1) / 2)
    fail("grid two-stage sum %ld, expected %ld", total, (long)nprocs * (nprocs - 1) / 2);
  MPI_Allreduce(&mine, &part, 1, MPI_LONG, MPI_MAX, col);
  if (part != cmem[nc - 1]) fail("grid column max %ld, expected %d", part, cmem[nc - 1]);

  /* non-periodic halo exchange along the row: the ends talk to MPI_PROC_NULL,
   * which completes at once and leaves the buffer alone */
  MPI_Comm_rank(row, &me);
  left = me > 0 ? me - 1 : MPI_PROC_NULL;
  right = me < nr - 1 ? me + 1 : MPI_PROC_NULL;
  v = -5;
  MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &v, 1, MPI_INT, left, 3, row, &st);
  if (left == MPI_PROC_NULL) {
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (v != -5 || st.MPI_SOURCE != MPI_PROC_NULL || st.MPI_TAG != MPI_ANY_TAG || cnt != 0)
      fail("receive from MPI_PROC_NULL: value %d source %d tag %d count %d", v, st.MPI_SOURCE, st.MPI_TAG, cnt);
  } else if (v != rmem[left])
    fail("grid halo from the left: %d, expected %d", v, rmem[left]);
  free_comm(&row, "grid row");
  free_comm(&col, "grid column");
}

int main(int argc, char** argv) {
  int total = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (nprocs > MAXP) {
    if (rank == 0) fprintf(stderr, "FAIL " PROG " rank 0: more than %d ranks unsupported\n", MAXP);
    MPI_Finalize();
    return 1;
  }
  for (int r = 0; r < nprocs; r++) world[r] = r;

  test_names(); /* first: the default names must not have been touched */
  test_self();
  exercise(MPI_COMM_WORLD, world, nprocs, "MPI_COMM_WORLD");
  test_splits();
  test_split_type();
  test_dup();
  test_compare();
  test_groups();
  test_grid();

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
