/*
 * samplesort.c - parallel sample sort (regular sampling) of 64-bit integers.
 *
 * Usage: samplesort [N SEED]          defaults: 200000 12345
 *
 * Input element i (0 <= i < N) is a counter-based pseudo-random value
 * (splitmix64 of SEED and i), so every rank generates its own block from
 * global indices and the input does not depend on the rank count.  One
 * element in eight is squeezed into 0..15 so that many duplicates straddle
 * the splitters; the rest use all 64 bits (values >= 2^63 catch
 * signed/unsigned confusion).
 *
 * Algorithm: local sort; each rank picks up to P regularly spaced samples;
 * rank 0 gathers them (Gather of counts + Gatherv), sorts them, picks P-1
 * splitters and broadcasts them; each rank partitions its data, exchanges
 * counts (Alltoall) and data (Alltoallv), and sorts what it received.
 * Checks: local order, bucket bounds, neighbour boundaries (Sendrecv between
 * consecutive non-empty ranks), total count and value sum (Allreduce).
 *
 * Output (rank 0 only): the total count, an order-dependent checksum
 * sum((i + 1) * value) mod 2^64 (global offsets from an Allgather of local
 * counts), the minimum, the maximum (reduced as order-preserving int64 keys,
 * see below) and every 1000th element of the sorted sequence.  It is a pure function of (N, SEED), whatever the rank
 * count, and ranks left with zero elements (e.g. N = 5 on 8 ranks) are handled. Any internal inconsistency aborts with
 * a message and a non-zero status.
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { SAMPLE_EVERY = 1000, TAG_BOUNDARY = 7 };
static const long long MAX_N = 100000000; /* per-rank counts must fit in int */

static void fail(const char* fmt, ...) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "samplesort: rank %d: ", rank);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
  va_end(args);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* not reached when MPI_Abort works */
}

static void* xcalloc(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size); /* never NULL for count 0 */
  if (!p) fail("out of memory (%zu x %zu bytes)", count, size);
  return p;
}

/* splitmix64 finaliser: a stateless generator indexed by global position. */
static uint64_t input_value(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  z ^= z >> 31;
  return (z & 7) == 0 ? z >> 60 : z;
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* Order-preserving bijection uint64 <-> int64 (flip the top bit), written
 * without implementation-defined conversions. */
static int64_t signed_key(uint64_t v) {
  const uint64_t half = UINT64_C(1) << 63;
  return v >= half ? (int64_t)(v - half) : (int64_t)v - INT64_MAX - 1;
}

static uint64_t unsigned_value(int64_t k) {
  const uint64_t half = UINT64_C(1) << 63;
  return k >= 0 ? (uint64_t)k + half : (uint64_t)(k + INT64_MAX + 1);
}

/* Balanced block distribution of n items over p ranks. */
static long long block_start(long long n, int p, int k) { return k * (n / p) + (k < n % p ? k : n % p); }

/* Index of the first element of sorted[0..n) greater than key. */
static int upper_bound(const uint64_t* sorted, int n, uint64_t key) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (sorted[mid] <= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Exclusive prefix sums of counts into displs; fails if they overflow int. */
static void prefix_offsets(const int* counts, int* displs, int n) {
  long long total = 0;
  for (int i = 0; i < n; i++) {
    displs[i] = (int)total;
    total += counts[i];
    if (counts[i] < 0 || total > INT32_MAX) fail("bad count %d at position %d", counts[i], i);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Rank 0 parses the arguments; everyone else learns them by Bcast. */
  uint64_t params[2] = {200000, 12345};
  if (rank == 0) {
    if (argc != 1 && argc != 3) fail("usage: samplesort [N SEED]");
    if (argc == 3) {
      char *end1 = NULL, *end2 = NULL;
      long long n = strtoll(argv[1], &end1, 10);
      params[1] = strtoull(argv[2], &end2, 10);
      if (*argv[1] == '\0' || *end1 != '\0' || n < 1 || n > MAX_N || *argv[2] == '\0' || *end2 != '\0')
        fail("bad arguments '%s' '%s' (need 1 <= N <= %lld)", argv[1], argv[2], MAX_N);
      params[0] = (uint64_t)n;
    }
  }
  MPI_Bcast(params, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  const long long n_total = (long long)params[0];
  const uint64_t seed = params[1];

  /* Rank 0 hands out the input ranges (as a master would); each rank
   * double-checks its range against the same formula. */
  long long my_range[2];
  long long* ranges = rank == 0 ? xcalloc((size_t)size * 2, sizeof(long long)) : NULL;
  if (rank == 0)
    for (int r = 0; r < size; r++) {
      ranges[2 * r] = block_start(n_total, size, r);
      ranges[2 * r + 1] = block_start(n_total, size, r + 1) - ranges[2 * r];
    }
  MPI_Scatter(ranges, 2, MPI_LONG_LONG, my_range, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (my_range[0] != block_start(n_total, size, rank) ||
      my_range[0] + my_range[1] != block_start(n_total, size, rank + 1))
    fail("scattered range [%lld, +%lld) is wrong", my_range[0], my_range[1]);
  const int n_local = (int)my_range[1];

  uint64_t* local = xcalloc((size_t)n_local, sizeof(uint64_t));
  uint64_t local_sum = 0; /* order-independent, to detect lost elements */
  for (int i = 0; i < n_local; i++) {
    local[i] = input_value(seed, (uint64_t)(my_range[0] + i));
    local_sum += local[i];
  }
  uint64_t input_sum;
  MPI_Allreduce(&local_sum, &input_sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);

  MPI_Barrier(MPI_COMM_WORLD);
  const double start_time = MPI_Wtime();
  qsort(local, (size_t)n_local, sizeof(uint64_t), compare_u64);

  /* Regular sampling: up to `size` evenly spaced samples per rank. */
  int n_samples = n_local < size ? n_local : size;
  uint64_t* samples = xcalloc((size_t)n_samples, sizeof(uint64_t));
  for (int k = 0; k < n_samples; k++) samples[k] = local[(long long)k * n_local / n_samples];
  int *sample_counts = NULL, *sample_displs = NULL;
  uint64_t* all_samples = NULL;
  if (rank == 0) {
    sample_counts = xcalloc((size_t)size, sizeof(int));
    sample_displs = xcalloc((size_t)size, sizeof(int));
  }
  MPI_Gather(&n_samples, 1, MPI_INT, sample_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int n_all_samples = 0;
  if (rank == 0) {
    prefix_offsets(sample_counts, sample_displs, size);
    n_all_samples = sample_displs[size - 1] + sample_counts[size - 1];
    all_samples = xcalloc((size_t)n_all_samples, sizeof(uint64_t));
  }
  MPI_Gatherv(samples, n_samples, MPI_UINT64_T, all_samples, sample_counts, sample_displs, MPI_UINT64_T, 0,
              MPI_COMM_WORLD);

  /* size - 1 splitters; bucket b receives values in (splitter[b-1], splitter[b]]. */
  uint64_t* splitters = xcalloc((size_t)size, sizeof(uint64_t));
  if (rank == 0) {
    if (n_all_samples < 1) fail("no samples gathered for N = %lld", n_total);
    qsort(all_samples, (size_t)n_all_samples, sizeof(uint64_t), compare_u64);
    for (int k = 1; k < size; k++) splitters[k - 1] = all_samples[(long long)k * n_all_samples / size];
  }
  MPI_Bcast(splitters, size - 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  int* send_counts = xcalloc((size_t)size, sizeof(int));
  int* send_displs = xcalloc((size_t)size, sizeof(int));
  int* recv_counts = xcalloc((size_t)size, sizeof(int));
  int* recv_displs = xcalloc((size_t)size, sizeof(int));
  int begin = 0;
  for (int b = 0; b < size; b++) {
    int end = b < size - 1 ? upper_bound(local, n_local, splitters[b]) : n_local;
    if (end < begin) fail("splitters not sorted at bucket %d", b);
    send_counts[b] = end - begin;
    begin = end;
  }
  prefix_offsets(send_counts, send_displs, size);
  MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
  prefix_offsets(recv_counts, recv_displs, size);
  const int n_mine = recv_displs[size - 1] + recv_counts[size - 1];
  uint64_t* mine = xcalloc((size_t)n_mine, sizeof(uint64_t));
  MPI_Alltoallv(local, send_counts, send_displs, MPI_UINT64_T, mine, recv_counts, recv_displs, MPI_UINT64_T,
                MPI_COMM_WORLD);
  qsort(mine, (size_t)n_mine, sizeof(uint64_t), compare_u64);
  if (MPI_Wtime() < start_time) fail("MPI_Wtime went backwards");

  /* Every received value must lie in this rank's bucket, in order. */
  uint64_t mine_sum = 0;
  for (int i = 0; i < n_mine; i++) {
    if ((rank > 0 && mine[i] <= splitters[rank - 1]) || (rank < size - 1 && mine[i] > splitters[rank]))
      fail("value %" PRIu64 " outside bucket %d", mine[i], rank);
    if (i > 0 && mine[i - 1] > mine[i]) fail("local data unsorted at %d", i);
    mine_sum += mine[i];
  }
  long long count_local = n_mine, count_total;
  uint64_t output_sum;
  MPI_Allreduce(&count_local, &count_total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mine_sum, &output_sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (count_total != n_total || output_sum != input_sum)
    fail("sorted %lld elements (sum %" PRIu64 "), expected %lld (sum %" PRIu64 ")", count_total, output_sum, n_total,
         input_sum);

  /* Global offsets of each rank's data (no MPI_Exscan: Allgather counts). */
  int* all_counts = xcalloc((size_t)size, sizeof(int));
  int* all_offsets = xcalloc((size_t)size, sizeof(int));
  MPI_Allgather(&n_mine, 1, MPI_INT, all_counts, 1, MPI_INT, MPI_COMM_WORLD);
  if (all_counts[rank] != n_mine) fail("Allgather returned count %d for me, have %d", all_counts[rank], n_mine);
  prefix_offsets(all_counts, all_offsets, size);
  const long long offset = all_offsets[rank];

  /* Boundary check: the last value of each non-empty rank goes to the next
   * non-empty rank, which must not start below it.  The pairing is mutual,
   * so empty ranks simply take no part (PROC_NULL on both sides). */
  int prev = MPI_PROC_NULL, next = MPI_PROC_NULL;
  if (n_mine > 0) {
    for (int r = rank - 1; r >= 0 && prev == MPI_PROC_NULL; r--)
      if (all_counts[r] > 0) prev = r;
    for (int r = rank + 1; r < size && next == MPI_PROC_NULL; r++)
      if (all_counts[r] > 0) next = r;
  }
  uint64_t my_last = n_mine > 0 ? mine[n_mine - 1] : 0, prev_last = 0;
  MPI_Sendrecv(&my_last, 1, MPI_UINT64_T, next, TAG_BOUNDARY, &prev_last, 1, MPI_UINT64_T, prev, TAG_BOUNDARY,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (prev != MPI_PROC_NULL && prev_last > mine[0])
    fail("rank %d ends with %" PRIu64 " > my first %" PRIu64, prev, prev_last, mine[0]);

  /* Order-dependent checksum; unsigned arithmetic wraps mod 2^64. */
  uint64_t weighted = 0, checksum = 0;
  for (int i = 0; i < n_mine; i++) weighted += (uint64_t)(offset + i + 1) * mine[i];
  MPI_Reduce(&weighted, &checksum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);

  /* Min/max travel as order-preserving signed keys: unsigned MPI_MIN/MAX
   * is broken in the reference implementations (MPICH 4.0.2 compares all
   * unsigned types as signed, pmodels/mpich#6083; Open MPI 4.1.2-4.1.4
   * does so for MPI_UNSIGNED_LONG, open-mpi/ompi#10525). */
  int64_t local_min = signed_key(n_mine > 0 ? mine[0] : UINT64_MAX);
  int64_t local_max = signed_key(n_mine > 0 ? mine[n_mine - 1] : 0);
  int64_t min_key, max_key;
  MPI_Allreduce(&local_min, &min_key, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&local_max, &max_key, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  const uint64_t global_min = unsigned_value(min_key);
  const uint64_t global_max = unsigned_value(max_key);
  if (n_mine > 0 && (mine[0] < global_min || mine[n_mine - 1] > global_max))
    fail("global min/max %" PRIu64 "/%" PRIu64 " exclude my range %" PRIu64 "..%" PRIu64, global_min, global_max,
         mine[0], mine[n_mine - 1]);

  /* Elements at global positions 0, 1000, 2000, ... gathered to rank 0. */
  long long first = (offset + SAMPLE_EVERY - 1) / SAMPLE_EVERY * SAMPLE_EVERY - offset;
  int n_picks = first < n_mine ? (int)((n_mine - 1 - first) / SAMPLE_EVERY + 1) : 0;
  uint64_t* picks = xcalloc((size_t)n_picks, sizeof(uint64_t));
  for (int k = 0; k < n_picks; k++) picks[k] = mine[first + (long long)k * SAMPLE_EVERY];
  int *pick_counts = NULL, *pick_displs = NULL;
  uint64_t* all_picks = NULL;
  int n_all_picks = 0;
  if (rank == 0) {
    pick_counts = xcalloc((size_t)size, sizeof(int));
    pick_displs = xcalloc((size_t)size, sizeof(int));
  }
  MPI_Gather(&n_picks, 1, MPI_INT, pick_counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    prefix_offsets(pick_counts, pick_displs, size);
    n_all_picks = pick_displs[size - 1] + pick_counts[size - 1];
    if (n_all_picks != (n_total - 1) / SAMPLE_EVERY + 1)
      fail("gathered %d picks, expected %lld", n_all_picks, (n_total - 1) / SAMPLE_EVERY + 1);
    all_picks = xcalloc((size_t)n_all_picks, sizeof(uint64_t));
  }
  MPI_Gatherv(picks, n_picks, MPI_UINT64_T, all_picks, pick_counts, pick_displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    if (all_picks[0] != global_min) fail("element 0 is %" PRIu64 ", minimum is %" PRIu64, all_picks[0], global_min);
    printf("count %lld\n", count_total);
    printf("checksum %016" PRIx64 "\n", checksum);
    printf("min %" PRIu64 "\n", global_min);
    printf("max %" PRIu64 "\n", global_max);
    for (int k = 0; k < n_all_picks; k++) {
      if (k > 0 && all_picks[k - 1] > all_picks[k]) fail("picks out of order at %d", k);
      printf("element %lld %" PRIu64 "\n", (long long)k * SAMPLE_EVERY, all_picks[k]);
    }
    if (fflush(stdout) != 0) fail("cannot write output");
  }

  free(all_picks);
  free(pick_displs);
  free(pick_counts);
  free(picks);
  free(all_offsets);
  free(all_counts);
  free(mine);
  free(recv_displs);
  free(recv_counts);
  free(send_displs);
  free(send_counts);
  free(splitters);
  free(all_samples);
  free(sample_displs);
  free(sample_counts);
  free(samples);
  free(local);
  free(ranges);
  MPI_Finalize();
  return 0;
}
