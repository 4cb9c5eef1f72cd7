// The table of collective algorithms: one row each (registry.cc), defined in the algorithm's own
// file next to its code. The tuner chooses among a collective's rows, RCC_ALGO names them, logs
// and tests read them. Adding an algorithm is one file (the function, its cost and its row) plus
// one line in registry.cc; docs/algorithms.md walks through it.
#pragma once

#include <cstddef>
#include <span>

#include "collectives/collective.h"

namespace rcc::collectives {

using AlgorithmFn = Status (*)(Context& ctx, const Args& args);
// Estimated seconds for `bytes` per rank on `ranks` ranks (cost_model.h); only ratios matter.
using CostFn = double (*)(size_t bytes, int ranks);
// The same for an algorithm that runs on a communicator's levels (the hierarchical ones).
using LevelsCostFn = double (*)(size_t bytes, const Levels& levels);

enum class Needs {
  kMessages,      // engine send and receive only: runs on every communicator
  kSharedMemory,  // the communicator's shared-memory segment (all ranks on one host)
  kLevels,        // the communicator's levels (ranks on several hosts, several on some)
};

struct AlgorithmRow {
  Kind kind;
  const char* name;     // in RCC_ALGO and logs
  const char* aliases;  // other names RCC_ALGO accepts, comma-separated ("" for none)
  AlgorithmFn run;
  CostFn cost;  // null for kSharedMemory rows: the tuner takes those whenever a segment exists
  Needs needs;
  LevelsCostFn levels_cost = nullptr;  // kLevels rows (their cost is null)
};

std::span<const AlgorithmRow* const> algorithm_table();
// The row of kind answering to name (its name or an alias); null if none.
const AlgorithmRow* find_algorithm(Kind kind, const std::string& name);
// "ring, tree, recursive_doubling, shm": the names kind has, for messages.
std::string algorithm_names(Kind kind);

}  // namespace rcc::collectives
