// OSU-style point-to-point measurements between ranks 0 and 1 (other ranks return at once).
#pragma once

#include <cstddef>

#include "exchange.h"
#include "rcc/rcc.h"

namespace rccbench {

struct P2pMeasurement {
  double value = 0;     // latency in us (latency) or bandwidth in MB/s (bw); 0 on ranks > 1
  long long wrong = 0;  // wrong bytes in what this rank received
};

// Ping-pong: half the round trip, averaged over iters (median: the median round trip's half).
// send/recv hold `bytes`.
rcc_status_t measure_latency(const World& world, void* send, void* recv, size_t bytes, int iters, int warmup,
                             bool median, P2pMeasurement* out);
// Rank 0 posts a window of isends, rank 1 a window of irecvs, then rank 1 acknowledges. Unlike
// OSU, each pending receive has its own buffer (recv holds window * bytes): overlapping pending
// receives are erroneous in MPI and rcc rejects them for zero-copy sizes.
rcc_status_t measure_bandwidth(const World& world, void* send, void* recv, size_t bytes, int window, int iters,
                               int warmup, P2pMeasurement* out);

}  // namespace rccbench
