// The communicator behind rcc_comm_t and the request behind rcc_request_t.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "bootstrap/job.h"
#include "core/fast_tls.h"
#include "bootstrap/store.h"
#include "core/executor.h"
#include "core/liveness.h"
#include "p2p/engine.h"
#include "rcc/rcc.h"
#include "shm/segment.h"

struct rcc_comm {
  int rank = -1;
  int size = 0;
  int local_rank = -1;
  std::string key_prefix;            // this communicator's keys in the rendezvous store
  uint64_t collective_sequence = 0;  // numbers collectives; tags of their messages carry it
  std::atomic<bool> aborted{false};
  std::unique_ptr<rcc::bootstrap::StoreServer> store_server;  // on the rank hosting the rendezvous
  std::unique_ptr<rcc::bootstrap::StoreClient> store;
  std::unique_ptr<rcc::p2p::Engine> engine;
  std::unique_ptr<rcc::LivenessMonitor> liveness;  // reports dead peers to the engine
  std::unique_ptr<rcc::shm::Segment> shm;          // null unless every rank is on this host
  std::unique_ptr<rcc::Executor> executor;          // destroyed first: it may still run collectives
  ~rcc_comm() {
    executor.reset();
    shm.reset();
    liveness.reset();
    engine.reset();
  }
};

struct rcc_request {
  rcc_comm* comm = nullptr;
  // A send or receive; null with no collective either for a send that completed when posted.
  rcc::p2p::Request* p2p = nullptr;
  std::shared_ptr<rcc::Task> collective;  // a nonblocking collective
  std::atomic<bool> live{false};          // handed out and not yet waited for (pool bookkeeping)
};

namespace rcc {

// Builds a communicator once rank, size and the store are known (all init paths end here).
Status create_comm(const bootstrap::JobInfo& job, std::unique_ptr<bootstrap::StoreServer> server,
                   std::unique_ptr<bootstrap::StoreClient> store, rcc_comm** out);

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
rcc_request* acquire_request();                 // a live handle with empty fields
bool claim_request(rcc_request* request);       // false unless live; afterwards no longer live
void recycle_request(rcc_request* request);     // a claimed handle goes back to the pool
bool is_live_request(rcc_request* request);

}  // namespace rcc
