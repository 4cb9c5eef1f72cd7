// Algorithm selection over the table (registry.h): the cheapest row of a collective by its cost
// function, the shared-memory row whenever the communicator has a segment (every shared-memory
// algorithm moves each byte at most twice with one cache line per step, while the message-based
// ones copy at each of several hops); RCC_ALGO (e.g. "allreduce:ring,broadcast:tree") overrides.
#pragma once

#include <cstddef>

#include "collectives/registry.h"

namespace rcc::collectives {

// The algorithm for one call of kind moving `bytes` per rank (the count argument times the element
// size) on `ranks` ranks; shared_memory: the communicator has a segment. RCC_ALGO is parsed again
// only when its value changes; an unknown collective or algorithm name there is
// RCC_ERR_INVALID_ARGUMENT naming it, and forcing a shared-memory row without a segment is
// RCC_ERR_INVALID_USAGE. *out is set on success only.
Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, const AlgorithmRow** out);
// The same on a communicator with levels (null: none): the hierarchical rows compete by their
// levels_cost; forcing one without levels is RCC_ERR_INVALID_USAGE.
Status choose_algorithm(Kind kind, size_t bytes, int ranks, bool shared_memory, const Levels* levels,
                        const AlgorithmRow** out);

// The cost model alone.
const AlgorithmRow& model_choice(Kind kind, size_t bytes, int ranks, bool shared_memory = false,
                                 const Levels* levels = nullptr);
// Estimated seconds of one row (0 for a single rank).
double estimate_seconds(const AlgorithmRow& row, size_t bytes, int ranks);

}  // namespace rcc::collectives
