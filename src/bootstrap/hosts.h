// Where every rank of a communicator runs, exchanged once at set-up: which ranks share a host, the
// pid and the CPUs of each. The shared-memory segment, the wait policy (are a host's ranks crowded
// onto fewer cores?) and messages naming a rank's host all read it; sub-communicators take the
// part of their parent's.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/cpu.h"
#include "base/status.h"
#include "bootstrap/exchange.h"

namespace rcc::bootstrap {

struct RankPlace {
  std::string host_name;  // for messages
  std::string identity;   // equal identities: the ranks run on one host
  pid_t pid = 0;
  CpuSet cpus;  // the CPUs the rank may run on
};

class HostMap {
 public:
  // This process's entry.
  static RankPlace here();
  // Every rank contributes here() through the exchange; the same map on every rank.
  static Status exchange(Exchange& exchange, double timeout_s, HostMap* out);
  static HostMap of(std::vector<RankPlace> places);

  int size() const { return static_cast<int>(places_.size()); }
  const RankPlace& place(int rank) const { return places_[static_cast<size_t>(rank)]; }
  // Hosts are numbered in the order of their lowest rank.
  int hosts() const { return static_cast<int>(host_ranks_.size()); }
  int host_of(int rank) const { return host_of_[static_cast<size_t>(rank)]; }
  const std::vector<int>& ranks_on(int host) const { return host_ranks_[static_cast<size_t>(host)]; }
  // Whether the ranks on `host`'s machine (its kernel: other hosts without shared memory may run on
  // it too, as containers do) outnumber the CPUs they may run on together.
  bool crowded(int host) const;
  // The map of the ranks listed (rank i of the result is ranks[i] here).
  HostMap subset(const std::vector<int>& ranks) const;

 private:
  std::vector<RankPlace> places_;
  std::vector<int> host_of_;
  std::vector<std::vector<int>> host_ranks_;
};

}  // namespace rcc::bootstrap
