// gloo-bench: the Gloo side of bench/compare. Gloo's TCP transport on loopback, rendezvous
// through a FileStore directory; rank and size from RCC_RANK/RCC_SIZE (start it with rccrun).
//   rccrun -n 4 gloo-bench --store DIR -c allreduce,broadcast -a ring -b 8 -e 64M -f 4
// Gloo's algorithms are in place: the out-of-place columns are N/A. fp32 sum; results checked.
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_ring.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "../size_arg.h"

namespace {

struct Options {
  size_t min_bytes = 8, max_bytes = 32u << 20;
  double factor = 2;
  int iters = 20, warmup = 5;
  std::string store, algorithm = "ring";
  std::vector<std::string> modes{"allreduce"};
};

bool parse(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return *error = flag + " needs a value", false;
    std::string value = argv[++i];
    bool ok = true;
    if (flag == "-b")
      ok = rccbench::parse_size(value, &o->min_bytes);
    else if (flag == "-e")
      ok = rccbench::parse_size(value, &o->max_bytes);
    else if (flag == "-f")
      ok = (o->factor = std::atof(value.c_str())) > 1;
    else if (flag == "-n")
      ok = (o->iters = std::atoi(value.c_str())) > 0;
    else if (flag == "-w")
      ok = (o->warmup = std::atoi(value.c_str())) >= 0;
    else if (flag == "-a")
      ok = value == "ring" || value == "bcube", o->algorithm = value;
    else if (flag == "--store")
      o->store = value;
    else if (flag == "-c") {
      o->modes.clear();
      for (size_t start = 0; start <= value.size();) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        std::string mode = value.substr(start, comma - start);
        if (mode != "allreduce" && mode != "broadcast") {
          return *error = "-c: unknown mode '" + mode + "' (allreduce broadcast)", false;
        }
        o->modes.push_back(mode);
        start = comma + 1;
      }
    } else {
      return *error = "unknown option '" + flag + "'", false;
    }
    if (!ok) return *error = flag + ": invalid value '" + value + "'", false;
  }
  if (o->store.empty()) return *error = "--store DIR is required (an empty directory shared by the ranks)", false;
  return true;
}

bool env_int(const char* name, int* value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return false;
  *value = std::atoi(text);
  return true;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

float input(int rank, size_t i) { return static_cast<float>((static_cast<size_t>(rank) + 2 * i) % 5 + 1); }

long long run(const Options& o, const std::shared_ptr<gloo::rendezvous::Context>& context) {
  const int rank = context->rank, ranks = context->size;
  std::vector<size_t> sizes;
  for (size_t s = o.min_bytes; s <= o.max_bytes;) {
    sizes.push_back(s);
    size_t next = static_cast<size_t>(s * o.factor);
    s = next > s ? next : s + 1;
  }
  std::vector<float> data(std::max<size_t>(1, sizes.back() / sizeof(float)));
  long long wrong_total = 0;
  double stat[2];  // slowest time, wrong count: combined with Gloo itself
  gloo::AllreduceRing<double> max_time(context, {&stat[0]}, 1, gloo::ReductionFunction<double>::max);
  gloo::AllreduceRing<double> sum_wrong(context, {&stat[1]}, 1, gloo::ReductionFunction<double>::sum);
  for (const std::string& mode : o.modes) {
    if (rank == 0) {
      std::printf("#\n# Collective: %s (gloo %s)\n", mode.c_str(),
                  mode == "allreduce" ? o.algorithm.c_str() : "one_to_all");
      std::printf("#%11s  %12s  %8s  %6s  %4s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s\n", "size", "count", "type",
                  "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    }
    for (size_t requested : sizes) {
      const int count = static_cast<int>(std::max<size_t>(1, requested / sizeof(float)));
      std::unique_ptr<gloo::Algorithm> algorithm;
      std::vector<float*> pointers{data.data()};
      if (mode == "broadcast")
        algorithm = std::make_unique<gloo::BroadcastOneToAll<float>>(context, pointers, count, 0);
      else if (o.algorithm == "bcube")
        algorithm = std::make_unique<gloo::AllreduceBcube<float>>(context, pointers, count);
      else
        algorithm = std::make_unique<gloo::AllreduceRing<float>>(context, pointers, count);
      // Checked run.
      for (int i = 0; i < count; ++i) data[i] = mode == "broadcast" ? (rank == 0 ? input(0, i) : 0) : input(rank, i);
      algorithm->run();
      long long wrong = 0;
      for (int i = 0; i < count; ++i) {
        float expected = 0;
        if (mode == "broadcast")
          expected = input(0, i);
        else
          for (int r = 0; r < ranks; ++r) expected += input(r, i);
        wrong += data[i] != expected;
      }
      for (int i = 0; i < o.warmup; ++i) algorithm->run();
      stat[0] = 0;
      max_time.run();  // doubles as a barrier before timing
      const double start = now_seconds();
      for (int i = 0; i < o.iters; ++i) algorithm->run();
      stat[0] = (now_seconds() - start) * 1e6 / o.iters;
      stat[1] = static_cast<double>(wrong);
      max_time.run();
      sum_wrong.run();
      wrong_total += static_cast<long long>(stat[1]);
      if (rank == 0) {
        const size_t bytes = count * sizeof(float);
        const double algbw = bytes / (stat[0] * 1e-6) / 1e9;
        const double factor = mode == "broadcast" ? 1.0 : 2.0 * (ranks - 1) / ranks;
        std::printf("%12zu  %12d  %8s  %6s  %4d  %8s  %6s  %6s  %6s  %8.2f  %6.2f  %6.2f  %6lld\n", bytes, count,
                    "float", mode == "broadcast" ? "none" : "sum", mode == "broadcast" ? 0 : -1, "N/A", "N/A", "N/A",
                    "N/A", stat[0], algbw, algbw * factor, static_cast<long long>(stat[1]));
        std::fflush(stdout);
      }
    }
  }
  return wrong_total;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string error;
  if (!parse(argc, argv, &options, &error)) {
    std::fprintf(stderr, "gloo-bench: %s\n", error.c_str());
    return 2;
  }
  int rank = 0, size = 0;
  if (!env_int("RCC_RANK", &rank) || !env_int("RCC_SIZE", &size) || size < 1 || rank < 0 || rank >= size) {
    std::fprintf(stderr, "gloo-bench: RCC_RANK/RCC_SIZE are not set; start it with rccrun -n N\n");
    return 2;
  }
  try {
    gloo::transport::tcp::attr attr("127.0.0.1");
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(options.store);
    // bcube needs size = base^k: base 2 for powers of two, else one step of all ranks.
    const int base = (size & (size - 1)) == 0 ? 2 : size;
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size, std::max(base, 2));
    context->connectFullMesh(store, device);
    if (rank == 0) std::printf("# gloo-bench  ranks: %d  transport: tcp (loopback)  store: file\n", size);
    return run(options, context) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo-bench: rank %d: %s\n", rank, e.what());
    return 1;
  }
}
