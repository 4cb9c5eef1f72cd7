// Which launcher started this process: rank, size and the rendezvous from rccrun's, Slurm's, Open
// MPI's, PMI's or torchrun's variables (job.h lists the order).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/job.h"
#ifdef RCC_WITH_PMIX
#include "bootstrap/pmix/pmix_rendezvous.h"
#endif
#include "bootstrap/slurm_store.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

// Other launchers' variables are their conventions, not rcc settings, so they are read directly.
const char* foreign_env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

Status parse_count(const char* name, const char* text, int* value) {
  errno = 0;
  char* end = nullptr;
  long parsed = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || parsed < 0 || parsed > (1 << 24)) {
    return fail(RCC_ERR_BOOTSTRAP, "%s='%s' is not a valid non-negative integer", name, text);
  }
  *value = static_cast<int>(parsed);
  return RCC_SUCCESS;
}

// Reads an optional count: *value stays as it is when the variable is not set.
Status optional_count(const char* name, int* value) {
  const char* text = foreign_env(name);
  return text == nullptr ? RCC_SUCCESS : parse_count(name, text, value);
}

// "2(x3),1": tasks per node as Slurm writes it; returns the entry for node index node.
int slurm_tasks_on_node(const std::string& spec, int node) {
  int index = 0;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int tasks = std::atoi(item.c_str());
    int repeat = 1;
    size_t x = item.find("(x");
    if (x != std::string::npos) repeat = std::atoi(item.c_str() + x + 2);
    if (tasks <= 0 || repeat <= 0) return 0;
    if (node < index + repeat) return tasks;
    index += repeat;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return 0;
}

Status validate(JobInfo* info, const char* rank_name, const char* size_name) {
  if (info->size < 1) return fail(RCC_ERR_BOOTSTRAP, "%s=%d: the job size must be at least 1", size_name, info->size);
  if (info->rank < 0 || info->rank >= info->size) {
    return fail(RCC_ERR_BOOTSTRAP, "%s=%d is not in [0, %s=%d)", rank_name, info->rank, size_name, info->size);
  }
  if (info->local_size > 0 && (info->local_rank < 0 || info->local_rank >= info->local_size)) {
    RCC_WARN("local rank %d is not below the local size %d; ignoring both", info->local_rank, info->local_size);
    info->local_rank = -1;
    info->local_size = 0;
  }
  return RCC_SUCCESS;
}

// What identifies this job on the shared file system, made safe for a file name.
uint64_t fnv1a64(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// With MASTER_ADDR and no RCC_JOB_SECRET the secret can only come from what every rank sees: the
// job identity. Anyone who can read the job's environment can derive it, so it keeps strangers'
// stray connections out but is not a defence against a local attacker (set RCC_JOB_SECRET for that).
std::string derived_secret(const std::string& key, int size, const std::string& address) {
  std::string identity = "rcc-derived-secret|" + key + "|" + std::to_string(size) + "|" + address;
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(fnv1a64(identity)),
                static_cast<unsigned long long>(fnv1a64(identity, 0x84222325cbf29ce4ull)));
  return text;
}

// RCC_JOB_SECRET, or one derived from what every rank of the job sees (`address` names where they
// meet), which only keeps strangers' stray connections out: said once, at WARN, by rank 0.
std::string job_secret(const JobInfo& info, const std::string& address, const char* public_values) {
  if (settings::is_set("RCC_JOB_SECRET")) return settings::text("RCC_JOB_SECRET");
  static std::once_flag warned;
  if (info.rank == 0) {
    std::call_once(warned, [public_values] {
      RCC_WARN(
          "RCC_JOB_SECRET is not set: the rendezvous secret is derived from public values (%s, the job id and "
          "size), so anyone who can see those can join this job's rendezvous. Set RCC_JOB_SECRET to the same random "
          "value on every rank (docs/security.md)",
          public_values);
    });
  }
  return derived_secret(job_key(), info.size, address);
}

// MASTER_ADDR and MASTER_PORT when both are set (*found), into info's store address and, when
// the store is rcc's own (with_secret), its secret.
Status master_address(JobInfo* info, bool with_secret, bool* found) {
  const char* master_addr = foreign_env("MASTER_ADDR");
  const char* master_port = foreign_env("MASTER_PORT");
  *found = master_addr != nullptr && master_port != nullptr;
  if (!*found) return RCC_SUCCESS;
  int port = 0;
  RCC_RETURN_IF_ERROR(parse_count("MASTER_PORT", master_port, &port));
  if (port < 1 || port > 65535) return fail(RCC_ERR_BOOTSTRAP, "MASTER_PORT=%d is not a port", port);
  info->store_address = join_address(master_addr, port);
  if (with_secret) info->secret = job_secret(*info, info->store_address, "MASTER_ADDR, MASTER_PORT");
  return RCC_SUCCESS;
}

// For the launchers whose rank 0 hosts the store: at MASTER_ADDR:MASTER_PORT when set, else
// published through RCC_STORE_DIR.
Status finish_rank0_hosted(JobInfo* info) {
  info->meeting = Meeting::kRank0Hosts;
  bool found = false;
  return master_address(info, true, &found);
}

Status detect_rccrun(JobInfo* info) {
  const char* needed[] = {"RCC_SIZE", "RCC_STORE_ADDR", "RCC_JOB_SECRET"};
  for (const char* name : needed) {
    if (!settings::is_set(name))
      return fail(RCC_ERR_BOOTSTRAP, "RCC_RANK is set but %s is not (start ranks with rccrun)", name);
  }
  RCC_RETURN_IF_ERROR(parse_count("RCC_RANK", settings::text("RCC_RANK").c_str(), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("RCC_SIZE", settings::text("RCC_SIZE").c_str(), &info->size));
  if (settings::is_set("RCC_LOCAL_RANK")) {
    RCC_RETURN_IF_ERROR(parse_count("RCC_LOCAL_RANK", settings::text("RCC_LOCAL_RANK").c_str(), &info->local_rank));
  }
  if (settings::is_set("RCC_LOCAL_SIZE")) {
    RCC_RETURN_IF_ERROR(parse_count("RCC_LOCAL_SIZE", settings::text("RCC_LOCAL_SIZE").c_str(), &info->local_size));
  }
  info->source = "rccrun";
  info->store_address = settings::text("RCC_STORE_ADDR");
  info->secret = settings::text("RCC_JOB_SECRET");
  info->meeting = Meeting::kDialStore;
  return validate(info, "RCC_RANK", "RCC_SIZE");
}

Status detect_slurm(JobInfo* info) {
  RCC_RETURN_IF_ERROR(parse_count("SLURM_PROCID", foreign_env("SLURM_PROCID"), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("SLURM_NTASKS", foreign_env("SLURM_NTASKS"), &info->size));
  RCC_RETURN_IF_ERROR(optional_count("SLURM_LOCALID", &info->local_rank));
  const char* per_node = foreign_env("SLURM_STEP_TASKS_PER_NODE");
  if (per_node == nullptr) per_node = foreign_env("SLURM_TASKS_PER_NODE");
  int node = 0;
  RCC_RETURN_IF_ERROR(optional_count("SLURM_NODEID", &node));
  if (per_node != nullptr) info->local_size = slurm_tasks_on_node(per_node, node);
  if (info->local_size == 0) RCC_RETURN_IF_ERROR(optional_count("SLURM_NTASKS_PER_NODE", &info->local_size));
  info->source = "slurm";
  RCC_RETURN_IF_ERROR(validate(info, "SLURM_PROCID", "SLURM_NTASKS"));
  RCC_RETURN_IF_ERROR(finish_rank0_hosted(info));
  // Without MASTER_ADDR, srun's tasks derive where to meet from the step (no shared directory).
  if (info->store_address.empty() && slurm_step_address_known()) {
    info->meeting = Meeting::kSlurmStep;
    info->secret = job_secret(*info, "slurm-step", "SLURM_JOB_ID, SLURM_STEP_ID");
  }
  return RCC_SUCCESS;
}

Status detect_openmpi(JobInfo* info) {
  RCC_RETURN_IF_ERROR(parse_count("OMPI_COMM_WORLD_RANK", foreign_env("OMPI_COMM_WORLD_RANK"), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("OMPI_COMM_WORLD_SIZE", foreign_env("OMPI_COMM_WORLD_SIZE"), &info->size));
  RCC_RETURN_IF_ERROR(optional_count("OMPI_COMM_WORLD_LOCAL_RANK", &info->local_rank));
  RCC_RETURN_IF_ERROR(optional_count("OMPI_COMM_WORLD_LOCAL_SIZE", &info->local_size));
  info->source = "openmpi";
  RCC_RETURN_IF_ERROR(validate(info, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"));
  return finish_rank0_hosted(info);
}

Status detect_pmi(JobInfo* info) {
  RCC_RETURN_IF_ERROR(parse_count("PMI_RANK", foreign_env("PMI_RANK"), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("PMI_SIZE", foreign_env("PMI_SIZE"), &info->size));
  RCC_RETURN_IF_ERROR(optional_count("MPI_LOCALRANKID", &info->local_rank));
  RCC_RETURN_IF_ERROR(optional_count("MPI_LOCALNRANKS", &info->local_size));
  info->source = "pmi";
  RCC_RETURN_IF_ERROR(validate(info, "PMI_RANK", "PMI_SIZE"));
  return finish_rank0_hosted(info);
}

Status detect_torchrun(JobInfo* info) {
  const char* needed[] = {"WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"};
  for (const char* name : needed) {
    if (foreign_env(name) == nullptr)
      return fail(RCC_ERR_BOOTSTRAP, "RANK is set (torchrun convention) but %s is not", name);
  }
  RCC_RETURN_IF_ERROR(parse_count("RANK", foreign_env("RANK"), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("WORLD_SIZE", foreign_env("WORLD_SIZE"), &info->size));
  RCC_RETURN_IF_ERROR(optional_count("LOCAL_RANK", &info->local_rank));
  RCC_RETURN_IF_ERROR(optional_count("LOCAL_WORLD_SIZE", &info->local_size));
  info->source = "torchrun";
  RCC_RETURN_IF_ERROR(validate(info, "RANK", "WORLD_SIZE"));
  // torchrun's static rendezvous: its agent already serves a TCPStore on MASTER_PORT, which torch's
  // own workers join as clients (TORCHELASTIC_USE_AGENT_STORE); so does rcc. The secret of rcc's
  // own connections then comes through that store (connect_job).
  const char* agent_store = foreign_env("TORCHELASTIC_USE_AGENT_STORE");
  if (agent_store != nullptr && std::strcmp(agent_store, "True") == 0) {
    bool found = false;
    RCC_RETURN_IF_ERROR(master_address(info, false, &found));
    info->meeting = Meeting::kTorchAgent;
    return RCC_SUCCESS;
  }
  return finish_rank0_hosted(info);
}
}  // namespace

std::string job_key() {
  std::string key;
  if (settings::is_set("RCC_JOB_ID")) {
    key = settings::text("RCC_JOB_ID");
  } else if (const char* slurm = foreign_env("SLURM_JOB_ID")) {
    const char* step = foreign_env("SLURM_STEP_ID");
    key = std::string("slurm-") + slurm + "." + (step ? step : "0");
  } else if (const char* ompi = foreign_env("OMPI_MCA_ess_base_jobid")) {
    key = std::string("ompi-") + ompi;
  } else if (const char* pmix = foreign_env("PMIX_NAMESPACE")) {
    key = std::string("pmix-") + pmix;
  } else if (const char* kvs = foreign_env("PMI_KVSNAME")) {
    key = std::string("pmi-") + kvs;
  } else {
    // Ranks started by one local launcher (mpiexec) share their parent.
    key = "ppid-" + std::to_string(getppid());
  }
  for (char& c : key) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return key;
}

Status detect_job(JobInfo* info) {
  if (info == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "detect_job: info is null");
  JobInfo found;
  Status status;
  bool pmix = false;
  std::string no_pmix = "this rcc was built without PMIx";
  if (!settings::is_set("RCC_RANK")) {
#ifdef RCC_WITH_PMIX
    RCC_RETURN_IF_ERROR(detect_pmix(&found, &pmix, &no_pmix));
#endif
  }
  if (settings::is_set("RCC_RANK")) {
    status = detect_rccrun(&found);
  } else if (pmix) {
    found.meeting = Meeting::kPmix;
    status = RCC_SUCCESS;
  } else if (foreign_env("SLURM_PROCID") && foreign_env("SLURM_NTASKS")) {
    status = detect_slurm(&found);
  } else if (foreign_env("OMPI_COMM_WORLD_RANK") && foreign_env("OMPI_COMM_WORLD_SIZE")) {
    status = detect_openmpi(&found);
  } else if (foreign_env("PMI_RANK") && foreign_env("PMI_SIZE")) {
    status = detect_pmi(&found);
  } else if (foreign_env("RANK")) {
    status = detect_torchrun(&found);
  } else {
    return fail(RCC_ERR_BOOTSTRAP,
                "cannot tell rank and size: none of the launcher variables is set. Looked for RCC_RANK, RCC_SIZE, "
                "RCC_STORE_ADDR, RCC_JOB_SECRET (rccrun); PMIX_NAMESPACE, PMIX_RANK (a PMIx server: %s); SLURM_PROCID, "
                "SLURM_NTASKS (Slurm); OMPI_COMM_WORLD_RANK, "
                "OMPI_COMM_WORLD_SIZE (Open MPI); PMI_RANK, PMI_SIZE (MPICH/Hydra); RANK, WORLD_SIZE, MASTER_ADDR, "
                "MASTER_PORT (torchrun). Start the program with rccrun -n N, or use rcc_get_unique_id",
                no_pmix.c_str());
  }
  RCC_RETURN_IF_ERROR(status);
  RCC_INFO("job: rank %d of %d (local %d of %d) from %s%s%s", found.rank, found.size, found.local_rank,
           found.local_size, found.source.c_str(), pmix || found.source == "rccrun" ? "" : "; not PMIx: ",
           pmix || found.source == "rccrun" ? "" : no_pmix.c_str());
  *info = std::move(found);
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
