// Where a rank learns who it is: rank, size and how to reach the rendezvous, from the launcher's
// environment. Looked for in this order: rccrun (RCC_*), Slurm, Open MPI / PMI / Hydra, torchrun.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

struct JobInfo {
  int rank = -1;
  int size = 0;
  int local_rank = -1;        // -1 when unknown
  int local_size = 0;         // 0 when unknown
  std::string source;         // "rccrun", "slurm", "openmpi", "pmi", "torchrun", "unique-id"
  std::string store_address;  // host:port; empty when rank 0 must publish it (see connect_job)
  std::string secret;
  bool rank0_hosts_store = false;
};

// Fills info from the environment. When no convention matches: RCC_ERR_BOOTSTRAP with a message
// listing the variables looked for.
Status detect_job(JobInfo* info);

// Starts the store on rank 0 when the job wants it (publishing its address as the convention
// requires) and connects this rank to the store. server is set only on the rank that hosts it.
Status connect_job(JobInfo* info, double timeout_s, std::unique_ptr<StoreServer>* server,
                   std::unique_ptr<StoreClient>* client);

// The unique-id path (rcc_get_unique_id): encodes/decodes host:port and secret in 128 bytes.
Status encode_unique_id(const std::string& address, const std::string& secret, char out[128]);
Status decode_unique_id(const char in[128], std::string* address, std::string* secret);

// What identifies this job to every rank of it (RCC_JOB_ID, the launcher's job id, or the parent
// process), made safe for a file name: names the published store file and seeds derived secrets.
std::string job_key();

}  // namespace rcc::bootstrap
