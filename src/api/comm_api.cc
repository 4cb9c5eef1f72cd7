// rcc_comm_* and rcc_get_unique_id.
#include <mutex>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/settings.h"
#include "bootstrap/callback_store.h"
#include "bootstrap/job.h"
#include "bootstrap/store_rendezvous.h"
#include "comm/comm.h"
#include "comm/split.h"

using rcc::Status;

namespace {

Status bootstrap_timeout(double* seconds) {
  int64_t value = 0;
  RCC_RETURN_IF_ERROR(rcc::settings::integer("RCC_BOOTSTRAP_TIMEOUT", &value));
  *seconds = static_cast<double>(value);
  return RCC_SUCCESS;
}

// Rendezvous servers started by rcc_get_unique_id, until this process initialises a communicator
// from that id: then the communicator owns the server (it goes with rcc_comm_destroy, as rank 0's
// server of rcc_comm_init does). One for an id this process never joins lives as long as the process.
struct IdServer {
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  std::string secret;
};
std::mutex g_servers_mutex;
std::vector<IdServer>& id_servers() {
  static auto* servers = new std::vector<IdServer>;
  return *servers;
}

// The server this process started for the id with this address and secret, if any (taken out).
std::unique_ptr<rcc::bootstrap::StoreServer> take_id_server(const std::string& address, const std::string& secret) {
  std::lock_guard<std::mutex> guard(g_servers_mutex);
  auto& servers = id_servers();
  for (auto it = servers.begin(); it != servers.end(); ++it) {
    if (it->server->address() == address && it->secret == secret) {
      std::unique_ptr<rcc::bootstrap::StoreServer> server = std::move(it->server);
      servers.erase(it);
      return server;
    }
  }
  return nullptr;
}

}  // namespace

extern "C" rcc_status_t rcc_comm_init(rcc_comm_t* comm) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init: comm is NULL");
  RCC_RETURN_IF_ERROR(rcc::settings::check_all());  // before any rank talks to another
  rcc::bootstrap::JobInfo job;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::detect_job(&job));
  std::unique_ptr<rcc::bootstrap::Rendezvous> rendezvous;
  double timeout_s = 0;
  RCC_RETURN_IF_ERROR(bootstrap_timeout(&timeout_s));
  RCC_RETURN_IF_ERROR(rcc::bootstrap::connect_job(&job, timeout_s, &rendezvous));
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::create_comm(job, std::move(rendezvous), &created));
  *comm = created;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_get_unique_id(rcc_unique_id_t* id) {
  if (id == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_get_unique_id: id is NULL");
  std::string secret;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::make_secret(&secret));
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  RCC_RETURN_IF_ERROR(
      rcc::bootstrap::StoreServer::start("0.0.0.0", 0, rcc::bootstrap::advertised_host(), secret, &server));
  rcc_unique_id_t encoded{};
  RCC_RETURN_IF_ERROR(rcc::bootstrap::encode_unique_id(server->address(), secret, encoded.internal));
  {
    std::lock_guard<std::mutex> guard(g_servers_mutex);
    id_servers().push_back({std::move(server), secret});
  }
  *id = encoded;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_init_rank(rcc_comm_t* comm, rcc_unique_id_t id, int rank, int size) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_rank: comm is NULL");
  if (size < 1) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_rank: size %d is less than 1", size);
  if (rank < 0 || rank >= size) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_rank: rank %d is out of range [0, %d)", rank, size);
  }
  RCC_RETURN_IF_ERROR(rcc::settings::check_all());  // before any rank talks to another
  rcc::bootstrap::JobInfo job;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::decode_unique_id(id.internal, &job.store_address, &job.secret));
  job.rank = rank;
  job.size = size;
  job.source = "unique-id";
  std::unique_ptr<rcc::bootstrap::StoreClient> store;
  double timeout_s = 0;
  RCC_RETURN_IF_ERROR(bootstrap_timeout(&timeout_s));
  RCC_RETURN_IF_ERROR(rcc::bootstrap::StoreClient::connect(job.store_address, job.secret, timeout_s, &store));
  rcc_comm* created = nullptr;
  auto rendezvous =
      std::make_unique<rcc::bootstrap::StoreRendezvous>(take_id_server(job.store_address, job.secret), std::move(store),
                                                        rank, size, rcc::bootstrap::StoreRendezvous::next_prefix());
  RCC_RETURN_IF_ERROR(rcc::create_comm(job, std::move(rendezvous), &created));
  *comm = created;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_init_store(rcc_comm_t* comm, const rcc_store_t* store, int rank, int size) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: comm is NULL");
  if (store == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: store is NULL");
  if (size < 1) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: size %d is less than 1", size);
  if (rank < 0 || rank >= size) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: rank %d is out of range [0, %d)", rank, size);
  }
  std::unique_ptr<rcc::bootstrap::StoreClient> client;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::make_callback_store(*store, &client));
  RCC_RETURN_IF_ERROR(rcc::settings::check_all());  // before any rank talks to another
  rcc::bootstrap::JobInfo job;
  job.rank = rank;
  job.size = size;
  job.source = "store";
  job.meeting = rcc::bootstrap::Meeting::kCallerStore;
  double timeout_s = 0;
  RCC_RETURN_IF_ERROR(bootstrap_timeout(&timeout_s));
  std::unique_ptr<rcc::bootstrap::Rendezvous> rendezvous;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::meet_through_store(&job, std::move(client), timeout_s, &rendezvous));
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::create_comm(job, std::move(rendezvous), &created));
  *comm = created;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_rank(rcc_comm_t comm, int* rank) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_rank"));
  if (rank == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_rank: rank is NULL");
  *rank = comm->rank;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_size(rcc_comm_t comm, int* size) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_size"));
  if (size == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_size: size is NULL");
  *size = comm->size;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_transport(rcc_comm_t comm, const char** name) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_transport"));
  if (name == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_transport: name is NULL");
  *name = comm->engine->transport_name();
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_footprint(rcc_comm_t comm, rcc_footprint_t* footprint) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_footprint"));
  if (footprint == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_footprint: footprint is NULL");
  const rcc::p2p::Engine::Footprint held = comm->engine->footprint();
  *footprint = rcc_footprint_t{held.connected_peers, comm->engine->size(), held.eager_resident_bytes};
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_abort(rcc_comm_t comm) {
  Status status = rcc::check_comm(comm, "rcc_comm_abort");
  if (status == RCC_ERR_ABORTED) return RCC_SUCCESS;  // aborting twice is harmless
  RCC_RETURN_IF_ERROR(status);
  rcc::abort_comm(comm);
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_destroy(rcc_comm_t comm) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_destroy: comm is NULL");
  if (!rcc::unregister_comm(comm)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_comm_destroy: comm is not a live communicator (destroyed twice?)");
  }
  return rcc::destroy_comm(comm);
}

extern "C" rcc_status_t rcc_comm_split(rcc_comm_t comm, int color, int key, rcc_comm_t* newcomm) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_split"));
  if (newcomm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_split: newcomm is NULL");
  if (color < 0 && color != RCC_UNDEFINED) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_split: color %d is negative and not RCC_UNDEFINED", color);
  }
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::split_comm(comm, color, key, &created));
  *newcomm = created;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_host(rcc_comm_t comm, int* host, int* hosts) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_host"));
  // The host map groups ranks by what they found they can share at set-up (bootstrap/hosts.h).
  if (host != nullptr) *host = comm->hosts.host_of(comm->rank);
  if (hosts != nullptr) *hosts = comm->hosts.hosts();
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_create_group(rcc_comm_t comm, const int* ranks, int n, int tag, rcc_comm_t* newcomm) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_create_group"));
  if (newcomm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: newcomm is NULL");
  if (ranks == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: ranks is NULL");
  if (n < 1 || n > comm->size) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: n %d is not in [1, %d]", n, comm->size);
  }
  if (tag < 0 || tag >= rcc::kCreateGroupTags) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: tag %d is not in [0, 2^30)", tag);
  }
  std::vector<int> listed(ranks, ranks + n);
  std::vector<bool> seen(static_cast<size_t>(comm->size), false);
  for (int i = 0; i < n; ++i) {
    if (listed[static_cast<size_t>(i)] < 0 || listed[static_cast<size_t>(i)] >= comm->size) {
      return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: ranks[%d] = %d is not a rank of comm (0..%d)",
                       i, listed[static_cast<size_t>(i)], comm->size - 1);
    }
    if (seen[static_cast<size_t>(listed[static_cast<size_t>(i)])]) {
      return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: ranks[%d] = %d is listed twice", i,
                       listed[static_cast<size_t>(i)]);
    }
    seen[static_cast<size_t>(listed[static_cast<size_t>(i)])] = true;
  }
  if (!seen[static_cast<size_t>(comm->rank)]) {
    return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_create_group: ranks does not list this rank (%d)", comm->rank);
  }
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::create_group_comm(comm, listed, tag, &created));
  *newcomm = created;
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_dup(rcc_comm_t comm, rcc_comm_t* newcomm) {
  RCC_RETURN_IF_ERROR(rcc::check_comm(comm, "rcc_comm_dup"));
  if (newcomm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_dup: newcomm is NULL");
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::split_comm(comm, 0, comm->rank, &created));
  *newcomm = created;
  return RCC_SUCCESS;
}
