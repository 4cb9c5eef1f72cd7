// Making communicators from one: rcc_comm_split and rcc_comm_dup.
#pragma once

#include "comm/comm.h"

namespace rcc {

// Collective over parent. color >= 0 or RCC_UNDEFINED (then *out = nullptr); validated by the caller.
Status split_comm(rcc_comm* parent, int color, int key, rcc_comm** out);

}  // namespace rcc
