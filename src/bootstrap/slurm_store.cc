#include "bootstrap/slurm_store.h"

#include <cctype>
#include <cstdlib>
#include <thread>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

const char* step_node_list() {
  const char* list = env("SLURM_STEP_NODELIST");
  return list != nullptr ? list : env("SLURM_JOB_NODELIST");
}

uint64_t fnv1a64(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// The ports of this step's store, first to last.
Status step_ports(std::vector<int>* ports) {
  int64_t base = 0, count = 0;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_SLURM_PORT_BASE", &base));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_SLURM_PORT_COUNT", &count));
  if (base + count - 1 > 65535) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_SLURM_PORT_BASE=%lld + RCC_SLURM_PORT_COUNT=%lld go past port 65535",
                static_cast<long long>(base), static_cast<long long>(count));
  }
  const uint64_t first = fnv1a64(job_key()) % static_cast<uint64_t>(count);
  ports->clear();
  for (int i = 0; i < kSlurmPortTries && i < count; ++i) {
    ports->push_back(static_cast<int>(
        base + static_cast<int64_t>((first + static_cast<uint64_t>(i)) % static_cast<uint64_t>(count))));
  }
  return RCC_SUCCESS;
}

}  // namespace

std::string slurm_first_host(const std::string& list) {
  std::string host;
  size_t i = 0;
  while (i < list.size() && list[i] != ',') {
    if (list[i] != '[') {
      host += list[i++];
      continue;
    }
    // A range list: its first number, zero-padding kept ("[07-09,12]" gives "07").
    size_t close = list.find(']', i);
    if (close == std::string::npos) return "";
    size_t end = i + 1;
    while (end < close && std::isdigit(static_cast<unsigned char>(list[end]))) ++end;
    if (end == i + 1) return "";
    host += list.substr(i + 1, end - i - 1);
    i = close + 1;
  }
  return host;
}

bool slurm_step_address_known() {
  const char* list = step_node_list();
  return list != nullptr && env("SLURMD_NODENAME") != nullptr && !slurm_first_host(list).empty();
}

Status connect_slurm_store(const JobInfo& info, double timeout_s, std::unique_ptr<StoreServer>* server,
                           std::unique_ptr<StoreClient>* client) {
  const char* list = step_node_list();
  const std::string first_node = list != nullptr ? slurm_first_host(list) : "";
  if (first_node.empty())
    return fail(RCC_ERR_BOOTSTRAP, "Slurm: cannot read SLURM_STEP_NODELIST '%s'", list ? list : "");
  std::vector<int> ports;
  RCC_RETURN_IF_ERROR(step_ports(&ports));
  const char* local_id = env("SLURM_LOCALID");
  const bool hosting = first_node == env("SLURMD_NODENAME") && local_id != nullptr && std::atoi(local_id) == 0;
  const Clock::time_point deadline = deadline_after(timeout_s);
  if (hosting) {
    std::unique_ptr<StoreServer> started;
    for (int port : ports) {
      if (StoreServer::start("0.0.0.0", port, first_node, info.secret, &started) == RCC_SUCCESS) break;
    }
    if (started == nullptr) {
      return fail(RCC_ERR_BOOTSTRAP,
                  "Slurm: this step's first task cannot listen on any of ports %d..%d (RCC_SLURM_PORT_BASE, "
                  "RCC_SLURM_PORT_COUNT): %s",
                  ports.front(), ports.back(), last_error().c_str());
    }
    RCC_INFO("Slurm: this task hosts the step's rendezvous at %s", started->address().c_str());
    RCC_RETURN_IF_ERROR(StoreClient::connect(started->address(), info.secret, timeout_s, client));
    *server = std::move(started);
    return RCC_SUCCESS;
  }
  // The host may not listen yet, or on a later port: try each in turn until one takes the secret.
  std::string last_problem = "nothing listened";
  while (Clock::now() < deadline) {
    for (int port : ports) {
      const std::string address = join_address(first_node, port);
      if (StoreClient::connect_once(address, info.secret, 1, client) == RCC_SUCCESS) {
        RCC_INFO("Slurm: the step's rendezvous is at %s", address.c_str());
        return RCC_SUCCESS;
      }
      last_problem = last_error();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_until(deadline))));
  }
  return fail(RCC_ERR_BOOTSTRAP,
              "rank %d could not reach its Slurm step's rendezvous on %s, ports %d..%d, within %.3g s "
              "(RCC_BOOTSTRAP_TIMEOUT): %s. The first task of the step's first node hosts it",
              info.rank, first_node.c_str(), ports.front(), ports.back(), timeout_s, last_problem.c_str());
}

}  // namespace rcc::bootstrap
