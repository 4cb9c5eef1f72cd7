#include "core/comm.h"

#include <sched.h>

#include <mutex>
#include <unordered_set>

#include "core/config.h"
#include "core/fast_tls.h"
#include "core/log.h"
#include "transport/transport.h"

namespace rcc {
namespace {

std::mutex g_registry_mutex;
std::unordered_set<rcc_comm*>& live_comms() {
  static auto* comms = new std::unordered_set<rcc_comm*>;
  return *comms;
}
// Communicators made by one process are numbered so that their rendezvous keys never collide.
std::atomic<uint64_t> g_comm_generation{0};

}  // namespace

namespace detail {
std::atomic<uint64_t> g_unregistrations{0};
RCC_FAST_TLS constinit thread_local const rcc_comm* t_live_comm = nullptr;
RCC_FAST_TLS constinit thread_local uint64_t t_live_comm_unregistrations = 0;
}  // namespace detail
using detail::g_unregistrations;
using detail::t_live_comm;
using detail::t_live_comm_unregistrations;

void register_comm(rcc_comm* comm) {
  std::lock_guard<std::mutex> guard(g_registry_mutex);
  live_comms().insert(comm);
}

bool unregister_comm(rcc_comm* comm) {
  std::lock_guard<std::mutex> guard(g_registry_mutex);
  g_unregistrations.fetch_add(1, std::memory_order_acq_rel);
  return live_comms().erase(comm) == 1;
}

Status check_comm_slow(rcc_comm_t comm, const char* function) {
  if (comm == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "%s: comm is NULL", function);
  const uint64_t unregistrations = g_unregistrations.load(std::memory_order_acquire);
  if (comm != t_live_comm || unregistrations != t_live_comm_unregistrations) {
    std::lock_guard<std::mutex> guard(g_registry_mutex);
    if (live_comms().count(comm) == 0) {
      return fail(RCC_ERR_INVALID_USAGE, "%s: comm is not a live communicator (destroyed, or never initialised)",
                  function);
    }
    t_live_comm = comm;
    t_live_comm_unregistrations = g_unregistrations.load(std::memory_order_acquire);
  }
  if (comm->aborted.load()) return fail(RCC_ERR_ABORTED, "%s: the communicator was aborted", function);
  return RCC_SUCCESS;
}

namespace {

// Whether this host's ranks outnumber the cores this process may use (unknown count: assume so,
// then waiting ranks yield, which costs latency but never starves a rank of its core).
bool host_oversubscribed(int local_size) {
  cpu_set_t cores;
  CPU_ZERO(&cores);
  if (local_size <= 0 || sched_getaffinity(0, sizeof cores, &cores) != 0) return true;
  return local_size > CPU_COUNT(&cores);
}

}  // namespace

Status create_comm(const bootstrap::JobInfo& job, std::unique_ptr<bootstrap::StoreServer> server,
                   std::unique_ptr<bootstrap::StoreClient> store, rcc_comm** out) {
  log::set_rank(job.rank);
  const double timeout_s = static_cast<double>(config::get_int_or_default("RCC_BOOTSTRAP_TIMEOUT"));
  transport::Options options;
  options.rank = job.rank;
  options.size = job.size;
  options.local_rank = job.local_rank;
  // Slot messages and rendezvous notices are each bounded by the eager slot count (the credits).
  options.max_notifies_per_peer = 2 * static_cast<int>(config::get_int_or_default("RCC_EAGER_SLOTS"));
  std::unique_ptr<transport::Transport> transport;
  RCC_RETURN_IF_ERROR(transport::create_transport(options, &transport));

  auto comm = std::make_unique<rcc_comm>();
  comm->rank = job.rank;
  comm->size = job.size;
  comm->local_rank = job.local_rank;
  comm->store_server = std::move(server);
  comm->store = std::move(store);
  const std::string prefix = "rcc/comm" + std::to_string(g_comm_generation.fetch_add(1));
  comm->key_prefix = prefix;
  RCC_RETURN_IF_ERROR(p2p::Engine::create(std::move(transport), *comm->store, prefix, job.rank, job.size, timeout_s,
                                          &comm->engine));
  rcc::p2p::Engine* engine = comm->engine.get();
  RCC_RETURN_IF_ERROR(LivenessMonitor::start(
      *comm->store, prefix, job.rank, job.size, job.secret, timeout_s,
      [engine](int peer, const std::string& why) { engine->peer_failed(peer, why); }, &comm->liveness));
  RCC_RETURN_IF_ERROR(shm::Segment::create(*comm->store, prefix, job.rank, job.size, timeout_s, engine, &comm->shm));
  engine->set_oversubscribed(comm->shm ? comm->shm->oversubscribed() : host_oversubscribed(job.local_size));
  comm->executor = std::make_unique<Executor>();
  RCC_INFO("communicator ready: rank %d of %d (%s), transport %s%s", job.rank, job.size, job.source.c_str(),
           comm->engine->transport_name(), comm->shm ? ", collectives through shared memory" : "");
  *out = comm.release();
  register_comm(*out);
  return RCC_SUCCESS;
}

}  // namespace rcc
