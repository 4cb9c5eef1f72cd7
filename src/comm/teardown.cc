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

// Every rank announces it is leaving and waits for all others, progressing its engine meanwhile.
// The rank hosting the store, if a rank does (it says so in its announcement), leaves last, so no
// one loses the store during the wait. Every key is consumable: a finished job leaves nothing in a
// store that outlives it (rccrun's, for jobs of many rcc_comm_init).
Status leave_together(JobConnections& job) {
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(job.timeout_s));
  if (job.size == 1) return RCC_SUCCESS;
  const std::string prefix = job.key_prefix + "/leaving/";
  const bool hosting = job.store_server != nullptr;
  RCC_RETURN_IF_ERROR(job.store->set_consumable(prefix + std::to_string(job.rank),
                                                hosting ? std::vector<uint8_t>{1} : std::vector<uint8_t>{},
                                                static_cast<uint32_t>(job.size - 1)));
  bool a_rank_hosts = hosting;
  for (int peer = 0; peer < job.size; ++peer) {
    if (peer == job.rank) continue;
    const std::string key = prefix + std::to_string(peer);
    for (;;) {
      bool found = false;
      std::vector<uint8_t> ignored;
      RCC_RETURN_IF_ERROR(job.store->try_get(key, &found, &ignored));
      if (found) break;
      if (std::chrono::steady_clock::now() > deadline) {
        return fail(RCC_ERR_TIMEOUT, "rank %d did not reach rcc_comm_destroy within %.0f s", peer, job.timeout_s);
      }
      job.engine->progress();
      // A store round trip per poll: no point polling faster than the wait policy's sleeps.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::vector<uint8_t> announcement;  // read once more, counted: the key goes after the last reader
    RCC_RETURN_IF_ERROR(job.store->get(key, job.timeout_s, &announcement));
    a_rank_hosts = a_rank_hosts || (announcement.size() == 1 && announcement[0] == 1);
  }
  if (hosting) {
    for (int peer = 0; peer < job.size; ++peer) {
      std::vector<uint8_t> ignored;
      if (peer != job.rank) {
        RCC_RETURN_IF_ERROR(job.store->get(job.key_prefix + "/left/" + std::to_string(peer), job.timeout_s, &ignored));
      }
    }
  } else if (a_rank_hosts) {
    RCC_RETURN_IF_ERROR(job.store->set_consumable(job.key_prefix + "/left/" + std::to_string(job.rank), {}, 1));
  }
  return RCC_SUCCESS;
}

}  // namespace

Status destroy_comm(rcc_comm* comm) {
  comm->executor.reset();  // it may still run this communicator's collectives
  comm->shm.reset();
  std::shared_ptr<JobConnections> job = std::move(comm->job);
  job->engine->remove_group(comm->group);
  delete comm;
  bool last = false;
  {
    std::lock_guard<std::mutex> guard(job->comms_mutex);
    last = --job->comms == 0;
  }
  // Peers may still write into this rank's memory until they are done too: meet them at the
  // rendezvous first (progressing, so a last message still queued goes out), unless a rank failed
  // or a communicator was aborted.
  if (last && !job->engine->broken()) {
    if (leave_together(*job) != RCC_SUCCESS) {
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
}

}  // namespace rcc
