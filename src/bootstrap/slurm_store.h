// Slurm steps started without PMIx (srun --mpi=none, --mpi=pmi2): the first task of the step's
// first node hosts the store on a port every task derives from the job and step ids, so the
// tasks meet without a shared directory or a variable set by hand.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bootstrap/job.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// The first host of a Slurm host list ("node[07-09,12],gpu1" gives "node07"); empty when the list
// cannot be read.
std::string slurm_first_host(const std::string& list);

// Whether this task sees what the derived address needs (the step's node list and its own node
// name, which srun sets).
bool slurm_step_address_known();

// Hosts the store (on the first node's first task) or dials it, trying kSlurmPortTries ports from
// the derived one: a port taken by something else, or by another job's store (which refuses this
// job's secret), is passed over.
Status connect_slurm_store(const JobInfo& info, double timeout_s, std::unique_ptr<StoreServer>* server,
                           std::unique_ptr<StoreClient>* client);

constexpr int kSlurmPortTries = 16;

}  // namespace rcc::bootstrap
