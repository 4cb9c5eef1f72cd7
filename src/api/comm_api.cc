// rcc_comm_* and rcc_get_unique_id.
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/job.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/log.h"

using rcc::Status;

namespace {

double bootstrap_timeout() { return static_cast<double>(rcc::config::get_int_or_default("RCC_BOOTSTRAP_TIMEOUT")); }

// Rendezvous servers started by rcc_get_unique_id live as long as the process.
std::mutex g_servers_mutex;
std::vector<std::unique_ptr<rcc::bootstrap::StoreServer>>& id_servers() {
  static auto* servers = new std::vector<std::unique_ptr<rcc::bootstrap::StoreServer>>;
  return *servers;
}

// Every rank announces it is leaving and waits for all others, progressing its engine meanwhile.
// The rank hosting the store leaves last, so no one loses the store during the wait.
Status leave_together(rcc_comm* comm) {
  const double timeout = static_cast<double>(rcc::config::get_int_or_default("RCC_TIMEOUT"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  const std::string prefix = comm->key_prefix + "/leaving/";
  RCC_RETURN_IF_ERROR(comm->store->set(prefix + std::to_string(comm->rank), {}));
  for (int peer = 0; peer < comm->size; ++peer) {
    for (;;) {
      bool found = false;
      std::vector<uint8_t> ignored;
      RCC_RETURN_IF_ERROR(comm->store->try_get(prefix + std::to_string(peer), &found, &ignored));
      if (found) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return rcc::fail(RCC_ERR_TIMEOUT, "rank %d did not reach rcc_comm_destroy within %.0f s", peer, timeout);
      }
      comm->engine->progress();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (comm->store_server != nullptr) {
    for (int peer = 0; peer < comm->size; ++peer) {
      std::vector<uint8_t> ignored;
      if (peer != comm->rank) RCC_RETURN_IF_ERROR(comm->store->get(comm->key_prefix + "/left/" + std::to_string(peer), timeout, &ignored));
    }
  } else {
    RCC_RETURN_IF_ERROR(comm->store->set(comm->key_prefix + "/left/" + std::to_string(comm->rank), {}));
  }
  return RCC_SUCCESS;
}

}  // namespace

extern "C" rcc_status_t rcc_comm_init(rcc_comm_t* comm) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init: comm is NULL");
  rcc::bootstrap::JobInfo job;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::detect_job(&job));
  std::unique_ptr<rcc::bootstrap::StoreServer> server;
  std::unique_ptr<rcc::bootstrap::StoreClient> store;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::connect_job(&job, bootstrap_timeout(), &server, &store));
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::create_comm(job, std::move(server), std::move(store), &created));
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
    id_servers().push_back(std::move(server));
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
  rcc::bootstrap::JobInfo job;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::decode_unique_id(id.internal, &job.store_address, &job.secret));
  job.rank = rank;
  job.size = size;
  job.source = "unique-id";
  std::unique_ptr<rcc::bootstrap::StoreClient> store;
  RCC_RETURN_IF_ERROR(rcc::bootstrap::StoreClient::connect(job.store_address, job.secret, bootstrap_timeout(), &store));
  rcc_comm* created = nullptr;
  RCC_RETURN_IF_ERROR(rcc::create_comm(job, nullptr, std::move(store), &created));
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

extern "C" rcc_status_t rcc_comm_abort(rcc_comm_t comm) {
  Status status = rcc::check_comm(comm, "rcc_comm_abort");
  if (status == RCC_ERR_ABORTED) return RCC_SUCCESS;  // aborting twice is harmless
  RCC_RETURN_IF_ERROR(status);
  comm->aborted.store(true);
  comm->engine->abort();
  return RCC_SUCCESS;
}

extern "C" rcc_status_t rcc_comm_destroy(rcc_comm_t comm) {
  if (comm == nullptr) return rcc::fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_destroy: comm is NULL");
  if (!rcc::unregister_comm(comm)) {
    return rcc::fail(RCC_ERR_INVALID_USAGE, "rcc_comm_destroy: comm is not a live communicator (destroyed twice?)");
  }
  // Peers may still write into this rank's memory until they are done too: meet them at the
  // rendezvous first (progressing, so a last message still queued goes out), unless the
  // communicator is already broken.
  if (!comm->aborted.load() && !comm->engine->broken()) {
    comm->executor.reset();
    Status status = leave_together(comm);
    if (status != RCC_SUCCESS) RCC_INFO("rcc_comm_destroy: peers did not all arrive: %s", rcc::last_error().c_str());
  }
  delete comm;
  return RCC_SUCCESS;
}
