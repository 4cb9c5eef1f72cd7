// A communicator's two levels (docs/hierarchy.md): when its ranks span hosts and some host has
// several, it splits itself once, at creation, into this host's ranks (a communicator with the
// host's shared-memory segment) and the ranks with this rank's index on every host (one per
// host). Only the hierarchical algorithms use the two; they end with the communicator.
#include <algorithm>

#include "base/log.h"
#include "base/settings.h"
#include "comm/comm.h"
#include "comm/launch.h"
#include "comm/split.h"

namespace rcc {
namespace {

// The minimum of `mine` over the communicator's ranks (an agreement).
Status agree_minimum(rcc_comm* comm, int mine, int* out) {
  int32_t value = mine, least = 0;
  RCC_RETURN_IF_ERROR(run_internal_collective(comm, collectives::Args{.kind = collectives::Kind::kAllreduce,
                                                                      .sendbuf = &value,
                                                                      .recvbuf = &least,
                                                                      .count = 1,
                                                                      .datatype = RCC_INT32,
                                                                      .op = RCC_MIN}));
  *out = least;
  return RCC_SUCCESS;
}

}  // namespace

void destroy_levels(rcc_comm* comm) {
  for (rcc_comm* level : {comm->cross_level, comm->host_level}) {
    if (level == nullptr) continue;
    unregister_comm(level);
    destroy_comm(level);
  }
  comm->cross_level = nullptr;
  comm->host_level = nullptr;
  comm->levels.reset();
}

Status make_levels(rcc_comm* comm) {
  const bootstrap::HostMap& hosts = comm->hosts;  // the same on every rank
  size_t most = 0, fewest = SIZE_MAX;
  for (int h = 0; h < hosts.hosts(); ++h) {
    most = std::max(most, hosts.ranks_on(h).size());
    fewest = std::min(fewest, hosts.ranks_on(h).size());
  }
  if (hosts.hosts() <= 1 || most <= 1) return RCC_SUCCESS;
  int64_t setting = 1;
  RCC_RETURN_IF_ERROR(settings::integer("RCC_HIERARCHY", &setting));
  int wanted = 0;
  RCC_RETURN_IF_ERROR(agree_minimum(comm, static_cast<int>(setting), &wanted));
  if (wanted == 0) {
    RCC_INFO("communicator of %d ranks on %d hosts: flat (RCC_HIERARCHY=0 on some rank)", comm->size, hosts.hosts());
    return RCC_SUCCESS;
  }
  const int my_host = hosts.host_of(comm->rank);
  const std::vector<int>& mates = hosts.ranks_on(my_host);
  const int local = static_cast<int>(std::find(mates.begin(), mates.end(), comm->rank) - mates.begin());
  Status status = split_comm(comm, my_host, comm->rank, &comm->host_level);
  if (status == RCC_SUCCESS) status = split_comm(comm, local, my_host, &comm->cross_level);
  // Every host of several ranks needs its segment; agree, since a host without one (RCC_SHM=0,
  // /dev/shm full) would leave the others waiting in a shared-memory step.
  int usable = 0;
  if (status == RCC_SUCCESS) {
    const bool mine = comm->host_level->size == 1 || comm->host_level->shm != nullptr;
    status = agree_minimum(comm, mine ? 1 : 0, &usable);
  }
  if (status != RCC_SUCCESS || usable == 0) {
    destroy_levels(comm);
    if (status == RCC_SUCCESS) {
      RCC_INFO("communicator of %d ranks on %d hosts: flat (a host has no shared-memory segment)", comm->size,
               hosts.hosts());
    }
    return status;
  }
  // A wait within the host, or on the other hosts' ranks of this index, must end when any rank of
  // this communicator fails: the rank it waits for may have stopped at that failure and never
  // come (its mates talk to the other hosts meanwhile, and the other hosts' ranks wait on them).
  if (comm->host_level->shm != nullptr) comm->host_level->shm->watch_health_of(comm->group);
  comm->engine->tie(*comm->host_level->group, *comm->group);
  comm->engine->tie(*comm->cross_level->group, *comm->group);
  auto levels = std::make_unique<collectives::Levels>();
  levels->host = collectives::Level{comm->host_level->shm.get(), comm->host_level->group, comm->host_level->rank,
                                    comm->host_level->size};
  levels->cross =
      collectives::Level{nullptr, comm->cross_level->group, comm->cross_level->rank, comm->cross_level->size};
  levels->hosts = hosts.hosts();
  levels->channels = static_cast<int>(fewest);
  levels->my_host = my_host;
  for (int h = 0; h < hosts.hosts(); ++h) levels->host_sizes.push_back(static_cast<int>(hosts.ranks_on(h).size()));
  for (int r = 0; r < comm->size; ++r) {
    const std::vector<int>& on = hosts.ranks_on(hosts.host_of(r));
    levels->host_of.push_back(hosts.host_of(r));
    levels->local_of.push_back(static_cast<int>(std::find(on.begin(), on.end(), r) - on.begin()));
  }
  levels->blocked = std::is_sorted(levels->host_of.begin(), levels->host_of.end());
  comm->levels = std::move(levels);
  RCC_INFO("communicator of %d ranks on %d hosts: levels (%zu-%zu ranks per host, %zu channels between hosts)",
           comm->size, hosts.hosts(), fewest, most, fewest);
  return RCC_SUCCESS;
}

}  // namespace rcc
