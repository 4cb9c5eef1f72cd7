// Reaching the rendezvous once the job is known: dial the launcher's store, or host it on rank 0
// and tell the others where (MASTER_ADDR/MASTER_PORT, or a file in a shared directory).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/job.h"
#include "bootstrap/slurm_store.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store_rendezvous.h"
#include "bootstrap/torch_store.h"
#ifdef RCC_WITH_PMIX
#include "bootstrap/pmix/pmix_rendezvous.h"
#endif

namespace rcc::bootstrap {
namespace {

std::string store_file_path(std::string* dir_out) {
  std::string dir = settings::text("RCC_STORE_DIR");
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
  return fail(
      RCC_ERR_BOOTSTRAP,
      "rank %d could not find rank 0's rendezvous within %.3g s (RCC_BOOTSTRAP_TIMEOUT): %s. Rank 0 publishes it in "
      "%s; RCC_STORE_DIR must be a directory all hosts share (or set MASTER_ADDR and MASTER_PORT)",
      info->rank, timeout_s, last_problem.c_str(), path.c_str());
}

// A store rcc does not run (torchrun's, a caller's) has no secret of its own: the secret of rcc's
// own connections is drawn by rank 0 and handed out through it (consumable: read once by every
// other rank, then gone).
Status secret_through_store(JobInfo* info, StoreClient& store, const std::string& prefix, double timeout_s) {
  const std::string key = prefix + "/secret";
  std::vector<uint8_t> secret;
  if (info->rank == 0) {
    std::string drawn;
    RCC_RETURN_IF_ERROR(make_secret(&drawn));
    secret.assign(drawn.begin(), drawn.end());
    if (info->size > 1) RCC_RETURN_IF_ERROR(store.set_consumable(key, secret, static_cast<uint32_t>(info->size - 1)));
  } else {
    RCC_RETURN_IF_ERROR(store.get(key, timeout_s, &secret));
  }
  info->secret.assign(secret.begin(), secret.end());
  return RCC_SUCCESS;
}

// Under torchrun's agent store: keys of this run and restart only (the agent's store outlives a
// restarted worker group).
std::string torch_agent_prefix(const std::string& prefix) {
  const char* run = std::getenv("TORCHELASTIC_RUN_ID");
  const char* restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
  return "rcc/torchelastic-" + std::string(run != nullptr ? run : "none") + "." +
         std::string(restart != nullptr ? restart : "0") + "/" + prefix;
}

}  // namespace

Status connect_job(JobInfo* info, double timeout_s, std::unique_ptr<Rendezvous>* out) {
  if (info == nullptr || out == nullptr)
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_job: info and out must not be null");
  if (info->meeting == Meeting::kPmix) {
#ifdef RCC_WITH_PMIX
    return connect_pmix(info, timeout_s, out);
#else
    return fail(RCC_ERR_INTERNAL, "connect_job: a PMIx job in an rcc built without PMIx");
#endif
  }
  std::unique_ptr<StoreServer> server;
  std::unique_ptr<StoreClient> client;
  RCC_RETURN_IF_ERROR(connect_store(info, timeout_s, &server, &client));
  if (info->meeting == Meeting::kTorchAgent) return meet_through_store(info, std::move(client), timeout_s, out);
  RCC_INFO("rank %d meets the others through %s", info->rank, client->describe().c_str());
  *out = std::make_unique<StoreRendezvous>(std::move(server), std::move(client), info->rank, info->size,
                                           StoreRendezvous::next_prefix());
  return RCC_SUCCESS;
}

Status meet_through_store(JobInfo* info, std::unique_ptr<StoreClient> store, double timeout_s,
                          std::unique_ptr<Rendezvous>* out) {
  std::string prefix = StoreRendezvous::next_prefix();
  if (info->meeting == Meeting::kTorchAgent) prefix = torch_agent_prefix(prefix);
  RCC_RETURN_IF_ERROR(secret_through_store(info, *store, prefix, timeout_s));
  RCC_INFO("rank %d meets the others through %s", info->rank, store->describe().c_str());
  // The caller's store (rcc_comm_init_store) is the caller's to use between rcc's calls.
  const bool lookups = info->meeting != Meeting::kCallerStore;
  *out = std::make_unique<StoreRendezvous>(nullptr, std::move(store), info->rank, info->size, prefix, lookups);
  return RCC_SUCCESS;
}

Status connect_store(JobInfo* info, double timeout_s, std::unique_ptr<StoreServer>* server,
                     std::unique_ptr<StoreClient>* client) {
  if (info == nullptr || server == nullptr || client == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: info, server and client must not be null");
  }
  if (info->size < 1 || info->rank < 0 || info->rank >= info->size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: rank %d / size %d is not a valid job", info->rank,
                info->size);
  }
  switch (info->meeting) {
    case Meeting::kPmix: return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: a PMIx job has no store");
    case Meeting::kCallerStore:
      return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: the caller hands its store in (meet_through_store)");
    case Meeting::kSlurmStep: return connect_slurm_store(*info, timeout_s, server, client);
    case Meeting::kTorchAgent:
      if (info->store_address.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: no store address");
      return connect_torch_store(info->store_address, timeout_s, client);
    case Meeting::kDialStore:
      if (info->store_address.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "connect_store: no store address");
      return StoreClient::connect(info->store_address, info->secret, timeout_s, client);
    case Meeting::kRank0Hosts: break;
  }
  if (info->rank != 0 && !info->store_address.empty()) {
    return StoreClient::connect(info->store_address, info->secret, timeout_s, client);
  }
  if (info->store_address.empty()) return connect_through_file(info, timeout_s, server, client);
  // Rank 0 with MASTER_ADDR/MASTER_PORT: listen on MASTER_PORT on every interface.
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(split_address(info->store_address, "MASTER_ADDR:MASTER_PORT", &host, &port));
  std::unique_ptr<StoreServer> started;
  RCC_RETURN_IF_ERROR(
      StoreServer::start(host.find(':') != std::string::npos ? "::" : "0.0.0.0", port, host, info->secret, &started));
  std::unique_ptr<StoreClient> connected;
  RCC_RETURN_IF_ERROR(StoreClient::connect(info->store_address, info->secret, timeout_s, &connected));
  *server = std::move(started);
  *client = std::move(connected);
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
