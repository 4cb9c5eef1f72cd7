// Ending a communicator. A sub-communicator ends on its own: the job's connections outlive it. The
// last communicator of a job meets the other ranks first (their writes into this rank's memory
// must be over), unless some rank failed or a communicator was aborted; rcc_comm_abort never
// waits for anyone.
#include <chrono>
#include <thread>

#include "base/log.h"
#include "comm/comm.h"

namespace rcc {
namespace {

// How long the last communicator of a job whose peer died keeps the engine before freeing it.
constexpr auto kSurvivorGrace = std::chrono::milliseconds(300);

}  // namespace

Status destroy_comm(rcc_comm* comm) {
  comm->executor.reset();  // it may still run this communicator's collectives
  destroy_levels(comm);    // communicators of their own, used only by its collectives
  comm->shm.reset();
  std::shared_ptr<JobConnections> job = std::move(comm->job);
  job->engine->remove_group(comm->group);
  delete comm;
  bool last = false;
  {
    std::lock_guard<std::mutex> guard(job->comms_mutex);
    last = --job->comms == 0;
  }
  if (last && log::enabled(log::Level::kInfo)) {
    const p2p::Engine::Footprint held = job->engine->footprint();
    RCC_INFO("rcc_comm_destroy: connected to %d of %d peers (%s), eager slots %zu KiB resident of %zu KiB reserved",
             held.connected_peers, job->size - 1, held.on_demand ? "at first use" : "at set-up",
             held.eager_resident_bytes >> 10, held.eager_reserved_bytes >> 10);
  }
  // Peers may still write into this rank's memory until they are done too: meet them at the
  // rendezvous first (progressing, so a last message still queued goes out), unless a rank failed
  // or a communicator was aborted.
  if (last && !job->engine->broken()) {
    p2p::Engine& engine = *job->engine;
    const bootstrap::LivenessMonitor& liveness = *job->liveness;
    // A peer that aborted a communicator or saw a failure leaves without meeting (the condition
    // above) and says goodbye: no one waits for it (RCC_TIMEOUT, 60 s by default).
    if (job->rendezvous->leave_together(
            job->timeout_s, [&engine] { engine.progress(); },
            [&liveness](int peer) { return liveness.has_left(peer); }) != RCC_SUCCESS) {
      RCC_INFO("rcc_comm_destroy: peers did not all arrive: %s", last_error().c_str());
    }
  } else if (last && job->engine->peer_has_failed()) {
    // Survivors learn of a death at slightly different moments. One not yet told may still write
    // into this rank's memory (credits, the next message of a collective); once the engine is gone
    // that write fails with a remote access error and would be reported as this rank's failure
    // instead of the dead rank's (seen on rxe). Keep the memory a moment, progressing.
    const auto until = std::chrono::steady_clock::now() + kSurvivorGrace;
    while (std::chrono::steady_clock::now() < until) {
      job->engine->progress();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return RCC_SUCCESS;
}

void abort_comm(rcc_comm* comm) {
  comm->aborted.store(true);
  comm->engine->abort(*comm->group);
  // A hierarchical collective may be waiting on a level.
  if (comm->host_level != nullptr) abort_comm(comm->host_level);
  if (comm->cross_level != nullptr) abort_comm(comm->cross_level);
}

}  // namespace rcc
