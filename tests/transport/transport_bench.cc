// transport_bench: write bandwidth (64 KiB..4 MiB, 64 writes in flight) and notify latency (8-byte
// notified write ping-pong, half round trip) between two in-process ranks on the backend chosen by
// RCC_TRANSPORT, first busy polling then blocking in wait_for_event. Compare with ib_write_bw /
// ib_write_lat on the same device.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "rank_threads.h"

using namespace transport_test;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void bandwidth(Rank& rank, Rank::Region& region, size_t size, int iterations) {
  constexpr int kWindow = 64;
  if (rank.rank() == 0) {
    auto start = Clock::now();
    int posted = 0;
    while (posted < iterations || rank.write_done_cookies.size() < static_cast<size_t>(iterations)) {
      while (posted < iterations && posted - static_cast<int>(rank.write_done_cookies.size()) < kWindow) {
        if (rank.transport().write(1, region.bytes.data(), size, *region.memory, region.remote_base[1], *region.keys[1],
                                   false, 0, static_cast<uint64_t>(posted + 1)) != RCC_SUCCESS) {
          std::fprintf(stderr, "write: %s\n", rcc::last_error().c_str());
          std::exit(1);
        }
        ++posted;
      }
      rank.poll_once();
    }
    double secs = seconds_since(start);
    std::printf("write bw %8zu B x %5d: %8.1f MB/s\n", size, iterations, size * iterations / secs / 1e6);
    rank.write_done_cookies.clear();
  }
  rank.barrier();
}

void latency(Rank& rank, Rank::Region& region, int iterations, bool blocking) {
  int peer = 1 - rank.rank();
  auto send = [&](int i) {
    if (rank.transport().write(peer, region.bytes.data(), 8, *region.memory, region.remote_base[peer] + 64,
                               *region.keys[peer], true, static_cast<uint32_t>(i), 0) != RCC_SUCCESS) {
      std::fprintf(stderr, "write: %s\n", rcc::last_error().c_str());
      std::exit(1);
    }
  };
  auto receive = [&] {
    if (blocking) {
      rank.progress_until([&] { return !rank.notifies.empty(); });
    } else {
      while (rank.notifies.empty()) rank.poll_once();  // busy polling, like ib_write_lat
    }
    rank.notifies.clear();
  };
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (rank.rank() == 0) {
      send(i);
      receive();
    } else {
      receive();
      send(i);
    }
  }
  if (rank.rank() == 0) {
    std::printf("notify latency 8 B: %.2f us (half round trip, %d iterations, %s)\n",
                seconds_since(start) * 1e6 / iterations / 2, iterations, blocking ? "wait_for_event" : "busy polling");
  }
  rank.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 200;
  int latency_iterations = argc > 2 ? std::atoi(argv[2]) : 2000;
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(4 << 20, &region)) std::exit(1);
    for (size_t size = 64 << 10; size <= (4u << 20); size *= 4) {
      bandwidth(rank, region, size, static_cast<int>(std::max<size_t>(16, iterations * (64 << 10) / size)));
    }
    latency(rank, region, latency_iterations, false);
    latency(rank, region, latency_iterations, true);
  });
  return ::testing::Test::HasFailure() ? 1 : 0;
}
