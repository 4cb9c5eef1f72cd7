// Making communicators from one: rcc_comm_split and rcc_comm_dup (collective over the parent),
// rcc_comm_create_group (collective over the new communicator's ranks only).
#pragma once

#include "comm/comm.h"

namespace rcc {

// Collective over parent. color >= 0 or RCC_UNDEFINED (then *out = nullptr); validated by the caller.
Status split_comm(rcc_comm* parent, int color, int key, rcc_comm** out);

// Tags of rcc_comm_create_group: [0, kCreateGroupTags).
constexpr int kCreateGroupTags = 1 << 30;
// Collective over parent's ranks `ranks` (validated by the caller: distinct, in range, this rank
// among them; 0 <= tag < kCreateGroupTags).
Status create_group_comm(rcc_comm* parent, const std::vector<int>& ranks, int tag, rcc_comm** out);

}  // namespace rcc
