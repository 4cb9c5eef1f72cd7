// The set-up exchanges of a sub-communicator (its shared-memory segment) over the connections its
// job already has: two collectives on the new communicator's group through the p2p engine, never
// through the job's rendezvous (which may be a PMIx server that serves only whole-job exchanges,
// or a store that one rank must answer for everyone).
#pragma once

#include "bootstrap/exchange.h"
#include "comm/comm.h"

namespace rcc {

class CollectiveExchange final : public bootstrap::Exchange {
 public:
  // comm: its group and engine are set; its segment is not made yet (message algorithms only).
  explicit CollectiveExchange(rcc_comm& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank; }
  int size() const override { return comm_.size; }
  // timeout_s is the communicator's RCC_TIMEOUT, as for any collective on it.
  Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                   std::vector<std::vector<uint8_t>>* all) override;

 private:
  rcc_comm& comm_;
};

}  // namespace rcc
