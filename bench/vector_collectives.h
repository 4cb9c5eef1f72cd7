// Runners of the vector collectives (allgatherv, alltoallv, gatherv, scatterv, reduce_scatterv)
// and the scans (scan, exscan). A vector collective's size column is the total of its non-vector
// counterpart (allgatherv's as allgather's, ...); --imbalance spreads the per-rank blocks
// (imbalance.h) without changing that total.
#pragma once

#include <memory>
#include <string>

#include "collectives.h"

namespace rccbench {

// Null for a name that is none of them.
std::unique_ptr<CollectiveRunner> make_vector_runner(const std::string& name, const World& world,
                                                     rcc_datatype_t datatype, rcc_op_t op, int root, double imbalance);

}  // namespace rccbench
