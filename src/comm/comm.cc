#include "comm/comm.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>

#include "base/log.h"
#include "base/settings.h"
#include "comm/call_dump.h"
#include "comm/collective_exchange.h"
#include "transport/transport.h"

namespace rcc {
namespace {

std::mutex g_registry_mutex;
std::unordered_set<rcc_comm*>& live_comms() {
  static auto* comms = new std::unordered_set<rcc_comm*>;
  return *comms;
}

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

// The communicator's segment, when its ranks share this host (collective over its ranks, who meet
// through `exchange`).
Status make_segment(rcc_comm* comm, bootstrap::Exchange& exchange) {
  JobConnections& job = *comm->job;
  shm::SegmentSetup segment;
  segment.exchange = &exchange;
  segment.rank = comm->rank;
  segment.size = comm->size;
  segment.timeout_s = job.bootstrap_timeout_s;
  segment.op_timeout_s = comm->timeout_s;
  segment.hosts = &comm->hosts;
  segment.wait = job.wait;
  segment.wait.rank = comm->rank;
  if (comm->neighbours != nullptr) segment.wait.neighbours = comm->neighbours.get();
  segment.health = comm->group;
  return shm::Segment::create(segment, &comm->shm);
}

// The parts every communicator has, once its job and group are set. Its ranks meet through
// `exchange` (the job's rendezvous), or, when null, through the connections (CollectiveExchange).
Status finish_comm(std::unique_ptr<rcc_comm> comm, bootstrap::Exchange* exchange, rcc_comm** out) {
  comm->engine = comm->job->engine.get();
  comm->user_context = p2p::user_context(comm->group->id());
  comm->timeout_s = comm->job->timeout_s;
  if (exchange != nullptr) {
    RCC_RETURN_IF_ERROR(make_segment(comm.get(), *exchange));
  } else {
    CollectiveExchange over_connections(*comm);
    RCC_RETURN_IF_ERROR(make_segment(comm.get(), over_connections));
  }
  comm->executor = std::make_unique<Executor>();
  {
    std::lock_guard<std::mutex> guard(comm->job->comms_mutex);
    ++comm->job->comms;
  }
  *out = comm.release();
  register_comm(*out);
  return RCC_SUCCESS;
}

// The last step of every creation (collective): the levels; on failure the new communicator goes
// and *out is null.
Status add_levels(rcc_comm** out) {
  const Status status = make_levels(*out);
  if (status != RCC_SUCCESS) {
    const std::string message = last_error();
    unregister_comm(*out);
    destroy_comm(*out);
    *out = nullptr;
    set_last_error(message);
  }
  return status;
}

}  // namespace

Status create_comm(const bootstrap::JobInfo& info, std::unique_ptr<bootstrap::Rendezvous> rendezvous, rcc_comm** out) {
  log::set_rank(info.rank);
  auto shared = std::make_shared<JobConnections>();
  JobConnections& job = *shared;
  int64_t timeout = 0, bootstrap_timeout = 0, eager_slots = 0;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_TIMEOUT", &timeout));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_BOOTSTRAP_TIMEOUT", &bootstrap_timeout));
  RCC_RETURN_IF_ERROR(settings::integer("RCC_EAGER_SLOTS", &eager_slots));
  job.rank = info.rank;
  job.size = info.size;
  job.timeout_s = static_cast<double>(timeout);
  job.bootstrap_timeout_s = static_cast<double>(bootstrap_timeout);
  job.rendezvous = std::move(rendezvous);
  bootstrap::Rendezvous& meet = *job.rendezvous;

  RCC_RETURN_IF_ERROR(bootstrap::HostMap::exchange(meet, job.bootstrap_timeout_s, &job.hosts));
  const bool crowded = job.hosts.crowded(job.hosts.host_of(info.rank));
  RCC_RETURN_IF_ERROR(WaitPolicy::from_settings(crowded, &job.wait));
  RCC_RETURN_IF_ERROR(shm::Presence::create(meet, job.hosts, job.bootstrap_timeout_s, &job.presence));
  job.wait.neighbours = job.presence.get();
  job.wait.rank = info.rank;
  RCC_INFO("rank %d runs on CPUs %s of %s; %zu rank(s) on this host%s", info.rank,
           job.hosts.place(info.rank).cpus.to_text().c_str(), job.hosts.place(info.rank).host_name.c_str(),
           job.hosts.ranks_on(job.hosts.host_of(info.rank)).size(),
           crowded ? ", more than its CPUs: waiting ranks yield" : "");

  transport::Options options;
  options.rank = info.rank;
  options.size = info.size;
  options.local_rank = info.local_rank;
  options.timeout_s = job.timeout_s;
  options.secret = info.secret;
  options.host_of.resize(static_cast<size_t>(info.size));
  for (int r = 0; r < info.size; ++r) options.host_of[static_cast<size_t>(r)] = job.hosts.host_of(r);
  // Slot messages and rendezvous notices are each bounded by the eager slot count (the credits);
  // so are credit notices (notified delivery), each of which reports at least one more consumed
  // slot message or notice of the peer's, of which it cannot have more than that outstanding.
  options.max_notifies_per_peer = 4 * static_cast<int>(eager_slots);
  std::unique_ptr<transport::Transport> transport;
  RCC_RETURN_IF_ERROR(transport::create_transport(options, &transport));
  RCC_RETURN_IF_ERROR(
      p2p::Engine::create(std::move(transport), meet, &job.hosts, job.bootstrap_timeout_s, &job.engine));
  job.engine->set_wait_policy(job.wait);
  dump_calls_on_first_timeout(job);
  p2p::Engine* engine = job.engine.get();
  int64_t peer_timeout = 0;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_PEER_TIMEOUT", &peer_timeout));
  RCC_RETURN_IF_ERROR(bootstrap::LivenessMonitor::start(
      meet, info.secret, job.bootstrap_timeout_s, static_cast<double>(peer_timeout),
      [engine](int peer, const std::string& why) { engine->peer_failed(peer, why); }, &job.liveness));
  RCC_RETURN_IF_ERROR(DumpOnSignal::start(job, &job.dump_on_signal));

  auto comm = std::make_unique<rcc_comm>();
  comm->rank = info.rank;
  comm->size = info.size;
  comm->job = std::move(shared);
  comm->group = &engine->world_group();
  comm->hosts = comm->job->hosts;
  RCC_RETURN_IF_ERROR(finish_comm(std::move(comm), &meet, out));
  RCC_RETURN_IF_ERROR(add_levels(out));
  RCC_INFO("communicator ready: rank %d of %d (%s, rendezvous through %s), transport %s%s", info.rank, info.size,
           info.source.c_str(), meet.describe().c_str(), engine->transport_name(),
           (*out)->shm ? ", collectives through shared memory" : "");
  return RCC_SUCCESS;
}

Status create_sub_comm(const rcc_comm& parent, uint32_t id, std::vector<int> members, rcc_comm** out) {
  JobConnections& job = *parent.job;
  const int size = static_cast<int>(members.size());
  const auto me = std::find(members.begin(), members.end(), job.rank);
  if (me == members.end()) return fail(RCC_ERR_INTERNAL, "a new communicator without this rank (%d)", job.rank);
  auto comm = std::make_unique<rcc_comm>();
  comm->rank = static_cast<int>(me - members.begin());
  comm->size = size;
  comm->job = parent.job;
  comm->hosts = job.hosts.subset(members);
  comm->group = job.engine->add_group(id, std::move(members));
  if (job.presence != nullptr) comm->neighbours = std::make_unique<GroupNeighbours>(*job.presence, *comm->group);
  rcc_comm* raw = comm.get();
  p2p::Group* group = comm->group;
  Status status = finish_comm(std::move(comm), nullptr, out);
  if (status != RCC_SUCCESS) {  // finish_comm freed the communicator
    job.engine->remove_group(group);
    return status;
  }
  RCC_RETURN_IF_ERROR(add_levels(out));
  RCC_TRACE("communicator %u ready: rank %d of %d (rank %d of the job)%s", raw->group->id(), raw->rank, raw->size,
            job.rank, raw->shm ? ", collectives through shared memory" : "");
  return RCC_SUCCESS;
}

}  // namespace rcc
