// Runs one validated collective with a chosen algorithm; called on the communicator's executor.
#pragma once

#include "collectives/collective.h"
#include "collectives/tuner.h"

namespace rcc::collectives {

// Numbers the collective, checks arguments across ranks when RCC_CHECK=1 (check_arguments is
// read at issue time and passed in), skips count 0 and dispatches to the algorithm.
Status execute(rcc_comm* comm, const Args& args, Algorithm algorithm, bool check);

}  // namespace rcc::collectives
