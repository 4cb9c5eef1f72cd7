// A 2D process grid, as an HPC solver lays out its ranks: the world is split into rows and
// columns (rows * cols == size, as square as possible: 4 ranks 2x2, 6 ranks 2x3, a prime 1xN).
// Each row reduces a vector (allreduce), each column takes its first rank's vector (broadcast),
// and the ranks of a row exchange blocks of different lengths (alltoallv). Every result is
// checked exactly; each rank prints one line, rank 0 then "process_grid: OK" when all passed.
// Exits non-zero on any mismatch or error.
//
//   rccrun -n 6 ./process_grid
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "rcc/rcc.hpp"

namespace {

struct Grid {
  int rows = 1;
  int cols = 1;
};

// The most square rows x cols == size, rows <= cols.
Grid grid_for(int size) {
  Grid grid{1, size};
  for (int rows = 1; rows * rows <= size; ++rows) {
    if (size % rows == 0) grid = Grid{rows, size / rows};
  }
  return grid;
}

// What world rank `source` sends to rank `dest` of its row: 1 to 4 elements, varied by both.
std::size_t block_length(int source, int dest) { return 1 + static_cast<std::size_t>(source * 3 + dest * 5) % 4; }
std::int64_t block_value(int source, int dest, std::size_t i) {
  return std::int64_t{source} * 1000000 + std::int64_t{dest} * 1000 + static_cast<std::int64_t>(i);
}

constexpr std::size_t kLength = 1000;  // elements of the reduced and broadcast vectors
constexpr std::int64_t kGap = -7;      // between received blocks: never written

class Checks {
 public:
  void expect(bool ok, const std::string& what) {
    if (!ok && failures_++ == 0) first_ = what;
  }
  int failures() const { return failures_; }
  const std::string& first() const { return first_; }

 private:
  int failures_ = 0;
  std::string first_;
};

// Rows: allreduce of world rank * 10000 + i, in int64 (sum) and double (max).
void row_allreduce(const rcc::Communicator& row, int world_rank, int my_row, const Grid& grid, Checks& checks) {
  std::vector<std::int64_t> values(kLength), sums(kLength);
  std::vector<double> maxima(kLength);
  for (std::size_t i = 0; i < kLength; ++i) {
    values[i] = std::int64_t{world_rank} * 10000 + static_cast<std::int64_t>(i);
    maxima[i] = static_cast<double>(values[i]);
  }
  row.allreduce(values, sums, rcc::Op::Sum);
  row.allreduce(maxima, rcc::Op::Max);  // in place
  // The row holds world ranks my_row * cols + c for c in [0, cols).
  const std::int64_t first = std::int64_t{my_row} * grid.cols, cols = grid.cols;
  const std::int64_t rank_sum = cols * first + cols * (cols - 1) / 2;
  for (std::size_t i = 0; i < kLength; ++i) {
    const auto index = static_cast<std::int64_t>(i);
    checks.expect(sums[i] == rank_sum * 10000 + cols * index, "row allreduce sum at " + std::to_string(i));
    checks.expect(maxima[i] == static_cast<double>((first + cols - 1) * 10000 + index),
                  "row allreduce max at " + std::to_string(i));
  }
}

// Columns: the column's rank 0 (grid row 0) broadcasts its column index pattern.
void column_broadcast(const rcc::Communicator& column, int my_col, Checks& checks) {
  std::vector<std::int32_t> data(kLength, -1);
  if (column.rank() == 0) {
    for (std::size_t i = 0; i < kLength; ++i) data[i] = my_col * 100000 + static_cast<std::int32_t>(i);
  }
  rcc::Request pending = column.ibroadcast(data, 0);
  pending.wait();
  for (std::size_t i = 0; i < kLength; ++i) {
    checks.expect(data[i] == my_col * 100000 + static_cast<std::int32_t>(i),
                  "column broadcast at " + std::to_string(i));
  }
}

// Rows: alltoallv with block lengths that depend on sender and receiver; received blocks are one
// element apart, and the gaps must stay untouched. Returns the elements received.
std::size_t row_alltoallv(const rcc::Communicator& row, int my_row, const Grid& grid, Checks& checks) {
  const auto ranks = static_cast<std::size_t>(row.size());
  const int me = row.rank();
  auto world_rank_of = [&](int col) { return my_row * grid.cols + col; };
  std::vector<std::size_t> sendcounts(ranks), sdispls(ranks), recvcounts(ranks), rdispls(ranks);
  std::size_t sent = 0, received = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const int peer = static_cast<int>(r);
    sendcounts[r] = block_length(world_rank_of(me), world_rank_of(peer));
    sdispls[r] = sent;
    sent += sendcounts[r];
    recvcounts[r] = block_length(world_rank_of(peer), world_rank_of(me));
    rdispls[r] = received + r;  // one gap element after each block
    received += recvcounts[r];
  }
  std::vector<std::int64_t> out(sent), in(received + ranks, kGap);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < sendcounts[r]; ++i) {
      out[sdispls[r] + i] = block_value(world_rank_of(me), world_rank_of(static_cast<int>(r)), i);
    }
  }
  row.alltoallv(out, sendcounts, sdispls, in, recvcounts, rdispls);
  std::vector<bool> in_a_block(in.size(), false);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < recvcounts[r]; ++i) {
      in_a_block[rdispls[r] + i] = true;
      checks.expect(in[rdispls[r] + i] == block_value(world_rank_of(static_cast<int>(r)), world_rank_of(me), i),
                    "alltoallv block " + std::to_string(r) + " element " + std::to_string(i));
    }
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!in_a_block[i]) checks.expect(in[i] == kGap, "alltoallv wrote the gap at " + std::to_string(i));
  }
  return received;
}

int run() {
  rcc::Communicator world = rcc::Communicator::init();
  const Grid grid = grid_for(world.size());
  const int my_row = world.rank() / grid.cols, my_col = world.rank() % grid.cols;
  // Row communicators ordered by column, column communicators by row.
  rcc::Communicator row = world.split(my_row, my_col);
  rcc::Communicator column = world.split(my_col, my_row);

  Checks checks;
  checks.expect(row.size() == grid.cols && row.rank() == my_col, "row communicator rank/size");
  checks.expect(column.size() == grid.rows && column.rank() == my_row, "column communicator rank/size");
  row_allreduce(row, world.rank(), my_row, grid, checks);
  column_broadcast(column, my_col, checks);
  const std::size_t received = row_alltoallv(row, my_row, grid, checks);

  std::printf(
      "rank %d of %d: grid %dx%d at (%d,%d) over %s: row allreduce, column broadcast, alltoallv of %zu "
      "elements: %s%s\n",
      world.rank(), world.size(), grid.rows, grid.cols, my_row, my_col, std::string(world.transport()).c_str(),
      received, checks.failures() == 0 ? "ok" : "FAILED at ", checks.first().c_str());
  std::fflush(stdout);
  // Rank 0 reports for everyone.
  int failures = checks.failures();
  world.allreduce(std::span(&failures, 1), rcc::Op::Sum);
  if (world.rank() == 0 && failures == 0) std::printf("process_grid: OK\n");
  if (world.rank() == 0 && failures != 0) std::printf("process_grid: %d mismatches\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const rcc::Error& error) {
    std::fprintf(stderr, "process_grid: rcc error: %s\n", error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "process_grid: %s\n", error.what());
  }
  return 1;
}
