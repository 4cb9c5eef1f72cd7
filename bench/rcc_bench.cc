// rcc-bench: nccl-tests-style collective benchmark (and OSU-style point to point) for rcc.
//   rccrun -n 4 rcc-bench -c allreduce -b 8 -e 256M -f 2
//   rccrun -n 4 rcc-bench -c allreduce,alltoallv --split 2 --imbalance 0.5
// Every rank runs the same sizes; rank 0 prints. Results are checked (#wrong) unless -z 0; the
// exit status is 1 when any element is wrong or any call fails. --split N runs every collective
// on N sub-communicators at once (rcc_comm_split, rank r in group r % N): the rows time world
// rank 0's group, #wrong counts every group. The bench's own control messages (exchange.h)
// always go over the world communicator.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "collectives.h"
#include "exchange.h"
#include "memcpy_limit.h"
#include "options.h"
#include "p2p_modes.h"
#include "report.h"
#include "runner_buffers.h"

namespace rccbench {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What each rank reports to rank 0 after one measurement.
struct RankReport {
  double value = 0;  // time in us, or the p2p figure
  long long wrong = 0;
  int failed = 0;
  int padding = 0;
};

std::vector<size_t> size_list(const Options& options) {
  std::vector<size_t> sizes;
  for (size_t size = options.min_bytes; size <= options.max_bytes;) {
    sizes.push_back(size);
    size_t next = options.increment ? size + options.increment : static_cast<size_t>(size * options.factor);
    if (next <= size) next = size + 1;  // -b 0 or tiny sizes with a small factor
    size = next;
  }
  return sizes;
}

// Where the collectives run: the world, or with --split this rank's group of it.
struct Groups {
  World mine;             // the communicator the collectives are called on (the world without a split)
  int count = 1;          // groups (world rank r is in group r % count)
  int smallest = 1;       // ranks of the smallest group
  int reported_size = 1;  // ranks of group 0, world rank 0's, whose times the rows report
};

class Bench {
 public:
  Bench(const World& world, const Groups& groups, const Options& options)
      : world_(world), groups_(groups), group_(groups.mine), options_(options), start_(now_seconds()) {}

  // Runs one entry of -c; false when the job must stop (a call failed somewhere).
  bool run(const std::string& name) {
    if (name == "barrier") return run_barrier();
    if (is_p2p_mode(name)) return run_p2p(name);
    return run_sized(name);
  }

  bool any_wrong() const { return any_wrong_; }
  const std::vector<Row>& rows() const { return rows_; }

  double average_busbw() const {
    double sum = 0;
    int n = 0;
    for (const Row& row : rows_) {
      if (row.latency_us >= 0 || row.bandwidth_mbs >= 0 || row.collective == "barrier") continue;
      sum += row.out_of_place.busbw, ++n;
      if (row.has_in_place) sum += row.in_place.busbw, ++n;
    }
    return n ? sum / n : 0;
  }

 private:
  // Combines every rank's report at rank 0 (max value over world rank 0's group, wrong counts
  // summed over every group) and tells every rank whether to go on. *combined is meaningful on
  // rank 0.
  bool combine(const RankReport& mine, RankReport* combined) {
    std::vector<RankReport> all(world_.rank == 0 ? world_.ranks : 1);
    int go_on = 1;
    rcc_status_t status = gather_to_root(world_, &mine, sizeof mine, all.data());
    if (world_.rank == 0) {
      RankReport result;
      for (int rank = 0; rank < world_.ranks; ++rank) {
        const RankReport& r = all[static_cast<size_t>(rank)];
        if (rank % groups_.count == 0) result.value = std::max(result.value, r.value);
        result.wrong += r.wrong;
        result.failed |= r.failed;
      }
      if (status != RCC_SUCCESS || result.failed) go_on = 0;
      *combined = result;
      if (result.wrong > 0) any_wrong_ = true;
    }
    if (status == RCC_SUCCESS) status = broadcast_from_root(world_, &go_on, sizeof go_on);
    if (status != RCC_SUCCESS) fail_fast("exchanging results with rank 0", status, sizeof mine);
    return go_on != 0;
  }

  // A failed call leaves peers blocked inside the same collective until RCC_TIMEOUT, and each
  // later exchange would wait that long again: report, abort, exit at once; rccrun then stops the
  // other ranks and returns this status.
  [[noreturn]] void fail_fast(const char* what, rcc_status_t status, size_t bytes) {
    std::fprintf(stderr, "rcc-bench: rank %d: %s (%zu bytes) failed: %s: %s\n", world_.rank, what, bytes,
                 rcc_status_string(status), rcc_last_error());
    std::fflush(stdout);
    std::fflush(stderr);
    if (group_.comm != world_.comm) rcc_comm_abort(group_.comm);
    rcc_comm_abort(world_.comm);
    std::_Exit(1);
  }

  void progress(const std::string& name, size_t bytes, size_t index, size_t total) {
    if (world_.rank != 0) return;
    const double now = now_seconds();
    if (now - start_ < 3 || now - last_progress_ < 2) return;  // short runs stay quiet
    last_progress_ = now;
    std::fprintf(stderr, "rcc-bench: %s %zu bytes (%zu/%zu), %.0f s elapsed\n", name.c_str(), bytes, index + 1, total,
                 now - start_);
  }

  // One column: check run, warm-up, then timed iterations. Returns this rank's report.
  RankReport measure(CollectiveRunner& runner, const Shape& shape, bool in_place) {
    RankReport mine;
    runner.prepare(shape, in_place);
    rcc_status_t status = runner.run(shape, in_place);
    if (status == RCC_SUCCESS) {
      mine.wrong = options_.check ? static_cast<long long>(runner.count_wrong(shape, in_place)) : 0;
      for (int i = 0; i < options_.warmup && status == RCC_SUCCESS; ++i) status = runner.run(shape, in_place);
    }
    if (status == RCC_SUCCESS) status = sync_ranks(world_);
    if (options_.median) {
      // Each iteration timed alone: a rank descheduled once (a time slice, milliseconds) moves the
      // mean of a short run, not its median.
      times_.assign(static_cast<size_t>(options_.iters), 0);
      for (int i = 0; i < options_.iters && status == RCC_SUCCESS; ++i) {
        const double begin = now_seconds();
        status = runner.run(shape, in_place);
        times_[static_cast<size_t>(i)] = now_seconds() - begin;
      }
      std::nth_element(times_.begin(), times_.begin() + static_cast<std::ptrdiff_t>(times_.size() / 2), times_.end());
      mine.value = times_[times_.size() / 2] * 1e6;
    } else {
      const double start = now_seconds();
      for (int i = 0; i < options_.iters && status == RCC_SUCCESS; ++i) status = runner.run(shape, in_place);
      mine.value = (now_seconds() - start) * 1e6 / options_.iters;
    }
    if (status != RCC_SUCCESS) fail_fast(("rcc_" + runner.name()).c_str(), status, shape.bytes);
    return mine;
  }

  Result to_result(const RankReport& combined, const Shape& shape, double bus_factor) const {
    Result r;
    r.time_us = combined.value;
    r.algbw = combined.value > 0 ? static_cast<double>(shape.bytes) / (combined.value * 1e-6) / 1e9 : 0;
    r.busbw = r.algbw * bus_factor;
    r.wrong = options_.check ? combined.wrong : -1;
    return r;
  }

  bool run_sized(const std::string& name) {
    std::unique_ptr<CollectiveRunner> runner =
        make_runner(name, group_, options_.datatype, options_.op, options_.root, options_.imbalance);
    if (name == "sendrecv" && groups_.smallest < 2) {  // every group decides alike
      if (world_.rank == 0) std::printf("# sendrecv: needs 2 or more ranks%s, skipped\n", in_every_group());
      return true;
    }
    std::vector<Shape> shapes;
    for (size_t requested : size_list(options_)) {
      Shape shape = runner->shape_for(requested);
      if (shapes.empty() || shapes.back().bytes != shape.bytes) shapes.push_back(shape);
    }
    if (shapes.empty()) return true;
    rcc_status_t status = runner->reserve(shapes.back());
    RankReport mine;
    if (status != RCC_SUCCESS) {
      std::fprintf(stderr, "rcc-bench: rank %d: cannot allocate buffers for %zu bytes of %s\n", world_.rank,
                   shapes.back().bytes, name.c_str());
      mine.failed = 1;
    }
    RankReport combined;
    if (!combine(mine, &combined)) return false;
    if (world_.rank == 0) {
      std::printf("#\n# Collective: %s\n", name.c_str());
      print_collective_header(stdout);
      std::fflush(stdout);
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape& shape = shapes[i];
      progress(name, shape.bytes, i, shapes.size());
      Row row;
      row.collective = name;
      row.bytes = shape.bytes;
      row.count = shape.count;
      row.type = datatype_name(options_.datatype);
      row.redop = runner->uses_op() ? op_name(options_.op) : "none";
      row.root = runner->uses_root() ? options_.root : -1;
      row.has_in_place = runner->has_in_place();
      if (!combine(measure(*runner, shape, false), &combined)) return false;
      row.out_of_place = to_result(combined, shape, runner->bus_factor());
      if (row.has_in_place) {
        if (!combine(measure(*runner, shape, true), &combined)) return false;
        row.in_place = to_result(combined, shape, runner->bus_factor());
      }
      if (shape.bytes >= kMemcpyFromBytes) {
        if (world_.rank == 0) row.memcpy_gbs = memcpy_limit_.one_core(shape.bytes);
        if (world_.ranks > 1) {
          const rcc_status_t status = memcpy_limit_.everyone(shape.bytes, &row.memcpy_everyone_gbs);
          if (status != RCC_SUCCESS) fail_fast("the memcpy on every rank", status, shape.bytes);
        }
      }
      if (world_.rank == 0) {
        print_collective_row(stdout, row);
        std::fflush(stdout);
      }
      rows_.push_back(row);
    }
    return true;
  }

  bool run_barrier() {
    RankReport mine;
    rcc_status_t status = RCC_SUCCESS;
    for (int i = 0; i < options_.warmup && status == RCC_SUCCESS; ++i) status = rcc_barrier(group_.comm);
    if (status == RCC_SUCCESS) status = sync_ranks(world_);
    const double start = now_seconds();
    for (int i = 0; i < options_.iters && status == RCC_SUCCESS; ++i) status = rcc_barrier(group_.comm);
    mine.value = (now_seconds() - start) * 1e6 / options_.iters;
    if (status != RCC_SUCCESS) fail_fast("rcc_barrier", status, 0);
    RankReport combined;
    if (!combine(mine, &combined)) return false;
    Row row;
    row.collective = "barrier";
    row.type = "none";
    row.redop = "none";
    row.has_in_place = false;
    row.out_of_place.time_us = combined.value;
    row.out_of_place.wrong = 0;
    if (world_.rank == 0) {
      std::printf("#\n");
      print_barrier_row(stdout, row);
      std::fflush(stdout);
    }
    rows_.push_back(row);
    return true;
  }

  // Between ranks 0 and 1 of every group at once.
  bool run_p2p(const std::string& mode) {
    if (groups_.smallest < 2) {
      if (world_.rank == 0) std::printf("#\n# %s: needs 2 ranks%s, skipped\n", mode.c_str(), in_every_group());
      return true;
    }
    const std::vector<size_t> sizes = size_list(options_);
    const size_t largest = std::max<size_t>(sizes.back(), 1);
    // bw: one receive buffer per window slot, so the window shrinks for huge messages (<= 1 GiB).
    const size_t max_window = static_cast<size_t>(options_.window);
    auto window_for = [max_window](size_t bytes) {
      return static_cast<int>(std::clamp<size_t>((size_t{1} << 30) / std::max<size_t>(bytes, 1), 1, max_window));
    };
    size_t recv_bytes = largest;
    if (mode == "bw" && group_.rank == 1) {
      for (size_t bytes : sizes) recv_bytes = std::max(recv_bytes, bytes * window_for(bytes));
    }
    std::vector<unsigned char> send(largest), recv(recv_bytes);
    if (world_.rank == 0) {
      std::printf("#\n");
      print_p2p_header(stdout, mode, window_for(sizes.front()));
      std::fflush(stdout);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t bytes = sizes[i];
      const int window = window_for(bytes);
      progress(mode, bytes, i, sizes.size());
      if (mode == "bw" && i > 0 && window != window_for(sizes[i - 1]) && world_.rank == 0) {
        std::printf("# window %d from here on (receive buffers are capped at 1 GiB)\n", window);
      }
      // OSU's counts (more for small messages), capped at about 1 GiB moved per size.
      const bool small = bytes <= 8192;
      const size_t per_iteration = std::max<size_t>(1, mode == "bw" ? bytes * window : 2 * bytes);
      const int cap = static_cast<int>(std::clamp<size_t>((size_t{1} << 30) / per_iteration, 2, 1000));
      const int iters =
          options_.iters_given ? options_.iters : std::min(small ? (mode == "bw" ? 100 : 1000) : 100, cap);
      const int warmup = options_.warmup_given ? options_.warmup : std::max(1, iters / 10);
      rcc_status_t status = sync_ranks(world_);
      P2pMeasurement measured;
      if (status == RCC_SUCCESS) {
        status =
            mode == "latency"
                ? measure_latency(group_, send.data(), recv.data(), bytes, iters, warmup, options_.median, &measured)
                : measure_bandwidth(group_, send.data(), recv.data(), bytes, window, iters, warmup, &measured);
      }
      RankReport mine;
      mine.value = measured.value;
      mine.wrong = options_.check ? measured.wrong : 0;
      if (status != RCC_SUCCESS) fail_fast(mode == "latency" ? "latency ping-pong" : "bandwidth window", status, bytes);
      RankReport combined;
      if (!combine(mine, &combined)) return false;
      Row row;
      row.collective = mode;
      row.bytes = bytes;
      row.out_of_place.wrong = options_.check ? combined.wrong : -1;
      if (mode == "latency")
        row.latency_us = combined.value;
      else
        row.bandwidth_mbs = combined.value;
      if (world_.rank == 0) {
        print_p2p_row(stdout, row);
        std::fflush(stdout);
        if (combined.wrong > 0)
          std::printf("# %s %zu bytes: %lld wrong bytes received\n", mode.c_str(), bytes, combined.wrong);
      }
      rows_.push_back(row);
    }
    return true;
  }

  const char* in_every_group() const { return groups_.count > 1 ? " in every group" : ""; }

  World world_;  // control messages (exchange.h), rank 0 prints
  Groups groups_;
  World group_;  // the collectives
  Options options_;
  std::vector<Row> rows_;
  bool any_wrong_ = false;
  double start_, last_progress_ = 0;
  std::vector<double> times_;         // -S median: this size's iterations
  MemcpyLimit memcpy_limit_{world_};  // the memcpy rates beside large rows
};

struct RankIdentity {
  int pid = 0;
  char host[60] = {};
};

std::string today() {
  char text[32];
  std::time_t t = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

int run_main(int argc, char** argv) {
  Options options;
  std::string error;
  if (!parse_command_line(argc, argv, &options, &error)) {
    std::fprintf(stderr, "rcc-bench: %s\n%s", error.c_str(), usage());
    return 2;
  }
  if (options.help) {
    std::printf("%s", usage());
    return 0;
  }
  // -a: the algorithm choice is read from RCC_ALGO, so it is set before the communicator exists.
  const std::string algorithm = algorithm_setting(options);
  if (!algorithm.empty()) setenv("RCC_ALGO", algorithm.c_str(), 1);
  Buffer::from_rcc() = options.rcc_buffers;

  World world;
  rcc_status_t status = rcc_comm_init(&world.comm);
  if (status != RCC_SUCCESS) {
    std::fprintf(stderr, "rcc-bench: rcc_comm_init failed: %s: %s\n", rcc_status_string(status), rcc_last_error());
    return 1;
  }
  const char* transport = "?";
  rcc_comm_rank(world.comm, &world.rank);
  rcc_comm_size(world.comm, &world.ranks);
  rcc_comm_transport(world.comm, &transport);
  if (options.split > world.ranks) {
    if (world.rank == 0)
      std::fprintf(stderr, "rcc-bench: --split %d: more groups than the %d ranks\n", options.split, world.ranks);
    rcc_comm_destroy(world.comm);
    return 2;
  }
  Groups groups;
  groups.mine = world;
  groups.count = options.split;
  groups.smallest = world.ranks / options.split;
  groups.reported_size = (world.ranks + options.split - 1) / options.split;
  if (options.root >= groups.smallest) {
    if (world.rank == 0) {
      if (options.split > 1)
        std::fprintf(stderr, "rcc-bench: -r %d: root must be below the %d ranks of the smallest group\n", options.root,
                     groups.smallest);
      else
        std::fprintf(stderr, "rcc-bench: -r %d: root must be below the %d ranks\n", options.root, world.ranks);
    }
    rcc_comm_destroy(world.comm);
    return 2;
  }
  if (options.split > 1) {
    status = rcc_comm_split(world.comm, world.rank % options.split, world.rank, &groups.mine.comm);
    if (status == RCC_SUCCESS) status = rcc_comm_rank(groups.mine.comm, &groups.mine.rank);
    if (status == RCC_SUCCESS) status = rcc_comm_size(groups.mine.comm, &groups.mine.ranks);
    if (status != RCC_SUCCESS) {
      std::fprintf(stderr, "rcc-bench: rank %d: rcc_comm_split into %d groups failed: %s: %s\n", world.rank,
                   options.split, rcc_status_string(status), rcc_last_error());
      rcc_comm_abort(world.comm);
      rcc_comm_destroy(world.comm);
      return 1;
    }
  }

  RankIdentity me;
  me.pid = static_cast<int>(getpid());
  gethostname(me.host, sizeof me.host - 1);
  std::vector<RankIdentity> everyone(world.rank == 0 ? world.ranks : 1);
  status = gather_to_root(world, &me, sizeof me, everyone.data());
  if (status != RCC_SUCCESS) {
    std::fprintf(stderr, "rcc-bench: rank %d: exchanging host names failed: %s: %s\n", world.rank,
                 rcc_status_string(status), rcc_last_error());
    rcc_comm_destroy(world.comm);
    return 1;
  }
  std::string collectives;
  for (const std::string& c : options.collectives) collectives += (collectives.empty() ? "" : ",") + c;
  if (world.rank == 0) {
    std::printf("# rcc-bench %d.%d.%d  collectives: %s\n", RCC_VERSION_MAJOR, RCC_VERSION_MINOR, RCC_VERSION_PATCH,
                collectives.c_str());
    std::printf("# ranks: %d  transport: %s  host: %s  date: %s\n", world.ranks, transport, me.host, today().c_str());
    std::printf("#  minBytes %zu maxBytes %zu step: %g(%s) warmup iters: %d iters: %d validation: %d\n",
                options.min_bytes, options.max_bytes,
                options.increment ? static_cast<double>(options.increment) : options.factor,
                options.increment ? "bytes" : "factor", options.warmup, options.iters, options.check ? 1 : 0);
    std::printf("#  datatype: %s  op: %s  root: %d  algorithm: %s  imbalance: %g  buffers: %s\n",
                datatype_name(options.datatype), op_name(options.op), options.root,
                algorithm.empty() ? "auto (cost model)" : algorithm.c_str(), options.imbalance,
                options.rcc_buffers ? "rcc_mem_alloc" : "aligned_alloc");
    if (groups.count > 1) {
      std::string sizes;
      for (int g = 0; g < groups.count; ++g) {
        sizes += (g ? "," : "") + std::to_string(world.ranks / groups.count + (g < world.ranks % groups.count));
      }
      std::printf(
          "# split: %d groups of %s ranks (world rank r in group r %% %d, key r), all running at once;"
          " group size %d: rows time group 0 (world rank 0's), #wrong counts every group\n",
          groups.count, sizes.c_str(), groups.count, groups.reported_size);
    }
    for (int r = 0; r < world.ranks; ++r) {
      std::printf("#  Rank %3d Pid %7d on %s\n", r, everyone[r].pid, everyone[r].host);
    }
    std::fflush(stdout);
  }

  Bench bench(world, groups, options);
  bool completed = true;
  for (const std::string& name : options.collectives) {
    if (!bench.run(name)) {
      completed = false;
      break;
    }
  }
  int exit_status = completed && !bench.any_wrong() ? 0 : 1;
  if (world.rank == 0) {
    std::printf("#\n# Errors: %s\n", !completed          ? "a call failed (see stderr)"
                                     : bench.any_wrong() ? "wrong results"
                                                         : "none");
    std::printf("# Avg bus bandwidth    : %.4f\n#\n", bench.average_busbw());
    if (!options.json_path.empty()) {
      const std::vector<std::pair<std::string, std::string>> meta{{"bench", "rcc-bench"},
                                                                  {"ranks", std::to_string(world.ranks)},
                                                                  {"transport", transport},
                                                                  {"host", me.host},
                                                                  {"date", today()},
                                                                  {"collectives", collectives},
                                                                  {"datatype", datatype_name(options.datatype)},
                                                                  {"op", op_name(options.op)},
                                                                  {"algorithm", algorithm},
                                                                  {"imbalance", std::to_string(options.imbalance)},
                                                                  {"buffers", options.rcc_buffers ? "rcc" : "malloc"},
                                                                  {"groups", std::to_string(groups.count)},
                                                                  {"group_ranks", std::to_string(groups.reported_size)},
                                                                  {"completed", completed ? "true" : "false"}};
      if (!write_json(options.json_path, meta, bench.rows(), &error)) {
        std::fprintf(stderr, "rcc-bench: %s\n", error.c_str());
        exit_status = 1;
      }
    }
  }
  if (!completed) {
    // A peer may be stuck in the failed collective: do not wait for it in a clean shutdown.
    if (groups.mine.comm != world.comm) rcc_comm_abort(groups.mine.comm);
    rcc_comm_abort(world.comm);
  }
  if (groups.mine.comm != world.comm) {
    status = rcc_comm_destroy(groups.mine.comm);
    if (status != RCC_SUCCESS && completed) {
      std::fprintf(stderr, "rcc-bench: rank %d: rcc_comm_destroy of the group failed: %s: %s\n", world.rank,
                   rcc_status_string(status), rcc_last_error());
      exit_status = 1;
    }
  }
  status = rcc_comm_destroy(world.comm);
  if (status != RCC_SUCCESS && completed) {
    std::fprintf(stderr, "rcc-bench: rank %d: rcc_comm_destroy failed: %s: %s\n", world.rank, rcc_status_string(status),
                 rcc_last_error());
    exit_status = 1;
  }
  return exit_status;
}

}  // namespace
}  // namespace rccbench

int main(int argc, char** argv) { return rccbench::run_main(argc, argv); }
