// Runs one validated collective with a chosen algorithm; called on the communicator's executor.
#pragma once

#include "collectives/collective.h"
#include "collectives/registry.h"

namespace rcc::collectives {

// Checks arguments across ranks when `check` (RCC_CHECK=1, read at issue time), skips count 0
// and runs the algorithm.
Status execute(Context& ctx, const Args& args, const AlgorithmRow& algorithm, bool check);

}  // namespace rcc::collectives
