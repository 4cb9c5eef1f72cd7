// The bench's own control messages (timings, error counts, "go" signals), sent with plain rcc
// point-to-point calls so they never depend on the collective being measured.
#pragma once

#include <cstddef>

#include "rcc/rcc.h"

namespace rccbench {

struct World {
  rcc_comm_t comm = nullptr;
  int rank = 0;
  int ranks = 1;
};

// Rank 0 receives every rank's `bytes` into all[rank * bytes ...] (all may be null elsewhere).
rcc_status_t gather_to_root(const World& world, const void* mine, size_t bytes, void* all);
// Rank 0's data to every rank.
rcc_status_t broadcast_from_root(const World& world, void* data, size_t bytes);
// Returns on every rank once all ranks have called it.
rcc_status_t sync_ranks(const World& world);

}  // namespace rccbench
