/*
 * heat2d.c - 2D heat equation (Jacobi iteration) on a 2D process grid.
 *
 * Usage: heat2d [NX NY ITERS]        defaults: 64 48 200
 *
 * The global grid has NY rows and NX columns.  Its outermost ring of points
 * is a fixed (Dirichlet) boundary: the top edge is hot (100), the left edge
 * ramps linearly from 50 down to 0, the right and bottom edges are cold.
 * The interior starts from a deterministic pattern.  Each iteration replaces
 * every interior point by the mean of its four neighbours.
 *
 * The ranks form a PX x PY grid (the most square factorisation of the size,
 * PX >= PY; PX splits the columns, PY the rows, uneven splits allowed).
 * Row and column communicators come from MPI_Comm_split; halos are swapped
 * with MPI_Sendrecv (MPI_PROC_NULL at the edges), column halos through a
 * strided MPI_Type_vector.  The final grid reaches rank 0 by MPI_Send/Recv.
 *
 * Output (rank 0 only): every REPORT_EVERY iterations and after the last one
 * the max-norm of the update (MPI_Allreduce with MPI_MAX), then the whole
 * final grid, one row per line, every value printed with "%.17g" (exact).
 * Because a point's update reads the same four values in the same order
 * whatever the decomposition, the output is a pure function of
 * (NX, NY, ITERS) and must be byte-identical for every rank count.
 * Requires NX >= max(3, PX) and NY >= max(3, PY).
 * Any internal inconsistency aborts with a message and a non-zero status.
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPORT_EVERY = 20 };
enum { TAG_TO_UP, TAG_TO_DOWN, TAG_TO_LEFT, TAG_TO_RIGHT, TAG_RESULT };

static void fail(const char* fmt, ...) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "heat2d: rank %d: ", rank);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
  va_end(args);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* not reached when MPI_Abort works */
}

static void* xcalloc(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size);
  if (!p) fail("out of memory (%zu x %zu bytes)", count, size);
  return p;
}

/* Balanced block distribution: the first n % p blocks get one extra item. */
static int block_len(int n, int p, int k) { return n / p + (k < n % p); }
static int block_start(int n, int p, int k) { return k * (n / p) + (k < n % p ? k : n % p); }

static int is_boundary(int gx, int gy, int nx, int ny) { return gx == 0 || gy == 0 || gx == nx - 1 || gy == ny - 1; }

/* Initial value of global point (gx, gy); boundary points keep it forever. */
static double initial_value(int gx, int gy, int nx, int ny) {
  if (gy == 0) return 100.0;                                           /* hot top edge */
  if (gx == 0) return 50.0 * (double)(ny - 1 - gy) / (double)(ny - 1); /* ramp */
  if (gx == nx - 1 || gy == ny - 1) return 0.0;                        /* cold edges */
  return (double)((gx * 7 + gy * 13) % 17) / 16.0;                     /* interior pattern */
}

static int parse_positive(const char* text, const char* what) {
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 0 || value > 1000000) fail("bad %s '%s'", what, text);
  return (int)value;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Rank 0 parses the arguments and broadcasts them, as real codes do
   * when only one rank may see the command line or an input file. */
  int params[3] = {64, 48, 200};
  if (rank == 0) {
    if (argc != 1 && argc != 4) fail("usage: heat2d [NX NY ITERS]");
    if (argc == 4) {
      params[0] = parse_positive(argv[1], "NX");
      params[1] = parse_positive(argv[2], "NY");
      params[2] = parse_positive(argv[3], "ITERS");
    }
  }
  MPI_Bcast(params, 3, MPI_INT, 0, MPI_COMM_WORLD);
  const int nx = params[0], ny = params[1], iters = params[2];

  /* Most square factorisation: py is the largest divisor <= sqrt(size). */
  int py = 1;
  for (int d = 1; d * d <= size; d++)
    if (size % d == 0) py = d;
  const int px = size / py;
  if (nx < 3 || ny < 3 || nx < px || ny < py)
    fail("grid %dx%d too small for %dx%d ranks (need >= 3 and >= ranks per axis)", nx, ny, px, py);
  const int cx = rank % px, cy = rank / px;

  /* Row communicator: the ranks sharing cy, ordered by cx (and vice versa),
   * so neighbour ranks inside them are simply cx +- 1 and cy +- 1. */
  MPI_Comm row_comm, col_comm;
  MPI_Comm_split(MPI_COMM_WORLD, cy, cx, &row_comm);
  MPI_Comm_split(MPI_COMM_WORLD, cx, cy, &col_comm);
  int row_rank, row_size, col_rank, col_size;
  MPI_Comm_rank(row_comm, &row_rank);
  MPI_Comm_size(row_comm, &row_size);
  MPI_Comm_rank(col_comm, &col_rank);
  MPI_Comm_size(col_comm, &col_size);
  if (row_rank != cx || row_size != px || col_rank != cy || col_size != py)
    fail("split gave row %d/%d col %d/%d, expected %d/%d and %d/%d", row_rank, row_size, col_rank, col_size, cx, px, cy,
         py);
  const int left = cx > 0 ? cx - 1 : MPI_PROC_NULL;
  const int right = cx < px - 1 ? cx + 1 : MPI_PROC_NULL;
  const int up = cy > 0 ? cy - 1 : MPI_PROC_NULL;
  const int down = cy < py - 1 ? cy + 1 : MPI_PROC_NULL;

  /* Local block with a one-point halo ring: (ly + 2) rows of (lx + 2). */
  const int lx = block_len(nx, px, cx), x0 = block_start(nx, px, cx);
  const int ly = block_len(ny, py, cy), y0 = block_start(ny, py, cy);
  const int stride = lx + 2;
#define AT(grid, i, j) ((grid)[(size_t)(i) * (size_t)stride + (size_t)(j)])
  double* u = xcalloc((size_t)(ly + 2) * (size_t)stride, sizeof(double));
  double* unew = xcalloc((size_t)(ly + 2) * (size_t)stride, sizeof(double));
  for (int i = 1; i <= ly; i++)
    for (int j = 1; j <= lx; j++) AT(u, i, j) = initial_value(x0 + j - 1, y0 + i - 1, nx, ny);

  /* One local column (ly values, stride lx + 2): exercises strided types. */
  MPI_Datatype column_type;
  MPI_Type_vector(ly, 1, stride, MPI_DOUBLE, &column_type);
  MPI_Type_commit(&column_type);

  for (int it = 1; it <= iters; it++) {
    /* Rows are contiguous; send own edge rows, receive neighbours'. */
    MPI_Sendrecv(&AT(u, 1, 1), lx, MPI_DOUBLE, up, TAG_TO_UP, &AT(u, ly + 1, 1), lx, MPI_DOUBLE, down, TAG_TO_UP,
                 col_comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(u, ly, 1), lx, MPI_DOUBLE, down, TAG_TO_DOWN, &AT(u, 0, 1), lx, MPI_DOUBLE, up, TAG_TO_DOWN,
                 col_comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(u, 1, 1), 1, column_type, left, TAG_TO_LEFT, &AT(u, 1, lx + 1), 1, column_type, right, TAG_TO_LEFT,
                 row_comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&AT(u, 1, lx), 1, column_type, right, TAG_TO_RIGHT, &AT(u, 1, 0), 1, column_type, left, TAG_TO_RIGHT,
                 row_comm, MPI_STATUS_IGNORE);

    double max_change = 0.0;
    for (int i = 1; i <= ly; i++) {
      for (int j = 1; j <= lx; j++) {
        double value = AT(u, i, j);
        if (!is_boundary(x0 + j - 1, y0 + i - 1, nx, ny)) /* Fixed summation order => decomposition-independent. */
          value = 0.25 * ((AT(u, i - 1, j) + AT(u, i + 1, j)) + (AT(u, i, j - 1) + AT(u, i, j + 1)));
        double change = value - AT(u, i, j);
        if (change < 0) change = -change;
        if (change > max_change) max_change = change;
        AT(unew, i, j) = value;
      }
    }
    double* swap = u;
    u = unew;
    unew = swap;

    if (it % REPORT_EVERY == 0 || it == iters) {
      double global_change;
      MPI_Allreduce(&max_change, &global_change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (global_change < max_change) fail("MPI_MAX result %.17g below local %.17g", global_change, max_change);
      if (rank == 0) printf("iteration %d max_change %.17g\n", it, global_change);
    }
  }

  /* Gather: rank 0 learns every block's geometry (and checks it against
   * its own computation), then receives the packed blocks. */
  int my_geometry[4] = {x0, y0, lx, ly};
  int* geometry = rank == 0 ? xcalloc((size_t)size * 4, sizeof(int)) : NULL;
  MPI_Gather(my_geometry, 4, MPI_INT, geometry, 4, MPI_INT, 0, MPI_COMM_WORLD);

  double* packed = xcalloc((size_t)lx * (size_t)ly, sizeof(double));
  for (int i = 0; i < ly; i++) memcpy(&packed[(size_t)i * (size_t)lx], &AT(u, i + 1, 1), (size_t)lx * sizeof(double));

  /* Blocks travel to rank 0 by point-to-point messages, received in rank
   * order; Gather(v) is exercised elsewhere (samplesort). */
  int* displs = NULL;
  double* blocks = NULL;
  if (rank == 0) {
    displs = xcalloc((size_t)size, sizeof(int));
    long total = 0;
    for (int r = 0; r < size; r++) {
      const int* g = &geometry[4 * r];
      int rx = r % px, ry = r / px;
      if (g[0] != block_start(nx, px, rx) || g[1] != block_start(ny, py, ry) || g[2] != block_len(nx, px, rx) ||
          g[3] != block_len(ny, py, ry))
        fail("rank %d reported block (%d,%d %dx%d), expected otherwise", r, g[0], g[1], g[2], g[3]);
      displs[r] = (int)total;
      total += (long)g[2] * g[3];
    }
    if (total != (long)nx * ny) fail("blocks cover %ld points, grid has %ld", total, (long)nx * ny);
    blocks = xcalloc((size_t)total, sizeof(double));
    memcpy(blocks, packed, (size_t)lx * (size_t)ly * sizeof(double));
    for (int r = 1; r < size; r++)
      MPI_Recv(&blocks[displs[r]], geometry[4 * r + 2] * geometry[4 * r + 3], MPI_DOUBLE, r, TAG_RESULT, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  } else {
    MPI_Send(packed, lx * ly, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
  }

  if (rank == 0) {
    double* grid = xcalloc((size_t)nx * (size_t)ny, sizeof(double));
    char* filled = xcalloc((size_t)nx * (size_t)ny, 1);
    for (int r = 0; r < size; r++) {
      const int* g = &geometry[4 * r];
      for (int i = 0; i < g[3]; i++)
        for (int j = 0; j < g[2]; j++) {
          size_t at = (size_t)(g[1] + i) * (size_t)nx + (size_t)(g[0] + j);
          if (filled[at]++) fail("point (%d,%d) received twice", g[0] + j, g[1] + i);
          grid[at] = blocks[displs[r] + i * g[2] + j];
        }
    }
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        size_t at = (size_t)y * (size_t)nx + (size_t)x;
        printf("%.17g%c", grid[at], x == nx - 1 ? '\n' : ' ');
      }
    if (fflush(stdout) != 0) fail("cannot write output");
    free(filled);
    free(grid);
  }

  free(blocks);
  free(displs);
  free(packed);
  free(geometry);
  free(unew);
  free(u);
  MPI_Type_free(&column_type);
  MPI_Comm_free(&row_comm);
  MPI_Comm_free(&col_comm);
  MPI_Finalize();
  return 0;
}
