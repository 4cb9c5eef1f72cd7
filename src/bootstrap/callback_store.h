// The store a caller hands rcc_comm_init_store (rcc_store_t: its set, get with a timeout, and
// optionally add and remove), as a StoreClient.
#pragma once

#include <memory>

#include "base/status.h"
#include "bootstrap/store.h"
#include "rcc/rcc.h"

namespace rcc::bootstrap {

// Checks the callbacks (set and get required; add and remove both or neither), naming a missing one.
Status make_callback_store(const rcc_store_t& store, std::unique_ptr<StoreClient>* out);

}  // namespace rcc::bootstrap
