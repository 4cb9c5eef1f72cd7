// Where a rank learns who it is: rank, size and how to reach the rendezvous, from the launcher's
// environment. Looked for in this order: rccrun (RCC_*), a PMIx server (srun --mpi=pmix, Open
// MPI's mpirun), Slurm, Open MPI / PMI / Hydra, torchrun (docs/launching.md).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bootstrap/exchange.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

class PmixSession;  // pmix/pmix_rendezvous.h

// How a job's ranks meet (connect_job).
enum class Meeting {
  kDialStore,    // a store at store_address: rccrun's, or a unique id's
  kRank0Hosts,   // rank 0 hosts one at store_address (MASTER_ADDR:MASTER_PORT), or, when that is
                 // empty, publishes its address in RCC_STORE_DIR
  kSlurmStep,    // the step's first task hosts one at an address every task derives (slurm_store.h)
  kTorchAgent,   // torchrun's agent serves a TCPStore at store_address (torch_store.h)
  kPmix,         // the PMIx server that started the process (pmix/pmix_rendezvous.h)
  kCallerStore,  // the caller's store (rcc_comm_init_store, callback_store.h)
};

struct JobInfo {
  int rank = -1;
  int size = 0;
  int local_rank = -1;        // -1 when unknown
  int local_size = 0;         // 0 when unknown
  std::string source;         // "rccrun", "pmix", "slurm", "openmpi", "pmi", "torchrun", "unique-id", "store"
  std::string store_address;  // host:port (see Meeting)
  std::string secret;
  Meeting meeting = Meeting::kDialStore;
  std::shared_ptr<PmixSession> pmix;  // set when a PMIx server started this process (source "pmix")
};

// Fills info from the environment. When no convention matches: RCC_ERR_BOOTSTRAP with a message
// listing the variables looked for.
Status detect_job(JobInfo* info);

// Connects this rank to the job's rendezvous: starts the store on rank 0 when the job wants it
// (publishing its address as the convention requires) and dials it.
Status connect_job(JobInfo* info, double timeout_s, std::unique_ptr<Rendezvous>* out);
// Over a store rcc does not run (torchrun's, the caller's of rcc_comm_init_store), which has no
// secret: rank 0 draws the job's and hands it out through the store.
Status meet_through_store(JobInfo* info, std::unique_ptr<StoreClient> store, double timeout_s,
                          std::unique_ptr<Rendezvous>* out);
// The same, split: server is set only on the rank that hosts the store.
Status connect_store(JobInfo* info, double timeout_s, std::unique_ptr<StoreServer>* server,
                     std::unique_ptr<StoreClient>* client);

// The unique-id path (rcc_get_unique_id): encodes/decodes host:port and secret in 128 bytes.
Status encode_unique_id(const std::string& address, const std::string& secret, char out[128]);
Status decode_unique_id(const char in[128], std::string* address, std::string* secret);

// What identifies this job to every rank of it (RCC_JOB_ID, the launcher's job id, or the parent
// process), made safe for a file name: names the published store file and seeds derived secrets.
std::string job_key();

}  // namespace rcc::bootstrap
