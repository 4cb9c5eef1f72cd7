// The presence board of a host: one cache line per rank of the communicator that runs there, in a
// small shared mapping, holding the CPU that rank was last seen on (written by the rank itself
// whenever it starts to wait). A waiter reads it to tell whether the rank it waits for sits on its
// own CPU (base/wait.h). It exists whatever RCC_SHM says: the engine's waits use it too.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/wait.h"
#include "bootstrap/exchange.h"
#include "bootstrap/hosts.h"

namespace rcc::shm {

class Presence final : public CpuNeighbours {
 public:
  // Collective: the lowest rank of every host creates its host's board, the others map it. *out
  // stays null when the board cannot be made (no usable /dev/shm): waits then know only crowding.
  static Status create(bootstrap::Exchange& exchange, const bootstrap::HostMap& hosts, double timeout_s,
                       std::unique_ptr<Presence>* out);
  ~Presence() override;
  Presence(const Presence&) = delete;
  Presence& operator=(const Presence&) = delete;

  void note(int rank, int cpu) override;
  int cpu_of(int rank) const override;
  int ranks_on(int cpu) const override;

 private:
  struct Line;
  Presence() = default;

  std::vector<int> local_index_;  // by communicator rank: its line on this host's board, -1 elsewhere
  Line* lines_ = nullptr;
  int lines_count_ = 0;
  void* mapping_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rcc::shm
