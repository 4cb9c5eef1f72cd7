// A job started by a PMIx server (Slurm's srun --mpi=pmix, Open MPI's mpirun): rank, size and
// locality come from PMIx, and the ranks meet through its key-value space (put, commit, a fence
// that collects the data, get) instead of a TCP store, so no rank hosts a rendezvous. Built when
// libpmix is found (RCC_WITH_PMIX).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bootstrap/exchange.h"
#include "bootstrap/job.h"

namespace rcc::bootstrap {

// Whether a PMIx server started this process. When one did, fills info (source "pmix") and keeps
// the PMIx session in it; otherwise *found is false and *why says why (for RCC_DEBUG=INFO), and
// nothing else changes. Errors only for a server that answers with an unusable job.
Status detect_pmix(JobInfo* info, bool* found, std::string* why);

// The job's rendezvous over the session detect_pmix opened. The ranks also agree on a job secret
// (rank 0 draws it) for the connections rcc makes itself (liveness, iWARP).
Status connect_pmix(JobInfo* info, double timeout_s, std::unique_ptr<Rendezvous>* out);

}  // namespace rcc::bootstrap
