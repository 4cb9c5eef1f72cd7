// Issuing a validated collective: choose its algorithm, then run it on the communicator's
// executor, inline for the blocking forms, queued for the rcc_i* forms.
#pragma once

#include "collectives/collective.h"
#include "comm/comm.h"

namespace rcc {

// request == nullptr: blocking. Otherwise *request is a new handle for the queued collective.
Status launch_collective(rcc_comm* comm, const collectives::Args& args, rcc_request_t* request);

// The library's own exchanges on a communicator (a split's allgather, agreements while it sets up
// its levels), blocking, with the cost model's algorithm: RCC_ALGO forces the user's calls, and a
// hierarchical one it names cannot run while the communicator is still deciding its levels.
Status run_internal_collective(rcc_comm* comm, const collectives::Args& args);

}  // namespace rcc
