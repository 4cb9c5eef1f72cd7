// RCC_CHECK=1: before a collective, ranks exchange what they were called with and all return
// RCC_ERR_MISMATCH, naming the first disagreeing rank and field, instead of corrupting memory or
// hanging when one rank passed different arguments.
#pragma once

#include "collectives/collective.h"

namespace rcc::collectives {

bool argument_check_enabled();
// Exchanges args with every rank (a fixed-size message, so it cannot itself mismatch) under phase.
Status check_arguments(Context& ctx, const Args& args, uint32_t phase);

}  // namespace rcc::collectives
