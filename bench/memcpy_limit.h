// The memory limits rcc-bench prints beside rows from kMemcpyFromBytes: one core copying the same
// bytes alone, and every rank copying them at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exchange.h"

namespace rccbench {

class MemcpyLimit {
 public:
  explicit MemcpyLimit(const World& world) : world_(world) {}

  // This rank copying `bytes` between two buffers of its own (warm, best of a few) while the
  // others wait: the yardstick a collective moving the same bytes through memory is compared with.
  double one_core(size_t bytes) {
    rcc_status_t unused = RCC_SUCCESS;
    return copy_rate(bytes, false, &unused);
  }

  // Every rank copying `bytes` at once, each round started together: *rate is the slowest rank's
  // rate on rank 0 (0 elsewhere). A collective in which every rank reads its input and writes its
  // output shares the memory system the same way, so this is its limit. Collective: every rank
  // calls it. Fails only when the exchange with the other ranks does.
  rcc_status_t everyone(size_t bytes, double* rate);

 private:
  // GB/s of the best of three timed copies after one that warms up; with `together`, every rank
  // syncs before each (*status: how the sync went).
  double copy_rate(size_t bytes, bool together, rcc_status_t* status);

  World world_;
  std::vector<uint8_t> from_, to_;
};

}  // namespace rccbench
