// The communicator behind rcc_comm_t and the request behind rcc_request_t.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/fast_tls.h"
#include "bootstrap/exchange.h"
#include "bootstrap/hosts.h"
#include "bootstrap/job.h"
#include "bootstrap/liveness.h"
#include "collectives/collective.h"
#include "comm/dump_signal.h"
#include "comm/executor.h"
#include "p2p/engine.h"
#include "rcc/rcc.h"
#include "shm/presence.h"
#include "shm/segment.h"

namespace rcc {

// What every communicator of one job (one rcc_comm_init or rcc_comm_init_rank) shares: the
// rendezvous, where the ranks run, the p2p engine with its connections, and the liveness
// watcher. Sub-communicators make none of these again. Members are declared in the order they are
// built, so they are destroyed in reverse; the last communicator to go meets the other ranks
// first (teardown.cc).
struct JobConnections {
  int rank = -1;  // in the job
  int size = 0;
  double timeout_s = 60;            // RCC_TIMEOUT, read once at creation
  double bootstrap_timeout_s = 60;  // RCC_BOOTSTRAP_TIMEOUT
  std::unique_ptr<bootstrap::Rendezvous> rendezvous;
  bootstrap::HostMap hosts;
  std::unique_ptr<shm::Presence> presence;  // this host's board (null when it cannot be made)
  WaitPolicy wait;                          // refers to presence
  std::unique_ptr<p2p::Engine> engine;
  std::unique_ptr<bootstrap::LivenessMonitor> liveness;  // reports dead peers to the engine
  std::unique_ptr<DumpOnSignal> dump_on_signal;          // RCC_DEBUG_DUMP_SIGNAL=1: SIGUSR1 dumps the calls

  std::mutex comms_mutex;
  int comms = 0;  // live communicators on it
};

// A sub-communicator's view of the job's presence board: its ranks are members of the job's.
class GroupNeighbours final : public CpuNeighbours {
 public:
  GroupNeighbours(CpuNeighbours& job, const p2p::Group& group) : job_(job), group_(group) {}
  void note(int rank, int cpu) override { job_.note(group_.member(rank), cpu); }
  int cpu_of(int rank) const override { return job_.cpu_of(group_.member(rank)); }
  int ranks_on(int cpu) const override { return job_.ranks_on(cpu); }

 private:
  CpuNeighbours& job_;
  const p2p::Group& group_;
};

}  // namespace rcc

// The communicator: the one place that puts the layers together. rank and size are in this
// communicator; its group (p2p/group.h) maps them to the job's ranks. Members are declared in the
// order they are built, so they are destroyed in reverse (the executor first: it may still run
// collectives).
struct rcc_comm {
  int rank = -1;
  int size = 0;
  double timeout_s = 60;             // RCC_TIMEOUT
  uint64_t collective_sequence = 0;  // numbers collectives; tags of their messages carry it
  std::atomic<bool> aborted{false};
  std::shared_ptr<rcc::JobConnections> job;
  rcc::p2p::Engine* engine = nullptr;                // the job's
  rcc::p2p::Group* group = nullptr;                  // in the engine; removed at destroy
  uint32_t user_context = 0;                         // of its point-to-point messages
  std::unique_ptr<rcc::GroupNeighbours> neighbours;  // sub-communicators: the board in its ranks
  rcc::bootstrap::HostMap hosts;                     // of its ranks
  std::unique_ptr<rcc::shm::Segment> shm;            // null unless every rank is on this host
  std::unique_ptr<rcc::Executor> executor;
  // Ranks on several hosts, several on some: the two levels the hierarchical algorithms run on
  // (comm/levels.cc), each a communicator of its own that only this one uses. Null otherwise.
  rcc_comm* host_level = nullptr;
  rcc_comm* cross_level = nullptr;
  std::unique_ptr<rcc::collectives::Levels> levels;

  // The job's rank of this communicator's rank r.
  int job_rank(int r) const { return group->member(r); }
  // The context of the next collective (numbers it).
  rcc::collectives::Context next_collective() {
    return rcc::collectives::Context(*engine, shm.get(), *group, rank, collective_sequence++, levels.get());
  }
};

struct rcc_request {
  rcc_comm* comm = nullptr;
  // A send or receive; null with no collective either for a send that completed when posted.
  rcc::p2p::Request* p2p = nullptr;
  std::shared_ptr<rcc::Task> collective;  // a nonblocking collective
  rcc_msg_info_t send_info{};             // a send: its peer, tag and bytes (rcc_wait_info)
  uint64_t record = 0;                    // its flight-recorder entry (comm/call_record.h)
  std::atomic<bool> live{false};          // handed out and not yet waited for (pool bookkeeping)
};

namespace rcc {

// Builds a communicator once rank, size and the rendezvous are known (all init paths end here).
Status create_comm(const bootstrap::JobInfo& job, std::unique_ptr<bootstrap::Rendezvous> rendezvous, rcc_comm** out);
// A communicator of the job's ranks `members` (this rank among them) in group `id` of the engine,
// sharing parent's connections and, when its ranks share this host, with its own shared-memory
// segment (set up over those connections). Collective over the members.
Status create_sub_comm(const rcc_comm& parent, uint32_t id, std::vector<int> members, rcc_comm** out);
// Gives a communicator whose ranks span hosts, several on some, its two levels (unless
// RCC_HIERARCHY=0 on some rank, or a host could not set up its segment: then it has none).
// Collective over the communicator.
Status make_levels(rcc_comm* comm);
// Ends them (before the communicator itself).
void destroy_levels(rcc_comm* comm);
// rcc_comm_destroy: meets the other ranks (unless the communicator is broken), then frees it.
Status destroy_comm(rcc_comm* comm);
// rcc_comm_abort: every pending and later call fails with RCC_ERR_ABORTED; never blocks on peers.
void abort_comm(rcc_comm* comm);

// Live-object registries, so that use after destroy or free is an error instead of a crash.
void register_comm(rcc_comm* comm);
bool unregister_comm(rcc_comm* comm);

namespace detail {
// Bumped whenever a communicator goes away: a thread's cached "this comm is live" is then stale.
extern std::atomic<uint64_t> g_unregistrations;
// constinit: statically initialised, so reads from other files need no TLS wrapper call.
extern RCC_FAST_TLS constinit thread_local const rcc_comm* t_live_comm;
extern RCC_FAST_TLS constinit thread_local uint64_t t_live_comm_unregistrations;
}  // namespace detail
// The registry lookup (a global lock and a hash), and every error.
Status check_comm_slow(rcc_comm_t comm, const char* function);
// Inline because every call runs it: the registry is skipped when this thread already found this
// comm live and no communicator has been destroyed since.
inline Status check_comm(rcc_comm_t comm, const char* function) {
  if (comm != nullptr && comm == detail::t_live_comm &&
      detail::g_unregistrations.load(std::memory_order_acquire) == detail::t_live_comm_unregistrations &&
      !comm->aborted.load(std::memory_order_acquire)) {
    return RCC_SUCCESS;
  }
  return check_comm_slow(comm, function);
}
// Request handles come from a pool (request_pool.cc) that never gives memory back, so a handle
// already waited for, or one that was never ours, is an error instead of a crash.
rcc_request* acquire_request();              // a live handle with empty fields
bool claim_request(rcc_request* request);    // false unless live; afterwards no longer live
void recycle_request(rcc_request* request);  // a claimed handle goes back to the pool
bool is_live_request(rcc_request* request);

}  // namespace rcc
