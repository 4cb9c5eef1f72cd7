// Job detection (which launcher started us), the rendezvous hookup for each convention, the
// unique id encoding and the address this host advertises.
#include "bootstrap/job.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "bootstrap/socket_util.h"
#include "core/config.h"
#include "core/log.h"

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
std::string job_key() {
  std::string key;
  if (config::is_set("RCC_JOB_ID")) {
    key = config::get_string("RCC_JOB_ID");
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

// Fills the rank/size fields for the launchers whose rank 0 hosts the store.
Status finish_rank0_hosted(JobInfo* info) {
  info->rank0_hosts_store = true;
  const char* master_addr = foreign_env("MASTER_ADDR");
  const char* master_port = foreign_env("MASTER_PORT");
  if (master_addr != nullptr && master_port != nullptr) {
    int port = 0;
    RCC_RETURN_IF_ERROR(parse_count("MASTER_PORT", master_port, &port));
    if (port < 1 || port > 65535) return fail(RCC_ERR_BOOTSTRAP, "MASTER_PORT=%d is not a port", port);
    info->store_address = join_address(master_addr, port);
    info->secret = config::is_set("RCC_JOB_SECRET") ? config::get_string("RCC_JOB_SECRET")
                                                    : derived_secret(job_key(), info->size, info->store_address);
  }
  return RCC_SUCCESS;
}

Status detect_rccrun(JobInfo* info) {
  const char* needed[] = {"RCC_SIZE", "RCC_STORE_ADDR", "RCC_JOB_SECRET"};
  for (const char* name : needed) {
    if (!config::is_set(name)) return fail(RCC_ERR_BOOTSTRAP, "RCC_RANK is set but %s is not (start ranks with rccrun)", name);
  }
  RCC_RETURN_IF_ERROR(parse_count("RCC_RANK", config::get_string("RCC_RANK").c_str(), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("RCC_SIZE", config::get_string("RCC_SIZE").c_str(), &info->size));
  if (config::is_set("RCC_LOCAL_RANK")) {
    RCC_RETURN_IF_ERROR(parse_count("RCC_LOCAL_RANK", config::get_string("RCC_LOCAL_RANK").c_str(), &info->local_rank));
  }
  if (config::is_set("RCC_LOCAL_SIZE")) {
    RCC_RETURN_IF_ERROR(parse_count("RCC_LOCAL_SIZE", config::get_string("RCC_LOCAL_SIZE").c_str(), &info->local_size));
  }
  info->source = "rccrun";
  info->store_address = config::get_string("RCC_STORE_ADDR");
  info->secret = config::get_string("RCC_JOB_SECRET");
  info->rank0_hosts_store = false;
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
  return finish_rank0_hosted(info);
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
    if (foreign_env(name) == nullptr) return fail(RCC_ERR_BOOTSTRAP, "RANK is set (torchrun convention) but %s is not", name);
  }
  RCC_RETURN_IF_ERROR(parse_count("RANK", foreign_env("RANK"), &info->rank));
  RCC_RETURN_IF_ERROR(parse_count("WORLD_SIZE", foreign_env("WORLD_SIZE"), &info->size));
  RCC_RETURN_IF_ERROR(optional_count("LOCAL_RANK", &info->local_rank));
  RCC_RETURN_IF_ERROR(optional_count("LOCAL_WORLD_SIZE", &info->local_size));
  info->source = "torchrun";
  RCC_RETURN_IF_ERROR(validate(info, "RANK", "WORLD_SIZE"));
  return finish_rank0_hosted(info);
}

std::string store_file_path(std::string* dir_out) {
  std::string dir = config::get_string("RCC_STORE_DIR");
  if (dir.empty()) {
    const char* home = std::getenv("HOME");
    dir = std::string(home != nullptr && home[0] != '\0' ? home : "/tmp") + "/.rcc";
  }
  *dir_out = dir;
  return dir + "/rcc-" + job_key();
}

// Removes the published address when rank 0's server goes away.
class PublishedStoreServer final : public StoreServer {
 public:
  PublishedStoreServer(std::unique_ptr<StoreServer> inner, std::string path)
      : inner_(std::move(inner)), path_(std::move(path)) {}
  ~PublishedStoreServer() override {
    unlink(path_.c_str());
    inner_.reset();
  }
  std::string address() const override { return inner_->address(); }
  int port() const override { return inner_->port(); }

 private:
  std::unique_ptr<StoreServer> inner_;
  std::string path_;
};

Status publish(const std::string& dir, const std::string& path, const std::string& content) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(RCC_ERR_BOOTSTRAP, "cannot create RCC_STORE_DIR %s: %s", dir.c_str(), std::strerror(errno));
  }
  std::string temp = path + ".tmp." + std::to_string(getpid());
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(RCC_ERR_BOOTSTRAP, "cannot create %s: %s", temp.c_str(), std::strerror(errno));
  bool written = write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  written = fsync(fd) == 0 && written;
  close(fd);
  if (!written || rename(temp.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(temp.c_str());
    return fail(RCC_ERR_BOOTSTRAP, "cannot publish the store address in %s: %s", path.c_str(), std::strerror(error));
  }
  return RCC_SUCCESS;
}

// Reads "host:port secret" from the published file; false while it does not exist (yet).
bool read_published(const std::string& path, std::string* address, std::string* secret) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[512];
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0) return false;
  std::string text(buffer, static_cast<size_t>(n));
  size_t space = text.find(' ');
  if (space == std::string::npos) return false;
  size_t end = text.find_first_of("\r\n", space + 1);
  *address = text.substr(0, space);
  *secret = text.substr(space + 1, end == std::string::npos ? std::string::npos : end - space - 1);
  return !address->empty() && !secret->empty();
}

double seconds_until(Clock::time_point deadline) {
  double left = std::chrono::duration<double>(deadline - Clock::now()).count();
  return left > 0 ? left : 0;
}

Status connect_through_file(JobInfo* info, double timeout_s, std::unique_ptr<StoreServer>* server,
                            std::unique_ptr<StoreClient>* client) {
  std::string dir;
  const std::string path = store_file_path(&dir);
  const Clock::time_point deadline = deadline_after(timeout_s);
  if (info->rank == 0) {
    std::string secret;
    RCC_RETURN_IF_ERROR(make_secret(&secret));
    std::unique_ptr<StoreServer> started;
    RCC_RETURN_IF_ERROR(StoreServer::start("0.0.0.0", 0, advertised_host(), secret, &started));
    RCC_RETURN_IF_ERROR(publish(dir, path, started->address() + " " + secret + "\n"));
    auto published = std::make_unique<PublishedStoreServer>(std::move(started), path);
    std::unique_ptr<StoreClient> connected;
    RCC_RETURN_IF_ERROR(StoreClient::connect(published->address(), secret, timeout_s, &connected));
    RCC_INFO("rank 0 hosts the rendezvous at %s, published in %s", published->address().c_str(), path.c_str());
    info->store_address = published->address();
    info->secret = secret;
    *server = std::move(published);
    *client = std::move(connected);
    return RCC_SUCCESS;
  }
  // A file left by an earlier job with the same key may point at a dead server: keep re-reading.
  std::string last_problem = "the file " + path + " did not appear";
  while (Clock::now() < deadline) {
    std::string address;
    std::string secret;
    if (read_published(path, &address, &secret)) {
      std::unique_ptr<StoreClient> connected;
      double attempt = std::min(2.0, seconds_until(deadline));
      if (StoreClient::connect(address, secret, attempt, &connected) == RCC_SUCCESS) {
        info->store_address = address;
        info->secret = secret;
        *client = std::move(connected);
        return RCC_SUCCESS;
      }
      last_problem = last_error();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_until(deadline))));
  }
  return fail(RCC_ERR_BOOTSTRAP,
              "rank %d could not find rank 0's rendezvous within %.3g s (RCC_BOOTSTRAP_TIMEOUT): %s. Rank 0 publishes it in "
              "%s; RCC_STORE_DIR must be a directory all hosts share (or set MASTER_ADDR and MASTER_PORT)",
              info->rank, timeout_s, last_problem.c_str(), path.c_str());
}

uint32_t fnv1a32(const uint8_t* data, size_t size) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}

constexpr char kUniqueIdMagic[4] = {'R', 'C', 'C', 'U'};
constexpr uint8_t kUniqueIdVersion = 1;
constexpr size_t kUniqueIdBytes = 128;
constexpr size_t kUniqueIdHeader = 8;    // magic, version, address length, secret length, 0
constexpr size_t kUniqueIdChecksum = 4;  // FNV-1a of everything before it

}  // namespace

Status detect_job(JobInfo* info) {
  if (info == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "detect_job: info is null");
  JobInfo found;
  Status status;
  if (config::is_set("RCC_RANK")) {
    status = detect_rccrun(&found);
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
                "RCC_STORE_ADDR, RCC_JOB_SECRET (rccrun); SLURM_PROCID, SLURM_NTASKS (Slurm); OMPI_COMM_WORLD_RANK, "
                "OMPI_COMM_WORLD_SIZE (Open MPI); PMI_RANK, PMI_SIZE (MPICH/Hydra); RANK, WORLD_SIZE, MASTER_ADDR, "
                "MASTER_PORT (torchrun). Start the program with rccrun -n N, or use rcc_get_unique_id");
  }
  RCC_RETURN_IF_ERROR(status);
  RCC_INFO("job: rank %d of %d (local %d of %d) from %s", found.rank, found.size, found.local_rank, found.local_size,
           found.source.c_str());
  *info = std::move(found);
  return RCC_SUCCESS;
}

Status connect_job(JobInfo* info, double timeout_s, std::unique_ptr<StoreServer>* server,
                   std::unique_ptr<StoreClient>* client) {
  if (info == nullptr || server == nullptr || client == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_job: info, server and client must not be null");
  }
  if (info->size < 1 || info->rank < 0 || info->rank >= info->size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_job: rank %d / size %d is not a valid job", info->rank, info->size);
  }
  if (!info->rank0_hosts_store || (info->rank != 0 && !info->store_address.empty())) {
    if (info->store_address.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "connect_job: no store address");
    return StoreClient::connect(info->store_address, info->secret, timeout_s, client);
  }
  if (info->store_address.empty()) return connect_through_file(info, timeout_s, server, client);
  // Rank 0 with MASTER_ADDR/MASTER_PORT: listen on MASTER_PORT on every interface.
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(split_address(info->store_address, "MASTER_ADDR:MASTER_PORT", &host, &port));
  std::unique_ptr<StoreServer> started;
  RCC_RETURN_IF_ERROR(StoreServer::start(host.find(':') != std::string::npos ? "::" : "0.0.0.0", port, host,
                                         info->secret, &started));
  std::unique_ptr<StoreClient> connected;
  RCC_RETURN_IF_ERROR(StoreClient::connect(info->store_address, info->secret, timeout_s, &connected));
  *server = std::move(started);
  *client = std::move(connected);
  return RCC_SUCCESS;
}

Status encode_unique_id(const std::string& address, const std::string& secret, char out[128]) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "encode_unique_id: out is null");
  const size_t room = kUniqueIdBytes - kUniqueIdHeader - kUniqueIdChecksum;
  if (address.empty() || secret.empty() || address.size() + secret.size() > room) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id: address (%zu bytes) and secret (%zu bytes) must fit in %zu bytes",
                address.size(), secret.size(), room);
  }
  uint8_t bytes[kUniqueIdBytes] = {};
  std::memcpy(bytes, kUniqueIdMagic, 4);
  bytes[4] = kUniqueIdVersion;
  bytes[5] = static_cast<uint8_t>(address.size());
  bytes[6] = static_cast<uint8_t>(secret.size());
  std::memcpy(bytes + kUniqueIdHeader, address.data(), address.size());
  std::memcpy(bytes + kUniqueIdHeader + address.size(), secret.data(), secret.size());
  uint32_t sum = fnv1a32(bytes, kUniqueIdBytes - kUniqueIdChecksum);
  for (int i = 0; i < 4; ++i) bytes[kUniqueIdBytes - 4 + i] = static_cast<uint8_t>(sum >> (8 * i));
  std::memcpy(out, bytes, kUniqueIdBytes);
  return RCC_SUCCESS;
}

Status decode_unique_id(const char in[128], std::string* address, std::string* secret) {
  if (in == nullptr || address == nullptr || secret == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "decode_unique_id: in, address and secret must not be null");
  }
  uint8_t bytes[kUniqueIdBytes];
  std::memcpy(bytes, in, kUniqueIdBytes);
  if (std::memcmp(bytes, kUniqueIdMagic, 4) != 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id is not an rcc unique id (bad magic); pass the bytes rcc_get_unique_id produced");
  }
  if (bytes[4] != kUniqueIdVersion) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id has version %d, this rcc understands %d", bytes[4], kUniqueIdVersion);
  }
  uint32_t sum = 0;
  for (int i = 3; i >= 0; --i) sum = (sum << 8) | bytes[kUniqueIdBytes - 4 + i];
  if (sum != fnv1a32(bytes, kUniqueIdBytes - kUniqueIdChecksum)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id is corrupted (checksum mismatch)");
  }
  size_t address_size = bytes[5];
  size_t secret_size = bytes[6];
  if (address_size == 0 || secret_size == 0 || bytes[7] != 0 ||
      kUniqueIdHeader + address_size + secret_size > kUniqueIdBytes - kUniqueIdChecksum) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id has invalid lengths (address %zu, secret %zu)", address_size, secret_size);
  }
  std::string decoded_address(reinterpret_cast<const char*>(bytes + kUniqueIdHeader), address_size);
  std::string decoded_secret(reinterpret_cast<const char*>(bytes + kUniqueIdHeader + address_size), secret_size);
  std::string host;
  int port = 0;
  if (split_address(decoded_address, "unique id address", &host, &port) != RCC_SUCCESS) return RCC_ERR_INVALID_ARGUMENT;
  *address = decoded_address;
  *secret = decoded_secret;
  return RCC_SUCCESS;
}

std::string advertised_host() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "127.0.0.1";
  const std::string wanted = config::get_string("RCC_SOCKET_IFNAME");
  std::string first_v4;
  std::string first_v6;
  std::string named;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || !(ifa->ifa_flags & IFF_UP)) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = "";
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr, text, sizeof text);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;  // needs a scope id to dial
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
    if (!wanted.empty() && wanted == ifa->ifa_name && (named.empty() || family == AF_INET)) named = text;
    if (ifa->ifa_flags & IFF_LOOPBACK) continue;
    if (family == AF_INET && first_v4.empty()) first_v4 = text;
    if (family == AF_INET6 && first_v6.empty()) first_v6 = text;
  }
  freeifaddrs(list);
  if (!wanted.empty()) {
    if (!named.empty()) return named;
    // On a host without that interface (RCC_* variables travel to every host) the automatic
    // choice is the best guess left.
    RCC_INFO("RCC_SOCKET_IFNAME=%s: no such interface with an address that is up on this host; choosing one",
             wanted.c_str());
  }
  if (!first_v4.empty()) return first_v4;
  if (!first_v6.empty()) return first_v6;
  return "127.0.0.1";
}

}  // namespace rcc::bootstrap
