// How a group of ranks meets at set-up, before (or beside) its data connections: every rank
// contributes a blob under a name and gets everyone's. The job's ranks meet through a Rendezvous
// (a TCP store: rccrun's, one a rank hosts, or one the caller hands in; or a PMIx server); a
// sub-communicator's through its parent's connections (comm/collective_exchange.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace rcc::bootstrap {

class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: all[r] is rank r's blob. A name is used once in the exchange's life. A rank that
  // does not arrive within timeout_s: RCC_ERR_TIMEOUT naming the ranks missing.
  virtual Status allgather(const std::string& name, const std::vector<uint8_t>& mine, double timeout_s,
                           std::vector<std::vector<uint8_t>>* all) = 0;

  // Blobs fetched on demand instead of gathered by everyone: a rank publishes its blob under a name
  // once, and any rank fetches one rank's blob when it first needs it (a job that touches few peers
  // then reads few blobs, where an allgather reads size - 1 on every rank). An exchange that cannot
  // (serves_lookups() false) leaves the caller to allgather instead.
  virtual bool serves_lookups() const { return false; }
  virtual Status publish(const std::string& name, const std::vector<uint8_t>& mine);
  // Waits up to timeout_s for rank's blob under name (RCC_ERR_TIMEOUT naming the rank). Thread-safe.
  virtual Status lookup(const std::string& name, int rank, double timeout_s, std::vector<uint8_t>* blob);
};

// A text as an exchange blob (names, numbers and flags are exchanged as text).
inline std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

// What every rank of one job meets through: the first exchanges (hosts, transport addresses), and
// the last one, when the job's last communicator goes.
class Rendezvous : public Exchange {
 public:
  // What it is, for messages and RCC_DEBUG=INFO ("the store at host:port", "PMIx server ...").
  virtual std::string describe() const = 0;
  // Collective: no rank returns before every rank arrived; progress() runs while waiting (a last
  // message may still have to go out). A rank for which departed(rank) turns true left without
  // meeting (after an abort or a failure it saw) and is not waited for. A rank that does neither
  // within timeout_s: RCC_ERR_TIMEOUT naming it.
  virtual Status leave_together(double timeout_s, const std::function<void()>& progress,
                                const std::function<bool(int rank)>& departed) = 0;
};

}  // namespace rcc::bootstrap
