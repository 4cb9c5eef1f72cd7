// RCC_CHECK=1: before a collective, ranks exchange what they were called with and all return
// RCC_ERR_MISMATCH, naming the first disagreeing rank and field, instead of corrupting memory or
// hanging when one rank passed different arguments.
#pragma once

#include "collectives/collective.h"

namespace rcc::collectives {

// RCC_CHECK, read at every call (a change takes effect at the next one).
Status argument_check_enabled(bool* enabled);
// Exchanges args with every rank (a fixed-size message, so it cannot itself mismatch) under phase.
Status check_arguments(Context& ctx, const Args& args, uint32_t phase);

}  // namespace rcc::collectives
