#include "shm/presence.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "base/log.h"
#include "shm/mapping.h"

namespace rcc::shm {

struct alignas(64) Presence::Line {
  std::atomic<int32_t> cpu{-1};
};

Status Presence::create(bootstrap::Exchange& exchange, const bootstrap::HostMap& hosts, double timeout_s,
                        std::unique_ptr<Presence>* out) {
  const int rank = exchange.rank();
  const int host = hosts.host_of(rank);
  const std::vector<int>& mine = hosts.ranks_on(host);
  const size_t bytes = sizeof(Line) * mine.size();
  const bool creator = mine.front() == rank;

  // 1. Each host's lowest rank creates the board and publishes its name.
  PendingMapping pending;
  pending.bytes = bytes;
  std::string name;
  if (creator) {
    std::random_device random;
    char text[64];
    std::snprintf(text, sizeof text, "/rcc-presence-%d-%08x", static_cast<int>(getpid()), random());
    void* mapping = nullptr;
    if (create_mapping(text, bytes, &mapping) == RCC_SUCCESS) {
      name = text;
      pending.mapping = mapping;
      pending.name = name;
      for (size_t i = 0; i < mine.size(); ++i) new (static_cast<Line*>(mapping) + i) Line{};
    }
  }
  std::vector<std::vector<uint8_t>> names;
  RCC_RETURN_IF_ERROR(exchange.allgather("presence/name", bootstrap::bytes_of(name), timeout_s, &names));
  if (!creator) {
    name.assign(names[static_cast<size_t>(mine.front())].begin(), names[static_cast<size_t>(mine.front())].end());
    void* mapping = nullptr;
    if (!name.empty() && open_mapping(name, bytes, &mapping) == RCC_SUCCESS) pending.mapping = mapping;
  }
  // 2. Everyone mapped it (or not); then the names go.
  std::vector<std::vector<uint8_t>> opened;
  RCC_RETURN_IF_ERROR(exchange.allgather("presence/opened", bootstrap::bytes_of(pending.mapping != nullptr ? "1" : "0"),
                                         timeout_s, &opened));
  if (!pending.name.empty()) {
    shm_unlink(pending.name.c_str());
    pending.name.clear();
  }
  bool everyone = true;
  for (int r : mine) everyone = everyone && opened[static_cast<size_t>(r)] == bootstrap::bytes_of("1");
  if (!everyone) {
    RCC_INFO("presence board: not every rank of this host could map it; waits know only crowding");
    return RCC_SUCCESS;
  }
  std::unique_ptr<Presence> presence(new Presence());
  presence->local_index_.assign(static_cast<size_t>(hosts.size()), -1);
  for (size_t i = 0; i < mine.size(); ++i) presence->local_index_[static_cast<size_t>(mine[i])] = static_cast<int>(i);
  presence->mapping_ = pending.mapping;
  presence->bytes_ = bytes;
  presence->lines_ = static_cast<Line*>(pending.mapping);
  presence->lines_count_ = static_cast<int>(mine.size());
  pending.mapping = nullptr;
  *out = std::move(presence);
  return RCC_SUCCESS;
}

Presence::~Presence() {
  if (mapping_ != nullptr) munmap(mapping_, bytes_);
}

void Presence::note(int rank, int cpu) {
  const int index = local_index_[static_cast<size_t>(rank)];
  if (index >= 0) lines_[index].cpu.store(cpu, std::memory_order_relaxed);
}

int Presence::cpu_of(int rank) const {
  if (rank < 0 || static_cast<size_t>(rank) >= local_index_.size()) return -1;
  const int index = local_index_[static_cast<size_t>(rank)];
  return index >= 0 ? lines_[index].cpu.load(std::memory_order_relaxed) : -1;
}

int Presence::ranks_on(int cpu) const {
  int count = 0;
  for (int i = 0; i < lines_count_; ++i) count += lines_[i].cpu.load(std::memory_order_relaxed) == cpu ? 1 : 0;
  return count;
}

}  // namespace rcc::shm
