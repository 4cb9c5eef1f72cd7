// mpi-bench: the MPI side of bench/compare. Prints rcc-bench's columns for allreduce, broadcast,
// scan, alltoallv and allgatherv (fp32; sum) and OSU-style latency/bw, so the script parses every
// library alike.
//   mpirun -n 4 mpi-bench -c allreduce,broadcast,scan,alltoallv -b 8 -e 64M -f 4 -n 20 -w 5 --imbalance 0.5
// alltoallv and allgatherv: rcc-bench's sizes and counts (imbalance.h: rank i sends counts[j]
// floats to rank j; rank r's block of allgatherv holds counts[r]); alltoallv out of place only
// (N/A in the in-place columns, as rcc-bench).
// Time = average over iterations of the slowest rank; results are checked (#wrong).
// The C API only: the deprecated C++ bindings do not compile warning-free.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../imbalance.h"
#include "../size_arg.h"

namespace {

struct Options {
  size_t min_bytes = 8, max_bytes = 32u << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  bool iters_given = false;
  bool median = false;   // -S median: the median of per-iteration times (rcc-bench's -S)
  double imbalance = 0;  // --imbalance F: the vector collectives' counts (rcc-bench's --imbalance)
  std::vector<std::string> modes{"allreduce"};
};

bool parse(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return *error = flag + " needs a value", false;
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "-b")
      ok = rccbench::parse_size(value, &o->min_bytes);
    else if (flag == "-e")
      ok = rccbench::parse_size(value, &o->max_bytes);
    else if (flag == "-f")
      ok = (o->factor = std::atof(value)) > 1;
    else if (flag == "-n")
      ok = (o->iters = std::atoi(value)) > 0, o->iters_given = true;
    else if (flag == "-w")
      ok = (o->warmup = std::atoi(value)) >= 0;
    else if (flag == "-S")
      ok = (o->median = std::string(value) == "median") || std::string(value) == "mean";
    else if (flag == "--imbalance") {
      char* end = nullptr;
      o->imbalance = std::strtod(value, &end);
      ok = *end == '\0' && o->imbalance >= 0 && o->imbalance < 1;
    } else if (flag == "-c") {
      o->modes.clear();
      std::string list = value;
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string mode = list.substr(start, comma - start);
        if (mode != "allreduce" && mode != "broadcast" && mode != "scan" && mode != "alltoallv" &&
            mode != "allgatherv" && mode != "latency" && mode != "bw") {
          return *error = "-c: unknown mode '" + mode + "' (allreduce broadcast scan alltoallv allgatherv latency bw)",
                 false;
        }
        o->modes.push_back(mode);
        start = comma + 1;
      }
    } else {
      return *error = "unknown option '" + flag + "'", false;
    }
    if (!ok) return *error = flag + ": invalid value '" + value + "'", false;
  }
  return true;
}

std::vector<size_t> sizes_of(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.min_bytes; s <= o.max_bytes;) {
    sizes.push_back(s);
    size_t next = static_cast<size_t>(s * o.factor);
    s = next > s ? next : s + 1;
  }
  return sizes;
}

// Every rank's average; rank 0 gets the slowest.
double slowest(double mine) {
  double max = 0;
  MPI_Reduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return max;
}
long long total(long long mine) {
  long long sum = 0;
  MPI_Reduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  return sum;
}

float input(int rank, size_t i) { return static_cast<float>((static_cast<size_t>(rank) + 2 * i) % 5 + 1); }

struct Column {
  double time_us;
  long long wrong;
};

// One column: a checked call, warm-up, timed iterations.
template <typename Call, typename Fill, typename Check>
Column measure(const Options& o, Call call, Fill fill, Check check) {
  fill();
  call();
  long long wrong = check();
  for (int i = 0; i < o.warmup; ++i) call();
  MPI_Barrier(MPI_COMM_WORLD);
  double mine = 0;
  if (o.median) {
    std::vector<double> times(static_cast<size_t>(o.iters));
    for (double& t : times) {
      const double begin = MPI_Wtime();
      call();
      t = MPI_Wtime() - begin;
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    mine = times[times.size() / 2] * 1e6;
  } else {
    double start = MPI_Wtime();
    for (int i = 0; i < o.iters; ++i) call();
    mine = (MPI_Wtime() - start) * 1e6 / o.iters;
  }
  return {slowest(mine), total(wrong)};
}

void print_header(const char* name) {
  std::printf("#\n# Collective: %s\n", name);
  std::printf("#%11s  %12s  %8s  %6s  %4s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count", "type", "redop",
              "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
}

void print_row(size_t bytes, size_t count, const char* redop, int root, double factor, Column oop, Column ip) {
  auto bw = [&](double us) { return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0.0; };
  std::printf("%12zu  %12zu  %8s  %6s  %4d  %8.2f  %6.2f  %6.2f  %6lld  %8.2f  %6.2f  %6.2f  %6lld\n", bytes, count,
              "float", redop, root, oop.time_us, bw(oop.time_us), bw(oop.time_us) * factor, oop.wrong, ip.time_us,
              bw(ip.time_us), bw(ip.time_us) * factor, ip.wrong);
  std::fflush(stdout);
}

// A row without an in-place form (alltoallv).
void print_out_of_place_row(size_t bytes, size_t count, double factor, Column oop) {
  auto bw = [&](double us) { return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0.0; };
  std::printf("%12zu  %12zu  %8s  %6s  %4d  %8.2f  %6.2f  %6.2f  %6lld  %8s  %6s  %6s  %6s\n", bytes, count, "float",
              "none", -1, oop.time_us, bw(oop.time_us), bw(oop.time_us) * factor, oop.wrong, "N/A", "N/A", "N/A",
              "N/A");
  std::fflush(stdout);
}

// rcc-bench's payload of moving collectives (bench/data.cc): what rank `source` holds at index.
float payload(int source, size_t index) {
  return static_cast<float>((static_cast<size_t>(source) * 5 + index) % 61 + 1);
}

// One size of a vector collective with rcc-bench's shapes: a block of base = size / 4 / ranks
// floats (at least 1) per rank, spread by --imbalance into counts at contiguous displacements.
struct VectorShape {
  size_t count = 0;  // base * ranks: the size column's elements
  std::vector<size_t> counts, displs;
};
// Every size of the run once (rcc-bench prints a rounded size once).
std::vector<VectorShape> vector_shapes(const Options& o, int ranks) {
  std::vector<VectorShape> shapes;
  const size_t p = static_cast<size_t>(ranks);
  for (size_t requested : sizes_of(o)) {
    const size_t base = std::max<size_t>(1, requested / sizeof(float) / p);
    if (!shapes.empty() && shapes.back().count == base * p) continue;
    VectorShape shape;
    shape.count = base * p;
    shape.counts = rccbench::imbalanced_counts(base, ranks, o.imbalance);
    shape.displs = rccbench::contiguous_displacements(shape.counts);
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

// alltoallv with rcc-bench's shapes: a block of base = size / 4 / ranks floats per peer (at
// least 1), spread by --imbalance; rank i sends counts[j] to rank j and receives counts[i] from
// every rank. The size column is the send side (ranks * base floats), as alltoall's.
long long run_alltoallv(const Options& o, int rank, int ranks) {
  const std::vector<VectorShape> shapes = vector_shapes(o, ranks);
  const size_t p = static_cast<size_t>(ranks);
  const size_t largest_base = shapes.back().count / p;
  std::vector<float> send(largest_base * p), recv(rccbench::max_imbalanced_count(largest_base, o.imbalance) * p);
  std::vector<int> sendcounts(p), sdispls(p), recvcounts(p), rdispls(p);
  long long wrong_total = 0;
  if (rank == 0) print_header("alltoallv");
  for (const VectorShape& shape : shapes) {
    const size_t count = shape.count, bytes = count * sizeof(float);
    const std::vector<size_t>& counts = shape.counts;
    const std::vector<size_t>& displs = shape.displs;
    const size_t mine = counts[static_cast<size_t>(rank)], my_displ = displs[static_cast<size_t>(rank)];
    for (size_t j = 0; j < p; ++j) {
      sendcounts[j] = static_cast<int>(counts[j]);
      sdispls[j] = static_cast<int>(displs[j]);
      recvcounts[j] = static_cast<int>(mine);
      rdispls[j] = static_cast<int>(j * mine);
    }
    auto fill = [&] {
      for (size_t i = 0; i < count; ++i) send[i] = payload(rank, i);
      std::fill(recv.begin(), recv.begin() + static_cast<std::ptrdiff_t>(mine * p), 0.0f);
    };
    auto check = [&] {  // block j: what rank j sent to this rank, its elements from my_displ
      long long wrong = 0;
      for (size_t j = 0; j < p; ++j) {
        for (size_t i = 0; i < mine; ++i) wrong += recv[j * mine + i] != payload(static_cast<int>(j), my_displ + i);
      }
      return wrong;
    };
    Column oop = measure(
        o,
        [&] {
          MPI_Alltoallv(send.data(), sendcounts.data(), sdispls.data(), MPI_FLOAT, recv.data(), recvcounts.data(),
                        rdispls.data(), MPI_FLOAT, MPI_COMM_WORLD);
        },
        fill, check);
    if (rank == 0) print_out_of_place_row(bytes, count, static_cast<double>(ranks - 1) / ranks, oop);
    wrong_total += oop.wrong;
  }
  return wrong_total;
}

// allgatherv with rcc-bench's shapes: rank r's block of counts[r] floats (base = size / 4 / ranks,
// spread by --imbalance) at its prefix sum; the size column is the whole result, as allgather's.
// In place: the block already sits at its displacement (MPI_IN_PLACE).
long long run_allgatherv(const Options& o, int rank, int ranks) {
  const std::vector<VectorShape> shapes = vector_shapes(o, ranks);
  const size_t p = static_cast<size_t>(ranks);
  const size_t largest_base = shapes.back().count / p;
  std::vector<float> send(rccbench::max_imbalanced_count(largest_base, o.imbalance)), recv(largest_base * p);
  std::vector<int> recvcounts(p), displs(p);
  long long wrong_total = 0;
  if (rank == 0) print_header("allgatherv");
  for (const VectorShape& shape : shapes) {
    const size_t count = shape.count, bytes = count * sizeof(float);
    const std::vector<size_t>& counts = shape.counts;
    const std::vector<size_t>& starts = shape.displs;
    for (size_t j = 0; j < p; ++j) {
      recvcounts[j] = static_cast<int>(counts[j]);
      displs[j] = static_cast<int>(starts[j]);
    }
    const size_t mine = counts[static_cast<size_t>(rank)], my_displ = starts[static_cast<size_t>(rank)];
    auto fill = [&](float* block) {
      std::fill(recv.begin(), recv.begin() + static_cast<std::ptrdiff_t>(count), 0.0f);
      for (size_t i = 0; i < mine; ++i) block[i] = payload(rank, i);
    };
    auto check = [&] {  // block j: rank j's payload
      long long wrong = 0;
      for (size_t j = 0; j < p; ++j) {
        for (size_t i = 0; i < counts[j]; ++i) wrong += recv[starts[j] + i] != payload(static_cast<int>(j), i);
      }
      return wrong;
    };
    auto gather = [&](const void* in) {
      MPI_Allgatherv(in, static_cast<int>(mine), MPI_FLOAT, recv.data(), recvcounts.data(), displs.data(), MPI_FLOAT,
                     MPI_COMM_WORLD);
    };
    Column oop = measure(
        o, [&] { gather(send.data()); }, [&] { fill(send.data()); }, check);
    Column ip = measure(
        o, [&] { gather(MPI_IN_PLACE); }, [&] { fill(recv.data() + my_displ); }, check);
    if (rank == 0) print_row(bytes, count, "none", -1, static_cast<double>(ranks - 1) / ranks, oop, ip);
    wrong_total += oop.wrong + ip.wrong;
  }
  return wrong_total;
}

long long run_collective(const Options& o, const std::string& mode, int rank, int ranks) {
  std::vector<size_t> sizes = sizes_of(o);
  const size_t max_count = std::max<size_t>(1, sizes.back() / sizeof(float));
  std::vector<float> send(max_count), recv(max_count);
  long long wrong_total = 0;
  if (rank == 0) print_header(mode.c_str());
  for (size_t requested : sizes) {
    const int count = static_cast<int>(std::max<size_t>(1, requested / sizeof(float)));
    const size_t bytes = count * sizeof(float);
    Column oop{}, ip{};
    if (mode == "allreduce" || mode == "scan") {
      // Sums: allreduce gives every rank ranks 0..P-1; scan (inclusive) gives rank r ranks 0..r, and
      // its busbw is its algbw, as in rcc-bench's scan row.
      const bool scan = mode == "scan";
      const int upto = scan ? rank + 1 : ranks;
      auto fill_send = [&] {
        for (int i = 0; i < count; ++i) send[i] = input(rank, i);
      };
      auto fill_recv = [&] {
        for (int i = 0; i < count; ++i) recv[i] = input(rank, i);
      };
      auto check = [&] {
        long long wrong = 0;
        for (int i = 0; i < count; ++i) {
          float expected = 0;
          for (int r = 0; r < upto; ++r) expected += input(r, i);
          wrong += recv[i] != expected;
        }
        return wrong;
      };
      auto sum = [&](const void* in) {
        if (scan) {
          MPI_Scan(in, recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else {
          MPI_Allreduce(in, recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
      };
      oop = measure(
          o, [&] { sum(send.data()); }, fill_send, check);
      ip = measure(
          o, [&] { sum(MPI_IN_PLACE); }, fill_recv, check);
      if (rank == 0) print_row(bytes, count, "sum", -1, scan ? 1.0 : 2.0 * (ranks - 1) / ranks, oop, ip);
    } else {
      auto fill = [&] {
        for (int i = 0; i < count; ++i) recv[i] = rank == 0 ? input(0, i) : 0;
      };
      auto check = [&] {
        long long wrong = 0;
        for (int i = 0; i < count; ++i) wrong += recv[i] != input(0, i);
        return wrong;
      };
      auto call = [&] { MPI_Bcast(recv.data(), count, MPI_FLOAT, 0, MPI_COMM_WORLD); };
      oop = measure(o, call, fill, check);
      ip = measure(o, call, fill, check);
      if (rank == 0) print_row(bytes, count, "none", 0, 1.0, oop, ip);
    }
    wrong_total += oop.wrong + ip.wrong;
  }
  return wrong_total;
}

// OSU-style, ranks 0 and 1 (the same counts and window as rcc-bench).
void run_p2p(const Options& o, const std::string& mode, int rank) {
  std::vector<size_t> sizes = sizes_of(o);
  const size_t largest = std::max<size_t>(1, sizes.back());
  auto window_for = [](size_t bytes) {
    return static_cast<int>(std::clamp<size_t>((size_t{1} << 30) / std::max<size_t>(bytes, 1), 1, 64));
  };
  size_t recv_bytes = largest;
  for (size_t b : sizes) recv_bytes = std::max(recv_bytes, b * window_for(b));
  std::vector<char> send(largest, 'a'), recv(rank == 1 && mode == "bw" ? recv_bytes : largest);
  if (rank == 0) {
    std::printf("#\n%s", mode == "latency"
                             ? "# OSU-style latency test (ranks 0 and 1)\n# Size       Latency (us)\n"
                             : "# OSU-style bandwidth test (ranks 0 and 1)\n# Size      Bandwidth (MB/s)\n");
  }
  for (size_t bytes : sizes) {
    const bool small = bytes <= 8192;
    const int window = window_for(bytes);
    const size_t per_iteration = std::max<size_t>(1, mode == "bw" ? bytes * window : 2 * bytes);
    const int cap = static_cast<int>(std::clamp<size_t>((size_t{1} << 30) / per_iteration, 2, 1000));
    const int iters = o.iters_given ? o.iters : std::min(small ? (mode == "bw" ? 100 : 1000) : 100, cap);
    const int warmup = std::max(1, iters / 10);
    const int count = static_cast<int>(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = 0, value = 0;
    if (rank <= 1) {
      std::vector<MPI_Request> requests(window);
      std::vector<double> round_trips;
      for (int i = 0; i < warmup + iters; ++i) {
        if (i == warmup) start = MPI_Wtime();
        const double begin = MPI_Wtime();
        if (mode == "latency") {
          if (rank == 0) {
            MPI_Send(send.data(), count, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(recv.data(), count, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            MPI_Recv(recv.data(), count, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(send.data(), count, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
          }
          if (o.median && i >= warmup) round_trips.push_back(MPI_Wtime() - begin);
        } else {
          char ack = 0;
          for (int w = 0; w < window; ++w) {
            if (rank == 0)
              MPI_Isend(send.data(), count, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &requests[w]);
            else
              MPI_Irecv(recv.data() + w * bytes, count, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &requests[w]);
          }
          MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
          if (rank == 0)
            MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          else
            MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
        }
      }
      const double seconds = MPI_Wtime() - start;
      value = mode == "latency" ? seconds * 1e6 / (2.0 * iters)
                                : static_cast<double>(bytes) * window * iters / seconds / 1e6;
      if (!round_trips.empty()) {
        std::nth_element(round_trips.begin(), round_trips.begin() + static_cast<std::ptrdiff_t>(round_trips.size() / 2),
                         round_trips.end());
        value = round_trips[round_trips.size() / 2] * 1e6 / 2.0;
      }
    }
    if (rank == 0) {
      std::printf("%-10zu  %18.2f\n", bytes, value);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options options;
  std::string error;
  if (!parse(argc, argv, &options, &error)) {
    if (rank == 0) std::fprintf(stderr, "mpi-bench: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(library, &length);
    std::string first_line(library, strcspn(library, "\n"));
    std::printf("# mpi-bench  ranks: %d  library: %s\n", ranks, first_line.c_str());
  }
  long long wrong = 0;
  for (const std::string& mode : options.modes) {
    if (mode == "latency" || mode == "bw") {
      if (ranks >= 2) run_p2p(options, mode, rank);
    } else if (mode == "alltoallv") {
      wrong += run_alltoallv(options, rank, ranks);
    } else if (mode == "allgatherv") {
      wrong += run_allgatherv(options, rank, ranks);
    } else {
      wrong += run_collective(options, mode, rank, ranks);
    }
  }
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
