// Algorithm selection. A small alpha-beta cost model (per-message latency plus bytes over
// bandwidth, plus reduction time) estimates each algorithm for a collective, message size and rank
// count and picks the cheapest; RCC_ALGO (e.g. "allreduce:ring,broadcast:tree") overrides it.
#pragma once

#include <cstddef>

#include "collectives/collective.h"

namespace rcc::collectives {

enum class Algorithm { kRing, kTree, kRecursiveDoubling, kPipeline, kPairwise, kLinear, kDissemination, kShm };

const char* algorithm_name(Algorithm algorithm);

// The algorithm for one call of kind moving `bytes` per rank (the count argument times the element
// size) on `ranks` ranks; shared_memory: the communicator has a shared-memory segment (all ranks on
// this host). RCC_ALGO is parsed again only when its value changes; an unknown collective or
// algorithm name there is RCC_ERR_INVALID_ARGUMENT naming it, and forcing "shm" without a segment
// is RCC_ERR_INVALID_USAGE.
Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, Algorithm* out);

// The cost model alone. With shared memory it always picks kShm: every shared-memory algorithm
// moves each byte at most twice (copy in, copy out) with one cache line per step, while the
// message-based ones copy at each of several hops.
Algorithm model_choice(Kind kind, size_t bytes, int ranks, bool shared_memory = false);
// Estimated seconds of one algorithm (for docs, benchmarks and tests of the model).
double estimate_seconds(Kind kind, Algorithm algorithm, size_t bytes, int ranks);

}  // namespace rcc::collectives
