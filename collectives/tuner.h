// Algorithm selection. A small alpha-beta cost model (per-message latency plus bytes over
// bandwidth, plus reduction time) estimates each algorithm for a collective, message size and rank
// count and picks the cheapest; RCC_ALGO (e.g. "allreduce:ring,broadcast:tree") overrides it.
#pragma once

#include <cstddef>

#include "collectives/collective.h"

namespace rcc::collectives {

enum class Algorithm { kRing, kTree, kRecursiveDoubling, kPipeline, kPairwise, kLinear, kDissemination };

const char* algorithm_name(Algorithm algorithm);

// The algorithm for one call of kind moving `bytes` per rank (the count argument times the element
// size) on `ranks` ranks. RCC_ALGO is parsed again only when its value changes; an unknown
// collective or algorithm name there is RCC_ERR_INVALID_ARGUMENT naming it.
Status choose_algorithm(Kind kind, size_t bytes, int ranks, Algorithm* out);

// The cost model alone.
Algorithm model_choice(Kind kind, size_t bytes, int ranks);
// Estimated seconds of one algorithm (for docs, benchmarks and tests of the model).
double estimate_seconds(Kind kind, Algorithm algorithm, size_t bytes, int ranks);

}  // namespace rcc::collectives
