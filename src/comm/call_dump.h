// Writing the flight recorder (call_record.h) when a rank is stuck: every recorded call, and for
// each unfinished one, whom it waits for (the peers of its unfinished requests, in ranks of its
// communicator). Format in base/call_report.h; rcc-dump and rccrun turn the dumps of all ranks
// into one table.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "comm/comm.h"

namespace rcc {

// A rank's dump as text, from what the engine says is unfinished and its groups.
std::string format_call_dump(int rank, int size, const p2p::Engine::GroupMembers& groups,
                             const std::vector<p2p::Engine::PendingRequest>& pending, const char* reason);
// The dumps below go to RCC_DEBUG_DUMP_DIR/rcc-calls.RANK.txt (replacing an older one), or to
// stderr when that is unset. They never fail the caller: a dump that cannot be written is logged.

// Dumps this rank now (rccrun asked for it with SIGUSR1), unless the dump this rank wrote on its
// own failure is still there.
void dump_calls_when_asked(JobConnections& job);
// Makes the job's engine dump this rank at its first timeout, while the timed-out call's requests
// still say whom it waited for.
void dump_calls_on_first_timeout(JobConnections& job);
// After a call failed (before its recorder entry ends, so it shows as running): dumps this rank
// if it has not dumped on its own yet, for a timeout always, for other errors into
// RCC_DEBUG_DUMP_DIR only.
void dump_calls_after_failure(JobConnections& job, Status status);
// The start of a collective's timeout message: "allreduce #1834 of comm 2 (rank 1 of 4)".
std::string describe_call(const rcc_comm& comm, int op, uint64_t sequence);

}  // namespace rcc
